/*
 * Reading figures back against expected values (figure_match.h).
 */
#include "figure_match.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fm_begin(fm_cursor *m, const char *text, const char *where)
{
    m->text = text;
    m->p = text;
    m->where = where;
}

#define FAIL(m, ...)                                                                                                   \
    do {                                                                                                               \
        char why_[512];                                                                                                \
        snprintf(why_, sizeof why_, __VA_ARGS__);                                                                      \
        fail_msg("%s: %s\n  text: \"%s\"\n  at:   \"%s\"", (m)->where, why_, (m)->text, (m)->p);                       \
    } while (0)

void fm_lit(fm_cursor *m, const char *s)
{
    size_t n = strlen(s);
    if (strncmp(m->p, s, n))
        FAIL(m, "expected \"%s\"", s);
    m->p += n;
}

/* A decimal number at the cursor: its value and the weight of its last
 * printed digit (1 for an integer, 0.01 for two decimals). */
static double number(fm_cursor *m, double *ulp)
{
    const char *s = m->p;
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        FAIL(m, "expected a number");
    while (isdigit((unsigned char)*s))
        s++;
    *ulp = 1;
    if (*s == '.' && isdigit((unsigned char)s[1])) {
        s++;
        while (isdigit((unsigned char)*s)) {
            *ulp /= 10;
            s++;
        }
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s", (int)(s - m->p), m->p);
    m->p = s;
    return strtod(buf, NULL);
}

/* printed (shown to within half a unit of its last digit) against v. */
static void compare(fm_cursor *m, const char *start, double printed, double half_ulp, double v, double tol)
{
    double slack = half_ulp + tol + fabs(v) * 1e-12;
    if (fabs(printed - v) > slack) {
        m->p = start;
        FAIL(m, "shows %.17g, which is not %.17g (within %.3g)", printed, v, slack);
    }
}

void fm_int(fm_cursor *m, int64_t v)
{
    const char *start = m->p;
    double ulp;
    double x = number(m, &ulp);
    if (ulp != 1 || x != (double)v) {
        m->p = start;
        FAIL(m, "expected the integer %lld", (long long)v);
    }
}

void fm_ns(fm_cursor *m, double v, double tol)
{
    const char *start = m->p;
    double ulp, x = number(m, &ulp), unit = 1;
    if (!strncmp(m->p, " ns", 3)) {
        if (ulp != 1)
            FAIL(m, "nanoseconds with decimals");
    } else if (!strncmp(m->p, " us", 3)) {
        unit = 1e3;
    } else if (!strncmp(m->p, " ms", 3)) {
        unit = 1e6;
    } else if (!strncmp(m->p, " s", 2) && !isalpha((unsigned char)m->p[2])) {
        unit = 1e9;
    } else {
        FAIL(m, "expected a time unit (ns, us, ms, s)");
    }
    m->p += unit == 1e9 ? 2 : 3;
    compare(m, start, x * unit, ulp * unit / 2, v, tol);
}

void fm_bytes(fm_cursor *m, double v)
{
    static const char *const units[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
    const char *start = m->p;
    double ulp, x = number(m, &ulp), unit = 1;
    size_t u = 0;
    for (; u < sizeof units / sizeof units[0]; u++, unit *= 1024) {
        size_t n = strlen(units[u]);
        if (!strncmp(m->p, units[u], n) && !isalpha((unsigned char)m->p[n]))
            break;
    }
    if (u == sizeof units / sizeof units[0])
        FAIL(m, "expected a size unit (B, KiB, MiB, GiB, TiB, PiB)");
    m->p += strlen(units[u]);
    compare(m, start, x * unit, ulp * unit / 2, v, 0);
}

void fm_real(fm_cursor *m, double v, double tol)
{
    const char *start = m->p;
    double ulp, x = number(m, &ulp);
    compare(m, start, x, ulp / 2, v, tol);
}

void fm_pct(fm_cursor *m, double v, double tol, const char *suffix)
{
    fm_real(m, v, tol);
    fm_lit(m, suffix);
}

void fm_end(fm_cursor *m)
{
    if (*m->p)
        FAIL(m, "more text than expected");
}
