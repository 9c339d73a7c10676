/*
 * The inside of a gpufl_trace (include/gpufl/trace.h): one column table per
 * kind of record (gpufl__rows), bound to the public structs; the tables of
 * distinct launch configurations, streams and callers that rows of device
 * work refer to; and the trace's own string table. Built from segments
 * (segment.h) by trace_merge.c, bound and read by trace.c.
 *
 * Memory per row is the sum of the row's nonzero columns: a kernel with its
 * start, duration, launch configuration, stream, caller, correlation and
 * API call offsets is 36 bytes, 32 when the session has one stream.
 */
#ifndef GPUFL_READ_TRACE_INTERNAL_H
#define GPUFL_READ_TRACE_INTERNAL_H

#include <stddef.h>

#include "core/event.h"
#include "gpufl/trace.h"
#include "read/columns.h"
#include "read/recset.h"
#include "read/strtab.h"

/* The columns of each table, by the names of the public struct's fields. */
// clang-format off
#define SCOPE_COLS(X) X(begin_ns) X(end_ns) X(id) X(parent) X(name) X(tid) X(depth) X(implicit) \
    X(domain) X(instant) X(unended) X(has_seq) X(seq)
#define KERNEL_COLS(X) X(start_ns) X(dur_ns) X(config_row) X(stream_row) X(caller_row)        \
    X(correlation) X(api_lead_ns) X(api_dur_ns) X(graph_id)
#define TRANSFER_COLS(X) X(start_ns) X(dur_ns) X(bytes) X(stream_row) X(caller_row)        \
    X(correlation) X(dst_device) X(kind) X(src_kind) X(dst_kind) X(value) X(api_lead_ns)    \
    X(api_dur_ns) X(graph_id)
#define SYNC_COLS(X) X(start_ns) X(dur_ns) X(stream_row) X(caller_row) X(correlation) X(kind) \
    X(cuda_event)
#define MEMORY_COLS(X) X(ts_ns) X(address) X(bytes) X(stream_row) X(caller_row) X(correlation) \
    X(is_free) X(kind) X(failed) X(framework)
#define DEVICE_SAMPLE_COLS(X) X(ts_ns) X(device) X(valid) X(gpu_util_pct) X(mem_util_pct)  \
    X(mem_used_bytes) X(mem_total_bytes) X(proc_mem_bytes) X(energy_mj) X(temp_c) X(power_mw) \
    X(sm_clock_mhz) X(mem_clock_mhz) X(throttle_reasons) X(pcie_rx_kbps) X(pcie_tx_kbps)      \
    X(mem_free_bytes) X(ecc_corrected) X(ecc_uncorrected) X(power_limit_mw) X(gfx_clock_mhz)  \
    X(mem_temp_c) X(fan_pct)
#define HOST_SAMPLE_COLS(X) X(ts_ns) X(valid) X(proc_cpu_pct_x100) X(sys_cpu_pct_x100) \
    X(ram_used_bytes) X(ram_total_bytes) X(proc_rss_bytes) X(cpu_count)
#define TRIGGER_COLS(X) X(ts_ns) X(tid) X(kind) X(detail) X(dump) X(outcome)
#define WINDOW_COLS(X) X(begin_ns) X(end_ns) X(index) X(reason) X(detail) X(unended)
#define ALLOCATOR_COLS(X) X(ts_ns) X(device) X(framework) X(reason) X(allocated) X(reserved)  \
    X(active) X(inactive_split) X(largest_free) X(peak_allocated) X(peak_reserved)          \
    X(requested) X(device_free) X(alloc_retries) X(ooms) X(caller_row)
#define PC_SAMPLE_COLS(X) X(ts_ns) X(since_ns) X(device) X(function) X(cubin_crc) X(pc_offset) \
    X(file) X(line) X(reason) X(samples)
