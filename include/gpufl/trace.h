/*
 * gpufl: reading a recorded session back. Public C API.
 *
 * A trace is a session loaded into memory, whichever format it was written
 * in: a session directory (its NDJSON logs, or its trace.gflt), one NDJSON
 * log, or one .gflt file. It is columnar: for each kind of record, one array
 * per field, all of the same length, sorted by start time (stably: rows that
 * start at the same time keep the order they were recorded in), so analyses
 * scan what they need at memory speed. Names are ids into the trace's own
 * string table (gpufl_trace_string). What repeats across rows of device work
 * (launch configurations, streams, callers) is kept once in small tables
 * that rows refer to; times are a 64-bit start and 32-bit offsets. A loaded
 * Trace-engine session takes about 30-40 bytes of memory per event.
 *
 * gpufl_trace_open() reads a file on several threads (one per CPU): .gflt
 * chunks and NDJSON line ranges are decoded in parallel and their rows
 * merged in order, with the same result as reading on one thread.
 *
 * Everything here is read-only after gpufl_trace_open() and may be used from
 * any number of threads at once. No function writes to stdout or stderr;
 * errors come back as codes and messages.
 *
 * Damaged input is not fatal: a file cut short (a writer killed mid-write)
 * reads up to its last whole line or chunk, and the trace says how much was
 * skipped (gpufl_trace_info.skipped_*). A damaged line or chunk in the middle
 * of a file is an error that names the file and the line or byte offset.
 */
#ifndef GPUFL_TRACE_H
#define GPUFL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "gpufl/gpufl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpufl_trace gpufl_trace;

/* Optional fields are 0 when unknown; ids of "no string" are 0 (""). */

typedef struct gpufl_trace_device {
    uint32_t index;
    uint32_t name, uuid, pci_bus_id; /* string ids */
    int32_t cc_major, cc_minor;      /* -1 unknown */
    uint32_t sm_count;
    uint64_t memory_total_bytes;
    uint32_t power_limit_mw;
    uint32_t max_sm_clock_mhz, max_mem_clock_mhz;
    /* Appended fields. */
    uint32_t pcie_max_gen, pcie_max_width; /* the link's generation and lanes; 0 unknown */
} gpufl_trace_device;

/* gpufl_trace_info.source_format */
#define GPUFL_TRACE_NDJSON 0u
#define GPUFL_TRACE_GFLT 1u

typedef struct gpufl_trace_info {
    uint32_t format_version;                            /* of what was read: the .gflt file version, or the NDJSON
                                   schema version of its session_start lines (docs/FORMAT.md) */
    uint32_t session_id, app_name, host, gpufl_version; /* string ids */
    uint32_t driver_version, cuda_driver_version;       /* string ids */
    int32_t pid;
    uint64_t start_ns, end_ns; /* session timebase (CLOCK_MONOTONIC); end 0 = did not end */
    uint64_t start_wall_ns;    /* Unix epoch ns at start_ns */
    uint32_t ndevices;
    const gpufl_trace_device *devices;
    uint64_t dropped[16];   /* events lost, by drop reason (gfl_drop_reason numbering) */
    uint64_t skipped_bytes; /* of a torn last line or chunk */
    uint64_t skipped_lines; /* NDJSON lines, or .gflt events, of a type this reader does
                                   not know (a newer writer) */
    const char *source;     /* what was opened */
    /* Appended fields. */
    uint32_t source_format; /* GPUFL_TRACE_NDJSON or GPUFL_TRACE_GFLT */
    uint32_t stop_reason;   /* string id: why writing stopped early ("disk_cap",
                                   "free_space", "io_error"); 0 = it never stopped */
    uint32_t stop_detail;   /* string id: the cause in words */
    uint64_t stopped_at_ns;
    uint64_t lost[3];          /* per channel (device, scope, system): events accepted but not
                                   written because writing had stopped; their sum is also in
                                   dropped[1] (disk_limit) */
    uint64_t skipped_chunks;   /* .gflt chunks of a type this reader does not know */
    uint64_t last_ns;          /* the session's last recorded time: the latest time any
                                   event holds (a start, an end, a sample, the session's
                                   end); >= start_ns. Scopes and NVTX ranges that never
                                   ended end here (gpufl_trace_scopes.unended) */
    uint32_t engine_requested; /* string id: the profiling engine the session asked for
                                   ("pc_sampling"); 0 = not recorded (an older gpufl) */
    uint32_t engine;           /* string id: the engine that recorded ("trace") */
    uint32_t engine_plugin;    /* string id: the device plugin that ran ("cupti"), 0 none */
    uint32_t engine_reason;    /* string id: why engine is not engine_requested, 0 = it is */
} gpufl_trace_info;

/* Scopes and NVTX ranges: one row per interval, begin and end joined. A
 * scope or range that never ended (the program died inside it, or was still
 * running) has unended 1 and ends at the session's last recorded time,
 * end_ns == info.last_ns, so every reader gives it the same length. NVTX
 * marks are rows with instant 1 and end_ns == begin_ns; NVTX rows have
 * parent 0 and their own depth. */
