/*
 * The CUPTI trace plugin (src/backend/cupti/, libgpufl_cupti.so) against a
 * fake libcupti (tests/fake_cupti/fake_cupti.c) that the plugin loads
 * through its real path (GPUFL_CUPTI_LIBRARY): whole sessions with the
 * Trace engine, read back from device.log, scope.log and system.log.
 *
 * Why: without a GPU this is the only way CI runs the plugin at all. The
 * fake plays each CUDA call as CUPTI would (callbacks on the calling thread,
 * records in that thread's buffer), so the lines are checked exactly: what
 * the plugin must learn at the call (thread, innermost gpufl scope and NVTX
 * range, external id, when the call began and returned) and what it copies
 * from the records (names, launch geometry, copy kinds, ...). Records that
 * cannot be real must be counted and not written, CUPTI's own losses
 * reported, nothing lost at shutdown, and every way CUPTI can be
 * unavailable must leave a Monitor session with the reason in system.log.
 *
 * CUPTI stays loaded once loaded (as the plugin and the fake do), so cases
 * that need a process which never loaded it (GPUFL_CUPTI_LIBRARY naming a
 * missing file or a library that is not CUPTI; the toolkit's real libcupti,
 * which has no driver here) run this program again as
 * "test_cupti_plugin --child <case>".
 *
 * Built only where the plugin is (GPUFL_HAVE_CUDA: the toolkit's headers);
 * sanitizer builds leave CUDA out, so this test does not exist there. It is
 * labelled "stress" for the builds that have it (several threads launch at
 * once); it passes under TSan and ASan+UBSan when built by hand with the
 * plugin and the fake.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "fake_cupti.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "test_util.h"

/* ---- the fake's control API, from the copy the plugin loads ------------------ */

// clang-format off
#define FAKE_FUNCTIONS(X)                                                                          \
    X(launch_kernel) X(memcpy) X(memcpy_peer) X(memset) X(sync) X(malloc) X(free) X(graph_launch) \
    X(malloc_oom)                                                                                  \
    X(nvtx_push) X(nvtx_pop) X(nvtx_mark) X(nvtx_start) X(nvtx_end) X(nvtx_domain_create)         \
    X(nvtx_domain_push) X(nvtx_domain_pop) X(push_external_id) X(pop_external_id) X(drop)          \
    X(bad_record) X(destroy_context) X(refuse_kind) X(refuse_buffers) X(get_counters)              \
    X(pending_records) X(callback_enabled) X(activity_enabled) X(subscribed)                       \
    X(has_timestamp_callback) X(thread_id_type) X(api_records_on)
// clang-format on

static struct {
    void *lib;
#define AS_FIELD(name) __typeof__(&fake_cupti_##name) name;
    FAKE_FUNCTIONS(AS_FIELD)
#undef AS_FIELD
    __typeof__(&cuptiSubscribe_v2) subscribe_v2;
    __typeof__(&cuptiUnsubscribe) unsubscribe;
    __typeof__(&cuptiEnableCallback) enable_callback;
} fake;

