"""What an interrupt looks like once it has passed through other code: one rule for the
console script (:func:`osustat.cli.run`) and the commands (:func:`osustat.cli.main.main`)."""

from __future__ import annotations


def from_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is a KeyboardInterrupt or was raised while handling one (an extension
    module's initialisation turns one into ``ImportError: initialization failed``)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False