typedef struct gpufl_trace_scopes {
    size_t n;
    const uint64_t *begin_ns, *end_ns;
    const uint64_t *id, *parent;
    const uint32_t *name; /* string id */
    const uint32_t *tid;
    const uint16_t *depth;
    const uint8_t *implicit; /* closed because its parent ended */
    /* Appended columns. */
    const uint32_t *domain; /* NVTX: string id of the domain, 0 default; scopes: 0 */
    const uint8_t *instant; /* NVTX marks: 1 */
    const uint8_t *unended; /* 1: never ended; end_ns is then info.last_ns */
    /* NVTX ranges that PyTorch pushes for its ops (torch.autograd.profiler.
     * emit_nvtx, which gpufl.torch.attach() switches on): the name is the
     * op's ("aten::addmm", "AddmmBackward0") and seq its sequence number,
     * which a backward op shares with the forward op it differentiates. The
     * recorder drops PyTorch's other per-call numbers from the text. */
    const uint8_t *has_seq; /* 1: seq holds the op's sequence number */
    const uint64_t *seq;
} gpufl_trace_scopes;

/*
 * Device work: kernels, copies and memsets, syncs and allocations.
 *
 * What repeats from one row to the next is kept once, in tables of its
 * own that rows refer to by a 32-bit row number: a training step launches
 * the same few hundred kernel configurations thousands of times, on a
 * handful of streams, from a handful of call sites. Each table lists its
 * distinct values in the order of their first use in the session, so that
 * a session with one stream (or one caller) has row 0 everywhere, and a
 * column that is 0 in every row costs nothing (see gpufl_trace_memory_bytes).
 */

/* Launch configurations: one row per distinct (name, mangled name, grid,
 * block, registers, shared memory, local memory, occupancy, limiter) among
 * the session's kernels. */
typedef struct gpufl_trace_launch_configs {
    size_t n;
    const uint32_t *name;             /* string id of the demangled name */
    const uint32_t *mangled;          /* string id of the mangled name; 0 when the same */
    const uint32_t (*grid)[3];        /* blocks, x y z */
    const uint16_t (*block)[3];       /* threads per block, x y z */
    const uint16_t *registers;        /* per thread */
    const uint32_t *static_smem;      /* shared memory per block, bytes */
    const uint32_t *dynamic_smem;     /* bytes */
    const uint32_t *local_mem;        /* local memory per thread, bytes */
    const uint16_t *occupancy_x10000; /* theoretical occupancy x 10000; 0 unknown */
    const uint8_t *limiter;           /* what limits occupancy: 0 unknown, 1 warps,
                                         2 registers, 3 shared memory, 4 blocks */
} gpufl_trace_launch_configs;

/* Streams: one row per distinct (device, context, stream) that device work
 * ran on (allocations included: their stream is 0 unless stream-ordered). */
typedef struct gpufl_trace_streams {
    size_t n;
    const uint16_t *device;  /* device index */
    const uint32_t *context; /* CUPTI's context id */
    const uint32_t *stream;  /* CUPTI's stream id (0: context-wide) */
} gpufl_trace_streams;

/* Callers: one row per distinct (thread, scope, NVTX range, external id,
 * stack) of the API calls that caused device work: who launched a kernel,
 * started a copy, waited, allocated. A field is 0 when it was not known. */
typedef struct gpufl_trace_callers {
    size_t n;
    const uint32_t *tid;          /* the calling thread */
    const uint64_t *scope;        /* innermost gpufl scope open on it (scope id) */
    const uint32_t *nvtx;         /* innermost NVTX range open on it (string id) */
    const uint64_t *external_id;  /* the framework's correlation id (e.g. a PyTorch op) */
    const uint8_t *external_kind; /* CUPTI's kind of external_id */
    const uint32_t *stack;        /* CPU stack at the call (a `stack` event's id) */
} gpufl_trace_callers;

/*
 * Times of device work are a 64-bit start and 32-bit offsets from it:
 *
 *   dur_ns       end - start
 *   api_lead_ns  start - api_start: how long after its API call began the
 *                work started (the launch latency); 0 = no API call known
 *                (api_start and api_end are 0)
 *   api_dur_ns   api_end - api_start: how long the call took
 *
 * A value that does not fit (work longer than 4.29 s, a call made more than
 * 4.29 s before its work started, times out of order in damaged input) is
 * GPUFL_TRACE_EXACT in the column, and the row's exact times are in the
 * table's `exact` array, sorted by row. The accessors below
 * (gpufl_trace_kernel_end(), ...) hide this: use them rather than adding
 * offsets by hand.
 */
#define GPUFL_TRACE_EXACT UINT32_MAX

typedef struct gpufl_trace_exact {
    uint64_t row;                      /* the row of the table these times belong to */
    uint64_t end_ns;                   /* its end */
    uint64_t api_start_ns, api_end_ns; /* its API call (0: none) */
} gpufl_trace_exact;

