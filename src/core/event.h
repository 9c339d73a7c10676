/*
 * The event model: every record that crosses a ring is one fixed-size
 * gfl_event of 128 bytes (two cache lines), a 16-byte header and a payload
 * selected by the type tag. Names never travel: they are interned to 32-bit
 * ids (intern.h) and the writers turn ids back into text.
 *
 * The largest payload (a kernel: timings, launch geometry, resources and
 * attribution) sets the size; smaller events waste the rest, which is the
 * price of a ring with no variable-length bookkeeping. Fields only ever get
 * appended to a payload, never reordered.
 *
 * This header is shared with the device plugins (CUPTI, synthetic), which are
 * separate shared objects: it must stay plain C with fixed-width fields.
 */
#ifndef GPUFL_CORE_EVENT_H
#define GPUFL_CORE_EVENT_H

#include <stdint.h>

/* Append-only: the numbers are written into .gflt traces. */
typedef enum gfl_event_type {
    GFL_EV_NONE = 0,
    GFL_EV_SCOPE_BEGIN = 1,
    GFL_EV_SCOPE_END = 2,
    GFL_EV_SYSTEM_START = 3,
    GFL_EV_SYSTEM_STOP = 4,
    GFL_EV_HOST_METRICS = 5,
    GFL_EV_DEVICE_METRICS = 6,
    GFL_EV_KERNEL = 7,
    GFL_EV_MEMCPY = 8,
    GFL_EV_MEMSET = 9,
    GFL_EV_SYNC = 10,
    GFL_EV_MEM_ALLOC = 11,
    GFL_EV_MEM_FREE = 12,
    GFL_EV_DROPPED = 13,
    GFL_EV_LOG = 14,
    GFL_EV_DEVICE_INFO = 15,
    GFL_EV_NVTX_RANGE = 16,
    GFL_EV_NVTX_MARK = 17,
    GFL_EV_GRAPH_LAUNCH = 18,
    GFL_EV_STACK = 19,
    GFL_EV_CRASH = 20,        /* a fatal signal (collect/crash.h) */
    GFL_EV_CRASH_STACK = 21,  /* a piece of the crashing thread's CPU stack */
    GFL_EV_CRASH_SCOPE = 22,  /* a scope open on some thread when it crashed */
    GFL_EV_ENGINE = 23,       /* the engine asked for and the one recording (session/plugin.h) */
    GFL_EV_TRIGGER = 24,      /* a trigger fired: the flight window was dumped, or why not */
    GFL_EV_TRACE_WINDOW = 25, /* device tracing ran for a window (opened, then closed) */
    GFL_EV_ALLOCATOR = 26,    /* the state of a framework's caching allocator (PyTorch) */
    GFL_EV_PC_SAMPLE = 27,    /* warp samples at one instruction, by stall reason (PC sampling) */
    GFL_EV_SASS_METRIC = 28,  /* one SASS instruction's counts over one kernel launch (SASS metrics engine) */
    GFL_EV_RANGE_METRIC = 29, /* one metric of one range profiler range (backend/cupti/range_profiler.h) */
    GFL_EV_PM_SAMPLE = 30,    /* one metric of one PM sampling interval (backend/cupti/pm_source.h) */
    GFL_EV_CLOCK = 31,     /* the session clock read against CLOCK_MONOTONIC and CLOCK_REALTIME (core/clock_pair.h) */
    GFL_EV_NCCL_COLL = 32, /* an NCCL collective as NCCL enqueued it (inject/nccl_profiler.c) */
    GFL_EV_TYPE_COUNT = 33
} gfl_event_type;

/* Which log file an event goes to (DESIGN §6). */
typedef enum gfl_channel {
    GFL_CHANNEL_DEVICE = 0,
    GFL_CHANNEL_SCOPE = 1,
    GFL_CHANNEL_SYSTEM = 2,
    GFL_CHANNEL_COUNT
} gfl_channel;

/* Why events were lost; counted separately and written as "dropped" events. */
typedef enum gfl_drop_reason {
    GFL_DROP_RING_FULL = 0,      /* the producer's ring was full */
    GFL_DROP_DISK_LIMIT = 1,     /* writing stopped: disk cap, free-space floor, I/O error */
    GFL_DROP_STALE = 2,          /* timestamp before the session started */
    GFL_DROP_SCOPE_DEPTH = 3,    /* scope nesting deeper than GFL_SCOPE_MAX_DEPTH */
    GFL_DROP_INTERN_FULL = 4,    /* the string table reached its cap */
    GFL_DROP_BAD_EVENT = 5,      /* malformed event from a plugin */
    GFL_DROP_CUPTI = 6,          /* records CUPTI itself dropped (no buffer) */
    GFL_DROP_OUT_OF_SESSION = 7, /* device timestamps far outside the session */
    GFL_DROP_REASON_COUNT
} gfl_drop_reason;

