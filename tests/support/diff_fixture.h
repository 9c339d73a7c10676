/*
 * Two sessions analysed and compared, for the diff tests: the traces, both
 * reports and their diff, kept together to be freed together. Asserts
 * (cmocka) that each step succeeds.
 */
#ifndef GPUFL_TEST_DIFF_FIXTURE_H
#define GPUFL_TEST_DIFF_FIXTURE_H

#include "analyze/ana_diff.h"
#include "analyze/analysis.h"
#include "gpufl/trace.h"

typedef struct compared {
    gpufl_trace *bt, *ct;
    gpufl__ana_report b, c;
    gpufl__diff d;
} compared;

/* Takes the two traces: compared_free closes them. */
static inline void compare(compared *x, gpufl_trace *bt, gpufl_trace *ct)
{
    x->bt = bt;
    x->ct = ct;
    assert_int_equal(gpufl__analyze_report(bt, NULL, &x->b), 0);
    assert_int_equal(gpufl__analyze_report(ct, NULL, &x->c), 0);
    assert_int_equal(gpufl__diff_reports(bt, &x->b, ct, &x->c, NULL, &x->d), 0);
}

static inline void compared_free(compared *x)
{
    gpufl__diff_free(&x->d);
    gpufl__ana_report_free(&x->b);
    gpufl__ana_report_free(&x->c);
    gpufl_trace_close(x->bt);
    gpufl_trace_close(x->ct);
}

#endif /* GPUFL_TEST_DIFF_FIXTURE_H */
