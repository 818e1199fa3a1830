"""Analytic power and sample size for the paired design.

- McNemar on the consensus table: Connor (1987), from the discordant cell probabilities.
- Paired difference of per-topic proportions: normal approximation with the SD of d_t.
- Equivalence (TOST) against the SESOI: normal approximation.
All tests one-sided at alpha unless stated; sample sizes are numbers of topics.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
from scipy import optimize, stats

from harness.errors import HarnessError


def discordant(p_cross: float, p_single: float, rho: float) -> tuple[float, float]:
    """(p10, p01) of the paired 2x2 table from the marginals and their correlation (phi)."""
    for name, value in (("p_cross", p_cross), ("p_single", p_single)):
        if not 0.0 < value < 1.0:
            raise HarnessError(f"{name} must lie strictly between 0 and 1 (got {value:g})")
    p11 = p_cross * p_single + rho * math.sqrt(p_cross * (1 - p_cross) * p_single * (1 - p_single))
    low, high = max(0.0, p_cross + p_single - 1), min(p_cross, p_single)
    if not low - 1e-12 <= p11 <= high + 1e-12:
        raise HarnessError(
            f"correlation {rho:g} is impossible with proportions {p_cross:g} and {p_single:g}"
        )
    return p_cross - p11, p_single - p11


def mcnemar_power(n: float, p10: float, p01: float, alpha: float = 0.05, sided: int = 1) -> float:
    """Connor (1987): power of McNemar's test with n pairs (two-sided adds the far tail)."""
    delta, psi = p10 - p01, p10 + p01
    spread = math.sqrt(max(psi - delta * delta, 1e-300))
    z = stats.norm.isf(alpha / sided)
    near = stats.norm.cdf((abs(delta) * math.sqrt(n) - z * math.sqrt(psi)) / spread)
    far = stats.norm.cdf((-abs(delta) * math.sqrt(n) - z * math.sqrt(psi)) / spread)
    if sided == 1:
        return float(near) if delta >= 0 else float(far)
    return float(near + far)


def mcnemar_sample_size(
    p10: float, p01: float, alpha: float = 0.05, power: float = 0.8, sided: int = 1
) -> int:
    """Connor (1987): pairs needed, n = [z_a sqrt(psi) + z_b sqrt(psi - delta^2)]^2 / delta^2."""
    delta, psi = p10 - p01, p10 + p01
    if delta == 0:
        raise HarnessError("no difference between the arms: no sample size detects it")
    z_a, z_b = stats.norm.isf(alpha / sided), stats.norm.isf(1 - power)
    return math.ceil(((z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta**2)) / delta) ** 2)


def sd_binary_difference(p_cross: float, p_single: float, rho: float) -> float:
    """SD of X_cross - X_single for two correlated binary outcomes (a topic's consensus)."""
    v_c, v_s = p_cross * (1 - p_cross), p_single * (1 - p_single)
    return math.sqrt(max(v_c + v_s - 2 * rho * math.sqrt(v_c * v_s), 1e-12))


def paired_power(n: float, delta: float, sd: float, alpha: float = 0.05) -> float:
    """One-sided power of a test of mean d_t > 0 (normal approximation)."""
    return float(stats.norm.cdf(delta * math.sqrt(n) / sd - stats.norm.isf(alpha)))


def paired_sample_size(delta: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    if delta <= 0:
        raise HarnessError("the effect to detect must be positive (cross above single)")
    return math.ceil(((stats.norm.isf(alpha) + stats.norm.isf(1 - power)) * sd / delta) ** 2)


def tost_power(
    n: float, sd: float, margin: float, delta: float = 0.0, alpha: float = 0.05
) -> float:
    """Power to show |difference| < margin when the true difference is delta."""
    se = sd / math.sqrt(n)
    z = stats.norm.isf(alpha)
    value = (
        stats.norm.cdf((margin - delta) / se - z) + stats.norm.cdf((margin + delta) / se - z) - 1
    )
    return float(max(0.0, value))


def tost_sample_size(
    sd: float, margin: float, delta: float = 0.0, alpha: float = 0.05, power: float = 0.8
) -> int:
    if abs(delta) >= margin:
        raise HarnessError("equivalence cannot be shown when the true difference is the margin")
    if tost_power(1, sd, margin, delta, alpha) >= power:
        return 1  # differences this steady show equivalence with any number of topics
    high = 2
    while tost_power(high, sd, margin, delta, alpha) < power:
        high *= 2
    root = optimize.brentq(lambda n: tost_power(n, sd, margin, delta, alpha) - power, 1, high)
    return math.ceil(root - 1e-9)


def analytic_power(
    n: float, p_single: float, delta: float, rho: float, alpha: float = 0.05, method: str = "paired"
) -> float:
    """One-sided power at n topics for a true difference delta: McNemar (Connor) or paired."""
    p_cross = p_single + delta
    if method == "mcnemar":
        return mcnemar_power(n, *discordant(p_cross, p_single, rho), alpha)
    return paired_power(n, delta, sd_binary_difference(p_cross, p_single, rho), alpha)


def minimal_detectable_effect(
    n: float,
    p_single: float,
    rho: float,
    alpha: float = 0.05,
    power: float = 0.8,
    method: str = "paired",
) -> float | None:
    """Smallest cross-minus-single difference detected with `power` at n topics.

    The SD (and the discordant cells) change with the difference, so the root is found
    numerically; None when no possible difference reaches the power.
    """

    def gap(delta: float) -> float:
        return analytic_power(n, p_single, delta, rho, alpha, method) - power

    previous = 0.0
    if gap(previous) >= 0:
        return previous
    for delta in np.linspace(0.0, 1.0 - p_single, 401)[1:-1]:
        try:
            value = gap(delta)
        except HarnessError:  # the correlation is impossible from here on
            return None
        if value >= 0:
            return float(optimize.brentq(gap, previous, delta, xtol=1e-9))
        previous = delta
    return None


class CurveRow(TypedDict):
    """Power at one number of topics (an entry of `power_curve`)."""

    topics: int
    mcnemar: float
    paired: float
    equivalence: float


def power_curve(
    n_values: np.ndarray,
    *,
    p_single: float,
    effect: float,
    sesoi: float,
    rho: float,
    alpha: float,
    sd: float | None = None,
    sd_equivalence: float | None = None,
) -> list[CurveRow]:
    """Power by number of topics: McNemar (Connor), paired normal, TOST at zero difference
    (plain rows: `PowerResult.curve` makes them a DataFrame when read).

    TOST assumes a true difference of 0, so its SD is that of two arms both at p_single.
    """
    p10, p01 = discordant(p_single + effect, p_single, rho)
    sd = sd if sd is not None else sd_binary_difference(p_single + effect, p_single, rho)
    sd_eq = (
        sd_equivalence
        if sd_equivalence is not None
        else sd_binary_difference(p_single, p_single, rho)
    )
    return [
        {
            "topics": int(n),
            "mcnemar": mcnemar_power(n, p10, p01, alpha),
            "paired": paired_power(n, effect, sd, alpha),
            "equivalence": tost_power(n, sd_eq, sesoi, 0.0, alpha),
        }
        for n in n_values
    ]
