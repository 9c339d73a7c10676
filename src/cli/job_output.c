/*
 * A job's report and aligned trace (job_output.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/job_output.h"
#include "gpufl/gpufl.h"
#include "present/export/export_job.h"
#include "present/report/report_job.h"

static void say_note(void *cmd, const char *msg) { fprintf(stderr, "gpufl %s: %s\n", (const char *)cmd, msg); }

int gpufl__job_load_cmd(const char *cmd, const char *const *paths, size_t n, bool mixed_ok, gpufl__job *out)
{
    char err[1024];
    if (gpufl__job_load(paths, n, mixed_ok, say_note, (void *)cmd, out, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl %s: %s\n", cmd, err);
        return GFL_EXIT_FAIL;
    }
    return GFL_EXIT_OK;
}

int gpufl__job_write_report(const char *cmd, const gpufl__job_report *r, int format, uint32_t top, const char *file)
{
    if (format == GFL_JOB_HTML) { /* a page is written whole or not at all: through a temporary */
        char err[1024];
        if (!file) {
            fprintf(stderr, "gpufl %s: --format html writes a file: name it with -o FILE\n", cmd);
            return GFL_EXIT_FAIL;
        }
        if (gpufl__report_job_html(r, top, file, err, sizeof err) != 0) {
            fprintf(stderr, "gpufl %s: %s\n", cmd, err);
            return GFL_EXIT_FAIL;
        }
        return GFL_EXIT_OK;
    }
    FILE *out = stdout;
    if (file && !(out = fopen(file, "we"))) {
        fprintf(stderr, "gpufl %s: cannot write '%s': %s\n", cmd, file, strerror(errno));
        return GFL_EXIT_FAIL;
    }
    int rc = format == GFL_JOB_JSON ? gpufl__report_job_json(r, top, out) : gpufl__report_job_text(r, top, out);
    if (file && fclose(out) != 0 && rc == 0)
        rc = -1;
    if (rc != 0) {
        fprintf(stderr, "gpufl %s: %s '%s'%s\n", cmd, rc == GPUFL_ENOMEM ? "out of memory writing" : "writing",
                file ? file : "(stdout)", rc == GPUFL_ENOMEM ? "" : " failed");
        return GFL_EXIT_FAIL;
    }
    return GFL_EXIT_OK;
}

int gpufl__job_report_cmd(const char *cmd, const char *const *paths, size_t n, int format, uint32_t top,
                          const char *file, int mixed_ok)
{
    gpufl__job job;
    if (gpufl__job_load_cmd(cmd, paths, n, mixed_ok, &job) != 0)
        return GFL_EXIT_FAIL;
    gpufl__job_report r;
    if (gpufl__job_report_build(job.ranks, job.n, &r) != 0) {
        fprintf(stderr, "gpufl %s: out of memory analyzing the job\n", cmd);
        gpufl__job_free(&job);
        return GFL_EXIT_FAIL;
    }
    int rc = gpufl__job_write_report(cmd, &r, format, top, file);
    gpufl__job_report_free(&r);
    gpufl__job_free(&job);
    return rc;
}

int gpufl__job_export_trace(const char *cmd, const gpufl__job_report *r, int format, const char *out)
{
    gpufl__export_rank *er = calloc(r->nranks, sizeof *er);
    char(*label)[160] = calloc(r->nranks, sizeof *label);
    if (!er || !label) {
        free(er);
        free(label);
        fprintf(stderr, "gpufl %s: out of memory\n", cmd);
        return GFL_EXIT_FAIL;
    }
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        if (k->rank >= 0)
            snprintf(label[i], sizeof label[i], "rank %lld (%s, pid %d)", (long long)k->rank, k->host, k->pid);
        else
            snprintf(label[i], sizeof label[i], "session %zu (%s, pid %d)", i, k->host, k->pid);
        /* pids of different hosts may be equal: the export's are the ranks' places, the real one is in the label */
        er[i] = (gpufl__export_rank){.path = k->path,
                                     .pid = (uint32_t)i + 1,
                                     .label = label[i],
                                     .sort_index = (int32_t)i,
                                     .shift_ns = k->shift_ns};
    }
    gpufl__export_result res;
    char err[1024];
    int rc = format == GFL_JOB_CHROME ? gpufl__export_chrome_job(er, r->nranks, out, &res, err, sizeof err)
                                      : gpufl__export_perfetto_job(er, r->nranks, out, &res, err, sizeof err);
    free(er);
    free(label);
    if (rc != 0) {
        fprintf(stderr, "gpufl %s: %s\n", cmd, err);
        return GFL_EXIT_FAIL;
    }
    printf("wrote %s: %zu ranks, %llu tracks, %llu slices, %llu bytes\n", out, r->nranks,
           (unsigned long long)res.timeline.tracks, (unsigned long long)(res.timeline.slices + res.timeline.instants),
           (unsigned long long)res.bytes);
    if (res.clamped)
        printf("note: %llu times fell before the job's time line began and were drawn at its start\n",
               (unsigned long long)res.clamped);
    return GFL_EXIT_OK;
}
