"""Input normalization shared by the public functions (scipy's ``_<name>_iv`` habit).

Every check raises ``ValueError``/``TypeError`` that names the argument in backticks and,
where it helps, the offending positions, so a user can find the bad row.
"""

from __future__ import annotations

import contextlib
import math
import tomllib
from collections.abc import Iterable, Iterator, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported by the checks that use it: `osustat --help` needs none
    import numpy as np
    from numpy.typing import NDArray

ALTERNATIVES = ("two-sided", "greater", "less")

#: Most offending positions listed in an error message before it says "and N more".
_MAX_LISTED = 10


def list_some(items: Iterable[Any], limit: int = _MAX_LISTED, *, quote: bool = True) -> str:
    """Render up to `limit` items for an error message, saying how many were left out."""
    items = list(items)
    shown = ", ".join(repr(x) if quote and isinstance(x, str) else str(x) for x in items[:limit])
    if len(items) > limit:
        shown += f", ... and {len(items) - limit} more"
    return shown


def query_key(episode: Any, query: Any) -> str:
    """A query as messages print it: a key a user can grep for in the records.

    The records' ``query_id`` as stored when it already names its episode (it equals the
    ``episode_id`` or begins with it followed by a character that is not a letter or digit:
    LoCoMo's ``conv-30/qa0`` in ``conv-30``, a TREC qid that is its own episode); otherwise
    ``episode_id/query_id`` (``e1/q2``: the id alone would not say which episode's ``q2``).

    >>> query_key("conv-30", "conv-30/qa0"), query_key("e1", "q2"), query_key("312", "312")
    ('conv-30/qa0', 'e1/q2', '312')
    >>> query_key("e1", "e10")  # a longer id, not its episode's prefix
    'e1/e10'
    """
    e, q = str(episode), str(query)
    if q == e or (q.startswith(e) and e and not q[len(e)].isalnum()):
        return q
    return f"{e}/{q}"


def unique_items(items: Iterable[Any], name: str, key: Any = None) -> list[Any]:
    """`items` as a list, refused when two of them are the same selection.

    One rule for every list the user gives (metrics, budgets, methods, cells, depths,
    seeds...; API and CLI): items are compared after normalisation (`key`, e.g. lower-cased
    metric names, budgets as integers) and a repeat is an error naming both spellings -- a
    family that counted a test twice would correct every p-value for tests that do not exist.
    """
    out = list(items)
    first: dict[Any, Any] = {}
    for item in out:
        k = item if key is None else key(item)
        if k in first:
            same = repr(first[k]) if first[k] == item else f"{first[k]!r} and {item!r}"
            raise ValueError(
                f"`{name}` names {k!r} twice ({same}); a selection counts each item once, so "
                "give it once."
            )
        first[k] = item
    return out


def _number_label(x: Any, name: str, j: int, i: int) -> int | float:
    """A numeric unit label as a key: integers (and integral floats) as exact Python ints,
    other floats as floats; NaN, ±inf and bools refused, naming `name`, the array and the
    position.
    (``float(x)`` merged 10**16 and 10**16 + 1 and refused distinct 19-digit ids as one unit
    twice -- red team item 4.)"""
    import numpy as np

    where = f"`{name}[{j}]` position {i}"
    if isinstance(x, bool | np.bool_):
        raise ValueError(
            f"{where}: {x!r} is a bool, not a unit label (it would be unit {int(x)}); use "
            "integers or text."
        )
    if isinstance(x, int | np.integer):
        return int(x)
    try:
        f = float(x)
    except (TypeError, ValueError):
        raise TypeError(
            f"`{name}[{j}]` labels must be text or numbers; got {x!r} at position {i}."
        ) from None
    if math.isnan(f):
        raise ValueError(f"{where}: NaN is not a unit label; drop or name that unit.")
    if math.isinf(f):
        raise ValueError(f"{where}: {f} is not a unit label; drop or name that unit.")
    return int(f) if f.is_integer() else f


