/*
 * double.c - the shortest decimal text that reads back to a double
 * (lct_json_format_double): exact integers and short fractions from
 * integer arithmetic, the rest by trying 15, 16 and 17 digits.
 */
#include "render/render_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lct_json.h"

typedef unsigned __int128 u128;

static const uint64_t pow10_u64[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
    1000000000u, 10000000000u, 100000000000u, 1000000000000u,
    10000000000000u, 100000000000000u, 1000000000000000u,
    10000000000000000u, 100000000000000000u, 1000000000000000000u,
    10000000000000000000u};

/* 10^k for k <= 38, from the table. */
static u128 pow10_u128(unsigned k)
{
    return k < 20 ? pow10_u64[k] : (u128)pow10_u64[19] * pow10_u64[k - 19];
}

/* d rounded to `prec` significant digits, as %.*g rounds the exact binary
 * value: *digits (prec digits, or prec+1 = 10^prec when rounding carried)
 * for d = m / 2^s, scaled by 10^t.  Returns whether that decimal reads
 * back to d, decided exactly: within half an ulp of d (a quarter below a
 * power of two), a tie only for an even mantissa. */
static bool round_trip_digits(uint64_t m, unsigned s, unsigned t,
                              uint64_t *digits)
{
    u128 x = (u128)m * pow10_u128(t); /* < 2^53 * 10^21 < 2^123 */
    u128 unit = (u128)1 << s;
    u128 q = x >> s, rem = x & (unit - 1);
    /* Round half to even, as printf does for an exact tie. */
    if (rem * 2 > unit || (rem * 2 == unit && (q & 1)))
        q++;
    *digits = (uint64_t)q;
    u128 back = q << s; /* the decimal, on d's scale */
    bool below = back < x;
    u128 err = below ? x - back : back - x;
    u128 limit = pow10_u128(t);                 /* 10^t = one ulp, scaled */
    bool narrow = below && m == (UINT64_C(1) << 52); /* half gap below */
    u128 twice = err * (narrow ? 4 : 2);
    return twice < limit || (twice == limit && (m & 1) == 0);
}

/*
 * The shortest of 15, 16, 17 significant digits that reads back to d, as
 * the general path finds with snprintf and strtod, but by exact 128-bit
 * integer arithmetic, for 1e-4 <= |d| < 1e15 (where %g writes fixed
 * notation and d = m / 2^s with s in 3..66).  Returns the length, or 0
 * to leave d to the general path.
 */
static size_t format_fixed_exact(double d, char *out)
{
    double a = d < 0 ? -d : d;
    if (!(a >= 1e-4 && a < 1e15))
        return 0;
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int exp2 = (int)(bits >> 52) - 1075; /* a = m * 2^exp2 */
    uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    if (exp2 > 0 || exp2 < -66)
        return 0;
    unsigned s = (unsigned)-exp2;
    /* 10^e10 <= a < 10^(e10+1): from the binary exponent (log10(2) is
     * about 1233/4096), then one step to correct the estimate, counted on
     * the exact integer part or, below 1, on a's scaled value. */
    int e10 = ((exp2 + 52) * 1233) >> 12;
    if (e10 >= 0 && a >= (double)pow10_u64[e10 + 1])
        e10++;
    else if (e10 >= 0 && a < (double)pow10_u64[e10])
        e10--;
    else if (e10 < 0 && a * (double)pow10_u64[-e10] < 1.0)
        e10--;
    else if (e10 < 0 && a * (double)pow10_u64[-e10 - 1] >= 1.0)
        e10++;
    for (unsigned prec = 15; prec <= 17; prec++) {
        int t = (int)prec - 1 - e10;
        if (t < 0 || t > 21)
            return 0;
        uint64_t dg;
        bool ok = round_trip_digits(m, s, (unsigned)t, &dg);
        int point = e10; /* exponent of the first digit */
        if (dg >= (uint64_t)pow10_u128(prec)) { /* 9.99.. rounded up */
            dg /= 10;
            point++;
        } else if (dg < (uint64_t)pow10_u128(prec - 1)) {
            return 0; /* e10 misjudged: leave it to the general path */
        }
        if (!ok)
            continue;
        char digits[24], *end = digits + sizeof digits;
        char *dp = lct__u64_digits(dg, end);
        size_t nd = (size_t)(end - dp);
        while (nd > 1 && dp[nd - 1] == '0') /* %g drops trailing zeros */
            nd--;
        char *q = out;
        if (d < 0)
            *q++ = '-';
        if (point < 0) {
            *q++ = '0';
            *q++ = '.';
            for (int z = -1; z > point; z--)
                *q++ = '0';
            memcpy(q, dp, nd);
            q += nd;
        } else {
            size_t whole = (size_t)point + 1;
            for (size_t i = 0; i < whole; i++)
                *q++ = i < nd ? dp[i] : '0';
            *q++ = '.';
            if (nd > whole) {
                memcpy(q, dp + whole, nd - whole);
                q += nd - whole;
            } else {
                *q++ = '0'; /* keep it a float for readers: 1 -> 1.0 */
            }
        }
        *q = '\0';
        return (size_t)(q - out);
    }
    return 0;
}

size_t lct_json_format_double(double d, char out[LCT_DOUBLE_BUFSIZE])
{
    if (!isfinite(d)) {
        memcpy(out, "null", 5);
        return 4;
    }
    size_t fast = format_fixed_exact(d, out);
    if (fast)
        return fast;
    int n = 0;
    /* Shortest of 15, 16, 17 digits that reads back exactly; %g already
     * drops trailing zeros, so "0.1" stays "0.1". */
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(out, LCT_DOUBLE_BUFSIZE, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            break;
    }
    if (!strpbrk(out, ".en")) { /* keep it a float for readers: 1 -> 1.0 */
        memcpy(out + n, ".0", 3);
        n += 2;
    }
    return (size_t)n;
}

