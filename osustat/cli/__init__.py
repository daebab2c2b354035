"""The ``osustat`` command: the composition root, the only part of ``osustat`` that imports
``analyses`` and ``reports``.

:mod:`.main` builds the parser and dispatches; :mod:`.common` holds the option checks every
command shares; :mod:`.inputs` reads the inputs of ``analyze`` and ``audit``; :mod:`.audit`,
:mod:`.reproduce` and :mod:`.data` are the ``audit``, ``reproduce`` and ``data`` sub-commands.
"""


def run() -> None:
    """The console script ``osustat``: :func:`osustat.cli.main.main`, with an interrupt that
    arrives while the command is still loading (its imports, its parser: before ``main``'s
    own handler is in place) said in one line instead of a traceback (a reviewer, stop 57:
    Ctrl-C in the first quarter second). Nothing is written before that handler is in place.
    """
    import os
    import sys

    try:
        from osustat.cli.main import main

        code = main()
    except KeyboardInterrupt:
        if os.environ.get("OSUSTAT_DEBUG"):
            raise
        print("osustat: interrupted while starting; nothing was written.", file=sys.stderr)
        code = 130
    sys.exit(code)