def unit_labels(arrays: Sequence[Any], name: str) -> list[list[Any]]:
    """Unit labels of several arrays as comparable keys, by the project's one id rule
    (``validate_records``: 1 and "1" are never silently one id): numbers compare as numbers
    (int 0 and float 0.0 are one unit; integers exactly, at any size), text as text, and
    labels that mix the two kinds are refused, naming the arrays of each kind; NaN and bool
    labels are refused, naming the array and position."""
    import numpy as np

    kinds: dict[str, list[int]] = {"text": [], "number": []}
    out: list[list[Any]] = []
    for j, u in enumerate(arrays):
        items = np.asarray(u, dtype=object).ravel().tolist()
        text = [isinstance(x, str | bytes | np.str_) for x in items]
        if any(text) and not all(text):
            raise ValueError(
                f"`{name}[{j}]` mixes text and numbers (1 and '1' would be one unit or two "
                "by accident); use one kind of label."
            )
        if items:
            kinds["text" if text[0] else "number"].append(j)
        if items and not text[0]:
            items = [_number_label(x, name, j, i) for i, x in enumerate(items)]
        out.append(items)
    if kinds["text"] and kinds["number"]:
        raise ValueError(
            f"`{name}` mixes text labels (arrays {list_some(kinds['text'])}) and numeric labels "
            f"(arrays {list_some(kinds['number'])}); 1 and '1' would be one unit or two by "
            "accident. Use one kind of label."
        )
    raw = [j for j, items in enumerate(out) if any(isinstance(x, bytes) for x in items)]
    if raw and any(isinstance(x, str) for items in out for x in items):
        raise ValueError(
            f"`{name}` mixes bytes labels (arrays {list_some(raw)}) with str labels; b'1' and "
            "'1' would be two units. Decode the bytes (e.g. .decode()) first."
        )
    return out


def read_utf8_text(path: str | Path, what: str) -> str:
    """The text of the file `path` (a `what`, e.g. ``"claims file"``), UTF-8 with or without
    a byte-order mark (read, as the CSV and JSON readers do); a gzip-compressed file, UTF-16
    text or other bytes that are not UTF-8 are a ``ValueError`` naming the file and what it
    is (before: "'utf-8' codec can't decode byte 0x8b in position 1", no file named)."""
    p = Path(path)
    raw = p.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(not_utf8(raw, f"{what} {str(p)!r}", exc)) from None


def is_gzip(raw: bytes) -> bool:
    """Whether bytes begin with gzip's magic number (the one test of every reader)."""
    return raw[:2] == b"\x1f\x8b"


def not_utf8(raw: bytes, name: str, exc: UnicodeDecodeError) -> str:
    """Why the file `name` whose bytes begin with `raw` did not decode as UTF-8 (`exc`):
    gzip-compressed, UTF-16 (a byte-order mark), or bytes that are not UTF-8 — the one
    message every reader of text files gives."""
    if is_gzip(raw):
        return f"{name} is gzip-compressed, not text: decompress it (gunzip) first."
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return (
            f"{name} is not UTF-8 text: UTF-16 (it starts with a UTF-16 byte-order mark); "
            "save it as UTF-8."
        )
    return f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8."


