/*
 * The control API of the fake libcupti (fake_cupti.c), for tests.
 *
 * Each simulated CUDA call does, on the calling thread, what the real call
 * does under CUPTI: the subscriber's API_ENTER callback (a fresh correlation
 * id), the API_EXIT callback, then the activity records it produces (the
 * external correlation records and the RUNTIME/DRIVER API record, then the
 * device records) appended to the calling thread's own activity buffer. A
 * callback is delivered only when the subscriber enabled it; a record is
 * written only when its activity kind is enabled. Every timestamp comes
 * from the registered timestamp callback.
 *
 * A test reaches these with dlsym() on the handle of the fake the plugin
 * loaded (dlopen the same path: it is the same object), typed with
 * __typeof__(&fake_cupti_...). They are not linked into the test.
 *
 * Context 1 on device 0 unless a call says otherwise.
 */
#ifndef GPUFL_TESTS_FAKE_CUPTI_H
#define GPUFL_TESTS_FAKE_CUPTI_H

#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#define FAKE_CUPTI_CONTEXT 1
#define FAKE_CUPTI_DURATION_NS 1000 /* a device record's length when none is given */

typedef struct fake_cupti_kernel {
    const char *name; /* as the driver reports it: mangled for C++ kernels */
    uint32_t grid[3];
    uint32_t block[3];
    uint16_t registers;   /* per thread */
    int32_t static_smem;  /* bytes */
    int32_t dynamic_smem; /* bytes */
    uint32_t local_mem;   /* bytes per thread */
    uint32_t device;
    uint32_t stream;
    uint64_t duration_ns; /* 0: FAKE_CUPTI_DURATION_NS */
    bool driver_api;      /* launched with cuLaunchKernel, else cudaLaunchKernel */
    /* cudaLaunchKernel on a thread with no context current yet (PyTorch's
     * autograd thread at its first launch, on an H100): the runtime call
     * enters with context NULL, and the cuLaunchKernel nested in it, once
     * the runtime has made the primary context current, names it. */
    bool unbound_thread;
} fake_cupti_kernel;

/* Launches one kernel. Returns the call's correlation id. */
uint32_t fake_cupti_launch_kernel(const fake_cupti_kernel *k);

/* cudaMemcpyAsync: copy_kind is a CUpti_ActivityMemcpyKind, src and dst
 * CUpti_ActivityMemoryKind. Returns the correlation id. */
uint32_t fake_cupti_memcpy(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind, uint64_t bytes, uint32_t stream);
/* cudaMemcpyPeerAsync: a MEMCPY2 record. */
uint32_t fake_cupti_memcpy_peer(uint32_t src_device, uint32_t dst_device, uint64_t bytes, uint32_t stream);
/* cudaMemsetAsync on device memory. */
uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value, uint32_t stream);

/* A host wait, by CUPTI's synchronization type: cudaStreamSynchronize
 * (STREAM_SYNCHRONIZE), cudaDeviceSynchronize (CONTEXT_SYNCHRONIZE: no
 * stream), cudaEventSynchronize (EVENT_SYNCHRONIZE), cudaStreamWaitEvent
 * (STREAM_WAIT_EVENT). event 0: none (CUPTI writes all ones). */
uint32_t fake_cupti_sync(CUpti_ActivitySynchronizationType type, uint32_t stream, uint32_t event);

/* cudaMalloc / cudaFree of device memory (MEMORY2 records); async: the
 * stream-ordered cudaMallocAsync / cudaFreeAsync on stream. */
uint32_t fake_cupti_malloc(uint64_t address, uint64_t bytes, bool async, uint32_t stream);
uint32_t fake_cupti_malloc_oom(uint64_t bytes);
uint32_t fake_cupti_free(uint64_t address, uint64_t bytes, bool async, uint32_t stream);

/* cudaGraphLaunch of a graph of n kernels: their records carry the
 * launch's correlation id and graph_id. */
uint32_t fake_cupti_graph_launch(uint32_t graph_id, const fake_cupti_kernel *kernels, unsigned n);

/* NVTX through CUPTI's NVTX callbacks, on the calling thread. */
void fake_cupti_nvtx_push(const char *message);
void fake_cupti_nvtx_pop(void);
void fake_cupti_nvtx_mark(const char *message);
uint64_t fake_cupti_nvtx_start(const char *message); /* the nvtxRangeId_t */
void fake_cupti_nvtx_end(uint64_t id);
/* nvtxDomainCreateA, then nvtxDomainRangePushEx / nvtxDomainRangePop. */
void *fake_cupti_nvtx_domain_create(const char *name);
void fake_cupti_nvtx_domain_push(void *domain, const char *message);
void fake_cupti_nvtx_domain_pop(void *domain);

/* cuptiActivityPushExternalCorrelationId / Pop on the calling thread:
 * calls made while an id is pushed get an EXTERNAL_CORRELATION record. */
void fake_cupti_push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id);
void fake_cupti_pop_external_id(CUpti_ExternalCorrelationKind kind);

/* n records lost for want of a buffer, reported by the next
 * cuptiActivityGetNumDroppedRecords. */