#define GFL_EVENT_SIZE 128

typedef struct gfl_event_header {
    uint8_t type;    /* gfl_event_type */
    uint8_t flags;   /* per-type GFL_F_* bits */
    uint16_t device; /* device index, 0 for host events */
    uint32_t tid;    /* OS thread id of the producer or launcher */
    uint64_t ts;     /* ns, CLOCK_MONOTONIC; start time for intervals */
} gfl_event_header;

#define GFL_F_SCOPE_IMPLICIT 0x01 /* scope end: closed because its parent ended */

typedef struct gfl_scope_payload {
    uint64_t id;        /* unique in the session */
    uint64_t parent_id; /* 0 at the outermost level */
    uint64_t begin_ts;  /* on end events: when the scope began */
    uint32_t name;      /* string id */
    uint16_t depth;     /* 0 = outermost */
} gfl_scope_payload;

typedef struct gfl_system_window_payload {
    uint32_t name;
    uint32_t open_windows; /* windows open after this event */
} gfl_system_window_payload;

/* Validity bits for host metrics: a field whose bit is clear was unavailable. */
enum {
    GFL_HOST_PROC_CPU = 1u << 0,
    GFL_HOST_SYS_CPU = 1u << 1,
    GFL_HOST_RAM = 1u << 2,
    GFL_HOST_RSS = 1u << 3,
};

typedef struct gfl_host_metrics_payload {
    uint32_t valid;             /* GFL_HOST_* */
    uint32_t cpu_count;         /* online CPUs */
    uint32_t proc_cpu_pct_x100; /* process CPU, % of one CPU, ×100 */
    uint32_t sys_cpu_pct_x100;  /* whole machine, % of all CPUs, ×100 */
    uint64_t ram_used_bytes;    /* MemTotal - MemAvailable */
    uint64_t ram_total_bytes;
    uint64_t proc_rss_bytes;
} gfl_host_metrics_payload;

/* Validity bits for device metrics (NVML): absent, never a fake zero. */
enum {
    GFL_DEV_GPU_UTIL = 1u << 0,
    GFL_DEV_MEM_UTIL = 1u << 1,
    GFL_DEV_MEM = 1u << 2,
    GFL_DEV_TEMP = 1u << 3,
    GFL_DEV_MEM_TEMP = 1u << 4,
    GFL_DEV_POWER = 1u << 5,
    GFL_DEV_POWER_LIMIT = 1u << 6,
    GFL_DEV_ENERGY = 1u << 7,
    GFL_DEV_CLOCKS = 1u << 8,
    GFL_DEV_THROTTLE = 1u << 9,
    GFL_DEV_PCIE = 1u << 10,
    GFL_DEV_FAN = 1u << 11,
    GFL_DEV_ECC = 1u << 12,
    GFL_DEV_PROC_MEM = 1u << 13,
};

typedef struct gfl_device_metrics_payload {
    uint32_t valid; /* GFL_DEV_* */
    uint8_t gpu_util_pct;
    uint8_t mem_util_pct;
    uint8_t fan_pct;
    uint8_t reserved0;
    uint64_t mem_used_bytes;
    uint64_t mem_total_bytes;
    uint64_t proc_mem_bytes;   /* used by the observed process */
    uint64_t energy_mj;        /* since driver load, millijoules */
    uint64_t throttle_reasons; /* NVML clocks-event reason bits */
    uint64_t ecc_corrected;
    uint64_t ecc_uncorrected;
    uint32_t power_mw;
    uint32_t power_limit_mw;
    uint32_t sm_clock_mhz;
    uint32_t mem_clock_mhz;
    uint32_t gfx_clock_mhz;
    uint32_t pcie_rx_kbps;
    uint32_t pcie_tx_kbps;
    int16_t temp_c;
    int16_t mem_temp_c;
    uint64_t mem_free_bytes; /* NVML's free: excludes memory reserved by the driver */
} gfl_device_metrics_payload;

/* What caps a kernel's theoretical occupancy. */
typedef enum gfl_occupancy_limiter {
    GFL_LIMIT_UNKNOWN = 0,
    GFL_LIMIT_WARPS = 1, /* threads per SM */
    GFL_LIMIT_REGISTERS = 2,
    GFL_LIMIT_SHARED_MEMORY = 3,
    GFL_LIMIT_BLOCKS = 4, /* blocks per SM */
    GFL_LIMIT_COUNT
} gfl_occupancy_limiter;

/* A GPU's identity and limits, once per session (core/device_info.h has
 * the full description; strings are interned). */