def read_toml(path: str | Path, what: str, known: Iterable[str]) -> dict[str, Any]:
    """Read the TOML file `path` (a `what`, e.g. ``"grid file"``): a missing file is a
    ``FileNotFoundError`` naming it; invalid TOML, text that is not UTF-8
    (:func:`read_utf8_text`; a BOM is read), or a top-level key not in `known`, a
    ``ValueError`` naming the file (and the known keys)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} {str(p)!r} does not exist.")
    try:
        data = tomllib.loads(read_utf8_text(p, what))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p}: not valid TOML ({exc}).") from None
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"{p}: unknown top-level key(s) {unknown}; known: {sorted(known)}.")
    return data


def as_float_vector(x: Any, name: str, *, min_size: int = 1) -> NDArray[np.float64]:
    """Return `x` as a finite 1-D float array or raise naming `name` and the bad positions."""
    import numpy as np

    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be array-like of real numbers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(
            f"`{name}` must be finite; NaN or infinite values at positions {list_some(bad)}."
        )
    if arr.size < min_size:
        raise ValueError(f"`{name}` must have at least {min_size} observations; got {arr.size}.")
    return arr


def as_float_matrix(
    x: Any, name: str, *, shape: str, min_rows: int = 1, min_cols: int = 1, rows: str = "rows"
) -> NDArray[np.float64]:
    """Return `x` as a 2-D float array (at least `min_rows` x `min_cols`) whose rows are all
    finite, or raise naming `name`, the `shape` it must have (e.g. ``"(n_blocks >= 1,
    n_conditions >= 2)"``) and the offending `rows` (the word for a row in the message)."""
    import numpy as np

    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a 2-D array of real numbers: {exc}") from None
    if arr.ndim != 2 or arr.shape[0] < min_rows or arr.shape[1] < min_cols:
        raise ValueError(f"`{name}` must be 2-D with shape {shape}; got {arr.shape}.")
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1))
    if bad.size:
        raise ValueError(f"`{name}` has NaN or infinite values in {rows} {list_some(bad)}.")
    return arr


def align_paired(a: Any, b: Any, names: tuple[str, str]) -> tuple[Any, Any]:
    """Pair two pandas objects by their index labels, not by position.

    Two pandas Series (or one-column DataFrames) with the same labels in another order are
    aligned to `a`'s order; labels that differ, or repeat, are an error listing them. Any
    other input (arrays, lists, one pandas object beside an array) pairs by position.
    """
    if not all(hasattr(x, "index") and hasattr(x, "reindex") for x in (a, b)):
        return a, b
    ia, ib = a.index, b.index
    if ia.equals(ib):
        return a, b
    na, nb = names
    for name, idx in ((na, ia), (nb, ib)):
        if not idx.is_unique:
            dup = idx[idx.duplicated()].unique().tolist()
            raise ValueError(
                f"`{name}` has repeated index labels {list_some(dup)}; pandas inputs are "
                "paired by index, so each label must appear once."
            )
    only_a = ia.difference(ib).tolist()
    only_b = ib.difference(ia).tolist()
    if only_a or only_b:
        raise ValueError(
            f"`{na}` and `{nb}` are paired by index but their labels differ: only in `{na}`: "
            f"[{list_some(only_a)}]; only in `{nb}`: [{list_some(only_b)}]. Select the common "
            "units (and report how many were left out), or pass arrays to pair by position."
        )
    return a, b.reindex(ia)


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"`alternative` must be one of {sorted(ALTERNATIVES)}; got {alternative!r}."
        )
    return alternative


#: Largest resample count any resampling function accepts (2**25, the largest exact
#: sign-flip enumeration): beyond it a run takes hours or exhausts memory instead of failing.
MAX_RESAMPLES = 2**25


def check_positive_int(
    value: Any, name: str, *, minimum: int = 1, maximum: int | None = None
) -> int:
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"`{name}` must be an integer; got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}; got {value}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be at most {maximum:,}; got {int(value):,}.")
    return int(value)


class UsageError(ValueError):
    """A bad option value: the CLI reports it with exit status 2, before any work (the command
    line's and the ``reproduce`` driver's checks alike)."""