void fake_cupti_drop(uint64_t n);

/* A kernel launch whose record has impossible timestamps, as CUPTI emits
 * on context teardown. Returns the correlation id. */
typedef enum fake_cupti_bad {
    FAKE_CUPTI_BAD_ZERO_START = 0, /* start 0 */
    FAKE_CUPTI_BAD_END_BEFORE_START = 1,
    FAKE_CUPTI_BAD_FUTURE = 2,         /* an hour after now */
    FAKE_CUPTI_BAD_BEFORE_SESSION = 3, /* start 1 ns after the clock's origin */
} fake_cupti_bad;
uint32_t fake_cupti_bad_record(fake_cupti_bad kind);

/* The RESOURCE domain's CONTEXT_DESTROY_STARTING callback for context
 * (cudaDeviceReset, cuCtxDestroy, process exit). */
void fake_cupti_destroy_context(uint32_t context);

/* From now on cuptiActivityEnable(kind) returns rc (CUPTI_SUCCESS: accept
 * again), as on a device or driver that cannot trace that kind. */
void fake_cupti_refuse_kind(CUpti_ActivityKind kind, CUptiResult rc);
/* From now on the buffer request callback's answer is ignored and no
 * buffer is taken (records are dropped and counted), or taken again. */
void fake_cupti_refuse_buffers(bool refuse);

/* ---- PC sampling (fake_pc_sampling.c) ------------------------------------ */

/* The RESOURCE callbacks of a context being created on a device, and of
 * a module loaded into it (cubin: "fake-cubin file=F line=L": PC offset p
 * is at line L + p / 16 of F) or about to be unloaded. */
void fake_cupti_create_context(uint32_t context, uint32_t device);
void fake_cupti_load_module(uint32_t context, const char *cubin);
void fake_cupti_unload_module(uint32_t context);
/* Warps sampled at pc of function in the module with this CRC, for stall
 * reason `reason` (CUPTI's index: 3 long_scoreboard, 4 its _not_issued,
 * 7 selected, 9 wait). 0, or -1 when sampling is not enabled there. */
int fake_cupti_pc_sample(uint32_t context, const char *function, uint64_t crc, uint64_t pc, uint32_t reason,
                         uint32_t samples);
/* The context's hardware buffer fills: the next collection gets
 * CUPTI_ERROR_OUT_OF_MEMORY and no PC, and nothing is sampled until
 * sampling is disabled and enabled again (as on a GPU). */
void fake_cupti_fill_pc_buffer(uint32_t context);
/* From now on cuptiPCSamplingEnable returns rc (CUPTI_SUCCESS: accept). */
void fake_cupti_refuse_pc_sampling(CUptiResult rc);

typedef struct fake_cupti_pcs_state {
    bool enabled, configured;
    uint32_t period;          /* the exponent configured, 0 none (the fake's own choice is 12) */
    size_t selected;          /* stall reasons selected */
    bool selected_not_issued; /* one of them a _not_issued twin */
    size_t pending;           /* PCs not collected yet */
    uint64_t get_data_calls;  /* all contexts */
    uint32_t enables;         /* cuptiPCSamplingEnable calls that succeeded */
} fake_cupti_pcs_state;
/* False when the context was never created. */
bool fake_cupti_pc_sampling_state(uint32_t context, fake_cupti_pcs_state *out);

/* ---- what the fake saw ------------------------------------------------- */

typedef struct fake_cupti_counters {
    uint64_t subscribes, unsubscribes, subscribe_refusals;
    uint64_t callbacks;         /* delivered to the subscriber */
    uint64_t buffers_requested; /* request callback calls */
    uint64_t buffers_empty;     /* the request callback gave no buffer */
    uint64_t buffers_completed; /* completion callback calls */
    uint64_t records;           /* written into buffers */
    uint64_t records_dropped;   /* no buffer, plus fake_cupti_drop() */
    uint64_t flushes, forced_flushes;
    uint64_t timestamp_calls; /* timestamps taken from the client's callback */
} fake_cupti_counters;

void fake_cupti_get_counters(fake_cupti_counters *out);
/* Records written into per-thread buffers that were not delivered yet. */
uint64_t fake_cupti_pending_records(void);
bool fake_cupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
bool fake_cupti_activity_enabled(CUpti_ActivityKind kind);
bool fake_cupti_subscribed(void);
bool fake_cupti_has_timestamp_callback(void);
CUpti_ActivityThreadIdType fake_cupti_thread_id_type(void);

/* Whether API records of one function were enabled alone
 * (cuptiActivityEnableRuntimeApi / cuptiActivityEnableDriverApi). */
int fake_cupti_api_records_on(int domain, unsigned cbid);

/* ---- the profiler API (fake_profiler.c) ---------------------------------- */

/* The metrics the fake's chip has, each with the value a sample reports at
 * full load (FAKE_CUPTI_FULL_LOAD): percentages are 100 at full load,
 * throughputs their peak. A metric whose name starts with "multipass__"
 * needs two replay passes. Any other name is unknown
 * (CUPTI_ERROR_INVALID_METRIC_NAME). */
