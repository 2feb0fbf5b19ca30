"""Perl's integer-preserving arithmetic, checked against what perl 5.36 printed for
the same expressions (the one-liners are in the comments)."""

from rouge_core.perl_numbers import integer_exponent, perl_add, perl_int_string, perl_pow, perl_string, perl_sum


def test_powers():
    # perl -e 'for $w ("16", "16.0", "1.6e1") { print 10**$w, "\n" }'
    #   -> 10000000000000000, 1e+16, 10000000000000000
    assert [perl_string(perl_pow(10, float(w), integer_exponent(w))) for w in ("16", "16.0", "1.6e1")] == [
        "10000000000000000", "1e+16", "10000000000000000",
    ]
    # perl -e '$n = 3.0 * 1.0; print $n**40' -> 1.21576654590569e+19 (too wide for 64 bits)
    assert perl_string(perl_pow(3, 40.0, 40)) == "1.21576654590569e+19"


def test_sums():
    # perl -e '$t=0; for (16**3.5, 81**3.5) { $t += $_ } print $t' -> 4799353
    assert perl_string(perl_sum([16**3.5, 81**3.5])) == "4799353"
    # perl -e '$s=0; $s+=$_ for (1.2883198567389832e18, 38058303643010.82, 16239948884899.801,
    #   5781924945706532.0); print $s' -> 1294156079937217828: the last two operands are
    # integral doubles, which Perl adds as integers (a double sum prints 1.29415607993722e+18).
    terms = [1.2883198567389832e18, 38058303643010.82, 16239948884899.801, 5781924945706532.0]
    assert perl_string(perl_sum(terms)) == "1294156079937217828"
    assert perl_string(perl_sum(terms[:3])) == "1.28837415499151e+18"
    # perl -e '$e = 2.0**61; print $e + 1' -> 2.30584300921369e+18 (an integer and a double past 2**53)
    assert perl_string(perl_add(2.0**61, 1)) == "2.30584300921369e+18"


def test_int():
    # perl -e 'print int(1.04092283006245e21), " ", int(1.5e19)' -> 1.04092283006245e+21 15000000000000000000
    assert perl_int_string(1.04092283006245e21) == "1.04092283006245e+21"
    assert perl_int_string(1.5e19) == "15000000000000000000"