class Problems:
    """The errors of many rows of one file, raised together, so a user fixes the file in one
    pass instead of one run per problem: :meth:`collect` records a ``ValueError`` raised in
    its block and goes on; :meth:`raise_any` raises one error listing them (the first
    `limit`, and how many more), or the only one as it was."""

    def __init__(self, what: str, limit: int = 20) -> None:
        self.what, self.limit = what, limit
        self.messages: list[str] = []
        self.hints: list[str] = []  # what many of the problems have in common, said first
        self.count = 0

    def hint(self, text: str) -> None:
        """A diagnosis of several problems (one answer missing shifts a hundred), printed
        before them when any is raised."""
        self.hints.append(text)

    @contextlib.contextmanager
    def collect(self) -> Iterator[None]:
        try:
            yield
        except ValueError as exc:
            self.count += 1
            if len(self.messages) < self.limit:
                self.messages.append(str(exc))

    def raise_any(self) -> None:
        said = "".join(f"\n  {h}" for h in self.hints) if self.count else ""
        if self.count == 1:
            raise ValueError(self.messages[0] + said)
        if self.count:
            more = f"\n  ... and {self.count - self.limit} more" if self.count > self.limit else ""
            raise ValueError(
                f"{self.count} problems in {self.what}:{said}\n  - "
                + "\n  - ".join(self.messages)
                + more
            )


