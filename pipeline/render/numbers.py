"""Numbers for people: one formatting function per kind of value, behind every view
of a result (the terminal and Markdown tables, `score --format json` and
`--score-only`, report.html's tables and chart labels, `compare`, the significance
tables and meta-eval), so that one value prints the same digits everywhere.

* `points`: a score on the 0-1 scale, or a difference of two, x 100 with two
  decimals, rounded half up from its shortest decimal form.  ROUGE-1.5.5's
  averages are the script's five-decimal values (0.09325, read back from its
  printout), so they print as papers round those digits (9.33); binary
  floating point would give 9.32 (100 * 0.09325 is 9.3249999...).
* `points_value`: the same number as a JSON number (9.33).
* `in_points`: a value already x 100 (compare's `delta_points` columns), with the
  same rounding.
* `p_value`, `coefficient` (a correlation, three decimals) and its `interval`
  (two), `statistic` (t, d_z: two decimals), `general` (any other float: four
  significant digits).

The tables for machines (Parquet, CSV, JSON Lines) keep every digit and are not
formatted here.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Optional

_HUNDREDTH = Decimal("0.01")


def _finite(x) -> Optional[float]:
    if x is None or isinstance(x, bool):
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def _hundredths(value: Decimal, signed: bool) -> str:
    rounded = value.quantize(_HUNDREDTH, rounding=ROUND_HALF_UP)
    return f"{rounded:+.2f}" if signed else f"{rounded:.2f}"


def points(x, signed: bool = False) -> str:
    """A 0-1 score (or a difference of scores: `signed`) x 100, two decimals, rounded
    half up from its shortest decimal form, as papers round ROUGE-1.5.5's printed
    0.49065 to 49.07; "" when absent (None, NaN).

    Example:
        >>> points(0.49065), points(0.09325), points(0.2), points(-0.00125, signed=True), points(None)
        ('49.07', '9.33', '20.00', '-0.13', '')
    """
    x = _finite(x)
    return "" if x is None else _hundredths(Decimal(repr(x)) * 100, signed)


def points_value(x) -> Optional[float]:
    """`points` as a number, for JSON: the digits the tables print.

    Example:
        >>> points_value(0.09325), points_value(None)
        (9.33, None)
    """
    text = points(x)
    return float(text) if text else None


def in_points(x, signed: bool = True) -> str:
    """A value already x 100 (a change in points), two decimals, rounded as `points`.

    Example:
        >>> in_points(0.125), in_points(-2.0), in_points(None)
        ('+0.13', '-2.00', '')
    """
    x = _finite(x)
    return "" if x is None else _hundredths(Decimal(repr(x)), signed)


def p_value(p, floor=None) -> str:
    """A p-value: four decimals, or two significant digits below 0.001; "≤" before it
    when p is at its floor (the smallest p these documents allow: the true p may be
    smaller).

    Example:
        >>> p_value(0.01234), p_value(2.5e-7), p_value(2.2250738585072014e-308, 2.2250738585072014e-308)
        ('0.0123', '2.5e-07', '≤2.2e-308')
    """
    p = _finite(p)
    if p is None:
        return ""
    text = f"{p:.1e}" if p < 0.001 else f"{p:.4f}"
    return "≤" + text if floor is not None and p <= floor else text


def coefficient(r, absent: str = "n/a") -> str:
    """A correlation coefficient (or a difference of two): three decimals.

    Example:
        >>> coefficient(0.91234), coefficient(None)
        ('0.912', 'n/a')
    """
    r = _finite(r)
    return absent if r is None else "%.3f" % r


def interval(low, high) -> str:
    """A coefficient's interval, two decimals, "[low, high]"; "" when either end is absent.

    Example:
        >>> interval(0.1234, 0.5678), interval(None, 0.5)
        ('[0.12, 0.57]', '')
    """
    low, high = _finite(low), _finite(high)
    return "" if low is None or high is None else "[%.2f, %.2f]" % (low, high)


def statistic(x) -> str:
    """A test statistic or effect size (t, d_z): two decimals; "" when absent.

    Example:
        >>> statistic(1.23456), statistic(None)
        ('1.23', '')
    """
    x = _finite(x)
    return "" if x is None else f"{x:.2f}"


def general(x) -> str:
    """Any other number for people: four significant digits; "" when absent.

    Example:
        >>> general(0.91234), general(12345.6), general(float("nan"))
        ('0.9123', '1.235e+04', '')
    """
    x = _finite(x)
    return "" if x is None else format(x, ".4g")