typedef struct gpufl_trace_kernels {
    size_t n;
    const uint64_t *start_ns;
    const uint32_t *dur_ns;      /* end - start, or GPUFL_TRACE_EXACT */
    const uint32_t *config_row;  /* row of `configs` */
    const uint32_t *stream_row;  /* row of `streams` */
    const uint32_t *caller_row;  /* row of `callers` */
    const uint32_t *correlation; /* CUPTI correlation id */
    const uint32_t *api_lead_ns; /* start - api_start, 0 none, or GPUFL_TRACE_EXACT */
    const uint32_t *api_dur_ns;  /* api_end - api_start, or GPUFL_TRACE_EXACT */
    const uint32_t *graph_id;    /* ran as a node of this CUDA graph, 0 none */
    size_t nexact;
    const gpufl_trace_exact *exact;            /* rows whose times do not fit the columns */
    const gpufl_trace_launch_configs *configs; /* the trace's tables (gpufl_trace_get_*) */
    const gpufl_trace_streams *streams;
    const gpufl_trace_callers *callers;
    /* Appended columns. */
} gpufl_trace_kernels;

/* Copies and memsets (kind: gfl_copy_kind for copies, 0 for memsets; a
 * memset's memory kind is its dst_kind, its byte value `value`). */
typedef struct gpufl_trace_transfers {
    size_t n;
    const uint64_t *start_ns;
    const uint32_t *dur_ns; /* as for kernels */
    const uint64_t *bytes;
    const uint32_t *stream_row; /* row of `streams` */
    const uint32_t *caller_row; /* row of `callers` */
    const uint32_t *correlation;
    const uint16_t *dst_device; /* destination device of a peer copy */
    const uint8_t *kind, *src_kind, *dst_kind;
    const uint32_t *value;                    /* memsets: the byte value */
    const uint32_t *api_lead_ns, *api_dur_ns; /* as for kernels */
    const uint32_t *graph_id;
    size_t nexact;
    const gpufl_trace_exact *exact;
    const gpufl_trace_streams *streams;
    const gpufl_trace_callers *callers;
    /* Appended columns. */
} gpufl_trace_transfers;

/* The host waiting for the device (kind: gfl_sync_kind). */
typedef struct gpufl_trace_syncs {
    size_t n;
    const uint64_t *start_ns;
    const uint32_t *dur_ns;     /* as for kernels (syncs have no API times) */
    const uint32_t *stream_row; /* row of `streams`; stream 0 for context-wide waits */
    const uint32_t *caller_row; /* row of `callers` */
    const uint32_t *correlation;
    const uint8_t *kind;
    const uint32_t *cuda_event; /* CUPTI's id of the event waited on, 0 none */
    size_t nexact;
    const gpufl_trace_exact *exact;
    const gpufl_trace_streams *streams;
    const gpufl_trace_callers *callers;
    /* Appended columns. */
} gpufl_trace_syncs;

/* Allocations and frees (is_free 1), in time order. */
typedef struct gpufl_trace_memory {
    size_t n;
    const uint64_t *ts_ns, *address, *bytes;
    const uint32_t *stream_row; /* row of `streams` (stream 0 unless stream-ordered) */
    const uint32_t *caller_row; /* row of `callers` */
    const uint32_t *correlation;
    const uint8_t *is_free, *kind; /* kind: gfl_mem_kind */
    const gpufl_trace_streams *streams;
    const gpufl_trace_callers *callers;
    /* Appended columns. */
    const uint8_t *failed;    /* 1: an allocation that failed for lack of memory: address 0,
                                 bytes what was asked; never live, never freed */
    const uint8_t *framework; /* 1: a block of a framework's caching allocator (a PyTorch
                                 tensor), inside memory the driver rows allocated; its
                                 caller's stack is a source (Python) stack */
} gpufl_trace_memory;

/* A framework's caching allocator (PyTorch), in time order: its state on
 * one device whenever the program's gpufl package recorded it (docs/
 * FORMAT.md, `allocator`). allocated <= active <= reserved; reserved -
 * allocated is memory cached for reuse, inactive_split the part of it in
 * split segments, which cannot be given back. Bytes; 0 = unknown for
 * largest_free, peak_*, requested and device_free. */
typedef struct gpufl_trace_allocator {
    size_t n;
    const uint64_t *ts_ns;
    const uint16_t *device;
    const uint32_t *framework; /* string id: "pytorch" */
    const uint32_t *reason;    /* string id: "sample", "step", "scope", "oom", "snapshot", ... */
    const uint64_t *allocated, *reserved, *active, *inactive_split, *largest_free;
    const uint64_t *peak_allocated, *peak_reserved;
    const uint64_t *requested;   /* "oom": the bytes asked for */
    const uint64_t *device_free; /* the driver's free memory then, when known */
    const uint32_t *alloc_retries, *ooms;
    const uint32_t *caller_row; /* row of `callers`: thread and innermost scope */
    const gpufl_trace_callers *callers;
} gpufl_trace_allocator;

/* Warp samples of PC sampling (docs/FORMAT.md, `pc_sample`), one row per
 * PC and stall reason of each collection, in time order: `samples` warps
 * of `function` were seen at `pc_offset` for `reason` on `device` between
 * since_ns and ts_ns. The samples carry no kernel (CUPTI's continuous
 * mode): the launches of `function` running then are the kernels they fall
 * in. `reason` "selected" is a warp that issued an instruction; every
 * other reason is a stall. file/line: 0 when the module has no line info. */