#define PM_SAMPLE_COLS(X) X(ts_ns) X(end_ns) X(device) X(metric) X(value)
#define RANGE_METRIC_COLS(X) X(ts_ns) X(end_ns) X(device) X(range) X(scope_id) X(name) X(metric) X(value)
#define SASS_COLS(X) X(ts_ns) X(device) X(correlation) X(function) X(function_index) X(cubin_crc) \
    X(pc_offset) X(valid) X(inst_executed) X(thread_inst_executed) X(sectors) X(sectors_ideal)  \
    X(branch_targets) X(divergent_targets) X(file) X(line) X(caller_row)
#define CLOCK_COLS(X) X(ts_ns) X(mono_ns) X(wall_ns) X(uncertainty_ns) X(point) X(ntp)       \
    X(ntp_offset_ns) X(ntp_maxerror_ns) X(ntp_esterror_ns) X(ntp_status)
#define NCCL_COLL_COLS(X) X(start_ns) X(end_ns) X(comm_hash) X(seq) X(count) X(bytes) X(func) \
    X(datatype) X(algo) X(proto) X(rank) X(root) X(nranks) X(tid) X(device) X(channels) X(abi)  \
    X(bytes_known) X(p2p)
// clang-format on

#define GFL__SC(f) SC_##f,
#define GFL__KC(f) KC_##f,
#define GFL__TC(f) TC_##f,
#define GFL__YC(f) YC_##f,
#define GFL__MC(f) MC_##f,
#define GFL__DC(f) DC_##f,
#define GFL__HC(f) HC_##f,
#define GFL__RC(f) RC_##f,
#define GFL__WC(f) WC_##f,
#define GFL__AC(f) AC_##f,
#define GFL__PC(f) PC_##f,
#define GFL__PM(f) PM_##f,
#define GFL__RM(f) RM_##f,
#define GFL__QC(f) QC_##f,
#define GFL__CK(f) CK_##f,
#define GFL__NC(f) NC_##f,
enum { SCOPE_COLS(GFL__SC) SC_COUNT };
enum { KERNEL_COLS(GFL__KC) KC_COUNT };
enum { TRANSFER_COLS(GFL__TC) TC_COUNT };
enum { SYNC_COLS(GFL__YC) YC_COUNT };
enum { MEMORY_COLS(GFL__MC) MC_COUNT };
enum { DEVICE_SAMPLE_COLS(GFL__DC) DC_COUNT };
enum { HOST_SAMPLE_COLS(GFL__HC) HC_COUNT };
enum { TRIGGER_COLS(GFL__RC) RC_COUNT };
enum { WINDOW_COLS(GFL__WC) WC_COUNT };
enum { ALLOCATOR_COLS(GFL__AC) AC_COUNT };
enum { PC_SAMPLE_COLS(GFL__PC) PC_COUNT };
enum { PM_SAMPLE_COLS(GFL__PM) PM_COUNT };
enum { RANGE_METRIC_COLS(GFL__RM) RM_COUNT };
enum { SASS_COLS(GFL__QC) QC_COUNT };
enum { CLOCK_COLS(GFL__CK) CK_COUNT };
enum { NCCL_COLL_COLS(GFL__NC) NC_COUNT };

/* The row tables, numbered as GPUFL_TRACE_TABLE_* (trace.h) up to the host
 * samples; the tables appended to trace.h after its tables of distinct
 * values and strings follow them here (gpufl__table_of_public). */
enum {
    GFL_T_SCOPES = GPUFL_TRACE_TABLE_SCOPES,
    GFL_T_NVTX = GPUFL_TRACE_TABLE_NVTX,
    GFL_T_KERNELS = GPUFL_TRACE_TABLE_KERNELS,
    GFL_T_COPIES = GPUFL_TRACE_TABLE_COPIES,
    GFL_T_MEMSETS = GPUFL_TRACE_TABLE_MEMSETS,
    GFL_T_SYNCS = GPUFL_TRACE_TABLE_SYNCS,
    GFL_T_MEMORY = GPUFL_TRACE_TABLE_MEMORY,
    GFL_T_DEVICE_SAMPLES = GPUFL_TRACE_TABLE_DEVICE_SAMPLES,
    GFL_T_HOST_SAMPLES = GPUFL_TRACE_TABLE_HOST_SAMPLES,
    GFL_T_TRIGGERS,
    GFL_T_TRACE_WINDOWS, /* joined from opening and closing events in session order, as scopes */
    GFL_T_ALLOCATOR,
    GFL_T_PC_SAMPLES,
    GFL_T_PM_SAMPLES,
    GFL_T_RANGE_METRICS,
    GFL_T_SASS_METRICS,
    GFL_T_CLOCKS,
    GFL_T_NCCL_COLLECTIVES,
    GFL_T_COUNT
};

