"""What a power / MDE call asks for (private to :mod:`osustat.power`).

:class:`Plan` validates the arguments :func:`osustat.power` and
:func:`osustat.minimum_detectable_effect` share and chooses the method;
:class:`osustat.power.PowerValue` is the float they return, carrying that method.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._signflip_null import one_magnitude
from ._validation import check_alternative, check_level, check_positive_int

#: Values of the `test` argument.
POWER_TESTS = ("auto", "normal", "exact-binomial", "simulation", "empirical", "empirical-tilt")

#: Largest `n_simulations` (Monte Carlo standard error of a power near .8: .0013).
MAX_SIMULATIONS = 100_000

#: Largest n for which power is simulated by full sign-flip enumeration.
SIMULATION_MAX_N = 12


#: The parameters :func:`power` and :func:`minimum_detectable_effect` share.
PLAN_ARGUMENTS = (
    "differences_sd", "n", "alpha", "alternative", "binary", "p_nonzero", "magnitude",
    "differences", "pairs", "test", "n_simulations",
)  # fmt: skip


class Plan:
    """Validated inputs and the chosen method."""

    def __init__(
        self,
        *,
        differences_sd: Any,
        n: Any,
        alpha: Any,
        alternative: str,
        binary: Any,
        p_nonzero: Any,
        magnitude: Any,
        differences: Any,
        pairs: Any,
        test: str,
        n_simulations: Any,
        lattice: bool | None = None,
    ) -> None:
        d, self.pairs, sd = _plan_data(differences, pairs, differences_sd)
        self.n = _check_n(n)
        self.alpha = check_level(alpha, "alpha")
        self.alternative = check_alternative(alternative)
        if test not in POWER_TESTS:
            raise ValueError(f"`test` must be one of {sorted(POWER_TESTS)}; got {test!r}.")
        self.n_simulations = check_positive_int(n_simulations, "n_simulations", minimum=100)
        if self.n_simulations > MAX_SIMULATIONS:
            raise ValueError(
                f"`n_simulations` must be at most {MAX_SIMULATIONS:,} (Monte Carlo standard "
                f"error of a power near .8: .0013); got {self.n_simulations:,}."
            )
        self.magnitude, q = _binary_parameters(binary, p_nonzero, magnitude)
        self.d = d
        if d is not None:
            binary, self.magnitude, q = _read_differences(
                d, self.pairs, binary, magnitude, self.magnitude, q
            )
        if binary is None:
            # The binary model is named by its parameters; sd alone means a shift model.
            binary = p_nonzero is not None or magnitude is not None
        #: the method was chosen (not named): a too-small sample of differences gives a range
        self.auto = test == "auto"
        test = _choose_test(test, binary, d, self.n, lattice)
        if test == "exact-binomial" and q is None:
            # Under the null a difference in {-c, 0, c} has variance q c^2.
            q = min(1.0, (sd / self.magnitude) ** 2)
        self.sd = sd
        self.q = q
        self.test = test
        self._tilt_tops: tuple[float, float] | None = None
        #: why the differences are tilted although `pairs` were given
        self.tilt_fallback: str | None = None
        if self.pairs is not None and test == "empirical-tilt":
            assert d is not None
            # the treatment's tilt cannot reach the pilot's own mean difference (e.g. many
            # units tied at the ceiling): the differences are tilted instead
            self.tilt_fallback = treatment_tilt_short(d, self.pairs)
            if self.tilt_fallback is not None:
                self.pairs = None

    def tilt_differences(self, reason: str) -> None:
        """Tilt the differences, not the treatment's values (`reason`: why)."""
        self.pairs, self._tilt_tops, self.tilt_fallback = None, None, reason

    def max_effect(self) -> float:
        """The largest mean difference of the modelled kind (see
        :class:`osustat.power.PowerValue`)."""
        if self.test == "exact-binomial":
            assert self.q is not None
            return self.magnitude * self.q
        if self.test == "empirical":
            # every nonzero difference as large as the largest observed one, zeros kept
            assert self.d is not None
            return float(np.count_nonzero(self.d)) / self.d.size * float(np.abs(self.d).max())
        if self.test == "empirical-tilt":
            return self.max_effect_of(-1.0 if self.alternative == "less" else 1.0)
        return math.inf

    def max_effect_of(self, sign: float) -> float:
        """The tilted model's largest |mean difference| of the sign of `sign`."""
        assert self.d is not None
        if self.pairs is None:
            # every unit at the largest observed |difference| (ties tilt away too)
            return float(np.abs(self.d).max())
        if self._tilt_tops is None:  # the treatment's tilt: its reach (tilt_tops)
            from ._power_engines import tilt_model

            self._tilt_tops = tilt_model(self.d, self.pairs)[3]
        return self._tilt_tops[0 if sign > 0 else 1]

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any], lattice: bool | None = None) -> Plan:
        """From the ``locals()`` of :func:`power` / :func:`minimum_detectable_effect`, which
        share these parameters (one list, so the two cannot drift apart); `lattice` as in
        :func:`_choose_test`."""
        return cls(**{k: arguments[k] for k in PLAN_ARGUMENTS}, lattice=lattice)


