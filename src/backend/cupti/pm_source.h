/*
 * PM sampling as a recorder source (option pm_sampling_metrics): the CUPTI
 * plugin starts the GPU's performance monitor sampling on every device at
 * session start, and a thread of its own decodes every 100 ms and pushes
 * one GFL_EV_PM_SAMPLE per sample and metric, on the session clock.
 *
 * Threads: start and stop are called by the plugin's start and stop (the
 * session's lifecycle lock); the decoding thread pushes with push_wait, as
 * the plugin's own threads do. Rates: 10 us samples of 6 metrics are
 * 600000 events a second; a decode of 100 ms of them takes a few ms.
 */
#ifndef GPUFL_BACKEND_CUPTI_PM_SOURCE_H
#define GPUFL_BACKEND_CUPTI_PM_SOURCE_H

#include <stdbool.h>

#include "core/plugin_api.h"

/* The metrics of pm_sampling_metrics=default, on Hopper's names. */
#define GFL_PM_DEFAULT_METRICS                                                                                         \
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed,"                                                             \
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,"                                                 \
    "dram__bytes_read.sum.per_second,dram__bytes_write.sum.per_second,"                                                \
    "pcie__read_bytes.sum.per_second,pcie__write_bytes.sum.per_second"

/* Starts PM sampling when host's options ask for it. A device that cannot
 * (no permission, a metric it lacks, another tool holding the counters)
 * is logged as a warning and left out; the session goes on. Metrics that
 * do not fit one pass with those before them are left out, and said. */
void gfl_pm_source_start(const gpufl_plugin_host *host);

/* Whether the options ask for PM sampling. */
bool gfl_pm_source_wanted(const gpufl_options *o);

/* Stops the thread after a last decode and gives the devices back; with
 * process_exiting, only the thread (CUPTI may be torn down already). */
void gfl_pm_source_stop(bool process_exiting);

#endif /* GPUFL_BACKEND_CUPTI_PM_SOURCE_H */