typedef struct gpufl_trace_pc_samples {
    size_t n;
    const uint64_t *ts_ns, *since_ns;
    const uint16_t *device;
    const uint32_t *function; /* string id: the function's name in its module (mangled) */
    const uint64_t *cubin_crc, *pc_offset;
    const uint32_t *file; /* string id, 0 unknown */
    const uint32_t *line;
    const uint32_t *reason; /* string id: "long_scoreboard", "math_pipe_throttle", "selected", ... */
    const uint32_t *samples;
} gpufl_trace_pc_samples;
/* PM sampling (option pm_sampling_metrics): what the GPU's performance
 * monitor counted, one row per sampling interval and metric, in time
 * order per device (docs/FORMAT.md, `pm_sample`). value is in the
 * metric's own unit: its name says which (".pct_of_peak_sustained_elapsed"
 * a percentage, ".per_second" a rate). */
typedef struct gpufl_trace_pm_samples {
    size_t n;
    const uint64_t *ts_ns;  /* the interval's start, session clock */
    const uint64_t *end_ns; /* its end */
    const uint16_t *device;
    const uint32_t *metric; /* string id: the CUPTI metric name */
    const double *value;
} gpufl_trace_pm_samples;
/* SASS metrics (engine sass_metrics or deep; docs/FORMAT.md,
 * `sass_metric`): one row per instruction a kernel launch executed, in the
 * order they were recorded (a launch's rows together). The launch is the
 * kernel row of the same correlation id; caller_row gives its thread and
 * scope. A count is meaningful only where its bit is set in `valid`
 * (1 inst_executed, 2 thread_inst_executed, 4 sectors and sectors_ideal,
 * 8 branch_targets and divergent_targets). */
typedef struct gpufl_trace_sass_metrics {
    size_t n;
    const uint64_t *ts_ns; /* when the launch's counts were read */
    const uint16_t *device;
    const uint32_t *correlation;
    const uint32_t *function; /* string id, demangled as kernel names */
    const uint32_t *function_index;
    const uint32_t *cubin_crc;
    const uint32_t *pc_offset; /* bytes into the function */
    const uint16_t *valid;
    const uint64_t *inst_executed;        /* warp-level executions */
    const uint64_t *thread_inst_executed; /* active threads summed over them */
    const uint64_t *sectors;              /* 32-byte global memory sectors */
    const uint64_t *sectors_ideal;        /* sectors a fully coalesced access would touch */
    const uint64_t *branch_targets;
    const uint64_t *divergent_targets;
    const uint32_t *file;       /* string id, 0 = unknown */
    const uint32_t *line;       /* 0 = unknown */
    const uint32_t *caller_row; /* row of `callers` */
    const gpufl_trace_callers *callers;
} gpufl_trace_sass_metrics;

/* The range profiler (engine range_profiler): hardware counters of the GPU
 * work inside one range, one row per range and metric, in time order
 * (docs/FORMAT.md, `range_metric`). A range is the time the profiled
 * thread spent in one gpufl scope with no scope open inside it, or one
 * NVTX range (option range_profiler_ranges). value is in the metric's own
 * unit: its name says which (".sum" of bytes or cycles, ".pct..." a
 * percentage, ".per_second" a rate). */
typedef struct gpufl_trace_range_metrics {
    size_t n;
    const uint64_t *ts_ns;  /* the range's start, session clock (host side) */
    const uint64_t *end_ns; /* its end */
    const uint16_t *device;
    const uint32_t *range;    /* the range's number in the session, from 1 */
    const uint64_t *scope_id; /* the scope measured (gpufl_trace_scopes.id), 0 = an NVTX range */
    const uint32_t *name;     /* string id: the scope's or NVTX range's name */
    const uint32_t *metric;   /* string id: the CUPTI metric name */
    const double *value;
} gpufl_trace_range_metrics;

/* Clock pairs (docs/FORMAT.md, `clock`): the session clock (ts_ns) read
 * together with CLOCK_MONOTONIC and CLOCK_REALTIME at the session's start,
 * every 10 s and at its end, in time order, so that sessions of one job
 * can be put on one time line: on one host through mono_ns exactly, across
 * hosts through wall_ns, good to what the kernel says of its NTP/PTP
 * discipline then. mono_ns and wall_ns were read within uncertainty_ns of
 * ts_ns (between two reads of the session clock that far apart, ts_ns
 * their middle). ntp is 0 when the kernel gave no NTP state (then the
 * ntp_* columns are 0); ntp_maxerror_ns bounds the wall clock's error. */
typedef struct gpufl_trace_clocks {
    size_t n;
    const uint64_t *ts_ns; /* session clock */
    const uint64_t *mono_ns, *wall_ns;
    const uint32_t *uncertainty_ns;
    const uint32_t *point;        /* string id: "start", "periodic", "end" */
    const uint32_t *ntp;          /* string id: "synchronised", "unsynchronised"; 0 unknown */
    const int64_t *ntp_offset_ns; /* the kernel's last measured offset to its reference */
    const uint64_t *ntp_maxerror_ns, *ntp_esterror_ns;
    const uint32_t *ntp_status; /* adjtimex status bits (STA_*) */
} gpufl_trace_clocks;

