/*
 * gpufl_job_report(): the text or JSON report of a job (its rank sessions,
 * or a job directory `gpufl merge` wrote) into memory, for bindings that
 * want what `gpufl report JOB` prints without running the command (the
 * Python package's gpufl.report.job_report). The same loader, alignment
 * and renderers as the command, so the bytes agree; a job directory's
 * up-to-date job.digest is used as the command uses it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_job.h"
#include "analyze/ana_job_load.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "present/report/report_job.h"

#define DEFAULT_TOP 20 /* as `gpufl report --top` */
#define MAX_TOP 10000

static int fail(char *err, size_t err_len, int rc, const char *msg, const char *arg)
{
    if (err && err_len)
        snprintf(err, err_len, "gpufl_job_report: %s%s%s%s", msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    return rc;
}

/* Renders the aligned job r into a new string. */
static int render(const gpufl__job_report *r, bool json, uint32_t top, char **text, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    if (!out)
        return GPUFL_ENOMEM;
    int rc = json ? gpufl__report_job_json(r, top, out) : gpufl__report_job_text(r, top, out);
    if (fclose(out) != 0 && !rc)
        rc = GPUFL_ENOMEM;
    if (rc) {
        free(buf);
        return GPUFL_ENOMEM;
    }
    *text = buf;
    *len = n;
    return 0;
}

GPUFL_API int gpufl_job_report(const char *const *paths, size_t n, const char *format, uint32_t top, unsigned flags,
                               char **text, size_t *len, char *err, size_t err_len)
{
    if (text)
        *text = NULL;
    if (len)
        *len = 0;
    if (!text || !len)
        return fail(err, err_len, GPUFL_EINVAL, "no place for the text", NULL);
    if (!paths || n == 0)
        return fail(err, err_len, GPUFL_EINVAL, "no session or job directory given", NULL);
    for (size_t i = 0; i < n; i++)
        if (!paths[i] || !paths[i][0])
            return fail(err, err_len, GPUFL_EINVAL, "an empty path", NULL);
    bool json = format && !strcmp(format, "json");
    if (!format || (!json && strcmp(format, "text")))
        return fail(err, err_len, GPUFL_EINVAL, "bad format (expected text or json):", format ? format : "(null)");
    if (top > MAX_TOP)
        return fail(err, err_len, GPUFL_EINVAL, "bad top (expected 1 to 10000, or 0 for 20)", NULL);
    if (flags & ~(unsigned)GPUFL_JOB_MIXED)
        return fail(err, err_len, GPUFL_EINVAL, "unknown flags", NULL);
    char why[1024];
    gpufl__job job;
    int rc = gpufl__job_load(paths, n, flags & GPUFL_JOB_MIXED, NULL, NULL, &job, why, sizeof why);
    if (rc != 0)
        return fail(err, err_len, rc, why, NULL);
    gpufl__job_report r;
    if (gpufl__job_report_build(job.ranks, job.n, &r) != 0) {
        gpufl__job_free(&job);
        return fail(err, err_len, GPUFL_ENOMEM, "out of memory aligning the job", NULL);
    }
    rc = render(&r, json, top ? top : DEFAULT_TOP, text, len);
    gpufl__job_report_free(&r);
    gpufl__job_free(&job);
    return rc ? fail(err, err_len, rc, "out of memory writing the report", NULL) : 0;
}
