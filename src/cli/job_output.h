/*
 * A job's outputs that the commands share: its report in a format
 * (`gpufl report JOB`, and job.json of `gpufl merge`), and its aligned
 * timeline (`gpufl export JOB`, and the trace `gpufl merge` writes).
 */
#ifndef GPUFL_CLI_JOB_OUTPUT_H
#define GPUFL_CLI_JOB_OUTPUT_H

#include <stdint.h>

#include "analyze/ana_job_load.h"

enum { GFL_JOB_TEXT, GFL_JOB_JSON, GFL_JOB_HTML };
enum { GFL_JOB_PERFETTO, GFL_JOB_CHROME };

/* The job's ranks (analyze/ana_job_load.h), its notes and error said on
 * stderr as "gpufl CMD: ...". Exit code. */
int gpufl__job_load_cmd(const char *cmd, const char *const *paths, size_t n, bool mixed_ok, gpufl__job *out);

/* The report of the job at paths into file (stdout when NULL). Exit code. */
int gpufl__job_report_cmd(const char *cmd, const char *const *paths, size_t n, int format, uint32_t top,
                          const char *file, int mixed_ok);

/* The job's ranks, aligned (gpufl__job_report_build done), as one trace
 * at out: a process per rank. Prints what it wrote; exit code. */
int gpufl__job_export_trace(const char *cmd, const gpufl__job_report *r, int format, const char *out);

/* The report of an aligned job into file. Exit code. */
int gpufl__job_write_report(const char *cmd, const gpufl__job_report *r, int format, uint32_t top, const char *file);

#endif /* GPUFL_CLI_JOB_OUTPUT_H */
