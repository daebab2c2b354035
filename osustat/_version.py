"""The version of osustat, in one place (read by the package and by its provenance)."""

__version__ = "0.1.0"