def _plan_data(
    differences: Any, pairs: Any, differences_sd: Any
) -> tuple[NDArray[np.float64] | None, tuple[NDArray[Any], NDArray[Any]] | None, float]:
    """Read the pilot: its differences (given, or from `pairs`), its pairs, and the sd."""
    d = None
    if differences is not None:
        from ._validation import as_float_vector

        d = as_float_vector(differences, "differences", min_size=2)
    checked = None if pairs is None else check_pairs(pairs, d)
    if d is None and checked is not None:
        d = checked[0] - checked[1]
    return d, checked, _check_sd(differences_sd, d)


def _check_n(n: Any) -> int:
    """Check the number of units: an integer >= 2."""
    try:
        n_ok = not isinstance(n, bool) and float(n).is_integer() and int(n) >= 2
    except (TypeError, ValueError, OverflowError):
        n_ok = False
    if not n_ok:
        raise ValueError(f"`n` must be an integer >= 2; got {n!r}.")
    return int(n)


def _binary_parameters(binary: Any, p_nonzero: Any, magnitude: Any) -> tuple[float, float | None]:
    """Check the stated binary model: (magnitude c, default 1; share of nonzero differences)."""
    value = 1.0
    if magnitude is not None:
        value = float(magnitude)
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"`magnitude` must be finite and > 0; got {magnitude!r}.")
    q = None
    if p_nonzero is not None:
        q = float(p_nonzero)
        if not (math.isfinite(q) and 0.0 <= q <= 1.0):
            raise ValueError(f"`p_nonzero` must be in [0, 1]; got {p_nonzero!r}.")
    if binary is not None and not isinstance(binary, bool | np.bool_):
        raise TypeError(f"`binary` must be True, False or None; got {binary!r}.")
    if binary is not None and not binary and (magnitude is not None or q is not None):
        raise ValueError(
            "`magnitude` and `p_nonzero` describe the binary model ({-c, 0, c} "
            "differences); they contradict `binary=False`."
        )
    return value, q


def _read_differences(
    d: NDArray[np.float64],
    pairs: tuple[NDArray[Any], NDArray[Any]] | None,
    binary: Any,
    magnitude: Any,
    value: float,
    q: float | None,
) -> tuple[Any, float, float | None]:
    """Read the binary model from the differences: (binary, magnitude c, share nonzero)."""
    nz = np.abs(d[d != 0])
    equal = one_magnitude(nz)
    if binary and not equal:
        raise ValueError(
            "`binary=True` but `differences` are not of the form {-c, 0, c}: their "
            f"nonzero magnitudes range from {nz.min():.6g} to {nz.max():.6g}. Leave "
            "`binary` unset to model the observed magnitudes."
        )
    if binary is None:
        # rule K: given the units' values, 0/1-type only where they take two values
        # (no pair differs: the binary model with P(d != 0) = 0, as without them)
        binary = equal and (nz.size == 0 or pairs is None or two_valued(pairs))
    if binary and nz.size and magnitude is None:
        value = float(nz[0])
    if q is None and binary:
        q = nz.size / d.size
    return binary, value, q


