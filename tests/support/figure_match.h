/*
 * Reading a formatted text back, left to right, against what it should
 * say: literal text, names, and figures in the units gpufl's renderers print
 * ("1.47 MiB", "38.34 ms", "12.5 %"). A figure is converted back and
 * compared with the expected value within the precision it was printed
 * with (plus the precision the expected value itself carries), so that two
 * outputs that round differently still agree, and two that show different
 * numbers do not.
 *
 * Tests only: a mismatch fails the test with the text, the position and
 * both values.
 */
#ifndef GPUFL_TEST_FIGURE_MATCH_H
#define GPUFL_TEST_FIGURE_MATCH_H

#include <stdint.h>

typedef struct fm_cursor {
    const char *text;  /* the whole text, for messages */
    const char *p;     /* what is left to read */
    const char *where; /* what the text is, for messages ("copies: paragraph") */
} fm_cursor;

void fm_begin(fm_cursor *m, const char *text, const char *where);
/* The text must go on with s exactly. */
void fm_lit(fm_cursor *m, const char *s);
/* An integer, exactly v. */
void fm_int(fm_cursor *m, int64_t v);
/* A duration as gpufl__hfmt_ns prints it ("850 ns", "[-]1.25 us", "3.10 ms",
 * "2.000 s"), within its precision plus tol ns of v. */
void fm_ns(fm_cursor *m, double v, double tol);
/* A size as gpufl__hfmt_bytes prints it ("512 B", "1.50 KiB" .. "PiB"). */
void fm_bytes(fm_cursor *m, double v);
/* A plain decimal number ("12", "3.25"), within its precision plus tol of v. */
void fm_real(fm_cursor *m, double v, double tol);
/* A percentage: a decimal number, then " %" (space) or "%" as given. */
void fm_pct(fm_cursor *m, double v, double tol, const char *suffix);
/* The text must be at its end. */
void fm_end(fm_cursor *m);

#endif /* GPUFL_TEST_FIGURE_MATCH_H */