typedef struct gfl_device_info_payload {
    uint64_t memory_total_bytes;
    uint32_t name;               /* string id */
    uint32_t uuid;               /* string id */
    uint32_t pci_bus_id;         /* string id */
    uint32_t driver_version;     /* string id */
    int32_t cuda_driver_version; /* 13000 = 13.0; 0 unknown */
    uint32_t sm_count;
    uint32_t power_limit_mw;
    uint32_t max_sm_clock_mhz;
    uint32_t max_mem_clock_mhz;
    int8_t cc_major, cc_minor; /* -1 unknown */
    uint8_t pcie_max_gen, pcie_max_width;
} gfl_device_info_payload;

/* Device activity of the trace engine carries, where known: the launching
 * thread (header tid), its innermost gpufl scope and NVTX range, the external
 * id a framework pushed, and the host-side times of the API call that
 * launched it (0 = unknown). */
typedef struct gfl_kernel_payload {
    uint64_t end_ts;
    uint64_t scope_id;     /* innermost scope of the launching thread */
    uint64_t external_id;  /* framework correlation id, 0 = none */
    uint64_t api_start_ts; /* the launch call began (host, ns) */
    uint64_t api_end_ts;   /* the launch call returned */
    uint32_t name;         /* demangled name, string id */
    uint32_t mangled_name; /* string id, 0 = same as name */
    uint32_t context;
    uint32_t stream;
    uint32_t correlation;
    uint32_t grid[3];
    uint16_t block[3];
    uint16_t registers;        /* per thread */
    uint32_t static_smem;      /* bytes */
    uint32_t dynamic_smem;     /* bytes */
    uint32_t local_mem;        /* bytes per thread */
    uint32_t stack_id;         /* 0 = none */
    uint32_t graph_id;         /* launched as part of this CUDA graph, 0 = none */
    uint32_t nvtx;             /* innermost NVTX range of the launching thread, string id */
    uint16_t occupancy_x10000; /* theoretical, 0..10000 */
    uint8_t limiter;           /* what limits occupancy, gfl_occupancy_limiter */
    uint8_t external_kind;     /* CUPTI external correlation kind, 0 = none */
} gfl_kernel_payload;

/* Memory kinds for copies and allocations (CUPTI numbering is mapped). */
typedef enum gfl_mem_kind {
    GFL_MEM_UNKNOWN = 0,
    GFL_MEM_PAGEABLE = 1,
    GFL_MEM_PINNED = 2,
    GFL_MEM_DEVICE = 3,
    GFL_MEM_ARRAY = 4,
    GFL_MEM_MANAGED = 5,
    GFL_MEM_DEVICE_STATIC = 6,
    GFL_MEM_MANAGED_STATIC = 7,
    GFL_MEM_KIND_COUNT
} gfl_mem_kind;

typedef enum gfl_copy_kind {
    GFL_COPY_UNKNOWN = 0,
    GFL_COPY_HTOD = 1,
    GFL_COPY_DTOH = 2,
    GFL_COPY_DTOD = 3,
    GFL_COPY_HTOH = 4,
    GFL_COPY_PTOP = 5,
    GFL_COPY_KIND_COUNT
} gfl_copy_kind;

typedef struct gfl_memcpy_payload {
    uint64_t end_ts;
    uint64_t bytes;
    uint64_t scope_id;
    uint64_t external_id;
    uint64_t api_start_ts;
    uint64_t api_end_ts;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation;
    uint32_t stack_id;
    uint32_t nvtx;
    uint32_t graph_id;
    uint8_t copy_kind; /* gfl_copy_kind */
    uint8_t src_kind;  /* gfl_mem_kind */
    uint8_t dst_kind;  /* gfl_mem_kind */
    uint8_t reserved0;
    uint16_t dst_device; /* peer copies */
} gfl_memcpy_payload;

typedef struct gfl_memset_payload {
    uint64_t end_ts;
    uint64_t bytes;
    uint64_t scope_id;
    uint64_t external_id;
    uint64_t api_start_ts;
    uint64_t api_end_ts;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation;
    uint32_t value;
    uint32_t nvtx;
    uint32_t graph_id;
    uint8_t mem_kind;
} gfl_memset_payload;

typedef enum gfl_sync_kind {
    GFL_SYNC_UNKNOWN = 0,
    GFL_SYNC_EVENT = 1,
    GFL_SYNC_STREAM_WAIT_EVENT = 2,
    GFL_SYNC_STREAM = 3,
    GFL_SYNC_CONTEXT = 4,
    GFL_SYNC_KIND_COUNT
} gfl_sync_kind;

typedef struct gfl_sync_payload {
    uint64_t end_ts;
    uint64_t scope_id;
    uint64_t external_id;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation;
    uint32_t stack_id;
    uint32_t nvtx;
    uint32_t cuda_event; /* the event waited on, 0 = none */
    uint8_t sync_kind;   /* gfl_sync_kind */
} gfl_sync_payload;