/* NCCL collectives (docs/FORMAT.md, `nccl_coll`) as NCCL's profiler plugin
 * interface described them when they were enqueued, in start order
 * (host clock): the communicator (comm_hash, the same on all its ranks),
 * this process's rank in it, the sequence number, NCCL's names of the
 * operation, datatype, algorithm and protocol (string ids; 0 when the
 * version of the interface gave none), and the payload: count elements,
 * bytes = count x the datatype's size where bytes_known is 1. For
 * AllGather count is what each rank sends, for ReduceScatter what each
 * receives (NCCL's API). end_ns is when NCCL stopped the event (the
 * enqueue was done), not when the GPU finished: the GPU time is the NCCL
 * kernel's. p2p marks a Send or Recv, whose root column is the peer. */
typedef struct gpufl_trace_nccl_collectives {
    size_t n;
    const uint64_t *start_ns, *end_ns; /* end_ns 0 = unknown */
    const uint64_t *comm_hash, *seq, *count;
    const uint64_t *bytes;            /* valid where bytes_known */
    const uint32_t *func, *datatype;  /* string ids: "AllReduce", "ncclFloat32" (0 = not given) */
    const uint32_t *algo, *proto;     /* string ids, 0 = not given */
    const int32_t *rank, *root;       /* -1 = unknown / none */
    const uint32_t *nranks;           /* 0 = unknown */
    const uint32_t *tid;              /* the thread NCCL called the plugin on */
    const uint16_t *device;           /* 0: the plugin does not know the device */
    const uint8_t *channels;          /* 0 = not given */
    const uint8_t *abi;               /* NCCL profiler interface version, 0 = not the plugin */
    const uint8_t *bytes_known, *p2p; /* 1 / 0 */
} gpufl_trace_nccl_collectives;

/* GPU samples; a field's bit in `valid` (GFL_DEV_* of docs/FORMAT.md order:
 * 1 gpu util, 2 mem util, 4 memory, 8 temp, 16 mem temp, 32 power, 64 power
 * limit, 128 energy, 256 clocks, 512 throttle, 1024 pcie, 2048 fan, 4096 ecc,
 * 8192 process memory) says whether it was reported. */
typedef struct gpufl_trace_device_samples {
    size_t n;
    const uint64_t *ts_ns;
    const uint16_t *device;
    const uint32_t *valid;
    const uint8_t *gpu_util_pct, *mem_util_pct;
    const uint64_t *mem_used_bytes, *mem_total_bytes, *proc_mem_bytes, *energy_mj;
    const int16_t *temp_c;
    const uint32_t *power_mw, *sm_clock_mhz, *mem_clock_mhz;
    const uint64_t *throttle_reasons;
    const uint32_t *pcie_rx_kbps, *pcie_tx_kbps;
    /* Appended columns. */
    const uint64_t *mem_free_bytes, *ecc_corrected, *ecc_uncorrected;
    const uint32_t *power_limit_mw, *gfx_clock_mhz;
    const int16_t *mem_temp_c;
    const uint8_t *fan_pct;
} gpufl_trace_device_samples;

typedef struct gpufl_trace_host_samples {
    size_t n;
    const uint64_t *ts_ns;
    const uint32_t *valid; /* 1 process CPU, 2 machine CPU, 4 RAM, 8 RSS */
    const uint32_t *proc_cpu_pct_x100, *sys_cpu_pct_x100;
    const uint64_t *ram_used_bytes, *ram_total_bytes, *proc_rss_bytes;
    /* Appended columns. */
    const uint32_t *cpu_count;
} gpufl_trace_host_samples;

/* The crash of a session, when the program died by a fatal signal that
 * gpufl caught (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT; docs/FORMAT.md,
 * `crash`): the signal, the thread it hit, that thread's CPU stack and the
 * gpufl scopes every thread had open at that moment. */
typedef struct gpufl_trace_crash_frame {
    uint32_t module;  /* string id of the module's path; 0 = code in no file (JIT) */
    uint32_t present; /* 0: the piece of the stack holding this frame was not read */
    uint64_t offset;  /* in the module's ELF file; the address when module is 0. Frame 0
                         is the interrupted instruction, the others return addresses */
} gpufl_trace_crash_frame;

typedef struct gpufl_trace_crash_scope {
    uint64_t id, parent; /* as in gpufl_trace_scopes */
    uint64_t begin_ns;
    uint32_t tid;
    uint32_t name;  /* string id */
    uint32_t depth; /* 0 = outermost on its thread */
} gpufl_trace_crash_scope;

typedef struct gpufl_trace_crash {
    uint64_t ts_ns;             /* when the signal was caught */
    uint32_t tid;               /* the thread it was delivered to (the faulting one for a fault) */
    int32_t signal;             /* Linux signal number */
    int32_t code;               /* si_code */
    uint32_t signal_name;       /* string id: "SIGSEGV", ... */
    uint32_t code_name;         /* string id: "SEGV_MAPERR", "SI_TKILL", ...; 0 unknown */
    uint32_t action;            /* what followed: 0 the default action, 1 the program's handler,
                             2 the program ignores the signal (a fault still killed it) */
    uint64_t address;           /* faulting address (SEGV, BUS) or instruction (ILL, FPE); 0 sent */
    uint32_t sender_pid;        /* a sent signal (kill, raise, abort): who sent it; 0 a fault */
    uint32_t stack_unavailable; /* 1: no stack could be taken (libunwind missing) */
    uint32_t stack_truncated;   /* 1: the stack was deeper than what was kept */
    uint32_t nframes;
    const gpufl_trace_crash_frame *frames; /* innermost first */
    uint32_t nscopes;
    uint32_t scopes_lost;                  /* open scopes the record had no room for */
    const gpufl_trace_crash_scope *scopes; /* by thread, outermost first */
} gpufl_trace_crash;

