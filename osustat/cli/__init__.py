"""The ``osustat`` command: the composition root, the only part of ``osustat`` that imports
``analyses`` and ``reports``.

:mod:`.main` builds the parser and dispatches; :mod:`.common` holds the option checks every
command shares; :mod:`.inputs` reads the inputs of ``analyze`` and ``audit``; :mod:`.audit`,
:mod:`.reproduce` and :mod:`.data` are the ``audit``, ``reproduce`` and ``data`` sub-commands.
"""