/* A GFL_EV_MEM_ALLOC that failed (out of memory): address 0, bytes what was
 * asked for; it never becomes live and has no matching free. */
#define GFL_F_MEM_FAILED 0x01
/* An allocation or free of a framework's caching allocator (a PyTorch
 * tensor's block, inside memory the allocator got from cudaMalloc), not of
 * the driver: the memory analysis keeps the two layers apart, since a
 * block's address is also the address of the segment that holds it. Its
 * stack_id, when set, is a source stack (GFL_F_STACK_SOURCE). */
#define GFL_F_MEM_FRAMEWORK 0x02

typedef struct gfl_mem_payload {
    uint64_t address;
    uint64_t bytes;
    uint64_t scope_id;
    uint64_t external_id;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation;
    uint32_t stack_id;
    uint32_t nvtx;
    uint8_t mem_kind; /* gfl_mem_kind */
    uint8_t is_async; /* stream-ordered allocator (cudaMallocAsync) */
} gfl_mem_payload;

/* An NVTX range or mark, seen by the CUPTI plugin as the program's thread
 * makes the NVTX call. A push/pop range belongs to its thread and nests
 * (depth); a start/end range (flag GFL_F_NVTX_START_END) may end on another
 * thread, and its tid is the thread that started it. */
#define GFL_F_NVTX_START_END 0x02
/* seq holds PyTorch's sequence number of the op the range is (its text
 * ended ", seq = N"; backend/cupti/torch_nvtx.h) */
#define GFL_F_NVTX_SEQ 0x04
typedef struct gfl_nvtx_payload {
    uint64_t end_ts; /* ranges; 0 for marks */
    uint64_t id;     /* unique in the session */
    uint32_t name;   /* string id */
    uint32_t domain; /* string id, 0 = default domain */
    uint16_t depth;  /* push/pop ranges: 0 = outermost on its thread */
    uint16_t reserved0[3];
    uint64_t seq; /* with GFL_F_NVTX_SEQ */
} gfl_nvtx_payload;

/* A CUDA graph launch, from the host API call (ts: the call began). Its
 * kernels and copies carry the same correlation id and its graph id. */
typedef struct gfl_graph_launch_payload {
    uint64_t end_ts; /* the call returned */
    uint64_t scope_id;
    uint64_t external_id;
    uint32_t correlation;
    uint32_t stack_id;
    uint32_t nvtx;
} gfl_graph_launch_payload;

/* A CPU call stack (enable_stack_trace), defined once per session the first
 * time it is seen and referenced by the stack_id of launches and syncs. A
 * stack longer than GFL_STACK_FRAMES_PER_EVENT frames is split over several
 * events with the same id. Frames are module + offset, innermost first, so
 * that symbols can be resolved when reading, from the module files. */
#define GFL_STACK_FRAMES_PER_EVENT 12
typedef struct gfl_stack_frame {
    uint32_t module; /* string id of the module's path, 0 = unknown (JIT code) */
    uint32_t offset; /* from the module's load base; the address itself when module is 0 */
} gfl_stack_frame;

/* A source stack (flag GFL_F_STACK_SOURCE on the stack event): the
 * frames of an interpreted program (Python), recorded by gpufl_record_block.
 * Each frame's module is the string id of "function (file:line)" and its
 * offset the line; ids are GFL_SOURCE_STACK_BASE and up, CPU stacks below. */
#define GFL_F_STACK_SOURCE 0x01
#define GFL_SOURCE_STACK_BASE (1u << 20)

typedef struct gfl_stack_payload {
    uint32_t id;       /* stack id, never 0 */
    uint16_t first;    /* index in the whole stack of frames[0] */
    uint16_t total;    /* frames in the whole stack */
    uint8_t count;     /* frames used in this event */
    uint8_t truncated; /* 1: the stack was deeper than what was captured */
    uint8_t reserved[2];
    gfl_stack_frame frames[GFL_STACK_FRAMES_PER_EVENT];
} gfl_stack_payload;

/* A fatal signal caught by collect/crash.c: header tid is the thread it was
 * delivered to (the faulting thread for a fault), ts when it was caught.
 * It is followed by `frames` frames of that thread's stack in
 * GFL_EV_CRASH_STACK events (gfl_stack_payload with id 0, first/total
 * placing each piece; frame 0 is the interrupted instruction itself, the
 * others return addresses) and by `open_scopes` GFL_EV_CRASH_SCOPE events
 * (gfl_scope_payload, header tid the scope's thread, ts the crash's). */
typedef enum gfl_crash_action {
    GFL_CRASH_DEFAULT = 0, /* the program left the signal's default action: it dies */
    GFL_CRASH_HANDLER = 1, /* the program's own handler was called next */
    GFL_CRASH_IGNORED = 2, /* the program ignores the signal (a fault kills it anyway) */
    GFL_CRASH_ACTION_COUNT
} gfl_crash_action;