def _choose_test(
    test: str, binary: Any, d: NDArray[np.float64] | None, n: int, lattice: bool | None = None
) -> str:
    """Choose the method (`test` 'auto') and check that the data allow the one chosen.
    `lattice`: whether the differences are count ratios, where read off them before they
    were rescaled (:func:`osustat.power._rescaled`); else :func:`is_discrete` of `d`."""
    if test == "auto":
        if binary:
            test = "exact-binomial"
        elif d is not None:
            discrete = is_discrete(d) if lattice is None else lattice
            test = "empirical-tilt" if discrete else "empirical"
        elif n <= SIMULATION_MAX_N:
            test = "simulation"
        else:
            test = "normal"
    if test in ("empirical", "empirical-tilt") and d is None:
        raise ValueError(f"`test={test!r}` resamples the observed differences: pass `differences`.")
    if test == "simulation" and n > SIMULATION_MAX_N:
        raise ValueError(
            f"`test='simulation'` enumerates all 2**n sign patterns and is limited to "
            f"n <= {SIMULATION_MAX_N}; got n = {n}. Use test='normal' (accurate "
            "for normal differences from n of about 10 on)."
        )
    return test


#: Largest denominator of a count ratio: differences that are all fractions ``k / q`` with
#: ``q`` up to this (recall over at most 12 relevant items, precision at 10, the mean of
#: three seeds' recall over four items...) are modelled as discrete.
LATTICE_MAX_DENOMINATOR = 12


def is_discrete(d: NDArray[np.float64]) -> bool:
    """Whether the nonzero differences are count ratios: each a fraction ``k / q`` with
    ``q <= LATTICE_MAX_DENOMINATOR`` (to 1e-9). They then take a few values on a lattice,
    and an effect changes how often each value occurs, not the values (the tilted model).
    Continuous metrics (scores, nDCG) and ratios over many items are not such fractions.

    >>> import numpy as np
    >>> from osustat._power_plan import is_discrete
    >>> is_discrete(np.array([0, 1 / 3, -0.25, 0.5, 2 / 3])), is_discrete(np.array([0.1234, 0.5]))
    (True, False)
    """
    nz = np.abs(d[d != 0])
    # float noise (0.3 - (0.1 + 0.2)) is a zero; differences that are all that small (values
    # of 1e-100) are no count ratios: a nonzero k / q has |k| >= 1
    nz = nz[nz > 1e-9]
    if nz.size == 0 or nz.max() * LATTICE_MAX_DENOMINATOR >= 2.0**52:
        # from 2^52 / 12 on every float is a whole multiple of 1/12: the test cannot tell
        # count ratios from anything else (values of 1e100), and reads them as continuous
        return False
    scaled = nz[:, None] * np.arange(1, LATTICE_MAX_DENOMINATOR + 1)[None, :]
    near = np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(scaled, 1.0)
    return bool(near.any(axis=1).all())


def two_valued(pairs: tuple[NDArray[Any], NDArray[Any]]) -> bool:
    """Whether every unit's treatment and baseline value lies in one set of two values (a
    0/1 metric such as Hit@k). Rule K (docs/validation.md): differences of one magnitude are
    0/1-type only then; recall over a few items whose few differences happen to share one
    magnitude (all +-1/3) are count ratios like the others.

    >>> import numpy as np
    >>> two_valued((np.array([1.0, 0, 1]), np.array([0.0, 0, 1])))
    True
    >>> two_valued((np.array([2 / 3, 1 / 3, 1]), np.array([1 / 3, 1 / 3, 2 / 3])))
    False
    """
    return bool(np.unique(np.concatenate(pairs)).size <= 2)


