/*
 * The plots of `gpufl mem analyze --visualization`: small SVG files written
 * by hand (no plotting library), one per GPU of its memory layers over
 * time, and one per repeated scope of live memory after each repetition
 * with the line fitted through it.
 *
 * Command-line only; one thread. Sizes: a few hundred points per file.
 */
#ifndef GPUFL_CLI_MEM_PLOTS_H
#define GPUFL_CLI_MEM_PLOTS_H

#include <stddef.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"

/* Writes the plots into dir, which must exist. *written: files written
 * (may be NULL). Returns 0, or GPUFL_EIO with err naming the file that
 * could not be written and why (the files before it are left). */
int gpufl__mem_plots_write(const char *dir, const gpufl_trace *t, const gpufl__ana_mem_layers *layers,
                           const gpufl__ana_leaks *leaks, unsigned *written, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_CLI_MEM_PLOTS_H */