#define GFL_F_CRASH_NO_UNWIND 0x01 /* no stack: libunwind could not be loaded */

typedef struct gfl_crash_payload {
    uint64_t address;        /* si_addr: the faulting address (SEGV, BUS) or instruction
                             (ILL, FPE); 0 for a signal sent by kill/raise/abort */
    int32_t signal;          /* SIGSEGV, ... (Linux numbers) */
    int32_t code;            /* si_code: why (SEGV_MAPERR, FPE_INTDIV, SI_TKILL, ...) */
    uint32_t sender_pid;     /* who sent it (si_code <= 0); 0 for a fault */
    uint16_t frames;         /* frames of the stack that follow, 0 = none */
    uint8_t action;          /* gfl_crash_action: what ran after gpufl */
    uint8_t stack_truncated; /* 1: the stack was deeper than what was kept */
    uint32_t open_scopes;    /* crash_scope events that follow */
    uint32_t scopes_lost;    /* open scopes left out: more than the crash record holds */
} gfl_crash_payload;

/* Which profiling engine the session asked for and which one records it,
 * and why they differ: once, when the device plugin has started or been
 * given up (session/plugin.c), so that a reader of the events alone (a .gflt
 * file, a crashed session) knows what the trace can hold. Strings are
 * interned engine names ("trace"), the plugin's name and the reason. */
typedef struct gfl_engine_payload {
    uint32_t requested; /* string id: the profiling_engine option */
    uint32_t ran;       /* string id: the engine that records */
    uint32_t plugin;    /* string id of the running device plugin ("cupti"), 0 = none */
    uint32_t reason;    /* string id: why ran is not requested, 0 = it is */
} gfl_engine_payload;

/* A trigger fired (collect/triggers.h): ts when it fired, tid the thread
 * that asked (0 for a rule the collector checked). The dump it wrote, if
 * any, is <session dir>/dumps/<dump>; a dump holds this event too. */
typedef enum gfl_trigger_outcome {
    GFL_TRIGGER_DUMPED = 0,    /* the flight window is being written out as `dump` */
    GFL_TRIGGER_STORM = 1,     /* not dumped: the last dump is younger than dump_min_interval_s */
    GFL_TRIGGER_NO_WINDOW = 2, /* not dumped: the session keeps no flight window */
    GFL_TRIGGER_OUTCOME_COUNT
} gfl_trigger_outcome;

typedef struct gfl_trigger_payload {
    uint32_t kind;   /* string id: "dump" (gpufl_dump), "signal", "crash", "oom", "slow_scope",
                        "device_memory", "temperature", "power" */
    uint32_t detail; /* string id: the reason given, or the rule and the value that crossed it */
    uint32_t dump;   /* string id: the dump's directory name, 0 = no dump */
    uint8_t outcome; /* gfl_trigger_outcome */
} gfl_trigger_payload;

/* Device tracing ran from ts to end_ts (session/trace_windows.h): Monitor
 * records all the time, Trace only inside such windows. Written twice: when
 * the window opens (end_ts 0: open) and when it closes, with the same
 * index; a window with no closing event ran until the session's end. */
typedef struct gfl_trace_window_payload {
    uint64_t end_ts; /* 0: the window is opening */
    uint32_t reason; /* string id: "schedule", "steps", "trigger", "request" */
    uint32_t detail; /* string id: e.g. "steps 100-101 of `step`", 0 = none */
    uint32_t index;  /* the session's windows are numbered from 1 */
} gfl_trace_window_payload;

/* The state of a framework's caching allocator on one device (PyTorch's
 * torch.cuda.memory_stats()), recorded by gpufl_record_allocator: the third
 * layer of memory, above the driver's allocations (GFL_EV_MEM_ALLOC) and
 * the device's (NVML, GFL_EV_DEVICE_METRICS). Bytes; 0 = unknown where
 * noted. */
typedef struct gfl_allocator_payload {
    uint64_t allocated;      /* in blocks handed out (tensors) */
    uint64_t reserved;       /* held from the driver (segments): allocated + cached */
    uint64_t active;         /* allocated + freed blocks a stream still uses */
    uint64_t inactive_split; /* free pieces of split segments: cached memory that cannot be given back */
    uint64_t largest_free;   /* the largest free block in the segments; 0 unknown */
    uint64_t peak_allocated; /* since the framework's last reset of its peaks */
    uint64_t peak_reserved;
    uint64_t requested;     /* reason "oom": the bytes asked for; else 0 */
    uint64_t device_free;   /* what the driver said was free, when known (an OOM); 0 unknown */
    uint64_t scope_id;      /* innermost gpufl scope of the recording thread */
    uint32_t framework;     /* string id: "pytorch" */
    uint32_t reason;        /* string id: "sample", "step", "scope", "oom", "snapshot", ... */
    uint32_t alloc_retries; /* driver allocations that failed and were retried after emptying the cache */
    uint32_t ooms;          /* out-of-memory errors the framework raised */
} gfl_allocator_payload;