#define GFL_MAX_COLS 24

/* What a column's values are, for merging segments: plain values, or
 * numbers that each segment gives in its own numbering (rows of its own
 * tables of configurations, streams and callers; ids of its own strings)
 * and the merge turns into the trace's. */
enum { GFL_X_NONE = 0, GFL_X_CONFIG, GFL_X_STREAM, GFL_X_CALLER, GFL_X_STRING, GFL_X_COUNT };

typedef struct gpufl__table_desc {
    unsigned ncols;
    unsigned key;         /* the uint64_t column rows are sorted by */
    const uint8_t *sizes; /* bytes per value, per column */
    const uint8_t *xlat;  /* GFL_X_*, per column */
} gpufl__table_desc;

extern const gpufl__table_desc gpufl__tables[GFL_T_COUNT];

/* Rows whose times do not fit their 32-bit columns (trace.h). */
typedef struct gpufl__exact_vec {
    gpufl_trace_exact *v;
    size_t n, cap;
} gpufl__exact_vec;

/* Appends *e to x (doubling). 0, or GPUFL_ENOMEM with x unchanged. */
int gpufl__exact_push(gpufl__exact_vec *x, const gpufl_trace_exact *e) __attribute__((warn_unused_result));

typedef struct gpufl__rows {
    gpufl__table t;
    gpufl__col cols[GFL_MAX_COLS];
    gpufl__exact_vec exact; /* sorted by row once the table is finished */
} gpufl__rows;

/* Initializes r empty as table `table`. */
void gpufl__rows_init(gpufl__rows *r, unsigned table);
void gpufl__rows_free(gpufl__rows *r);
size_t gpufl__rows_memory(const gpufl__rows *r);

/* The records of the tables of distinct values (zeroed, then filled:
 * compared as bytes). */
typedef struct gpufl__config_rec {
    uint32_t name, mangled;
    uint32_t grid[3];
    uint16_t block[3];
    uint16_t registers;
    uint32_t static_smem, dynamic_smem, local_mem;
    uint16_t occupancy_x10000;
    uint8_t limiter;
    uint8_t pad;
} gpufl__config_rec;

typedef struct gpufl__stream_rec {
    uint32_t context, stream;
    uint16_t device;
    uint16_t pad;
} gpufl__stream_rec;

typedef struct gpufl__caller_rec {
    uint64_t scope, external_id;
    uint32_t tid, nvtx, stack;
    uint8_t external_kind;
    uint8_t pad[3];
} gpufl__caller_rec;

_Static_assert(sizeof(gpufl__config_rec) == 44, "config records are compared as bytes: no padding");
_Static_assert(sizeof(gpufl__stream_rec) == 12, "stream records are compared as bytes: no padding");
_Static_assert(sizeof(gpufl__caller_rec) == 32, "caller records are compared as bytes: no padding");

