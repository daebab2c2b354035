"""Former names of keywords and attributes, kept working with a ``DeprecationWarning``.

One rule for every renamed name in the project, so that the public signatures show only the
current names: :func:`renamed_keywords` maps old keyword names onto new ones before the call,
and :class:`renamed_attribute` is a read-only alias of an attribute. Giving a keyword under
both names is a ``TypeError``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def renamed_keywords(**old_to_new: str) -> Callable[[F], F]:
    """Decorate a function so that each old keyword name is accepted as its new name.

    >>> @renamed_keywords(seed="rng")
    ... def f(*, rng=0):
    ...     return rng
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     (f(seed=3), str(caught[0].message))
    (3, '`seed` is deprecated; use `rng`.')
    >>> f(seed=3, rng=4)
    Traceback (most recent call last):
    ...
    TypeError: pass `rng` or its old name `seed`, not both.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in old_to_new.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"pass `{new}` or its old name `{old}`, not both.")
                warnings.warn(
                    f"`{old}` is deprecated; use `{new}`.", DeprecationWarning, stacklevel=2
                )
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


class renamed_attribute:
    """A read-only alias of attribute `new` under a former name, warning on each read.

    >>> class C:
    ...     x = 1
    ...     old_x = renamed_attribute("x")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     (C().old_x, str(caught[0].message))
    (1, '`old_x` is deprecated; use `x`.')
    """

    def __init__(self, new: str) -> None:
        self.new = new
        self.old = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.old = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        warnings.warn(
            f"`{self.old}` is deprecated; use `{self.new}`.", DeprecationWarning, stacklevel=2
        )
        return getattr(obj, self.new)