/* Warp samples at one instruction (PC sampling, backend/cupti/pc_sampling.h),
 * collected on one device between since_ts and ts: in CUPTI's continuous
 * mode samples carry no kernel, so a reader attributes them to the
 * launches of `function` that ran then (analyze/ana_stalls.c). Each stall
 * reason that has samples is a pair; a PC with more than
 * GFL_PC_STALLS_PER_EVENT of them takes several events, whose counts add
 * up. Reason ids are interned short names ("long_scoreboard"; CUPTI's
 * "smsp__pcsamp_warps_issue_stalled_" prefix dropped); "selected" is a
 * warp that issued, not a stall. */
#define GFL_PC_STALLS_PER_EVENT 8
typedef struct gfl_stall_count {
    uint32_t reason;  /* string id */
    uint32_t samples; /* warps seen at this PC for this reason */
} gfl_stall_count;

typedef struct gfl_pc_sample_payload {
    uint64_t cubin_crc;   /* CUPTI's CRC of the module's cubin */
    uint64_t pc_offset;   /* from the start of the function */
    uint64_t since_ts;    /* the previous collection on this device: the samples are of (since_ts, ts] */
    uint32_t function;    /* string id: the function's name as the module holds it (mangled) */
    uint32_t source_file; /* string id of the source file (line info), 0 = unknown */
    uint32_t line;        /* 0 = unknown */
    uint8_t count;        /* pairs used */
    uint8_t reserved[3];
    gfl_stall_count stalls[GFL_PC_STALLS_PER_EVENT];
} gfl_pc_sample_payload;
/* One metric's value over one PM sampling interval of a device, h.ts to
 * end_ts (session clock): what the GPU's performance monitor counted
 * (CUPTI PM sampling, option pm_sampling_metrics). One event per sample
 * and metric. Values are never negative; fixed point keeps both formats
 * integer (bytes per second up to 1.8e15 fit). */
typedef struct gfl_pm_sample_payload {
    uint64_t end_ts;
    uint64_t value_x10000; /* the metric's value x 10000, rounded */
    uint32_t metric;       /* string id: the CUPTI metric name */
} gfl_pm_sample_payload;
/* One SASS instruction's counts over one launch (CUPTI's SASS metrics
 * API, backend/cupti/sass_metrics.c), for the instructions the launch
 * executed. A count is meaningful only where its GFL_SASS_V_* bit is set
 * in `valid` (the chip lists the metric); h.ts is when the launch's counts
 * were read, h.tid the launching thread. The kernel event of the same
 * correlation id is the launch. */
#define GFL_SASS_V_INST 0x01        /* inst_executed */
#define GFL_SASS_V_THREAD_INST 0x02 /* thread_inst_executed */
#define GFL_SASS_V_SECTORS 0x04     /* sectors, sectors_ideal */
#define GFL_SASS_V_BRANCH 0x08      /* branch_targets, divergent_targets */

typedef struct gfl_sass_metric_payload {
    uint64_t scope_id;             /* innermost scope of the launching thread */
    uint64_t inst_executed;        /* warp-level executions (smsp__sass_inst_executed) */
    uint64_t thread_inst_executed; /* active threads summed over them (smsp__sass_thread_inst_executed) */
    uint64_t sectors;              /* 32-byte global memory sectors accessed (smsp__sass_sectors_mem_global) */
    uint64_t sectors_ideal;        /* sectors a fully coalesced access would touch (..._ideal) */
    uint64_t branch_targets;       /* branch targets taken (smsp__sass_branch_targets) */
    uint64_t divergent_targets;    /* of them, by a warp whose threads went apart (..._threads_divergent) */
    uint32_t function;             /* string id: the function's name, demangled as kernel names are */
    uint32_t file;                 /* string id of the source file, 0 = unknown */
    uint32_t line;                 /* source line, 0 = unknown */
    uint32_t pc_offset;            /* of the instruction in its function, bytes */
    uint32_t cubin_crc;            /* the module (cuptiGetCubinCrc) */
    uint32_t correlation;          /* the launch's: its kernel event has the same */
    uint32_t function_index;       /* the function's symbol index in the module */
    uint16_t valid;                /* GFL_SASS_V_* */
    uint16_t reserved;
} gfl_sass_metric_payload;