static void load_fake(void)
{
    /* The plugin's dlopen of the same path returns this same object. */
    fake.lib = dlopen(GFL_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
    if (!fake.lib) {
        fprintf(stderr, "test_cupti_plugin: %s\n", dlerror());
        exit(1);
    }
#define RESOLVE(name)                                                                                                  \
    if (!(*(void **)&fake.name = dlsym(fake.lib, "fake_cupti_" #name))) {                                              \
        fprintf(stderr, "test_cupti_plugin: the fake lacks fake_cupti_%s\n", #name);                                   \
        exit(1);                                                                                                       \
    }
    FAKE_FUNCTIONS(RESOLVE)
#undef RESOLVE
    *(void **)&fake.subscribe_v2 = dlsym(fake.lib, "cuptiSubscribe_v2");
    *(void **)&fake.unsubscribe = dlsym(fake.lib, "cuptiUnsubscribe");
    *(void **)&fake.enable_callback = dlsym(fake.lib, "cuptiEnableCallback");
    if (!fake.subscribe_v2 || !fake.unsubscribe || !fake.enable_callback)
        exit(1);
}

static fake_cupti_counters counters(void)
{
    fake_cupti_counters c;
    fake.get_counters(&c);
    return c;
}

/* ---- sessions ---------------------------------------------------------------------- */

static char *current_log_path;

typedef struct recorded {
    char *dir;
    tu_ndjson dev, scope, sys;
} recorded;

static CUpti_SubscriberHandle other_tool_handle; /* test_second_subscriber's */

static int cleanup(void **state)
{
    (void)state;
    gpufl_shutdown();
    if (other_tool_handle) {
        (void)fake.unsubscribe(other_tool_handle);
        other_tool_handle = NULL;
    }
    if (fake.lib) {
        fake.refuse_buffers(false);
        for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
            fake.refuse_kind((CUpti_ActivityKind)k, CUPTI_SUCCESS);
    }
    if (current_log_path) {
        tu_rm_rf(current_log_path);
        free(current_log_path);
        current_log_path = NULL;
    }
    return 0;
}

/* Trace engine through the built plugin; host sampling off, and no NVML, so
 * that the logs hold what the plugin wrote and little else. */
static gpufl_options trace_options(void)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    current_log_path = tu_mkdtemp("cupti");
    o.app_name = "cupti-test";
    o.log_path = current_log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.system_sample_rate_ms = 0;
    return o;
}

/* Starts a session that must be tracing: the plugin subscribed. */
static void begin(const gpufl_options *o)
{
    assert_true(gpufl_init(o));
    assert_true(gpufl_is_recording());
    assert_true(fake.subscribed());
}

static void load(const char *dir, const char *channel, tu_ndjson *f)
{
    assert_int_equal(tu_ndjson_load_channel(dir, channel, f), 0);
    assert_int_equal(f->tail_bytes, 0);
}

/* Ends the session and reads its logs back. */
static void finish(recorded *r)
{
    gpufl_shutdown();
    r->dir = tu_session_dir(current_log_path);
    assert_non_null(r->dir);
    load(r->dir, "device", &r->dev);
    load(r->dir, "scope", &r->scope);
    load(r->dir, "system", &r->sys);
}

static void release(recorded *r)
{
    tu_ndjson_free(&r->dev);
    tu_ndjson_free(&r->scope);
    tu_ndjson_free(&r->sys);
    free(r->dir);
}

/* ---- reading lines back ------------------------------------------------------------- */

static const char *type_of(json_t *line) { return json_string_value(json_object_get(line, "type")); }

static bool has(json_t *line, const char *key) { return json_object_get(line, key) != NULL; }

/* Every line of `type` in f, in file order: one pass (tu_nth_type is a pass
 * of its own, too slow for 20000 lines under ThreadSanitizer). */
#define FOR_EACH_LINE(line, f, type)                                                                                   \
    for (size_t i_##line = 0; i_##line < (f)->n; i_##line++)                                                           \
        for (json_t *line = (f)->lines[i_##line]; line && !strcmp(type_of(line), (type)); line = NULL)

/* The one line of `type` with correlation id corr. */
static json_t *by_corr(const tu_ndjson *f, const char *type, uint32_t corr)
{
    json_t *found = NULL;
    FOR_EACH_LINE(line, f, type)
    {
        if (tu_int(line, "corr") != corr)
            continue;
        if (found)
            fail_msg("two %s lines with corr %u", type, corr);
        found = line;
    }
    if (!found)
        fail_msg("no %s line with corr %u", type, corr);
    return found;
}

/* The one line of `type` whose "name" is name. */
static json_t *by_name(const tu_ndjson *f, const char *type, const char *name)
{
    json_t *found = NULL;
    FOR_EACH_LINE(line, f, type)
    {
        if (strcmp(tu_str(line, "name"), name) != 0)
            continue;
        if (found)
            fail_msg("two %s lines named %s", type, name);
        found = line;
    }
    if (!found)
        fail_msg("no %s line named %s", type, name);
    return found;
}

static size_t count_named(const tu_ndjson *f, const char *type, const char *name)
{
    size_t n = 0;
    FOR_EACH_LINE(line, f, type)
    n += !strcmp(tu_str(line, "name"), name);
    return n;
}

/* Events lost for reason, by the "dropped" lines of f. */
static long long dropped(const tu_ndjson *f, const char *reason)
{
    long long n = 0;
    FOR_EACH_LINE(line, f, "dropped")
    {
        if (!strcmp(tu_str(line, "reason"), reason)) {
            assert_string_equal(tu_str(line, "channel"), "device");
            n += tu_int(line, "count");
        }
    }
    return n;
}

/* The first log line whose message contains every needle (NULL-ended). */
static json_t *log_with(const tu_ndjson *sys, ...)
{
    FOR_EACH_LINE(line, sys, "log")
    {
        const char *message = tu_str(line, "message");
        bool all = true;
        va_list ap;
        va_start(ap, sys);
        for (const char *needle; all && (needle = va_arg(ap, const char *)) != NULL;)
            all = strstr(message, needle) != NULL;
        va_end(ap);
        if (all)
            return line;
    }
    return NULL;
}

static void check_dims(json_t *line, const char *key, const uint32_t v[3])
{
    json_t *a = json_object_get(line, key);
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(json_integer_value(json_array_get(a, i)), v[i]);
}

static uint32_t my_tid(void) { return (uint32_t)syscall(SYS_gettid); }

/* A kernel line from launch k made by thread tid between t0 and t1: the
 * record's fields, and the API call's times around the kernel's start. */
static void check_kernel(json_t *line, const fake_cupti_kernel *k, uint32_t corr, uint32_t tid, uint64_t t0,
                         uint64_t t1)
{
    assert_string_equal(type_of(line), "kernel");
    assert_int_equal(tu_int(line, "corr"), corr);
    assert_int_equal(tu_int(line, "device"), k->device);
    assert_int_equal(tu_int(line, "context"), FAKE_CUPTI_CONTEXT);
    assert_int_equal(tu_int(line, "stream"), k->stream);
    check_dims(line, "grid", k->grid);
    check_dims(line, "block", k->block);
    assert_int_equal(tu_int(line, "regs"), k->registers);
    assert_int_equal(tu_int(line, "smem_static"), k->static_smem);
    assert_int_equal(tu_int(line, "smem_dynamic"), k->dynamic_smem);
    assert_int_equal(tu_int(line, "local_mem"), k->local_mem);
    uint64_t dur = k->duration_ns ? k->duration_ns : FAKE_CUPTI_DURATION_NS;
    assert_int_equal(tu_int(line, "dur_ns"), dur);
    assert_int_equal(tu_int(line, "end_ns") - tu_int(line, "start_ns"), dur);
    assert_int_equal(tu_int(line, "tid"), tid);
    uint64_t api_start = (uint64_t)tu_int(line, "api_start_ns");
    uint64_t api_end = (uint64_t)tu_int(line, "api_end_ns");
    uint64_t start = (uint64_t)tu_int(line, "start_ns");
    assert_in_range(api_start, t0, t1);
    assert_in_range(start, api_start, api_end); /* the fake's kernel starts during the call */
    assert_in_range(api_end, start, t1);
    assert_false(has(line, "graph_id"));
}

static uint64_t now(void) { return gpufl__now_ns(); }

/* ---- kernels ---------------------------------------------------------------------- */

static const fake_cupti_kernel vec_add = {
    .name = "_Z6vecAddPKfS0_Pfi",
    .grid = {4096, 2, 1},
    .block = {256, 1, 1},
    .registers = 40,
    .static_smem = 1024,
    .dynamic_smem = 2048,
    .local_mem = 16,
    .stream = 7,
    .duration_ns = 12345,
};

static const fake_cupti_kernel plain = {
    .name = "plain_kernel",
    .grid = {1, 1, 1},
    .block = {32, 4, 2},
    .registers = 8,
    .stream = 0,
    .driver_api = true, /* cuLaunchKernel */
};

static const fake_cupti_kernel tagged = {
    .name = "tagged_kernel",
    .grid = {2, 3, 4},
    .block = {64, 1, 1},
    .registers = 16,
    .device = 1,
    .stream = 3,
};

static void test_kernels(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    begin(&o);
    /* what the plugin set up */
    assert_true(fake.has_timestamp_callback());
    assert_int_equal(fake.thread_id_type(), CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    assert_true(
        fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
    /* syncs are on by default, and allocation calls (watched for a failure
     * for lack of memory, dump_on_oom) */
    assert_true(
        fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2));
    /* calls that launch nothing are not watched */
    assert_false(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    assert_false(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020));
    assert_false(fake.callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuInit));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
    static const CUpti_ActivityKind on[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    };
    for (size_t i = 0; i < sizeof on / sizeof *on; i++)
        assert_true(fake.activity_enabled(on[i]));
    assert_false(fake.activity_enabled(CUPTI_ACTIVITY_KIND_MEMORY2));
    /* API records (the anchors of external ids) of the watched calls only,
     * not of every call a framework makes */
    assert_false(fake.activity_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
    assert_false(fake.activity_enabled(CUPTI_ACTIVITY_KIND_DRIVER));
    assert_true(fake.api_records_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    assert_true(fake.api_records_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    assert_true(fake.api_records_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
    assert_false(fake.api_records_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    assert_false(fake.api_records_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));

    uint64_t t[6];
    uint32_t corr[3];
    gpufl_scope outer = gpufl_scope_begin("outer");
    gpufl_scope inner = gpufl_scope_begin("inner");
    fake.nvtx_push("phase");
    t[0] = now();
    corr[0] = fake.launch_kernel(&vec_add);
    t[1] = now();
    fake.nvtx_pop();
    gpufl_scope_end(inner);
    gpufl_scope_end(outer);
    t[2] = now();
    corr[1] = fake.launch_kernel(&plain);
    t[3] = now();
    fake.push_external_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 424242);
    t[4] = now();
    corr[2] = fake.launch_kernel(&tagged);
    t[5] = now();
    fake.pop_external_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    recorded r;
    finish(&r);

    /* the plugin left CUPTI as it found it */
    assert_false(fake.subscribed());
    for (size_t i = 0; i < sizeof on / sizeof *on; i++)
        assert_false(fake.activity_enabled(on[i]));
    assert_false(fake.api_records_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    assert_false(fake.api_records_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    assert_int_equal(fake.pending_records(), 0);

    assert_int_equal(tu_count_type(&r.dev, "kernel"), 3);
    json_t *inner_line = by_name(&r.scope, "scope_begin", "inner");

    json_t *k = by_corr(&r.dev, "kernel", corr[0]);
    check_kernel(k, &vec_add, corr[0], my_tid(), t[0], t[1]);
    assert_string_equal(tu_str(k, "name"), "vecAdd(float const*, float const*, float*, int)");
    assert_string_equal(tu_str(k, "mangled"), "_Z6vecAddPKfS0_Pfi");
    assert_int_equal(tu_int(k, "scope"), tu_int(inner_line, "id"));
    assert_string_equal(tu_str(k, "nvtx"), "phase");
    assert_false(has(k, "ext_id"));

    k = by_corr(&r.dev, "kernel", corr[1]);
    check_kernel(k, &plain, corr[1], my_tid(), t[2], t[3]);
    assert_string_equal(tu_str(k, "name"), "plain_kernel");
    assert_false(has(k, "mangled"));
    assert_false(has(k, "scope")); /* launched outside any scope */
    assert_false(has(k, "nvtx"));
    assert_false(has(k, "ext_id"));

    k = by_corr(&r.dev, "kernel", corr[2]);
    check_kernel(k, &tagged, corr[2], my_tid(), t[4], t[5]);
    assert_string_equal(tu_str(k, "name"), "tagged_kernel");
    assert_int_equal(tu_int(k, "ext_id"), 424242);
    assert_int_equal(tu_int(k, "ext_kind"), CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);

    assert_int_equal(tu_count_type(&r.dev, "dropped"), 0);
    json_t *session = tu_session_json(r.dir);
    json_t *events = json_object_get(json_object_get(session, "summary"), "events");
    assert_int_equal(tu_int(events, "kernel"), 3);
    json_decref(session);
    release(&r);
}

/* enable_external_correlation off: no API or external correlation records
 * are asked for, and kernels are still attributed from the callbacks. */
static void test_without_external_correlation(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    o.enable_external_correlation = false;
    begin(&o);
    assert_false(fake.activity_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
    assert_false(fake.activity_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
    assert_false(fake.activity_enabled(CUPTI_ACTIVITY_KIND_DRIVER));
    assert_false(fake.api_records_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    gpufl_scope s = gpufl_scope_begin("no ext");
    fake.push_external_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 7);
    uint64_t t0 = now();
    uint32_t corr = fake.launch_kernel(&vec_add);
    uint64_t t1 = now();
    fake.pop_external_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
    gpufl_scope_end(s);
    recorded r;
    finish(&r);
    json_t *k = by_corr(&r.dev, "kernel", corr);
    check_kernel(k, &vec_add, corr, my_tid(), t0, t1);
    assert_int_equal(tu_int(k, "scope"), tu_int(by_name(&r.scope, "scope_begin", "no ext"), "id"));
    assert_false(has(k, "ext_id"));
    release(&r);
}

/* enable_stack_trace: launches, copies and syncs carry the id of the CPU
 * stack of the call, defined by "stack" lines; allocations do not. */
static __attribute__((noinline)) uint32_t launch_from_here(void) { return fake.launch_kernel(&plain); }

static json_t *stack_line(const tu_ndjson *dev, long long id)
{
    FOR_EACH_LINE(line, dev, "stack")
    {
        if (tu_int(line, "id") == id && tu_int(line, "first") == 0)
            return line;
    }
    return NULL;
}

static void test_stacks(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    o.enable_stack_trace = true;
    o.enable_memory_tracking = true;
    begin(&o);
    uint32_t kernels[2];
    volatile int twice = 2; /* one call site: no unrolling */
    for (int i = 0; i < twice; i++)
        kernels[i] = launch_from_here(); /* the same stack twice: one id */
    uint32_t k1 = kernels[0], k2 = kernels[1];
    uint32_t copy = fake.memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 64, 0);
    uint32_t sync = fake.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 0, 0);
    uint32_t alloc = fake.malloc(0x7f0000200000ull, 256, false, 0);
    recorded r;
    finish(&r);
    if (log_with(&r.sys, "call stacks cannot be captured", NULL)) {
        release(&r);
        skip(); /* a build without libunwind */
    }
    long long s1 = tu_int(by_corr(&r.dev, "kernel", k1), "stack");
    assert_int_equal(tu_int(by_corr(&r.dev, "kernel", k2), "stack"), s1);
    json_t *def = stack_line(&r.dev, s1);
    assert_non_null(def);
    assert_true(tu_int(def, "total") >= 2);
    assert_int_equal(tu_int(def, "tid"), my_tid());
    long long sc = tu_int(by_corr(&r.dev, "memcpy", copy), "stack");
    long long ss = tu_int(by_corr(&r.dev, "sync", sync), "stack");
    assert_true(sc != s1 && ss != s1 && sc != ss);
    assert_non_null(stack_line(&r.dev, sc));
    assert_non_null(stack_line(&r.dev, ss));
    assert_false(has(by_corr(&r.dev, "mem_alloc", alloc), "stack"));
    release(&r);
}

/* ---- copies, memsets and syncs ------------------------------------------------------- */

static void check_call(json_t *line, uint32_t corr, uint64_t t0, uint64_t t1, bool api_times)
{
    assert_int_equal(tu_int(line, "corr"), corr);
    assert_int_equal(tu_int(line, "tid"), my_tid());
    assert_int_equal(tu_int(line, "context"), FAKE_CUPTI_CONTEXT);
    assert_in_range(tu_int(line, "start_ns"), t0, t1);
    assert_int_equal(tu_int(line, "dur_ns"), tu_int(line, "end_ns") - tu_int(line, "start_ns"));
    if (api_times) {
        assert_in_range(tu_int(line, "api_start_ns"), t0, tu_int(line, "start_ns"));
        assert_in_range(tu_int(line, "api_end_ns"), tu_int(line, "start_ns"), t1);
    } else {
        assert_false(has(line, "api_start_ns"));
    }
}

static void test_copies_memsets_syncs(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    begin(&o);
    uint64_t t0 = now();
    gpufl_scope s = gpufl_scope_begin("io");
    uint32_t htod = fake.memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                                CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1u << 20, 3);
    uint32_t dtoh = fake.memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 4096, 3);
    uint32_t dtod = fake.memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 77, 4);
    uint32_t peer = fake.memcpy_peer(0, 1, 1u << 30, 5);
    uint32_t set = fake.memset(65536, 0xab, 6);
    uint32_t stream_sync = fake.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 3, 0);
    uint32_t device_sync = fake.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 0, 0);
    uint32_t event_sync = fake.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 0, 9);
    uint32_t wait = fake.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 2, 5);
    gpufl_scope_end(s);
    uint64_t t1 = now();
    recorded r;
    finish(&r);
    long long scope = tu_int(by_name(&r.scope, "scope_begin", "io"), "id");

    assert_int_equal(tu_count_type(&r.dev, "memcpy"), 4);
    static const struct {
        const char *kind, *src, *dst;
        long long bytes, stream;
    } copies[] = {
        {"HtoD", "pageable", "device", 1 << 20, 3},
        {"DtoH", "device", "pinned", 4096, 3},
        {"DtoD", "device", "managed", 77, 4},
        {"PtoP", "device", "device", 1 << 30, 5},
    };
    const uint32_t copy_corr[] = {htod, dtoh, dtod, peer};
    for (size_t i = 0; i < 4; i++) {
        json_t *m = by_corr(&r.dev, "memcpy", copy_corr[i]);
        check_call(m, copy_corr[i], t0, t1, true);
        assert_string_equal(tu_str(m, "kind"), copies[i].kind);
        assert_string_equal(tu_str(m, "src_kind"), copies[i].src);
        assert_string_equal(tu_str(m, "dst_kind"), copies[i].dst);
        assert_int_equal(tu_int(m, "bytes"), copies[i].bytes);
        assert_int_equal(tu_int(m, "stream"), copies[i].stream);
        assert_int_equal(tu_int(m, "device"), 0);
        assert_int_equal(tu_int(m, "scope"), scope);
        assert_int_equal(tu_int(m, "dur_ns"), FAKE_CUPTI_DURATION_NS);
        if (i == 3)
            assert_int_equal(tu_int(m, "dst_device"), 1);
        else
            assert_false(has(m, "dst_device"));
    }

    json_t *m = by_corr(&r.dev, "memset", set);
    check_call(m, set, t0, t1, true);
    assert_int_equal(tu_int(m, "bytes"), 65536);
    assert_int_equal(tu_int(m, "value"), 0xab);
    assert_string_equal(tu_str(m, "mem_kind"), "device");
    assert_int_equal(tu_int(m, "stream"), 6);
    assert_int_equal(tu_int(m, "scope"), scope);

    assert_int_equal(tu_count_type(&r.dev, "sync"), 4);
    static const struct {
        const char *kind;
        long long stream, event; /* -1: absent */
    } syncs[] = {{"stream", 3, -1}, {"context", 0, -1}, {"event", 0, 9}, {"stream_wait_event", 2, 5}};
    const uint32_t sync_corr[] = {stream_sync, device_sync, event_sync, wait};
    for (size_t i = 0; i < 4; i++) {
        json_t *y = by_corr(&r.dev, "sync", sync_corr[i]);
        check_call(y, sync_corr[i], t0, t1, false);
        assert_string_equal(tu_str(y, "kind"), syncs[i].kind);
        assert_int_equal(tu_int(y, "stream"), syncs[i].stream);
        if (syncs[i].event < 0)
            assert_false(has(y, "cuda_event"));
        else
            assert_int_equal(tu_int(y, "cuda_event"), syncs[i].event);
        assert_int_equal(tu_int(y, "scope"), scope);
    }
    release(&r);
    cleanup(NULL);

    /* enable_synchronization off: no sync callbacks, no sync records */
    o = trace_options();
    o.enable_synchronization = false;
    begin(&o);
    assert_false(
        fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
    assert_false(fake.activity_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    (void)fake.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 3, 0);
    uint32_t copy = fake.memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 8, 0);
    finish(&r);
    assert_int_equal(tu_count_type(&r.dev, "sync"), 0);
    assert_string_equal(tu_str(by_corr(&r.dev, "memcpy", copy), "src_kind"), "pinned");
    release(&r);
}

/* ---- allocations ---------------------------------------------------------------------- */

static void test_allocations(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    o.enable_memory_tracking = true;
    begin(&o);
    assert_true(fake.activity_enabled(CUPTI_ACTIVITY_KIND_MEMORY2));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020));
    assert_true(fake.callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2));
    uint64_t t0 = now();
    gpufl_scope s = gpufl_scope_begin("alloc");
    fake.nvtx_push("setup");
    uint32_t a = fake.malloc(0x7f0000001000ull, 4096, false, 0);
    uint32_t f = fake.free(0x7f0000001000ull, 4096, false, 0);
    fake.nvtx_pop();
    gpufl_scope_end(s);
    uint32_t aa = fake.malloc(0x7f0000100000ull, 1u << 20, true, 5);
    uint32_t af = fake.free(0x7f0000100000ull, 1u << 20, true, 5);
    uint64_t t1 = now();
    recorded r;
    finish(&r);
    long long scope = tu_int(by_name(&r.scope, "scope_begin", "alloc"), "id");
    assert_int_equal(tu_count_type(&r.dev, "mem_alloc"), 2);
    assert_int_equal(tu_count_type(&r.dev, "mem_free"), 2);
    static const struct {
        const char *type, *address;
        long long bytes, stream;
        bool async, scoped;
    } lines[] = {
        {"mem_alloc", "0x7f0000001000", 4096, 0, false, true},
        {"mem_free", "0x7f0000001000", 4096, 0, false, true},
        {"mem_alloc", "0x7f0000100000", 1 << 20, 5, true, false},
        {"mem_free", "0x7f0000100000", 1 << 20, 5, true, false},
    };
    const uint32_t corr[] = {a, f, aa, af};
    for (size_t i = 0; i < 4; i++) {
        json_t *m = by_corr(&r.dev, lines[i].type, corr[i]);
        assert_in_range(tu_int(m, "ts_ns"), t0, t1);
        assert_int_equal(tu_int(m, "device"), 0);
        assert_int_equal(tu_int(m, "context"), FAKE_CUPTI_CONTEXT);
        assert_int_equal(tu_int(m, "stream"), lines[i].stream);
        assert_string_equal(tu_str(m, "address"), lines[i].address);
        assert_int_equal(tu_int(m, "bytes"), lines[i].bytes);
        assert_string_equal(tu_str(m, "kind"), "device");
        assert_int_equal(has(m, "async"), lines[i].async);
        assert_int_equal(tu_int(m, "tid"), my_tid());
        if (lines[i].scoped) {
            assert_int_equal(tu_int(m, "scope"), scope);
            assert_string_equal(tu_str(m, "nvtx"), "setup");
        } else {
            assert_false(has(m, "scope"));
            assert_false(has(m, "nvtx"));
        }
    }
    release(&r);
}

/* ---- CUDA graphs ------------------------------------------------------------------------ */

static const fake_cupti_kernel graph_kernels[] = {
    {.name = "graph_a", .grid = {1, 1, 1}, .block = {128, 1, 1}, .registers = 24, .stream = 9, .duration_ns = 500},
    {.name = "_Z7graph_bv", .grid = {2, 1, 1}, .block = {64, 1, 1}, .registers = 32, .stream = 9, .duration_ns = 700},
    {.name = "graph_c", .grid = {3, 1, 1}, .block = {32, 1, 1}, .registers = 12, .stream = 9, .duration_ns = 900},
};
static const char *const graph_names[] = {"graph_a", "graph_b()", "graph_c"};

static void graph_session(bool tracked)
{
    gpufl_options o = trace_options();
    o.enable_cuda_graphs_tracking = tracked;
    begin(&o);
    gpufl_scope s = gpufl_scope_begin("graph step");
    uint64_t t0 = now();
    uint32_t corr = fake.graph_launch(77, graph_kernels, 3);
    uint64_t t1 = now();
    gpufl_scope_end(s);
    recorded r;
    finish(&r);
    long long scope = tu_int(by_name(&r.scope, "scope_begin", "graph step"), "id");
    if (tracked) {
        assert_int_equal(tu_count_type(&r.dev, "graph_launch"), 1);
        json_t *g = by_corr(&r.dev, "graph_launch", corr);
        uint64_t ts = (uint64_t)tu_int(g, "ts_ns"), end = (uint64_t)tu_int(g, "end_ns");
        assert_in_range(ts, t0, t1);
        assert_in_range(end, ts, t1);
        assert_int_equal(tu_int(g, "tid"), my_tid());
        assert_int_equal(tu_int(g, "scope"), scope);
    } else {
        assert_int_equal(tu_count_type(&r.dev, "graph_launch"), 0);
    }
    /* the graph's kernels carry the launch's correlation id and the graph */
    assert_int_equal(tu_count_type(&r.dev, "kernel"), 3);
    uint64_t start = 0;
    for (size_t i = 0; i < 3; i++) {
        json_t *k = by_name(&r.dev, "kernel", graph_names[i]);
        assert_int_equal(tu_int(k, "corr"), corr);
        assert_int_equal(tu_int(k, "graph_id"), 77);
        assert_int_equal(tu_int(k, "tid"), my_tid());
        assert_int_equal(tu_int(k, "scope"), scope);
        assert_int_equal(tu_int(k, "regs"), graph_kernels[i].registers);
        assert_int_equal(tu_int(k, "dur_ns"), graph_kernels[i].duration_ns);
        if (i)
            assert_int_equal(tu_int(k, "start_ns"), start); /* back to back */
        start = (uint64_t)tu_int(k, "end_ns");
    }
    release(&r);
}

/* A CUDA allocation that fails for lack of memory (dump_on_oom): the failed
 * call is recorded, attributed like any call, and the flight window is
 * dumped holding it and the allocations live at that moment. */
static void test_out_of_memory(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    o.enable_memory_tracking = true;
    o.flight_window_s = 60;
    o.log_format = GPUFL_LOG_NDJSON;
    begin(&o);
    gpufl_scope s = gpufl_scope_begin("load");
    fake.malloc(0x7f0000001000ull, 1u << 20, false, 0); /* live at the failure */
    fake.malloc(0x7f0000200000ull, 4096, false, 0);     /* freed before it */
    fake.free(0x7f0000200000ull, 4096, false, 0);
    uint32_t failed = fake.malloc_oom(80ull << 30);
    gpufl_scope_end(s);
    char dump[4200];
    snprintf(dump, sizeof dump, "%s/dumps/0001-oom", gpufl_session_dir());
    struct stat st;
    for (int i = 0; i < 500 && stat(dump, &st) != 0; i++)
        usleep(10000);
    recorded r;
    finish(&r);
    json_t *m = by_corr(&r.dev, "mem_alloc", failed);
    assert_true(json_is_true(json_object_get(m, "failed")));
    assert_int_equal(tu_int(m, "bytes"), 80ll << 30);
    assert_int_equal(tu_int(m, "tid"), my_tid());
    assert_int_equal(tu_int(m, "scope"), tu_int(by_name(&r.scope, "scope_begin", "load"), "id"));
    json_t *t = tu_nth_type(&r.sys, "trigger", 0);
    assert_non_null(t);
    assert_string_equal(tu_str(t, "kind"), "oom");
    assert_string_equal(tu_str(t, "outcome"), "dumped");
    assert_non_null(strstr(tu_str(t, "detail"), "cudaMalloc of 85899345920 bytes failed"));
    /* the dump: the failed allocation and the one live then, not the freed one */
    gpufl_trace *tr = NULL;
    char err[512];
    if (gpufl_trace_open(dump, &tr, err, sizeof err) != 0)
        fail_msg("%s: %s", dump, err);
    const gpufl_trace_memory *mem = gpufl_trace_get_memory(tr);
    bool saw_failed = false, saw_live = false;
    for (size_t i = 0; i < mem->n; i++) {
        saw_failed |= mem->bytes[i] == 80ull << 30;
        saw_live |= mem->address[i] == 0x7f0000001000ull;
    }
    assert_true(saw_failed);
    assert_true(saw_live);
    gpufl_trace_close(tr);
    /* its diagnosis: the failed request, from CUDA, with the live allocation */
    char oom[4300];
    snprintf(oom, sizeof oom, "%s/oom.json", dump);
    json_error_t jerr;
    json_t *j = json_load_file(oom, 0, &jerr);
    if (!j)
        fail_msg("%s: %s", oom, jerr.text);
    assert_int_equal(tu_int(j, "requested_bytes"), 80ll << 30);
    assert_string_equal(tu_str(j, "source"), "cuda");
    assert_int_equal(tu_int(j, "thread"), my_tid());
    json_t *live = json_array_get(json_object_get(j, "largest_live"), 0);
    assert_string_equal(tu_str(live, "layer"), "driver");
    assert_string_equal(tu_str(live, "address"), "0x7f0000001000");
    assert_string_equal(tu_str(live, "scope"), "load");
    assert_non_null(json_string_value(json_object_get(j, "classification")));
    json_decref(j);
    release(&r);
}

/* While the framework reports its own out-of-memory (gpufl_set_framework_oom),
 * a failed cudaMalloc is recorded but fires no trigger: PyTorch's allocator
 * empties its cache and tries again. gpufl_report_oom then dumps. */
static void test_framework_oom_leaves_cuda_failures_to_the_framework(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    o.enable_memory_tracking = true;
    o.flight_window_s = 60;
    o.dump_min_interval_s = 0;
    o.log_format = GPUFL_LOG_NDJSON;
    begin(&o);
    assert_int_equal(gpufl_set_framework_oom(1), 0);
    uint32_t failed = fake.malloc_oom(80ull << 30);
    assert_int_equal(gpufl_report_oom(0, 80ull << 30, "torch: tried to allocate 80.00 GiB on GPU 0"), 0);
    assert_int_equal(gpufl_set_framework_oom(0), 0);
    recorded r;
    finish(&r);
    json_t *m = by_corr(&r.dev, "mem_alloc", failed);
    assert_true(json_is_true(json_object_get(m, "failed"))); /* still recorded */
    assert_int_equal(tu_count_type(&r.sys, "trigger"), 1);   /* the framework's only */
    json_t *t = tu_nth_type(&r.sys, "trigger", 0);
    assert_string_equal(tu_str(t, "detail"), "torch: tried to allocate 80.00 GiB on GPU 0");
    assert_string_equal(tu_str(t, "dump"), "0001-oom");
    char oom[4300];
    snprintf(oom, sizeof oom, "%s/dumps/0001-oom/oom.json", r.dir);
    json_error_t jerr;
    json_t *j = json_load_file(oom, 0, &jerr);
    if (!j)
        fail_msg("%s: %s", oom, jerr.text);
    assert_string_equal(tu_str(j, "source"), "framework");
    assert_int_equal(tu_int(j, "requested_bytes"), 80ll << 30);
    json_decref(j);
    release(&r);
}

static void test_graphs(void **state)
{
    (void)state;
    graph_session(true);
    cleanup(NULL);
    graph_session(false);
}

/* ---- NVTX ------------------------------------------------------------------------------- */

typedef struct range_thread {
    uint64_t id; /* start: out; end: in */
    uint32_t tid;
} range_thread;

static void *start_crossing(void *arg)
{
    range_thread *t = arg;
    t->tid = my_tid();
    t->id = fake.nvtx_start("crossing");
    return NULL;
}

static void *end_crossing(void *arg)
{
    range_thread *t = arg;
    t->tid = my_tid();
    fake.nvtx_end(t->id);
    return NULL;
}

static void test_nvtx(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    begin(&o);
    uint64_t t0 = now();
    fake.nvtx_push("outer");
    fake.nvtx_push("inner");
    fake.nvtx_mark("here");
    fake.nvtx_pop();
    fake.nvtx_pop();
    void *domain = fake.nvtx_domain_create("my.domain");
    fake.nvtx_domain_push(domain, "in domain");
    fake.nvtx_domain_pop(domain);
    /* NVTX's stacks are per domain: a pop ends its own domain's range */
    fake.nvtx_push("default range");
    fake.nvtx_domain_push(domain, "domain range");
    uint64_t ta = now();
    fake.nvtx_pop();
    uint64_t tb = now();
    fake.nvtx_domain_pop(domain);
    /* a start/end range begun on one thread and ended on another */
    range_thread starter = {0}, ender = {0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, start_crossing, &starter), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(starter.id != 0);
    ender.id = starter.id;
    assert_int_equal(pthread_create(&th, NULL, end_crossing, &ender), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(ender.tid != starter.tid);
    /* and one that never ends: not written */
    (void)fake.nvtx_start("never ends");
    uint64_t t1 = now();
    recorded r;
    finish(&r);

    assert_int_equal(tu_count_type(&r.scope, "nvtx_range"), 6);
    json_t *outer = by_name(&r.scope, "nvtx_range", "outer");
    json_t *inner = by_name(&r.scope, "nvtx_range", "inner");
    assert_int_equal(tu_int(outer, "depth"), 0);
    assert_int_equal(tu_int(inner, "depth"), 1);
    assert_int_equal(tu_int(outer, "tid"), my_tid());
    assert_int_equal(tu_int(inner, "tid"), my_tid());
    assert_false(has(outer, "domain"));
    assert_in_range(tu_int(outer, "start_ns"), t0, tu_int(inner, "start_ns"));
    assert_in_range(tu_int(inner, "end_ns"), tu_int(inner, "start_ns"), tu_int(outer, "end_ns"));
    assert_in_range(tu_int(outer, "end_ns"), tu_int(inner, "end_ns"), t1);
    assert_int_equal(tu_int(inner, "dur_ns"), tu_int(inner, "end_ns") - tu_int(inner, "start_ns"));
    assert_int_equal(tu_count_type(&r.scope, "nvtx_mark"), 1);
    json_t *mark = by_name(&r.scope, "nvtx_mark", "here");
    assert_int_equal(tu_int(mark, "tid"), my_tid());
    assert_in_range(tu_int(mark, "ts_ns"), tu_int(inner, "start_ns"), tu_int(inner, "end_ns"));
    assert_false(has(mark, "domain"));

    json_t *in_domain = by_name(&r.scope, "nvtx_range", "in domain");
    assert_string_equal(tu_str(in_domain, "domain"), "my.domain");
    assert_int_equal(tu_int(in_domain, "depth"), 0);

    json_t *dflt = by_name(&r.scope, "nvtx_range", "default range");
    json_t *dom = by_name(&r.scope, "nvtx_range", "domain range");
    assert_false(has(dflt, "domain"));
    assert_string_equal(tu_str(dom, "domain"), "my.domain");
    assert_in_range(tu_int(dflt, "end_ns"), ta, tb);
    assert_in_range(tu_int(dom, "end_ns"), tb, t1);
    assert_true(tu_int(dflt, "start_ns") <= tu_int(dom, "start_ns"));
    assert_int_equal(tu_int(dflt, "depth"), 0);
    assert_int_equal(tu_int(dom, "depth"), 0); /* outermost once the other ended */

    json_t *crossing = by_name(&r.scope, "nvtx_range", "crossing");
    assert_int_equal(tu_int(crossing, "tid"), starter.tid); /* the thread that started it */
    assert_false(has(crossing, "depth"));
    assert_in_range(tu_int(crossing, "start_ns"), t0, tu_int(crossing, "end_ns"));
    assert_in_range(tu_int(crossing, "end_ns"), t0, t1);

    /* ids are unique */
    long long ids[7] = {tu_int(outer, "id"),    tu_int(inner, "id"), tu_int(mark, "id"), tu_int(in_domain, "id"),
                        tu_int(crossing, "id"), tu_int(dflt, "id"),  tu_int(dom, "id")};
    for (size_t i = 0; i < 7; i++)
        for (size_t j = i + 1; j < 7; j++)
            assert_true(ids[i] != ids[j]);
    release(&r);
}

/* ---- launches from several threads at once ------------------------------------------- */

#define N_THREADS 4
#define N_PER_THREAD 2000

typedef struct worker {
    unsigned index;
    pthread_barrier_t *barrier;
    uint32_t tid;
    uint32_t first_corr;
    char kernel[32], scope[32], nvtx[32];
} worker;

static void *launcher(void *arg)
{
    worker *w = arg;
    w->tid = my_tid();
    fake_cupti_kernel k = {.name = w->kernel,
                           .grid = {w->index + 1, 1, 1},
                           .block = {128, 1, 1},
                           .registers = (uint16_t)(10 + w->index),
                           .stream = w->index + 1};
    pthread_barrier_wait(w->barrier);
    gpufl_scope s = gpufl_scope_begin(w->scope);
    fake.nvtx_push(w->nvtx);
    for (unsigned i = 0; i < N_PER_THREAD; i++) {
        uint32_t corr = fake.launch_kernel(&k);
        if (i == 0)
            w->first_corr = corr;
    }
    fake.nvtx_pop();
    gpufl_scope_end(s);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    begin(&o);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, N_THREADS);
    worker w[N_THREADS];
    pthread_t th[N_THREADS];
    for (unsigned i = 0; i < N_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].index = i;
        w[i].barrier = &barrier;
        snprintf(w[i].kernel, sizeof w[i].kernel, "worker_kernel_%u", i);
        snprintf(w[i].scope, sizeof w[i].scope, "worker scope %u", i);
        snprintf(w[i].nvtx, sizeof w[i].nvtx, "worker range %u", i);
        assert_int_equal(pthread_create(&th[i], NULL, launcher, &w[i]), 0);
    }
    for (unsigned i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    pthread_barrier_destroy(&barrier);
    recorded r;
    finish(&r);

    assert_int_equal(tu_count_type(&r.dev, "kernel"), N_THREADS * N_PER_THREAD);
    assert_int_equal(tu_count_type(&r.dev, "dropped"), 0);
    long long scope[N_THREADS];
    for (unsigned i = 0; i < N_THREADS; i++) {
        json_t *b = by_name(&r.scope, "scope_begin", w[i].scope);
        assert_int_equal(tu_int(b, "tid"), w[i].tid);
        scope[i] = tu_int(b, "id");
        assert_int_equal(tu_int(by_name(&r.scope, "nvtx_range", w[i].nvtx), "tid"), w[i].tid);
    }
    size_t seen[N_THREADS] = {0};
    FOR_EACH_LINE(k, &r.dev, "kernel")
    {
        unsigned i = 0;
        while (i < N_THREADS && strcmp(tu_str(k, "name"), w[i].kernel) != 0)
            i++;
        assert_true(i < N_THREADS);
        seen[i]++;
        assert_int_equal(tu_int(k, "tid"), w[i].tid);
        assert_int_equal(tu_int(k, "scope"), scope[i]);
        assert_string_equal(tu_str(k, "nvtx"), w[i].nvtx);
        assert_int_equal(tu_int(k, "stream"), i + 1);
        assert_int_equal(tu_int(k, "regs"), 10 + i);
        assert_true(tu_int(k, "api_start_ns") <= tu_int(k, "start_ns"));
    }
    for (unsigned i = 0; i < N_THREADS; i++) {
        assert_int_equal(seen[i], N_PER_THREAD);
        (void)by_corr(&r.dev, "kernel", w[i].first_corr);
    }
    release(&r);
}

/* ---- records that must not be written ---------------------------------------------------- */

static void test_bad_records(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    begin(&o);
    uint32_t good = fake.launch_kernel(&plain);
    (void)fake.bad_record(FAKE_CUPTI_BAD_ZERO_START);
    (void)fake.bad_record(FAKE_CUPTI_BAD_END_BEFORE_START);
    (void)fake.bad_record(FAKE_CUPTI_BAD_END_BEFORE_START);
    (void)fake.bad_record(FAKE_CUPTI_BAD_FUTURE);
    for (int i = 0; i < 3; i++)
        (void)fake.bad_record(FAKE_CUPTI_BAD_BEFORE_SESSION);
    uint32_t good2 = fake.launch_kernel(&vec_add);
    fake.drop(5); /* CUPTI lost 5 records for want of a buffer */
    recorded r;
    finish(&r);
    assert_int_equal(tu_count_type(&r.dev, "kernel"), 2);
    (void)by_corr(&r.dev, "kernel", good);
    (void)by_corr(&r.dev, "kernel", good2);
    assert_int_equal(count_named(&r.dev, "kernel", "teardown_kernel"), 0);
    assert_int_equal(dropped(&r.dev, "bad_event"), 3);
    assert_int_equal(dropped(&r.dev, "out_of_session"), 4);
    assert_int_equal(dropped(&r.dev, "cupti"), 5);
    json_t *session = tu_session_json(r.dir);
    json_t *summary = json_object_get(session, "summary");
    json_t *lost = json_object_get(summary, "dropped");
    assert_int_equal(tu_int(lost, "bad_event"), 3);
    assert_int_equal(tu_int(lost, "out_of_session"), 4);
    assert_int_equal(tu_int(lost, "cupti"), 5);
    json_decref(session);
    release(&r);
}

/* The client gives CUPTI no buffer: records are lost in CUPTI and must be
 * reported as CUPTI's drops, exactly. */
static void test_no_buffers(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    begin(&o);
    fake_cupti_counters before = counters();
    fake.refuse_buffers(true);
    for (int i = 0; i < 10; i++)
        (void)fake.launch_kernel(&plain);
    fake.refuse_buffers(false);
    fake_cupti_counters after = counters();
    uint64_t lost = after.records_dropped - before.records_dropped;
    assert_true(lost >= 10); /* each launch: its API record and its kernel */
    uint32_t kept = fake.launch_kernel(&plain);
    recorded r;
    finish(&r);
    assert_int_equal(tu_count_type(&r.dev, "kernel"), 1);
    (void)by_corr(&r.dev, "kernel", kept);
    assert_int_equal(dropped(&r.dev, "cupti"), lost);
    release(&r);
}

/* ---- delivery ----------------------------------------------------------------------------- */

/* A program that never flushes and ends right after its last launch loses
 * nothing: records sitting in CUPTI's buffers come out at shutdown. Enough
 * launches that the thread's buffer fills and is replaced twice. */
static void test_delivered_at_shutdown(void **state)
{
    (void)state;
    enum { N = 20000 };
    gpufl_options o = trace_options();
    begin(&o);
    fake_cupti_counters before = counters();
    uint32_t first = 0, last = 0;
    for (int i = 0; i < N; i++) {
        last = fake.launch_kernel(&tagged);
        if (!i)
            first = last;
    }
    recorded r;
    finish(&r);
    fake_cupti_counters after = counters();
    assert_int_equal(fake.pending_records(), 0);
    assert_true(after.forced_flushes > before.forced_flushes);
    assert_true(after.buffers_completed - before.buffers_completed >= 3);
    assert_int_equal(after.records_dropped, before.records_dropped);
    assert_int_equal(tu_count_type(&r.dev, "kernel"), N);
    assert_int_equal(last - first, N - 1);
    (void)by_corr(&r.dev, "kernel", first);
    (void)by_corr(&r.dev, "kernel", last);
    release(&r);
}

/* A context being destroyed: its records leave CUPTI before it goes, on
 * the destroying thread. */
static void test_context_destroy(void **state)
{
    (void)state;
    gpufl_options o = trace_options();
    begin(&o);
    uint32_t corr[10];
    for (int i = 0; i < 10; i++)
        corr[i] = fake.launch_kernel(&vec_add);
    fake_cupti_counters before = counters();
    fake.destroy_context(FAKE_CUPTI_CONTEXT);
    fake_cupti_counters after = counters();
    assert_int_equal(after.forced_flushes, before.forced_flushes + 1);
    assert_int_equal(fake.pending_records(), 0);
    recorded r;
    finish(&r);
    assert_int_equal(tu_count_type(&r.dev, "kernel"), 10);
    for (int i = 0; i < 10; i++)
        (void)by_corr(&r.dev, "kernel", corr[i]);
    release(&r);
}

/* ---- CUPTI unavailable: Monitor, with the reason --------------------------------------- */

static int other_callbacks;
static void CUPTIAPI other_tool(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    (void)domain;
    (void)cbid;
    (void)data;
    other_callbacks++;
}

/* Another profiler holds CUPTI: the session records as Monitor and says
 * who; once it lets go, the next session traces. */
static void test_second_subscriber(void **state)
{
    (void)state;
    CUpti_SubscriberParams params = {
        .structSize = CUpti_SubscriberParams_STRUCT_SIZE,
        .subscriberName = "Nsight Systems (test)",
    };
    assert_int_equal(fake.subscribe_v2(&other_tool_handle, other_tool, NULL, &params), CUPTI_SUCCESS);
    assert_int_equal(
        fake.enable_callback(1, other_tool_handle, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
        CUPTI_SUCCESS);
    other_callbacks = 0;
    fake_cupti_counters before = counters();
    gpufl_options o = trace_options();
    assert_true(gpufl_init(&o));
    assert_true(gpufl_is_recording());
    fake_cupti_counters after = counters();
    assert_int_equal(after.subscribe_refusals, before.subscribe_refusals + 1);
    /* the other tool's buffers are its own: no flush forced on them */
    assert_int_equal(after.forced_flushes, before.forced_flushes);
    assert_int_equal(after.flushes, before.flushes);
    for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
        assert_false(fake.activity_enabled((CUpti_ActivityKind)k));
    gpufl_scope s = gpufl_scope_begin("monitored");
    (void)fake.launch_kernel(&plain);
    gpufl_scope_end(s);
    recorded r;
    finish(&r);
    assert_int_equal(tu_count_type(&r.dev, "kernel"), 0);
    (void)by_name(&r.scope, "scope_begin", "monitored"); /* still recording as Monitor */
    json_t *why = log_with(&r.sys, "could not start", "CUPTI for Nsight Systems (test)", "recording as monitor", NULL);
    assert_non_null(why);
    assert_string_equal(tu_str(why, "level"), "warn");
    release(&r);
    assert_true(fake.subscribed());       /* still the other tool's */
    assert_int_equal(other_callbacks, 2); /* which kept its callbacks: entry and exit */
    assert_int_equal(fake.unsubscribe(other_tool_handle), CUPTI_SUCCESS);
    other_tool_handle = NULL;
    cleanup(NULL);

    o = trace_options();
    begin(&o);
    uint32_t corr = fake.launch_kernel(&plain);
    finish(&r);
    (void)by_corr(&r.dev, "kernel", corr);
    release(&r);
}

/* Kernels are what the Trace engine is for: without them, Monitor. A kind
 * the plugin can do without is a warning. */
static void test_activity_refused(void **state)
{
    (void)state;
    fake.refuse_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ERROR_NOT_COMPATIBLE);
    gpufl_options o = trace_options();
    assert_true(gpufl_init(&o));
    assert_false(fake.subscribed()); /* the plugin let go of CUPTI */
    for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
        assert_false(fake.activity_enabled((CUpti_ActivityKind)k));
    (void)fake.launch_kernel(&plain);
    recorded r;
    finish(&r);
    assert_int_equal(tu_count_type(&r.dev, "kernel"), 0);
    assert_non_null(
        log_with(&r.sys, "could not start", "kernel", "CUPTI_ERROR_NOT_COMPATIBLE", "recording as monitor", NULL));
    release(&r);
    cleanup(NULL);

    fake.refuse_kind(CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ERROR_NOT_SUPPORTED);
    o = trace_options();
    begin(&o);
    (void)fake.memset(64, 0, 1);
    uint32_t corr = fake.launch_kernel(&plain);
    finish(&r);
    (void)by_corr(&r.dev, "kernel", corr);
    assert_int_equal(tu_count_type(&r.dev, "memset"), 0);
    json_t *warn = log_with(&r.sys, "memsets are not recorded", "CUPTI_ERROR_NOT_SUPPORTED", NULL);
    assert_non_null(warn);
    assert_string_equal(tu_str(warn, "level"), "warn");
    release(&r);
}

/* ---- fresh processes --------------------------------------------------------------------- */

/* The child's cmocka must write to the terminal, never over the parent's
 * XML report. */
#define CHILD_UNSET "CMOCKA_MESSAGE_OUTPUT", "CMOCKA_XML_FILE"
#define MISSING_CUPTI "/nonexistent/gpufl-test/libcupti.so.13"

/* A Monitor session that could not trace, with the reason logged. */
static void expect_monitor(recorded *r, const char *reason)
{
    gpufl_options o = trace_options();
    assert_true(gpufl_init(&o));
    assert_true(gpufl_is_recording());
    gpufl_scope s = gpufl_scope_begin("monitored");
    gpufl_scope_end(s);
    finish(r);
    assert_int_equal(tu_count_type(&r->dev, "kernel"), 0);
    (void)by_name(&r->scope, "scope_end", "monitored");
    json_t *why = log_with(&r->sys, "device plugin cupti could not start", reason, "recording as monitor", NULL);
    if (!why) {
        FOR_EACH_LINE(line, &r->sys, "log")
        fprintf(stderr, "log: %s\n", tu_str(line, "message"));
        fail_msg("no log line says why the plugin did not start (%s)", reason);
    }
    assert_string_equal(tu_str(why, "level"), "warn");
}

static void child_missing_library(void **state)
{
    (void)state;
    recorded r;
    expect_monitor(&r, "GPUFL_CUPTI_LIBRARY=" MISSING_CUPTI " cannot be loaded");
    release(&r);
}

static void test_missing_library(void **state)
{
    (void)state;
    const char *set[] = {"GPUFL_CUPTI_LIBRARY=" MISSING_CUPTI, NULL};
    const char *unset[] = {CHILD_UNSET, NULL};
    tu_run_child("missing_library", set, unset);
}

/* A library that is not CUPTI (the synthetic plugin): refused by name of
 * the first function it lacks, and unloaded again. */
static void child_not_cupti(void **state)
{
    (void)state;
    recorded r;
    expect_monitor(&r, "lacks cuptiActivityRegisterCallbacks: too old a CUPTI");
    assert_non_null(log_with(&r.sys, GFL_SYNTHETIC_PLUGIN " lacks", NULL));
    assert_false(tu_mapped("libgpufl_synthetic"));
    release(&r);
}

static void test_not_cupti(void **state)
{
    (void)state;
    const char *set[] = {"GPUFL_CUPTI_LIBRARY=" GFL_SYNTHETIC_PLUGIN, NULL};
    const char *unset[] = {CHILD_UNSET, NULL};
    tu_run_child("not_cupti", set, unset);
}

/* The toolkit's own libcupti, as the plugin finds it by itself, on a
 * machine without a CUDA driver: CUPTI refuses, the program goes on. */
static void child_real_cupti(void **state)
{
    (void)state;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver) {
        dlclose(driver);
        skip(); /* a driver: CUPTI would trace; test/gpu covers that */
    }
    recorded r;
    expect_monitor(&r, "cuptiSubscribe");
    assert_non_null(log_with(&r.sys, "there is no CUDA driver here (libcuda.so.1 cannot be loaded)", NULL));
    assert_true(tu_mapped("libcupti.so"));
    char *fake_path = realpath(GFL_FAKE_CUPTI, NULL);
    assert_non_null(fake_path);
    assert_false(tu_mapped(fake_path));
    free(fake_path);
    release(&r);
}