def check_option_count(
    value: Any, option: str, low: int = 1, high: int | None = MAX_RESAMPLES
) -> int:
    """:func:`check_positive_int` for an option (`option`, e.g. ``--jobs``): the same rule and
    message, as a :class:`UsageError`."""
    try:
        return check_positive_int(value, option, minimum=low, maximum=high)
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def check_finite(value: Any, name: str) -> float:
    """`value` as a finite float (``TypeError`` when it is not a number, ``ValueError`` when it
    is NaN or infinite; both name `name`)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a number; got {value!r}.") from None
    if not math.isfinite(x):
        raise ValueError(f"`{name}` must be finite; got {value!r}.")
    return x


def check_means_pair(value: Any, name: str) -> tuple[float, float]:
    """Two finite means, treatment then baseline (a paper's printed pair), named `name` in the
    error: ``TypeError`` when `value` is not two numbers, ``ValueError`` when one is not
    finite."""
    try:
        t, b = (float(x) for x in value)
    except (TypeError, ValueError):
        raise TypeError(
            f"`{name}` must be two numbers (treatment, baseline); got {value!r}."
        ) from None
    if not (math.isfinite(t) and math.isfinite(b)):
        raise ValueError(f"`{name}` must be finite; got {value!r}.")
    return t, b


def check_resamples(value: Any, name: str = "n_resamples", *, minimum: int = 1) -> int:
    """A resample count in ``[minimum, MAX_RESAMPLES]``, named in the error."""
    return check_positive_int(value, name, minimum=minimum, maximum=MAX_RESAMPLES)


def check_level(level: Any, name: str = "level") -> float:
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a number in (0, 1); got {level!r}.") from None
    if not 0.0 < level < 1.0:
        raise ValueError(f"`{name}` must be in (0, 1); got {level}.")
    return level


def check_same_length(arrays: Sequence[tuple[str, Sized]], *, note: str = "") -> None:
    """Raise when the named sequences differ in length, giving every length.

    The message reads ``"`a` and `b` must have equal lengths<note>; got 3 and 2."``.
    """
    lengths = [len(a) for _, a in arrays]
    if len(set(lengths)) > 1:
        names = [f"`{name}`" for name, _ in arrays]
        listed = " and ".join(names) if len(names) == 2 else ", ".join(names)
        got = " and ".join(map(str, lengths)) if len(names) == 2 else ", ".join(map(str, lengths))
        raise ValueError(f"{listed} must have equal lengths{note}; got {got}.")


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """``np.random.default_rng(rng)`` with an error that names the argument (SPEC 7)."""
    import numpy as np

    if isinstance(rng, bool) or isinstance(rng, float | np.floating):
        raise TypeError(
            f"`{name}` must be None, a non-negative integer seed, a SeedSequence or a "
            f"numpy.random.Generator; got {rng!r}."
        )
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"`{name}` must be None, a non-negative integer seed, a SeedSequence or a "
            f"numpy.random.Generator; got {rng!r} ({exc})."
        ) from None


def power_of_two_scale(x: NDArray[np.float64]) -> int:
    """Exponent ``e`` such that ``ldexp(x, -e)`` has largest magnitude in [0.5, 1).

    Scaling by a power of two is exact in floating point, so resampling statistics computed on
    the rescaled values are bit-for-bit the rescaled statistics: sums of huge values cannot
    overflow and squares of tiny ones cannot underflow. 0 for an all-zero array.
    """
    import numpy as np

    top = float(np.max(np.abs(x), initial=0.0))
    return int(np.frexp(top)[1]) if top > 0 else 0


def differences_columns(differences: Any) -> list[NDArray[np.float64]]:
    """Split `differences` into comparisons by one rule for every input type.

    - a 2-D numpy array or pandas DataFrame of shape ``(n, k)``: one comparison per column;
    - a sequence (list, tuple) of 1-D numpy arrays or pandas Series: one per element;
    - a sequence of Python sequences (nested lists): one per element only when the inner
      lengths differ (ragged, so it cannot be a matrix) or there is a single element;
      a rectangular nested list is ambiguous (rows or columns?) and is refused.
    """
    import numpy as np

    matrix: NDArray[np.float64] | None = None
    if hasattr(differences, "columns") and hasattr(differences, "to_numpy"):  # DataFrame
        arr = np.asarray(differences.to_numpy(dtype=np.float64, na_value=np.nan))
        matrix = arr
        columns = [arr[:, j] for j in range(arr.shape[1])]
        names = [f"differences[{c!r}]" for c in differences.columns]
    elif isinstance(differences, np.ndarray):
        if differences.ndim != 2:
            raise ValueError(
                "`differences` as a numpy array must be 2-D (n units x k comparisons); got "
                f"shape {differences.shape}. For one comparison use `paired_signflip_test` "
                "or pass `[d]`."
            )
        try:
            arr = np.asarray(differences, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"`differences` must hold real numbers: {exc}") from None
        matrix = arr
        columns = [arr[:, j] for j in range(arr.shape[1])]
        names = [f"differences[:, {j}]" for j in range(arr.shape[1])]
    elif isinstance(differences, Sequence) and not isinstance(differences, str | bytes):
        columns = list(differences)
        if columns and any(np.ndim(c) == 0 for c in columns):
            raise ValueError(
                "`differences` must be a 2-D array (one column per comparison) or a sequence "
                "of 1-D arrays; for a single comparison use `paired_signflip_test` or wrap it "
                "in a list."
            )
        plain = [
            j
            for j, c in enumerate(columns)
            if not isinstance(c, np.ndarray) and not hasattr(c, "to_numpy")
        ]
        if len(columns) > 1 and len(plain) == len(columns):
            lengths = {len(c) for c in columns}
            if len(lengths) == 1:
                shape = (len(columns), lengths.pop())
                raise ValueError(
                    f"`differences` is a rectangular nested list of shape {shape}, which is "
                    "ambiguous: pass `np.asarray(x)` (rows = units, one column per "
                    "comparison: k tests) or a list of 1-D numpy arrays (one test per "
                    "element)."
                )
        names = [f"differences[{j}]" for j in range(len(columns))]
    else:
        raise TypeError(
            "`differences` must be a 2-D array, a DataFrame or a sequence of 1-D arrays; got "
            f"{type(differences).__name__}."
        )
    if not columns:
        raise ValueError("`differences` must hold at least one comparison.")
    if matrix is not None and matrix.shape[0] >= 2 and np.isfinite(matrix).all():
        return list(np.ascontiguousarray(matrix.T))  # valid: skip the per-column checks
    return [
        np.ascontiguousarray(as_float_vector(c, name, min_size=2))
        for name, c in zip(names, columns, strict=True)
    ]