/* One metric's value over one range of the range profiler: the GPU work
 * that a gpufl scope (innermost, on the profiled thread) or an NVTX range
 * enclosed, from h.ts to end_ts (session clock, host side: when the range
 * was pushed and popped). One event per range and metric. Values are never
 * negative; fixed point as pm_sample (saturating at 1.8e15). */
typedef struct gfl_range_metric_payload {
    uint64_t end_ts;
    uint64_t value_x10000; /* the metric's value x 10000, rounded */
    uint64_t scope_id;     /* the scope measured, 0 = an NVTX range */
    uint32_t metric;       /* string id: the CUPTI metric name */
    uint32_t name;         /* string id: the scope's or NVTX range's name */
    uint32_t range;        /* the range's number in the session, from 1 */
} gfl_range_metric_payload;

/* The session clock (h.ts) read together with CLOCK_MONOTONIC and
 * CLOCK_REALTIME, at the session's start, every 10 s and at its end
 * (core/clock_pair.h), so that sessions of one host align exactly and
 * sessions of several hosts within what the kernel says of its NTP/PTP
 * discipline (adjtimex), which comes with it. mono_ns and wall_ns were
 * read between two reads of the session clock uncertainty_ns apart; h.ts
 * is their middle. The ntp fields are set only when ntp is (the kernel
 * answered adjtimex). */
typedef struct gfl_clock_payload {
    uint64_t mono_ns;         /* CLOCK_MONOTONIC */
    uint64_t wall_ns;         /* CLOCK_REALTIME, ns since the Unix epoch */
    int64_t ntp_offset_ns;    /* the kernel's last measured offset to its time reference */
    uint64_t ntp_maxerror_ns; /* the kernel's bound on the clock's error */
    uint64_t ntp_esterror_ns; /* its estimate of the error */
    uint32_t uncertainty_ns;  /* between the two session clock reads around the pair */
    uint32_t point;           /* string id: "start", "periodic", "end" */
    uint32_t ntp;             /* string id: "synchronised", "unsynchronised"; 0 = unknown */
    uint32_t ntp_status;      /* adjtimex status bits (STA_*) */
} gfl_clock_payload;

/* One NCCL collective (or point-to-point call) as NCCL's profiler plugin
 * interface described it when it was enqueued (inject/nccl_profiler.c,
 * through gpufl_record_nccl_collective): h.ts when NCCL started the event,
 * end_ts when it stopped it (the enqueue was done; the GPU work is the
 * NCCL kernel of the communicator's stream). bytes = count x the
 * datatype's size, valid only with GFL_F_NCCL_BYTES (an unknown datatype
 * leaves it out, never a made-up size). Strings are NCCL's own names
 * ("AllReduce", "ncclFloat32", "Ring", "Simple"). */
#define GFL_F_NCCL_BYTES 0x01 /* bytes is known */
#define GFL_F_NCCL_P2P 0x02   /* a point-to-point call (Send, Recv): peer in root */
typedef struct gfl_nccl_coll_payload {
    uint64_t end_ts;    /* NCCL stopped the event (enqueued), 0 = unknown */
    uint64_t comm_hash; /* NCCL's communicator hash: the same on every rank of the communicator */
    uint64_t seq;       /* the collective's sequence number in its communicator */
    uint64_t count;     /* elements, as the API call gave them */
    uint64_t bytes;     /* count x datatype size, with GFL_F_NCCL_BYTES */
    uint32_t func;      /* string id: "AllReduce", "AllGather", ... */
    uint32_t datatype;  /* string id, 0 = not given */
    uint32_t algo;      /* string id, 0 = not given (NCCL's "Ring", "Tree", ...) */
    uint32_t proto;     /* string id, 0 = not given ("Simple", "LL", "LL128") */
    int32_t rank;       /* in the communicator, -1 = unknown */
    int32_t root;       /* root (peer for point-to-point), -1 = none */
    uint32_t nranks;    /* ranks of the communicator, 0 = unknown */
    uint8_t channels;   /* NCCL channels used, 0 = not given */
    uint8_t abi;        /* the NCCL profiler ABI version that delivered it, 0 = not the plugin */
} gfl_nccl_coll_payload;

typedef struct gfl_dropped_payload {
    uint64_t count;  /* lost since the previous dropped event of this source */
    uint64_t total;  /* lost by this source in the session so far */
    uint8_t reason;  /* gfl_drop_reason */
    uint8_t channel; /* gfl_channel the lost events belonged to */
} gfl_dropped_payload;

enum { GFL_LOG_DEBUG = 0, GFL_LOG_INFO = 1, GFL_LOG_WARN = 2, GFL_LOG_ERROR = 3 };

typedef struct gfl_log_payload {
    uint32_t message; /* string id */
    uint8_t level;    /* GFL_LOG_* */
} gfl_log_payload;

