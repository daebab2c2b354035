"""``python -m osustat``: the same command as ``osustat``."""

from osustat.cli.main import main

raise SystemExit(main())