/* Triggers that fired (docs/FORMAT.md, `trigger`): a request for a dump
 * (gpufl_dump(), a signal, a rule that crossed its limit, a crash, an
 * out-of-memory), in time order, and what came of it. */
typedef struct gpufl_trace_triggers {
    size_t n;
    const uint64_t *ts_ns;
    const uint32_t *tid;    /* the thread that asked; 0 for a rule the recorder checked */
    const uint32_t *kind;   /* string id: "dump", "signal", "crash", "oom", "slow_scope", ... */
    const uint32_t *detail; /* string id: the reason given, or the rule and the value; 0 none */
    const uint32_t *dump;   /* string id: the dump's directory name (dumps/<dump>); 0 none */
    const uint8_t *outcome; /* 0 dumped, 1 storm (too soon after the last dump), 2 no_window */
} gpufl_trace_triggers;

/* Trace windows (docs/FORMAT.md, `trace_window`): the stretches in which
 * device tracing ran, by begin. A window whose closing event was not read
 * (the program died inside it, or was still tracing) has unended 1 and
 * ends at the session's last recorded time, as unended scopes do. */
typedef struct gpufl_trace_windows {
    size_t n;
    const uint64_t *begin_ns, *end_ns;
    const uint32_t *index;  /* the session's numbering, from 1 */
    const uint32_t *reason; /* string id: "schedule", "steps", "trigger", "request" */
    const uint32_t *detail; /* string id; 0 none */
    const uint8_t *unended;
} gpufl_trace_windows;

/*
 * Names of the values of the trace's enum columns, as NDJSON and the JSON
 * report write them ("HtoD", "pinned", "stream_wait_event", "registers",
 * "ring_full", "kernel"), from the one table every output prints from, so
 * a binding needs no table of its own. Value 0 of the kinds and of the
 * limiter is "unknown"; event type 0 is "none".
 */
enum {
    GPUFL_TRACE_ENUM_COPY_KIND = 0,   /* kind of gpufl_trace_get_copies() rows */
    GPUFL_TRACE_ENUM_MEM_KIND,        /* src_kind, dst_kind of transfers; kind of memory rows */
    GPUFL_TRACE_ENUM_SYNC_KIND,       /* kind of gpufl_trace_syncs rows */
    GPUFL_TRACE_ENUM_LIMITER,         /* limiter of gpufl_trace_launch_configs rows */
    GPUFL_TRACE_ENUM_DROP_REASON,     /* the index of gpufl_trace_info.dropped */
    GPUFL_TRACE_ENUM_EVENT_TYPE,      /* event_type of gpufl_trace_event_count() */
    GPUFL_TRACE_ENUM_TRIGGER_OUTCOME, /* outcome of gpufl_trace_triggers rows */
    GPUFL_TRACE_ENUM_COUNT            /* appended to, never renumbered */
};

/* The name of value in family; NULL for a value past those this library
 * knows (a newer writer's) or an unknown family, so that a family is
 * listed by counting up from 0 to the first NULL. Any thread. */
GPUFL_API const char *gpufl_trace_enum_name(unsigned family, unsigned value);

/*
 * Opens path: a session directory, a .log file (NDJSON) or a .gflt file. A
 * directory is read from trace.gflt when it has one, else from its NDJSON
 * logs (rotated parts included, in order). Returns 0 with *out set, or a
 * negative gpufl_err with a message in err (file, line or offset, problem)
 * and *out NULL.
 */
GPUFL_API int gpufl_trace_open(const char *path, gpufl_trace **out, char *err, size_t err_len);
GPUFL_API void gpufl_trace_close(gpufl_trace *t);

GPUFL_API const gpufl_trace_info *gpufl_trace_get_info(const gpufl_trace *t);
/* The text of string id (NUL-terminated); "" for an unknown id. */
GPUFL_API const char *gpufl_trace_string(const gpufl_trace *t, uint32_t id);

GPUFL_API const gpufl_trace_scopes *gpufl_trace_get_scopes(const gpufl_trace *t);
GPUFL_API const gpufl_trace_scopes *gpufl_trace_get_nvtx(const gpufl_trace *t);
GPUFL_API const gpufl_trace_launch_configs *gpufl_trace_get_launch_configs(const gpufl_trace *t);
GPUFL_API const gpufl_trace_streams *gpufl_trace_get_streams(const gpufl_trace *t);
GPUFL_API const gpufl_trace_callers *gpufl_trace_get_callers(const gpufl_trace *t);
GPUFL_API const gpufl_trace_kernels *gpufl_trace_get_kernels(const gpufl_trace *t);
GPUFL_API const gpufl_trace_transfers *gpufl_trace_get_copies(const gpufl_trace *t);
GPUFL_API const gpufl_trace_transfers *gpufl_trace_get_memsets(const gpufl_trace *t);
GPUFL_API const gpufl_trace_syncs *gpufl_trace_get_syncs(const gpufl_trace *t);
GPUFL_API const gpufl_trace_memory *gpufl_trace_get_memory(const gpufl_trace *t);
GPUFL_API const gpufl_trace_device_samples *gpufl_trace_get_device_samples(const gpufl_trace *t);
GPUFL_API const gpufl_trace_host_samples *gpufl_trace_get_host_samples(const gpufl_trace *t);
/* The session's crash, or NULL when none was recorded (the first, if the
 * program survived one and crashed again in the same session). */