typedef struct gfl_event {
    gfl_event_header h;
    union {
        gfl_scope_payload scope;
        gfl_system_window_payload window;
        gfl_host_metrics_payload host;
        gfl_device_metrics_payload dev;
        gfl_device_info_payload info;
        gfl_kernel_payload kernel;
        gfl_memcpy_payload memcpy;
        gfl_memset_payload memset;
        gfl_sync_payload sync;
        gfl_mem_payload mem;
        gfl_nvtx_payload nvtx;
        gfl_graph_launch_payload graph;
        gfl_stack_payload stack;
        gfl_crash_payload crash;
        gfl_engine_payload engine;
        gfl_trigger_payload trigger;
        gfl_trace_window_payload trace_window;
        gfl_allocator_payload allocator;
        gfl_pc_sample_payload pc;
        gfl_pm_sample_payload pm_sample;
        gfl_range_metric_payload range_metric;
        gfl_sass_metric_payload sass;
        gfl_clock_payload clock;
        gfl_nccl_coll_payload nccl;
        gfl_dropped_payload dropped;
        gfl_log_payload log;
        uint8_t raw[GFL_EVENT_SIZE - sizeof(gfl_event_header)];
    } u;
} __attribute__((aligned(64))) gfl_event;

_Static_assert(sizeof(gfl_event_header) == 16, "event header must stay 16 bytes");
_Static_assert(sizeof(gfl_event) == GFL_EVENT_SIZE, "events are fixed at 128 bytes");
_Static_assert(sizeof(gfl_kernel_payload) <= GFL_EVENT_SIZE - sizeof(gfl_event_header),
               "the kernel payload, the largest, fits");
_Static_assert(sizeof(gfl_stack_payload) <= GFL_EVENT_SIZE - sizeof(gfl_event_header), "a stack piece fits");
_Static_assert(sizeof(gfl_pc_sample_payload) <= GFL_EVENT_SIZE - sizeof(gfl_event_header), "a PC sample fits");
_Static_assert(sizeof(gfl_sass_metric_payload) <= GFL_EVENT_SIZE - sizeof(gfl_event_header), "a SASS metric fits");

/* The channel each type is written to. */
static inline gfl_channel gpufl__event_channel(uint8_t type)
{
    switch (type) {
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_SCOPE_END:
    case GFL_EV_NVTX_RANGE:
    case GFL_EV_NVTX_MARK: return GFL_CHANNEL_SCOPE;
    case GFL_EV_SYSTEM_START:
    case GFL_EV_SYSTEM_STOP:
    case GFL_EV_HOST_METRICS:
    case GFL_EV_DEVICE_METRICS:
    case GFL_EV_LOG:
    case GFL_EV_CRASH: /* with the session's own messages: the crash is the process's */
    case GFL_EV_CRASH_STACK:
    case GFL_EV_CRASH_SCOPE:
    case GFL_EV_TRIGGER:
    case GFL_EV_TRACE_WINDOW:
    case GFL_EV_CLOCK: return GFL_CHANNEL_SYSTEM;
    default: return GFL_CHANNEL_DEVICE;
    }
}

/* The log an event is written to: its type's channel, except that a
 * "dropped" event goes with the events it counts. */
static inline gfl_channel gpufl__event_route(const gfl_event *ev)
{
    if (ev->h.type == GFL_EV_DROPPED && ev->u.dropped.channel < GFL_CHANNEL_COUNT)
        return (gfl_channel)ev->u.dropped.channel;
    return gpufl__event_channel(ev->h.type);
}

/* Names used in NDJSON "type" fields and in docs/FORMAT.md. */
const char *gpufl__event_type_name(uint8_t type);
const char *gpufl__channel_name(uint8_t channel);
const char *gpufl__drop_reason_name(uint8_t reason);
/* The key column of core/names.h. */
const char *gpufl__copy_kind_name(uint8_t kind);
const char *gpufl__mem_kind_name(uint8_t kind);
const char *gpufl__sync_kind_name(uint8_t kind);
const char *gpufl__limiter_name(uint8_t limiter);
const char *gpufl__log_level_name(uint8_t level);
const char *gpufl__crash_action_name(uint8_t action);
const char *gpufl__trigger_outcome_name(uint8_t outcome);
/* "SIGSEGV", ... for the fatal signals gpufl catches; "signal" otherwise. */
const char *gpufl__signal_name(int32_t signal);
/* si_code by name ("SEGV_MAPERR", "SI_TKILL", ...); NULL when not known. */
const char *gpufl__signal_code_name(int32_t signal, int32_t code);
/* Name of bit `bit` of gfl_device_metrics_payload.throttle_reasons. */
#define GFL_THROTTLE_REASON_COUNT 9
const char *gpufl__throttle_reason_name(unsigned bit);

#endif /* GPUFL_CORE_EVENT_H */
