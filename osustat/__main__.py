"""``python -m osustat``: the same command as ``osustat``."""

from osustat.cli import run

run()
