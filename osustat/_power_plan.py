"""What a power / MDE call asks for (private to :mod:`osustat.power`).

:class:`Plan` validates the arguments :func:`osustat.power` and
:func:`osustat.minimum_detectable_effect` share and chooses the method; :class:`PowerValue`
is the float they return, carrying that method.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import check_alternative, check_level, check_positive_int

#: Values of the `test` argument.
POWER_TESTS = ("auto", "normal", "exact-binomial", "simulation")

#: Largest n for which power is simulated by full sign-flip enumeration.
SIMULATION_MAX_N = 12

_EPS = float(np.finfo(np.float64).eps)


class PowerValue(float):
    """A power or MDE value (a plain ``float``) that names how it was computed.

    Attributes
    ----------
    method : str
        ``'normal'`` (noncentral t), ``'exact-binomial'`` (0/1 differences) or
        ``'simulation'`` (exact sign-flip test on simulated normal differences). An infinite
        MDE (power 0) under any method means no effect reaches the target power: ``n`` is too
        small for the test to ever reach `alpha`, or too few pairs differ.
    n : int
    alpha : float
    alternative : str
    p_nonzero : float or None
        ``P(d != 0)`` used by the exact-binomial model.
    n_simulations : int
        Simulated data sets behind a ``'simulation'`` value (0 otherwise).
    """

    method: str
    n: int
    alpha: float
    alternative: str
    p_nonzero: float | None
    n_simulations: int

    def __new__(
        cls,
        value: float,
        *,
        method: str,
        n: int,
        alpha: float,
        alternative: str,
        p_nonzero: float | None = None,
        n_simulations: int = 0,
    ) -> PowerValue:
        obj = super().__new__(cls, value)
        obj.method = method
        obj.n = n
        obj.alpha = alpha
        obj.alternative = alternative
        obj.p_nonzero = p_nonzero
        obj.n_simulations = n_simulations
        return obj

    def __reduce__(self) -> Any:
        return (_rebuild, (float(self), dict(self.__dict__)))


def _rebuild(value: float, attrs: dict[str, Any]) -> PowerValue:
    return PowerValue(value, **attrs)


#: The parameters :func:`power` and :func:`minimum_detectable_effect` share.
PLAN_ARGUMENTS = (
    "differences_sd", "n", "alpha", "alternative", "binary", "p_nonzero", "magnitude",
    "differences", "test", "n_simulations",
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
        test: str,
        n_simulations: Any,
    ) -> None:
        try:
            sd = float(differences_sd)
        except (TypeError, ValueError):
            raise TypeError(f"`differences_sd` must be a number; got {differences_sd!r}.") from None
        if not math.isfinite(sd) or sd < 0:
            raise ValueError(f"`differences_sd` must be finite and >= 0; got {sd}.")
        try:
            n_ok = not isinstance(n, bool) and float(n).is_integer() and int(n) >= 2
        except (TypeError, ValueError, OverflowError):
            n_ok = False
        if not n_ok:
            raise ValueError(f"`n` must be an integer >= 2; got {n!r}.")
        self.n = int(n)
        self.alpha = check_level(alpha, "alpha")
        self.alternative = check_alternative(alternative)
        if test not in POWER_TESTS:
            raise ValueError(f"`test` must be one of {set(POWER_TESTS)}; got {test!r}.")
        self.n_simulations = check_positive_int(n_simulations, "n_simulations", minimum=100)
        self.magnitude = 1.0
        if magnitude is not None:
            self.magnitude = float(magnitude)
            if not math.isfinite(self.magnitude) or self.magnitude <= 0:
                raise ValueError(f"`magnitude` must be finite and > 0; got {magnitude!r}.")
        q = None
        if p_nonzero is not None:
            q = float(p_nonzero)
            if not (math.isfinite(q) and 0.0 <= q <= 1.0):
                raise ValueError(f"`p_nonzero` must be in [0, 1]; got {p_nonzero!r}.")
        if binary is not None and not isinstance(binary, bool | np.bool_):
            raise TypeError(f"`binary` must be True, False or None; got {binary!r}.")
        if differences is not None:
            from ._validation import as_float_vector

            d = as_float_vector(differences, "differences", min_size=2)
            if d.size != self.n:
                raise ValueError(
                    f"`differences` has {d.size} values but `n` is {self.n}; they must agree."
                )
            nz = np.abs(d[d != 0])
            equal = nz.size == 0 or bool(np.all(np.abs(nz - nz[0]) <= 64 * _EPS * nz[0]))
            if binary is None:
                binary = equal
            if binary and equal and nz.size and magnitude is None:
                self.magnitude = float(nz[0])
            if q is None and binary:
                q = nz.size / d.size
        if binary is None:
            binary = p_nonzero is not None
        if test == "auto":
            if binary:
                test = "exact-binomial"
            elif self.n <= SIMULATION_MAX_N:
                test = "simulation"
            else:
                test = "normal"
        if test == "exact-binomial" and q is None:
            # Under the null a difference in {-c, 0, c} has variance q c^2.
            q = min(1.0, (sd / self.magnitude) ** 2)
        if test == "simulation" and self.n > SIMULATION_MAX_N:
            raise ValueError(
                f"`test='simulation'` enumerates all 2**n sign patterns and is limited to "
                f"n <= {SIMULATION_MAX_N}; got n = {self.n}. Use test='normal' (accurate "
                "for normal differences from n of about 10 on)."
            )
        self.sd = sd
        self.q = q
        self.test = test

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> Plan:
        """From the ``locals()`` of :func:`power` / :func:`minimum_detectable_effect`, which
        share these parameters (one list, so the two cannot drift apart)."""
        return cls(**{k: arguments[k] for k in PLAN_ARGUMENTS})

    def result(self, value: float) -> PowerValue:
        return PowerValue(
            value,
            method=self.test,
            n=self.n,
            alpha=self.alpha,
            alternative=self.alternative,
            p_nonzero=self.q if self.test == "exact-binomial" else None,
            n_simulations=self.n_simulations if self.test == "simulation" else 0,
        )