def treatment_tilt_short(
    d: NDArray[Any], pairs: tuple[NDArray[Any], NDArray[Any]], effect: float | None = None
) -> str | None:
    """Why the treatment's tilt (:func:`osustat._power_engines.tilt_null`) cannot model
    these pairs -- it does not reach the pilot's own mean difference, or `effect` -- in
    words; None when it can. It need not reach the pilot's mean: with many units tied at the
    ceiling, tilting the treatment's value up gives those ties more weight, and the mean
    difference it reaches can stay below the one the pilot shows. Such a pilot is not
    described by the model (issue 35 review of the treatment's tilt); nor is an effect
    beyond the largest mean difference the tilt reaches (:func:`tilt_tops`: read off the
    units where the treatment is largest). The differences are tilted instead."""
    from ._power_engines import tilt_model

    tops = tilt_model(d, pairs)[3]
    mean = float(d.mean())
    asked = [(mean, f"these differences' own mean {mean:.4g}")]
    if effect is not None:
        asked.append((effect, f"the effect {effect:g}"))
    for value, what in asked:
        reach = tops[1 if value < 0 else 0]
        if abs(value) > reach * (1 + 1e-9):
            return (
                f"the treatment's tilt reaches a mean difference of at most {reach:.4g} "
                f"beside these baselines, short of {what}"
            )
    return None


def check_pairs(pairs: Any, d: NDArray[np.float64] | None) -> tuple[NDArray[Any], NDArray[Any]]:
    """`pairs` as two float vectors (treatment, baseline) whose differences are `d`."""
    from ._validation import as_float_vector

    shape: tuple[int, ...] = (0,)
    if isinstance(pairs, np.ndarray):
        shape = pairs.shape
    if len(shape) == 2 and shape[1] == 2 and shape[0] != 2:
        raise ValueError(
            f"`pairs` must be (treatment values, baseline values); got an array of shape "
            f"{shape}, one row per unit: pass its columns, e.g. `tuple(a.T)`."
        )
    try:
        if isinstance(pairs, str | bytes):
            raise TypeError
        t_raw, b_raw = pairs
    except (TypeError, ValueError):
        raise TypeError(
            "`pairs` must be (treatment values, baseline values): two sequences of the "
            f"units' values; got {type(pairs).__name__}."
        ) from None
    t = as_float_vector(t_raw, "pairs[0] (treatment values)", min_size=2)
    b = as_float_vector(b_raw, "pairs[1] (baseline values)", min_size=2)
    if t.size != b.size:
        raise ValueError(
            f"`pairs` must have one treatment and one baseline value per unit; got {t.size} "
            f"and {b.size} values."
        )
    if d is not None:
        if d.size != t.size:
            raise ValueError(
                f"`pairs` has {t.size} units but `differences` has {d.size}: pass the units' "
                "values whose differences these are."
            )
        off = np.abs((t - b) - d) > 1e-9 * np.maximum(1.0, np.abs(d))
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise ValueError(
                f"`pairs` contradict `differences` at unit {i}: treatment - baseline = "
                f"{t[i]:.6g} - {b[i]:.6g} = {t[i] - b[i]:.6g}, difference {d[i]:.6g}."
            )
    return t, b


def _check_sd(differences_sd: Any, d: NDArray[np.float64] | None) -> float:
    """The sd of the differences: given, or read from `d`; a given one must agree with `d`."""
    if differences_sd is None:
        if d is None:
            raise TypeError("`differences_sd` is required when `differences` is not given.")
        return float(d.std(ddof=1))
    try:
        sd = float(differences_sd)
    except (TypeError, ValueError):
        raise TypeError(f"`differences_sd` must be a number; got {differences_sd!r}.") from None
    if not math.isfinite(sd) or sd < 0:
        raise ValueError(f"`differences_sd` must be finite and >= 0; got {sd}.")
    if d is not None:
        observed = (float(d.std(ddof=1)), float(d.std(ddof=0)))
        if not any(math.isclose(sd, o, rel_tol=1e-6, abs_tol=1e-12) for o in observed):
            raise ValueError(
                f"`differences_sd` = {sd:.6g} contradicts `differences`, whose sd is "
                f"{observed[0]:.6g} (ddof=1); pass one of them, or `differences_sd=None`."
            )
    return sd
