/*
 * `gpufl replay-check --json`: the result (analyze/ana_replay.h) as one
 * JSON document, for CI scripts.
 *
 * Shape (fields only ever added):
 *   { "a", "b": the labels, "same": bool, "selection": words,
 *     "stream_pairing": "order_of_first_use",
 *     "lanes_compared", "lanes_differ", "ops_a", "ops_b",
 *     "graph_launches": { "compared": bool, "a", "b" },
 *     "lanes": [ LANE ] }
 *   LANE: { "lane": "stream"|"allocations"|"framework_blocks"|"allocator",
 *           "device", "device_b", "stream_a", "stream_b" (streams; null on
 *           the side without it), "mapped", "ops_a", "ops_b", "same",
 *           "first_divergence": null or { "change": "name"|"launch_config"|
 *             "size"|"other_op"|"extra"|"missing"|"replaced"|"diverged"|
 *             "only_a"|"only_b", "fields": [names] (launch_config),
 *             "index_a", "index_b" (null past the end), "span_a", "span_b",
 *             "resynced", "lines": [ { "tag": " "|"-"|"+", "index_a",
 *             "index_b" (null), "at_ns", "op": OP } ] },
 *           "divergences", "changed", "only_a", "only_b", "unaligned_a",
 *           "unaligned_b", "capped", "divergence_list": [ { "change",
 *             "fields", "index_a", "index_b", "span_a", "span_b", "resynced",
 *             "op_a", "op_b": the first op of each side or null } ] (the
 *           first --divergences), "counts": [ { "op": OP, "a", "b" } ],
 *           "counts_total", "looks_like_b": a stream id or null }
 *   OP: { "op": "kernel"|"memcpy"|"memset"|"alloc"|"free"|"allocator",
 *         "text", and by op: "name", "grid", "block", "registers",
 *         "smem_static", "smem_dynamic", "graph" | "kind", "src_kind",
 *         "dst_kind", "bytes", "graph" | "kind", "bytes", "value", "graph" |
 *         "kind", "bytes", "failed" | "reason", "allocated", "reserved" }
 *
 * Threads: any; nothing shared.
 */
#ifndef GPUFL_PRESENT_DIFF_REPLAY_JSON_H
#define GPUFL_PRESENT_DIFF_REPLAY_JSON_H

#include <jansson.h>

#include "analyze/ana_replay.h"

/* A new reference, or NULL when out of memory. */
json_t *gpufl__replay_json(const gpufl__replay *r, const char *a, const char *b, const char *selection);

#endif /* GPUFL_PRESENT_DIFF_REPLAY_JSON_H */
