/*
 * `gpufl diff --format json`: the result (analyze/ana_diff.h) as one JSON
 * document, every figure in ns, counts and percentages, for CI scripts.
 *
 * Shape (fields only ever added):
 *   { "baseline", "candidate": the labels, "threshold_pct", "min_impact_pct",
 *     "regressed": bool, "regressions", "improvements",
 *     "new_kernels", "gone_kernels", "count_changes", "kernels_partial",
 *     "session": { "wall_ns", "kernel_ns", "launches": VALUE },
 *     "devices": [ { "device", "name", "presence", "busy_ns", "idle_ns",
 *                    "kernels": VALUE } ],
 *     "kernels": [ { "name", CHANGE, "baseline_config", "candidate_config" } ],
 *     "scopes": [ { "tree": "scopes"|"nvtx", "path", "domain",
 *                   "baseline_gpu_ns", "candidate_gpu_ns", CHANGE } ],
 *     "stalls": [ { "kernel", "reason", "baseline_pct", "candidate_pct",
 *                   "baseline_top", "candidate_top" } ] or null,
 *     "pm": [ PM ] or null (diff_pm.h) }
 *   VALUE:  { "baseline", "candidate", "change_pct", "verdict" }
 *   CHANGE: "presence", "verdict", "per_item", "flags": [names],
 *           "baseline", "candidate": { "n", "total_ns", "mean_ns", "min_ns",
 *           "max_ns", "p50_ns", "p95_ns" } (null for the side without it),
 *           "total_change_ns", "total_change_pct", "p50_change_ns",
 *           "p50_change_pct", "noise_ns" (null when unknown),
 *           "per_item_change_pct", "per_item_noise_pct": what was judged
 *           (ana_diff.h: item_pct); kernels also "matched_configs",
 *           "paired_configs"
 *   A percentage is null when its baseline figure is 0.
 *
 * Threads: any; nothing shared.
 */
#ifndef GPUFL_PRESENT_DIFF_DIFF_JSON_H
#define GPUFL_PRESENT_DIFF_DIFF_JSON_H

#include <jansson.h>

#include "analyze/ana_diff.h"

/* A new reference, or NULL when out of memory. */
json_t *gpufl__diff_json(const gpufl__diff *d, const char *baseline, const char *candidate);

#endif /* GPUFL_PRESENT_DIFF_DIFF_JSON_H */