GPUFL_API const gpufl_trace_crash *gpufl_trace_get_crash(const gpufl_trace *t);
GPUFL_API const gpufl_trace_triggers *gpufl_trace_get_triggers(const gpufl_trace *t);
GPUFL_API const gpufl_trace_windows *gpufl_trace_get_trace_windows(const gpufl_trace *t);
GPUFL_API const gpufl_trace_allocator *gpufl_trace_get_allocator(const gpufl_trace *t);
GPUFL_API const gpufl_trace_pc_samples *gpufl_trace_get_pc_samples(const gpufl_trace *t);
GPUFL_API const gpufl_trace_pm_samples *gpufl_trace_get_pm_samples(const gpufl_trace *t);
GPUFL_API const gpufl_trace_range_metrics *gpufl_trace_get_range_metrics(const gpufl_trace *t);
GPUFL_API const gpufl_trace_sass_metrics *gpufl_trace_get_sass_metrics(const gpufl_trace *t);
GPUFL_API const gpufl_trace_clocks *gpufl_trace_get_clocks(const gpufl_trace *t);
GPUFL_API const gpufl_trace_nccl_collectives *gpufl_trace_get_nccl_collectives(const gpufl_trace *t);

/*
 * The exact times of row i (i < n) of a table, whatever the columns hold:
 * end, API call start and end (0 when the work has no API call). Constant
 * time, or a binary search of `exact` for the rare rows listed there.
 */
GPUFL_API uint64_t gpufl_trace_kernel_end(const gpufl_trace_kernels *k, size_t i);
GPUFL_API uint64_t gpufl_trace_kernel_api_start(const gpufl_trace_kernels *k, size_t i);
GPUFL_API uint64_t gpufl_trace_kernel_api_end(const gpufl_trace_kernels *k, size_t i);
GPUFL_API uint64_t gpufl_trace_transfer_end(const gpufl_trace_transfers *x, size_t i);
GPUFL_API uint64_t gpufl_trace_transfer_api_start(const gpufl_trace_transfers *x, size_t i);
GPUFL_API uint64_t gpufl_trace_transfer_api_end(const gpufl_trace_transfers *x, size_t i);
GPUFL_API uint64_t gpufl_trace_sync_end(const gpufl_trace_syncs *y, size_t i);

/* Events of each type, as read (before joining begin/end into scopes). */
GPUFL_API size_t gpufl_trace_event_count(const gpufl_trace *t, unsigned event_type);

/* Bytes of memory the trace holds (for the reader benchmark). Columns that
 * are 0 in every row (a field the session never recorded) share one
 * read-only zero mapping and count nothing. */
GPUFL_API size_t gpufl_trace_memory_bytes(const gpufl_trace *t);

/* gpufl_trace_table_memory_bytes() tables. */
enum {
    GPUFL_TRACE_TABLE_SCOPES = 0,
    GPUFL_TRACE_TABLE_NVTX,
    GPUFL_TRACE_TABLE_KERNELS,
    GPUFL_TRACE_TABLE_COPIES,
    GPUFL_TRACE_TABLE_MEMSETS,
    GPUFL_TRACE_TABLE_SYNCS,
    GPUFL_TRACE_TABLE_MEMORY,
    GPUFL_TRACE_TABLE_DEVICE_SAMPLES,
    GPUFL_TRACE_TABLE_HOST_SAMPLES,
    GPUFL_TRACE_TABLE_LAUNCH_CONFIGS,
    GPUFL_TRACE_TABLE_STREAMS,
    GPUFL_TRACE_TABLE_CALLERS,
    GPUFL_TRACE_TABLE_STRINGS, /* the string table */
    GPUFL_TRACE_TABLE_TRIGGERS,
    GPUFL_TRACE_TABLE_TRACE_WINDOWS,
    GPUFL_TRACE_TABLE_ALLOCATOR,
    GPUFL_TRACE_TABLE_PC_SAMPLES,
    GPUFL_TRACE_TABLE_PM_SAMPLES,
    GPUFL_TRACE_TABLE_RANGE_METRICS,
    GPUFL_TRACE_TABLE_SASS_METRICS,
    GPUFL_TRACE_TABLE_CLOCKS,
    GPUFL_TRACE_TABLE_NCCL_COLLECTIVES,
    GPUFL_TRACE_TABLE_COUNT /* appended to, never renumbered */
};

/* The part of gpufl_trace_memory_bytes() that one table holds (its columns
 * and its `exact` array); 0 for an unknown table. The parts add up to the
 * whole but for the trace's own small fixed structures. */
