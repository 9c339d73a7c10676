/*
 * The inside of a gpufl_trace (include/gpufl/trace.h): one column table per
 * kind of record, bound to the public structs, and the trace's own string
 * table. Built by trace_build.c, read by trace.c.
 *
 * Memory per row is the sum of the row's nonzero columns: a kernel with
 * start, end, name, stream, context, correlation, launch geometry,
 * registers, occupancy, thread, scope and framework id is about 80 bytes.
 */
#ifndef GPUFL_READ_TRACE_INTERNAL_H
#define GPUFL_READ_TRACE_INTERNAL_H

#include <stddef.h>

#include "core/event.h"
#include "gpufl/trace.h"
#include "read/columns.h"
#include "read/strtab.h"

/* The columns of each table, by the names of the public struct's fields. */
#define SCOPE_COLS(X) X(begin_ns) X(end_ns) X(id) X(parent) X(name) X(tid) X(depth) X(implicit) \
    X(domain) X(instant)
#define KERNEL_COLS(X) X(start_ns) X(end_ns) X(name) X(mangled) X(device) X(stream) X(context) \
    X(correlation) X(grid) X(block) X(registers) X(static_smem) X(dynamic_smem) X(local_mem)    \
    X(occupancy_x10000) X(limiter) X(tid) X(scope) X(nvtx) X(external_id) X(stack) X(graph_id)   \
    X(api_start_ns) X(api_end_ns) X(external_kind)
#define TRANSFER_COLS(X) X(start_ns) X(end_ns) X(bytes) X(device) X(dst_device) X(stream) \
    X(correlation) X(kind) X(src_kind) X(dst_kind) X(tid) X(scope) X(api_start_ns)         \
    X(api_end_ns) X(context) X(value) X(external_id)
#define SYNC_COLS(X) X(start_ns) X(end_ns) X(device) X(stream) X(correlation) X(kind) X(tid) \
    X(scope) X(context) X(cuda_event) X(external_id)
#define MEMORY_COLS(X) X(ts_ns) X(address) X(bytes) X(device) X(is_free) X(kind) X(stream) \
    X(tid) X(scope) X(context) X(correlation) X(external_id)
#define DEVICE_SAMPLE_COLS(X) X(ts_ns) X(device) X(valid) X(gpu_util_pct) X(mem_util_pct)  \
    X(mem_used_bytes) X(mem_total_bytes) X(proc_mem_bytes) X(energy_mj) X(temp_c) X(power_mw) \
    X(sm_clock_mhz) X(mem_clock_mhz) X(throttle_reasons) X(pcie_rx_kbps) X(pcie_tx_kbps)      \
    X(mem_free_bytes) X(ecc_corrected) X(ecc_uncorrected) X(power_limit_mw) X(gfx_clock_mhz)  \
    X(mem_temp_c) X(fan_pct)
#define HOST_SAMPLE_COLS(X) X(ts_ns) X(valid) X(proc_cpu_pct_x100) X(sys_cpu_pct_x100) \
    X(ram_used_bytes) X(ram_total_bytes) X(proc_rss_bytes) X(cpu_count)

#define GFL__SC(f) SC_##f,
#define GFL__KC(f) KC_##f,
#define GFL__TC(f) TC_##f,
#define GFL__YC(f) YC_##f,
#define GFL__MC(f) MC_##f,
#define GFL__DC(f) DC_##f,
#define GFL__HC(f) HC_##f,
enum { SCOPE_COLS(GFL__SC) SC_COUNT };
enum { KERNEL_COLS(GFL__KC) KC_COUNT };
enum { TRANSFER_COLS(GFL__TC) TC_COUNT };
enum { SYNC_COLS(GFL__YC) YC_COUNT };
enum { MEMORY_COLS(GFL__MC) MC_COUNT };
enum { DEVICE_SAMPLE_COLS(GFL__DC) DC_COUNT };
enum { HOST_SAMPLE_COLS(GFL__HC) HC_COUNT };

typedef struct gpufl__scope_table {
    gpufl__table t;
    gpufl__col cols[SC_COUNT];
    gpufl_trace_scopes pub;
} gpufl__scope_table;

typedef struct gpufl__kernel_table {
    gpufl__table t;
    gpufl__col cols[KC_COUNT];
    gpufl_trace_kernels pub;
} gpufl__kernel_table;

typedef struct gpufl__transfer_table {
    gpufl__table t;
    gpufl__col cols[TC_COUNT];
    gpufl_trace_transfers pub;
} gpufl__transfer_table;

typedef struct gpufl__sync_table {
    gpufl__table t;
    gpufl__col cols[YC_COUNT];
    gpufl_trace_syncs pub;
} gpufl__sync_table;

typedef struct gpufl__memory_table {
    gpufl__table t;
    gpufl__col cols[MC_COUNT];
    gpufl_trace_memory pub;
} gpufl__memory_table;

typedef struct gpufl__device_sample_table {
    gpufl__table t;
    gpufl__col cols[DC_COUNT];
    gpufl_trace_device_samples pub;
} gpufl__device_sample_table;

typedef struct gpufl__host_sample_table {
    gpufl__table t;
    gpufl__col cols[HC_COUNT];
    gpufl_trace_host_samples pub;
} gpufl__host_sample_table;

struct gpufl_trace {
    gpufl_trace_info info;
    gpufl__strtab strings;
    gpufl_trace_device *devices;
    gpufl__scope_table scopes, nvtx;
    gpufl__kernel_table kernels;
    gpufl__transfer_table copies, memsets;
    gpufl__sync_table syncs;
    gpufl__memory_table memory;
    gpufl__device_sample_table device_samples;
    gpufl__host_sample_table host_samples;
    uint64_t counts[256];  /* events read, by type */
    void *zero;            /* the shared read-only zero columns */
    size_t zero_bytes;
    char source[4096];
};

struct gpufl__event_source;

/* Reads every event of src into a new trace. Returns 0 with *out set, or a
 * negative gpufl_err with a message in err. */
int gpufl__trace_build(struct gpufl__event_source *src, gpufl_trace **out, char *err,
                       size_t err_len) __attribute__((warn_unused_result));

/* Frees t and everything it holds (NULL is fine). */
void gpufl__trace_free(gpufl_trace *t);

#endif /* GPUFL_READ_TRACE_INTERNAL_H */