static void test_real_cupti_without_driver(void **state)
{
    (void)state;
    const char *unset[] = {CHILD_UNSET, "GPUFL_CUPTI_LIBRARY", NULL};
    tu_run_child("real_cupti", NULL, unset);
}

/* ---- main ---------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    struct CMUnitTest test;
} children[] = {
    {"missing_library", cmocka_unit_test_teardown(child_missing_library, cleanup)},
    {"not_cupti", cmocka_unit_test_teardown(child_not_cupti, cleanup)},
    {"real_cupti", cmocka_unit_test_teardown(child_real_cupti, cleanup)},
};

int main(int argc, char **argv)
{
    /* no NVML: its absence is one info line, not GPU telemetry that varies */
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/gpufl-test/libnvidia-ml.so.1");
    if (argc == 3 && !strcmp(argv[1], "--child")) {
        for (size_t c = 0; c < sizeof children / sizeof children[0]; c++) {
            if (strcmp(children[c].name, argv[2]) != 0)
                continue;
            const struct CMUnitTest one[] = {children[c].test};
            return cmocka_run_group_tests_name(children[c].name, one, NULL, NULL);
        }
        fprintf(stderr, "test_cupti_plugin: no child case '%s'\n", argv[2]);
        return 2;
    }
    load_fake();
    tu_setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_missing_library, cleanup),
        cmocka_unit_test_teardown(test_not_cupti, cleanup),
        cmocka_unit_test_teardown(test_real_cupti_without_driver, cleanup),
        cmocka_unit_test_teardown(test_kernels, cleanup),
        cmocka_unit_test_teardown(test_without_external_correlation, cleanup),
        cmocka_unit_test_teardown(test_stacks, cleanup),
        cmocka_unit_test_teardown(test_copies_memsets_syncs, cleanup),
        cmocka_unit_test_teardown(test_allocations, cleanup),
        cmocka_unit_test_teardown(test_out_of_memory, cleanup),
        cmocka_unit_test_teardown(test_framework_oom_leaves_cuda_failures_to_the_framework, cleanup),
        cmocka_unit_test_teardown(test_graphs, cleanup),
        cmocka_unit_test_teardown(test_nvtx, cleanup),
        cmocka_unit_test_teardown(test_threads, cleanup),
        cmocka_unit_test_teardown(test_bad_records, cleanup),
        cmocka_unit_test_teardown(test_no_buffers, cleanup),
        cmocka_unit_test_teardown(test_delivered_at_shutdown, cleanup),
        cmocka_unit_test_teardown(test_context_destroy, cleanup),
        cmocka_unit_test_teardown(test_second_subscriber, cleanup),
        cmocka_unit_test_teardown(test_activity_refused, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