struct gpufl_trace {
    gpufl_trace_info info;
    gpufl__strtab strings;
    gpufl_trace_device *devices;
    gpufl__rows rows[GFL_T_COUNT];
    gpufl__recset configs, streams, callers; /* records, in row order; emptied by
                                                gpufl__trace_bind into dedup_cols */
    void *dedup_cols;                        /* the columns of configs_pub, streams_pub
                                                and callers_pub, in one block */
    size_t dedup_bytes;
    gpufl_trace_scopes scopes_pub, nvtx_pub;
    gpufl_trace_kernels kernels_pub;
    gpufl_trace_transfers copies_pub, memsets_pub;
    gpufl_trace_syncs syncs_pub;
    gpufl_trace_memory memory_pub;
    gpufl_trace_device_samples device_samples_pub;
    gpufl_trace_host_samples host_samples_pub;
    gpufl_trace_triggers triggers_pub;
    gpufl_trace_windows windows_pub;
    gpufl_trace_allocator allocator_pub;
    gpufl_trace_pc_samples pc_samples_pub;
    gpufl_trace_pm_samples pm_samples_pub;
    gpufl_trace_range_metrics range_metrics_pub;
    gpufl_trace_sass_metrics sass_pub;
    gpufl_trace_clocks clocks_pub;
    gpufl_trace_nccl_collectives nccl_pub;
    gpufl_trace_job job_pub;
    gpufl_trace_launch_configs configs_pub;
    gpufl_trace_streams streams_pub;
    gpufl_trace_callers callers_pub;
    uint64_t counts[256];                    /* events read, by type */
    uint64_t dropped[GFL_CHANNEL_COUNT][16]; /* the "dropped" events read, by channel and
                                                reason (info.dropped: see session facts) */
    /* The crash (crash, crash_stack and crash_scope events), when read. */
    gpufl_trace_crash crash;
    int has_crash;
    gpufl_trace_crash_frame *crash_frames;
    gpufl_trace_crash_scope *crash_scopes;
    size_t crash_scopes_cap;
    void *zero; /* the shared read-only zero columns */
    size_t zero_bytes;
    char source[4096];
    gpufl_trace_read read_pub; /* which files were read, and why */
    char read_files[1024], read_why[512];
};

struct gpufl__event_source;

/* An empty trace (no rows, strings "" only). NULL when out of memory. */
gpufl_trace *gpufl__trace_new(void);

/* Ends what never ended (gpufl__trace_end_open), points the public structs
 * at the merged columns (and every all-zero column at one shared zero
 * mapping), turns the tables of distinct values into columns, and fills
 * info.devices and info.source. Every loader's last step. 0 or
 * GPUFL_ENOMEM. */
int gpufl__trace_bind(gpufl_trace *t) __attribute__((warn_unused_result));

/* Reads every event of src into a new trace, on the calling thread.
 * Returns 0 with *out set, or a negative gpufl_err with a message in err. */
int gpufl__trace_build(struct gpufl__event_source *src, gpufl_trace **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* The session facts of src (identity, end, stop, losses, skipped counts)
 * into t->info. 0 or GPUFL_ENOMEM. */
int gpufl__trace_session_facts(gpufl_trace *t, const struct gpufl__event_source *src)
    __attribute__((warn_unused_result));

/* Opens path as gpufl_trace_open() does, reading on nthreads threads (0:
 * gpufl__read_threads()). */
int gpufl__trace_open(const char *path, unsigned nthreads, gpufl_trace **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* The same over one NDJSON log or .gflt file in memory (data must outlive
 * the call only); name is used in messages. */
int gpufl__trace_open_memory(const void *data, size_t n, const char *name, unsigned nthreads, gpufl_trace **out,
                             char *err, size_t err_len) __attribute__((warn_unused_result));

/* Ends what never ended: sets info.last_ns (the latest of the segments'
 * times, the session's end and start) and gives every scope and NVTX range
 * with no end (end_ns 0, not a mark) end_ns = info.last_ns and unended 1.
 * The one place that decides it, so that every reader and output shows the
 * same. Called by gpufl__trace_bind, after the session facts are in.
 * 0 or GPUFL_ENOMEM. */
int gpufl__trace_end_open(gpufl_trace *t) __attribute__((warn_unused_result));

/* Frees t and everything it holds (NULL is fine). */
void gpufl__trace_free(gpufl_trace *t);

/* Reads the job facts of session.json beside path into t->job_pub
 * (trace_job.c). 0, or GPUFL_ENOMEM; no session.json is not an error. */
int gpufl__trace_read_job(gpufl_trace *t, const char *path);

#endif /* GPUFL_READ_TRACE_INTERNAL_H */
