"""The ``osustat`` command: the composition root, the only part of ``osustat`` that imports
``analyses`` and ``reports``.

:mod:`.main` builds the parser and dispatches; :mod:`.common` holds the option checks every
command shares; :mod:`.inputs` reads the inputs of ``analyze`` and ``audit``; :mod:`.audit`,
:mod:`.reproduce` and :mod:`.data` are the ``audit``, ``reproduce`` and ``data`` sub-commands;
:mod:`.interrupts` tells an interrupt that surfaced as another error. :func:`run` is the console
script.
"""


def run() -> None:
    """The console script ``osustat`` (and ``python -m osustat``):
    :func:`osustat.cli.main.main`, with an interrupt that arrives outside ``main``'s own
    handler -- while the command loads (its imports, its parser), or as it returns -- said in
    one line instead of a traceback (a reviewer, stop 57: Ctrl-C in the first quarter
    second). Outputs are written atomically, so none is left unfinished.
    """
    import os
    import sys

    from osustat.cli.interrupts import from_interrupt

    try:
        from osustat.cli.main import main

        code = main()
    except (KeyboardInterrupt, ImportError) as exc:
        if os.environ.get("OSUSTAT_DEBUG") or not from_interrupt(exc):
            raise
        print("osustat: interrupted; no unfinished report was left in place.", file=sys.stderr)
        code = 130
    sys.exit(code)
