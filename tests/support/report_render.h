/*
 * The text or JSON report of a trace, rendered into memory, for the tests
 * of the analyses' report sections. Header-only; failures fail the
 * calling cmocka test (include cmocka first).
 */
#ifndef GPUFL_TEST_REPORT_RENDER_H
#define GPUFL_TEST_REPORT_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"

/* The whole report of t (JSON when json), analysed with the defaults; the
 * caller frees it. */
static inline char *tu_render_report(const gpufl_trace *t, bool json)
{
    gpufl__ana_report rep;
    assert_int_equal(gpufl__analyze_report(t, NULL, &rep), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(json ? gpufl__report_json(t, &rep, f) : gpufl__report_text(t, &rep, NULL, f), 0);
    assert_int_equal(fclose(f), 0);
    gpufl__ana_report_free(&rep);
    return buf;
}

#endif /* GPUFL_TEST_REPORT_RENDER_H */
