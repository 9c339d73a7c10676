/*
 * Running aggregates of a session, kept by the collector as events pass:
 * counts per type, losses by reason, per-name scope and kernel times, host
 * and device peaks. They feed session.json and gpufl_generate_report(), so a
 * summary exists even for a session nobody reads back.
 *
 * Collector thread writes; snapshots are taken under the collector's stats
 * lock. Memory: one small record per distinct scope or kernel name.
 */
#ifndef GPUFL_COLLECT_STATS_H
#define GPUFL_COLLECT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

#define GFL_STATS_MAX_DEVICES 16

typedef struct gpufl__name_stats {
    uint32_t name;
    uint64_t count;
    uint64_t total_ns;
    uint64_t min_ns;
    uint64_t max_ns;
} gpufl__name_stats;

typedef struct gpufl__name_table {
    gpufl__name_stats *items;
    size_t n, cap;
    uint32_t *slot_of_id; /* name id -> index + 1, 0 = none */
    size_t ids_cap;
} gpufl__name_table;

typedef struct gpufl__host_stats {
    uint64_t samples;
    uint64_t proc_cpu_samples, proc_cpu_sum_x100;
    uint32_t proc_cpu_max_x100;
    uint64_t sys_cpu_samples, sys_cpu_sum_x100;
    uint32_t sys_cpu_max_x100;
    uint64_t rss_max;
    uint64_t ram_used_max, ram_total;
    uint32_t cpu_count;
} gpufl__host_stats;

typedef struct gpufl__device_stats {
    uint64_t samples;
    uint64_t util_samples, util_sum;
    uint32_t util_max;
    uint64_t mem_used_max, mem_total;
    bool has_temp;
    int32_t temp_max;
    uint32_t power_max_mw;
    bool has_energy;
    uint64_t energy_first_mj, energy_last_mj;
} gpufl__device_stats;

typedef struct gpufl__copy_stats {
    uint64_t count, bytes, total_ns;
} gpufl__copy_stats;

typedef struct gpufl__stats {
    uint64_t first_ts, last_ts;
    uint64_t events[GFL_EV_TYPE_COUNT];
    uint64_t dropped[GFL_DROP_REASON_COUNT][GFL_CHANNEL_COUNT];
    gpufl__name_table scopes; /* from scope_end events */
    gpufl__name_table kernels;
    uint64_t kernel_total_ns;
    gpufl__copy_stats copies[GFL_COPY_KIND_COUNT];
    gpufl__host_stats host;
    gpufl__device_stats dev[GFL_STATS_MAX_DEVICES];
    uint32_t ndev;      /* highest device index seen + 1 */
    bool out_of_memory; /* some name could not be aggregated */
    /* The session's crash (its first crash event), when crashed. */
    bool crashed;
    uint32_t crash_tid;
    uint64_t crash_ts;
    gfl_crash_payload crash;
    /* Which engine records (the last engine event), when recorded. */
    bool has_engine;
    gfl_engine_payload engine;
} gpufl__stats;

void gpufl__stats_init(gpufl__stats *s);
void gpufl__stats_free(gpufl__stats *s);
void gpufl__stats_add(gpufl__stats *s, const gfl_event *ev);
void gpufl__stats_drop(gpufl__stats *s, unsigned reason, unsigned channel, uint64_t n);
uint64_t gpufl__stats_dropped_total(const gpufl__stats *s);

#endif /* GPUFL_COLLECT_STATS_H */
