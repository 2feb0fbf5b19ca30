"""Perl's numbers, where the report's digits depend on them.

Perl keeps a number as an integer (IV/UV) or a double (NV) and works in
integers whenever it can do so without loss (perl 5.36, `pp_add`, `pp_pow`,
`pp_divide`): two doubles that are both integral are added as integers, an
integer and a double only when the double is integral and below 2**53.  It
prints an integer in full and a double with %.15g.  So ROUGE-W's f-weighted
counts can be `R:1294156079937217828`, an exact integer sum, where a sum of
doubles would print `1.29415607993722e+18`.  Here a Python `int` stands for
Perl's integer and a `float` for its double.  Only the raw counts that `-t 1`
and `-t 2` print can show the difference, and only beyond 15 digits.

One difference remains (README, "Known differences"): a double that Perl has
once read as an exact integer below 2**53 also prints as one, and whether that
happened depends on the order and kind of the additions that read it (its
averaging and bootstrap loops); such a count (ROUGE-W with large weights,
above 10**15) prints here with %.15g, the same number at 15 digits.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Union

Number = Union[int, float]
_EXACT = 1 << 53  # NV_PRESERVES_UV_BITS: Perl trusts an integral double below this as an integer
_UV_MAX = (1 << 64) - 1
_IV_MIN = -(1 << 63)


def _as_integer(x: Number) -> Optional[int]:
    """Perl's SvIV_please: the integer a number can act as, if any."""
    if isinstance(x, int):
        return x
    if x.is_integer() and abs(x) < _EXACT:
        return int(x)
    return None


def _lossless(x: float) -> Optional[int]:
    """pp_add's lossless_NV_to_IV: any integral double in the IV range."""
    if x.is_integer() and _IV_MIN <= x < -_IV_MIN:
        return int(x)
    return None


def perl_add(a: Number, b: Number) -> Number:
    """`a + b` as Perl computes it (pp_add with PERL_PRESERVE_IVUV)."""
    if isinstance(a, float) and isinstance(b, float):  # the both-doubles fast path
        x, y = _lossless(a), _lossless(b)
    else:
        x, y = _as_integer(a), _as_integer(b)
    if x is not None and y is not None and _IV_MIN <= x + y <= _UV_MAX:
        return x + y
    return float(a) + float(b)


def perl_sum(values: Iterable[Number]) -> Number:
    """`$total = 0; $total += $_ for @values`, left to right."""
    total: Number = 0
    for value in values:
        total = perl_add(total, value)
    return total


def integer_exponent(typed: str) -> Optional[int]:
    """The exponent as Perl's `**` sees a typed value such as "1.2", "2", "2.0" or
    "2e0": an integer for "2" and "2e0" (and "1.6e1"), a double for "2.0"."""
    if re.fullmatch(r"[+-]?\d+", typed):
        return int(typed)
    value = float(typed)
    if "." in typed and "e" not in typed.lower():
        return None  # "2.0": Perl reads a plain decimal as a double
    if value.is_integer() and abs(value) < _EXACT:
        return int(value)
    return None


def perl_pow(base: Number, exponent: float, exponent_as_integer: Optional[int]) -> Number:
    """`base ** exponent` as Perl computes it (pp_pow): exact integer powers when
    both are integers and the result fits in 64 bits, C's pow() otherwise."""
    b = _as_integer(base)
    if exponent_as_integer is not None and exponent_as_integer >= 0 and b is not None and b >= 0:
        if b.bit_length() * exponent_as_integer <= 64:
            return b**exponent_as_integer
        result = float(b) ** exponent_as_integer
        return int(result) if result.is_integer() and result < _EXACT else result
    return float(base) ** exponent


def perl_divide(a: Number, b: Number) -> float:
    """`a / b` (b != 0): exact when both are integers and b divides a, else in doubles."""
    x, y = _as_integer(a), _as_integer(b)
    if x is not None and y is not None and x % y == 0:
        return x // y
    return float(a) / float(b)


def perl_string(x: Number) -> str:
    """How Perl prints a number: integers in full, doubles with %.15g."""
    return str(x) if isinstance(x, int) else "%.15g" % x


def perl_int_string(x: Number) -> str:
    """How Perl prints `int(x)`: an integer when it fits in 64 bits, else the double."""
    if isinstance(x, int) or x < _UV_MAX + 0.5:
        return str(int(x))
    return "%.15g" % x


def round5(x: float) -> float:
    """ROUGE-1.5.5's `sprintf("%7.5f", x)`, read back as a number.

    Example:
        >>> round5(2 / 3)
        0.66667
    """
    return float("%.5f" % x)


def sequential_sum(values) -> float:
    """Left-to-right float sum, as Perl's loops add (Python 3.12's sum() compensates).

    Example:
        >>> sequential_sum([0.1, 0.2, 0.3])
        0.6000000000000001
    """
    total = 0
    for value in values:
        total += value
    return total
