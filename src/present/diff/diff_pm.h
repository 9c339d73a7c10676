/*
 * `gpufl diff`'s PM sampling section (analyze/ana_diff.h, gpufl__diff_pm_metric)
 * as text and as JSON, for diff_text.c and diff_json.c.
 *
 * Threads: any; nothing shared.
 */
#ifndef GPUFL_PRESENT_DIFF_DIFF_PM_H
#define GPUFL_PRESENT_DIFF_DIFF_PM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "analyze/ana_diff.h"

/* Only when either session has PM samples: the metrics that moved (all:
 * every metric), each with its two means and the change (points for a
 * percentage, % of the baseline otherwise), under a line giving the rule. */
void gpufl__diff_text_pm(const gpufl__diff *d, bool all, FILE *out);

/* The member "pm": null when neither session has PM samples, else an
 * array of every (device, metric): "device", "metric", "unit"
 * (gpufl__ana_pm_unit_name), "presence", "baseline_mean",
 * "candidate_mean" (null on the side without it), "change" (candidate -
 * baseline, in the unit; null unless both), "change_pct" (of the
 * baseline; null unless both and the baseline's mean is not 0),
 * "baseline_max", "candidate_max", "baseline_samples",
 * "candidate_samples", "moved" (bool). A new reference, NULL when out of
 * memory. */
json_t *gpufl__diff_json_pm(const gpufl__diff *d);

#endif /* GPUFL_PRESENT_DIFF_DIFF_PM_H */
