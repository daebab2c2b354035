"""Stand-ins shared by tests."""

from __future__ import annotations

from typing import Any, ClassVar


class RecordingBar:
    """Stands in for a progress bar (tqdm, ``analyses.runner.progress_bar``): remembers its
    total, description and options, and the steps it was given (``made``: every bar made
    since the test reset it)."""

    made: ClassVar[list[RecordingBar]] = []

    def __init__(self, total: int, desc: str, **options: Any) -> None:
        self.total, self.desc, self.options = total, desc, options
        self.n = options.get("initial", 0)
        RecordingBar.made.append(self)

    @property
    def progress(self) -> Any:
        return self.options.get("progress")

    def update(self, k: int = 1) -> None:
        self.n += k

    def __enter__(self) -> RecordingBar:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False