GPUFL_API size_t gpufl_trace_table_memory_bytes(const gpufl_trace *t, unsigned table);

/*
 * Which files gpufl_trace_open() read, and why those. A session directory
 * written with log_format both holds the session twice, in its NDJSON logs
 * and in trace.gflt, and after a crash, a kill or a full disk the two can
 * differ: the copy that holds more is read, decided from the ends of the
 * files (docs/FORMAT.md, "Which copy readers read"). Grows only at the end.
 */
typedef struct gpufl_trace_read {
    uint32_t struct_size; /* sizeof(gpufl_trace_read) of the library */
    uint32_t format;      /* GPUFL_TRACE_NDJSON or GPUFL_TRACE_GFLT: the copy read */
    const char *files;    /* the files read, named within the session directory:
                              "trace.gflt", "device.log, scope.log, system.log", ... */
    const char *why;      /* one sentence for people: why these files (what each copy
                              showed when there were two) */
    uint32_t copies;      /* 2: the directory held the session twice and `why` says
                              how the copy was chosen; 1: there was one */
} gpufl_trace_read;

/* Valid until gpufl_trace_close(t); never NULL for an open trace. */
GPUFL_API const gpufl_trace_read *gpufl_trace_get_read(const gpufl_trace *t);

/*
 * Where the session stands in a job of many processes, as its launcher
 * (torchrun, SLURM, Open MPI, MPICH) set it: session.json's `job` object
 * (docs/FORMAT.md), read from the session directory opened or the one
 * holding the file opened. present 0 when there is none (no launcher, no
 * session.json beside a lone file, an older gpufl). A count is valid only
 * when its GPUFL_TRACE_JOB_* bit is in `has`. Grows only at the end.
 */
#define GPUFL_TRACE_JOB_RANK 1u
#define GPUFL_TRACE_JOB_LOCAL_RANK 2u
#define GPUFL_TRACE_JOB_WORLD_SIZE 4u
#define GPUFL_TRACE_JOB_LOCAL_WORLD_SIZE 8u

typedef struct gpufl_trace_job {
    uint32_t struct_size; /* sizeof(gpufl_trace_job) of the library */
    uint32_t present;     /* 1: the session has job facts */
    uint32_t launcher;    /* string id: "torchrun", "torch.distributed", "openmpi", "mpich", "slurm" */
    uint32_t has;         /* GPUFL_TRACE_JOB_* */
    uint32_t rank, local_rank, world_size, local_world_size;
    uint32_t id;                   /* string id: the job's id, 0 unknown */
    uint32_t id_from;              /* string id: the variable it came from ("SLURM_JOB_ID") */
    uint32_t step;                 /* string id: SLURM's step, 0 none */
    uint32_t master;               /* string id: MASTER_ADDR:MASTER_PORT, 0 none */
    uint32_t host;                 /* string id: the host it ran on */
    uint32_t cuda_visible_devices; /* string id: as the launcher set it, 0 unset */
} gpufl_trace_job;

/* Valid until gpufl_trace_close(t); never NULL for an open trace. */
GPUFL_API const gpufl_trace_job *gpufl_trace_get_job(const gpufl_trace *t);

/*
 * The report of a loaded session, in memory: the bytes `gpufl report PATH
 * --format FORMAT --top TOP` prints, except that CPU stacks are listed by
 * id (naming their frames needs libdw, which `gpufl report` and `gpufl
 * stacks` load and the library does not). format: "text" or "json"; top:
 * hot kernels listed, 1 to 10000, or 0 for the default (20). For bindings
 * (Python) that want the report without running the command.
 *
 * Returns 0 with *text a NUL-terminated string of *len bytes that the
 * caller frees with gpufl_trace_free_text(); GPUFL_EINVAL for a bad format
 * or top (the message in err), GPUFL_ENOMEM. Any thread; prints nothing.
 */
GPUFL_API int gpufl_trace_report(const gpufl_trace *t, const char *format, uint32_t top, char **text, size_t *len,
                                 char *err, size_t err_len);
GPUFL_API void gpufl_trace_free_text(char *text);

/*
 * The report of a job, in memory: the bytes `gpufl report PATHS... --format
 * FORMAT --top TOP` prints for the sessions of a job's ranks, or for one
 * job directory (`gpufl merge`'s, or one `gpufl run` filled): ranks side by
 * side, aligned clocks, NCCL collectives, stragglers, imbalance. Sessions
 * are read one at a time; a job directory's up-to-date job.digest is read
 * instead. format: "text" or "json"; top: straggler events and kernels
 * listed, 1 to 10000, or 0 for 20. flags: GPUFL_JOB_MIXED reads sessions
 * of different job ids together (`--mixed`).
 *
 * Returns 0 with *text (free with gpufl_trace_free_text()) of *len bytes;
 * GPUFL_EINVAL for bad arguments, a session that cannot be read (named),
 * two sessions of one rank or of different jobs (the message in err);
 * GPUFL_ENOMEM. Any thread; prints nothing.
 */
#define GPUFL_JOB_MIXED 1u
GPUFL_API int gpufl_job_report(const char *const *paths, size_t n, const char *format, uint32_t top, unsigned flags,
                               char **text, size_t *len, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_TRACE_H */