#define FAKE_CUPTI_CHIP "GH100"
#define FAKE_CUPTI_SM_ACTIVE "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
#define FAKE_CUPTI_DRAM_READ "dram__bytes_read.sum.per_second"
#define FAKE_CUPTI_DRAM_READ_PEAK 3.35e12

/* The range profiler (fake_range_profiler.c): each kernel launched while
 * a range is open adds its duration to the range, and a metric's value
 * for the range is its full value (fake_profiler.c's table) x the ns /
 * 1e6: gpu__time_duration.sum is the ns, dram__bytes_read.sum twice
 * that. The chip lacks sm__pipe_tensor_cycles_active.*, and 8 metrics
 * fill one pass. */
/* Enable answers rc from now on (CUPTI_SUCCESS: works again). */
void fake_cupti_rp_refuse(CUptiResult rc);
typedef struct fake_cupti_rp_state {
    bool enabled;
    uint64_t pushes, pops, passes, decodes;
    uint32_t max_depth;
} fake_cupti_rp_state;
void fake_cupti_rp_state_get(fake_cupti_rp_state *out);
/* cuptiProfilerInitialize answers rc from now on (CUPTI_SUCCESS: works). */
void fake_cupti_profiler_refuse_init(CUptiResult rc);

/* How many devices the fake has (cuptiDeviceGetChipName's valid indexes;
 * 1 at start), all of chip FAKE_CUPTI_CHIP. */
void fake_cupti_profiler_devices(int n);
/* From now on cuptiPmSamplingEnable returns rc (CUPTI_SUCCESS: works
 * again), as for a user without profiling permission
 * (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) or counters another tool holds
 * (CUPTI_ERROR_HARDWARE_BUSY). */
void fake_cupti_pm_refuse(CUptiResult rc);
/* The GPU produces n PM samples on device, one sampling interval each,
 * after the last one, at load (0..1) of every metric. Only while sampling
 * is started there; samples past the hardware buffer's room are dropped
 * (KEEP_OLDEST, reported as overflow) or overwrite the oldest (KEEP_LATEST).
 * Returns the samples that reached the buffer. */
uint32_t fake_cupti_pm_samples(int device, uint32_t n, double load);
/* Whether PM sampling is started on device (the recorder starts it on its
 * own thread). */
bool fake_cupti_pm_started(int device);
/* From now on a decode into a counter data image of more than `values`
 * samples x metrics fails with CUPTI_ERROR_OUT_OF_MEMORY, as CUPTI's did on
 * an H100 for large images (0: any size). */
void fake_cupti_pm_image_limit(uint64_t values);
/* The GPU's clock (PM sample timestamps): CLOCK_REALTIME in ns, as the
 * driver keeps its global timer. */
uint64_t fake_cupti_gpu_now(void);
/* PM timestamps in the activity records' clock (the client's timestamp
 * callback), as CUPTI 13.0 gave them on an H100, or the realtime-like
 * GPU timer (the default). */
void fake_cupti_pm_activity_clock(bool on);
/* Host profiler objects now alive (Initialize less Deinitialize). */
int fake_cupti_profiler_hosts_alive(void);
/* ---- the SASS metrics API ------------------------------------------------
 * One chip ("GH100") whose six metrics are those sass_metrics.h asks for
 * (ids 101..106, in that order), less any a test removed. The state
 * machine is the documented one: SetConfig once per device (again only
 * after UnsetConfig), Enable once per context after SetConfig, data
 * calls only between Enable and Disable (else
 * CUPTI_ERROR_INVALID_OPERATION). With lazy patching an instruction
 * becomes a record at its function's first launch inside the enabled
 * range; its counts accumulate over launches until FlushData hands them
 * over (one instance each: GPU granularity) and clears them; Disable
 * reports as dropped the records holding unflushed counts. */
typedef struct fake_cupti_sass_inst {
    uint32_t pc_offset;
    uint64_t inst, thread_inst, sectors, sectors_ideal, branch, divergent; /* per launch */
} fake_cupti_sass_inst;

/* What each launch of kernel `function` executes (copied; up to 64
 * instructions; up to 4 functions, each set again by name). Every
 * function's records carry the same functionIndex, as on an H100. */
void fake_cupti_sass_program(const char *function, uint32_t cubin_crc, const fake_cupti_sass_inst *insts, unsigned n);
/* The chip no longer offers this metric (cuptiSassMetricsGetProperties
 * fails for it), until fake_cupti_sass_reset. */
void fake_cupti_sass_remove_metric(const char *name);
/* Forgets configuration, programs and removed metrics. */
void fake_cupti_sass_reset(void);
typedef struct fake_cupti_sass_state {
    bool configured, enabled, lazy;
    unsigned n_metrics;   /* configured */
    uint64_t flushes;     /* successful FlushData calls */
    uint64_t dropped;     /* reported by the last Disable */
    uint64_t set_configs; /* successful SetConfig calls */
} fake_cupti_sass_state;
void fake_cupti_sass_get_state(fake_cupti_sass_state *out);

#endif /* GPUFL_TESTS_FAKE_CUPTI_H */
