/*
 * The sass_metrics and deep engines of the CUPTI plugin against the fake
 * libcupti (its SASS metrics model in tests/fake_cupti/fake_cupti.c): each
 * context is configured and enabled with lazy patching at its first
 * launch, kernels are traced one at a time (under concurrent kernel
 * tracing an H100 counted nothing), the counts of all launches are read
 * once at the end (one flush: on an H100 a flush ends the counting of the
 * functions it read) and come
 * out as sass_metric rows with the function's name and source lines from
 * the module's cubin; a metric the chip lacks clears its valid bit, the
 * one required steps the session down; deep runs PC sampling alongside.
 *
 * Why: CI has no GPU; everything between CUPTI's SASS metrics calls and
 * the trace is checked here, the GPU test (tests/gpu/test_sass_metrics.cu)
 * checks the real CUPTI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_cupti.h"
#include "fake_cupti_setup.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "test_util.h"

// clang-format off
#define FAKE_FUNCTIONS(X)                                                                          \
    X(create_context) X(load_module) X(launch_kernel) X(sass_program) X(sass_remove_metric)       \
    X(sass_reset) X(sass_get_state) X(pc_sampling_state) X(refuse_pc_sampling) X(get_counters)              \
    X(destroy_context)
// clang-format on

static struct {
    void *lib;
#define AS_FIELD(name) __typeof__(&fake_cupti_##name) name;
    FAKE_FUNCTIONS(AS_FIELD)
#undef AS_FIELD
} fake;

#define CUBIN "fake-cubin file=/src/sass.cu line=20"
#define KERNEL "_Z6k_sassPf"

static char *logs;

static int setup(void **state)
{
    (void)state;
    TU_FAKE_CUPTI_SETUP();
    logs = tu_mkdtemp("sass_plugin");
    return 0;
}

static uint32_t crc32_of(const char *cubin) { return (uint32_t)tu_fake_cubin_crc(cubin); }

/* ring_events: 0 for the default */
static void start_with_ring(const char *app, gpufl_engine engine, uint32_t ring_events)
{
    gpufl_options o;
    gpufl_options_init(&o);
    if (ring_events)
        o.ring_events = ring_events;
    o.app_name = app;
    o.log_path = logs;
    o.profiling_engine = engine;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.enable_source_collection = true;
    fake.sass_reset();
    fake.refuse_pc_sampling(CUPTI_SUCCESS);
    assert_true(gpufl_init(&o));
}

static void start(const char *app, gpufl_engine engine) { start_with_ring(app, engine, 0); }

/* Two instructions: a load whose 32 threads touch 32 sectors where 4 would
 * do, and a branch half of whose targets are divergent. */
static const fake_cupti_sass_inst program[] = {
    {.pc_offset = 0x10, .inst = 8, .thread_inst = 256, .sectors = 256, .sectors_ideal = 32},
    {.pc_offset = 0x40, .inst = 8, .thread_inst = 128, .branch = 8, .divergent = 4},
};

static void launch_three_times(void)
{
    fake.create_context(1, 0); /* the fake's launches run on context 1 */
    fake.load_module(1, CUBIN);
    fake.sass_program(KERNEL, crc32_of(CUBIN), program, 2);
    fake_cupti_kernel k = {.name = KERNEL, .grid = {8, 1, 1}, .block = {32, 1, 1}};
    for (int i = 0; i < 3; i++)
        fake.launch_kernel(&k);
}

static void counts_of_every_launch_are_read_once(void **state)
{
    (void)state;
    start("sass", GPUFL_ENGINE_SASS_METRICS);
    launch_three_times();
    fake_cupti_sass_state st;
    fake.sass_get_state(&st);
    assert_true(st.configured && st.enabled && st.lazy);
    assert_int_equal(st.flushes, 0); /* nothing read while the program runs */
    gpufl_trace *t = tu_plugin_session_end();
    fake.sass_get_state(&st);
    assert_int_equal(st.flushes, 1);
    assert_false(st.enabled);
    assert_false(st.configured);
    assert_int_equal(st.dropped, 0);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "sass_metrics");
    /* traced one at a time (the fake, like the H100, counts nothing under
     * concurrent kernel tracing), and still traced */
    assert_int_equal(gpufl_trace_get_kernels(t)->n, 3);
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    assert_int_equal(s->n, 2);
    for (size_t i = 0; i < s->n; i++) {
        assert_string_equal(tu_trace_text(t, s->function[i]), "k_sass(float*)"); /* demangled, as kernel names */
        assert_string_equal(tu_trace_text(t, s->file[i]), "/src/sass.cu");
        assert_int_equal(s->inst_executed[i], 24);
        assert_int_equal(s->cubin_crc[i], crc32_of(CUBIN));
        if (s->pc_offset[i] == 0x10) {
            assert_int_equal(s->line[i], 21); /* 20 + 0x10 / 16 */
            assert_int_equal(s->thread_inst_executed[i], 768);
            assert_int_equal(s->sectors[i], 768);
            assert_int_equal(s->sectors_ideal[i], 96);
        } else {
            assert_int_equal(s->pc_offset[i], 0x40);
            assert_int_equal(s->line[i], 24);
            assert_int_equal(s->divergent_targets[i], 12);
            assert_int_equal(s->branch_targets[i], 24);
        }
        assert_int_equal(s->valid[i], 0x0f);
    }
    gpufl_trace_close(t);
}

/* Two kernels of one module, their instructions at the same offsets, and
 * (as on an H100) the same functionIndex in every record: each keeps its
 * own counts, told apart by name. */
static void kernels_of_one_module_keep_their_own_counts(void **state)
{
    (void)state;
    start("sass_two", GPUFL_ENGINE_SASS_METRICS);
    launch_three_times();
    static const fake_cupti_sass_inst other[] = {{.pc_offset = 0x10, .inst = 2, .thread_inst = 64}};
    fake.sass_program("_Z7k_otherPf", crc32_of(CUBIN), other, 1);
    fake_cupti_kernel k = {.name = "_Z7k_otherPf", .grid = {2, 1, 1}, .block = {32, 1, 1}};
    fake.launch_kernel(&k);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    assert_int_equal(s->n, 3);
    unsigned seen = 0;
    for (size_t i = 0; i < s->n; i++) {
        const char *fn = tu_trace_text(t, s->function[i]);
        if (!strcmp(fn, "k_other(float*)")) {
            assert_int_equal(s->pc_offset[i], 0x10);
            assert_int_equal(s->inst_executed[i], 2);
            assert_int_equal(s->thread_inst_executed[i], 64);
            seen |= 1;
        } else {
            assert_string_equal(fn, "k_sass(float*)");
            assert_int_equal(s->inst_executed[i], 24);
            seen |= 2;
        }
    }
    assert_int_equal(seen, 3);
    gpufl_trace_close(t);
}

static void a_metric_the_chip_lacks_clears_its_bit(void **state)
{
    (void)state;
    start("sass_lacking", GPUFL_ENGINE_SASS_METRICS);
    fake.sass_remove_metric("smsp__sass_branch_targets_threads_divergent");
    launch_three_times();
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    assert_int_equal(s->n, 2);
    for (size_t i = 0; i < s->n; i++) {
        assert_int_equal(s->valid[i], 0x07);
        assert_int_equal(s->divergent_targets[i], 0);
    }
    gpufl_trace_close(t);
}

/* A chip without the one required metric: the session steps down to
 * trace at the first launch, saying why; deep keeps its PC sampling. */
static void a_context_it_cannot_measure_steps_down(void **state)
{
    (void)state;
    for (int deep = 0; deep < 2; deep++) {
        start(deep ? "sass_refused_deep" : "sass_refused", deep ? GPUFL_ENGINE_DEEP : GPUFL_ENGINE_SASS_METRICS);
        fake.sass_remove_metric("smsp__sass_inst_executed");
        launch_three_times();
        gpufl_trace *t = tu_plugin_session_end();
        const gpufl_trace_info *info = gpufl_trace_get_info(t);
        assert_string_equal(tu_trace_text(t, info->engine), deep ? "pc_sampling" : "trace");
        const char *why = tu_trace_text(t, info->engine_reason);
        if (!strstr(why, "lacks smsp__sass_inst_executed") || !strstr(why, "from here on"))
            fail_msg("the reason does not say what the chip lacks: %s", why);
        assert_int_equal(gpufl_trace_get_sass_metrics(t)->n, 0);
        assert_int_equal(gpufl_trace_get_kernels(t)->n, 3); /* still traced */
        fake_cupti_sass_state st;
        fake.sass_get_state(&st);
        assert_false(st.enabled);
        gpufl_trace_close(t);
    }
}

static void deep_runs_pc_sampling_and_sass_metrics(void **state)
{
    (void)state;
    start("deep", GPUFL_ENGINE_DEEP);
    launch_three_times();
    fake_cupti_pcs_state pst;
    assert_true(fake.pc_sampling_state(1, &pst));
    assert_true(pst.enabled);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", gpufl_session_dir());
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "deep");
    assert_int_equal(info->engine_reason, 0);
    assert_int_equal(gpufl_trace_get_sass_metrics(t)->n, 2);
    gpufl_trace_close(t);
    /* the risk CUPTI brings with both halves on is said as the session starts */
    assert_true(tu_logged(dir, "deep:", "crashed the program"));
}

/* A runtime launch on a thread with no context current yet (PyTorch's
 * autograd thread at its first launch, on an H100) enters with context
 * NULL: the context is enabled at the driver launch nested in it, and the
 * session keeps its engine. Before, ResNet-50 training stepped down to
 * trace at its first backward pass ("the device of CUDA context (nil) is
 * unknown"). */
static void a_launch_that_enters_without_a_context_is_measured(void **state)
{
    (void)state;
    start("sass_unbound", GPUFL_ENGINE_SASS_METRICS);
    fake.create_context(1, 0);
    fake.load_module(1, CUBIN);
    fake.sass_program(KERNEL, crc32_of(CUBIN), program, 2);
    fake_cupti_kernel k = {.name = KERNEL, .grid = {8, 1, 1}, .block = {32, 1, 1}, .unbound_thread = true};
    fake.launch_kernel(&k);
    k.unbound_thread = false;
    fake.launch_kernel(&k);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "sass_metrics");
    if (info->engine_reason)
        fail_msg("the session stepped down: %s", tu_trace_text(t, info->engine_reason));
    assert_int_equal(gpufl_trace_get_kernels(t)->n, 2);
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    assert_int_equal(s->n, 2);
    for (size_t i = 0; i < s->n; i++)
        assert_int_equal(s->inst_executed[i], 16); /* both launches counted */
    gpufl_trace_close(t);
}

/* A program thread that launches a kernel of 64 instructions and destroys
 * its context: a thread of its own, so that its ring has the session's
 * ring_events (a thread keeps the ring it first recorded with). */
static void *launch_and_destroy(void *arg)
{
    (void)arg;
    fake_cupti_kernel k = {.name = KERNEL, .grid = {1, 1, 1}, .block = {32, 1, 1}};
    fake.launch_kernel(&k);
    fake.destroy_context(1);
    return NULL;
}

/* The counts read as a context is destroyed wait for room in the
 * destroying thread's ring: none is dropped however many there are
 * (ResNet-50 training gave 43 655 rows, a default ring holds about 2 000).
 * Here a ring of 16 units holds a few rows, the kernel has 64. */
static void counts_read_at_a_context_destroy_are_all_kept(void **state)
{
    (void)state;
    start_with_ring("sass_destroy", GPUFL_ENGINE_SASS_METRICS, 16);
    fake_cupti_sass_inst many[64];
    for (unsigned i = 0; i < 64; i++)
        many[i] = (fake_cupti_sass_inst){.pc_offset = 0x10 * i, .inst = 1, .thread_inst = 32};
    fake.create_context(1, 0);
    fake.load_module(1, CUBIN);
    fake.sass_program(KERNEL, crc32_of(CUBIN), many, 64);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, launch_and_destroy, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    fake_cupti_sass_state st;
    fake.sass_get_state(&st);
    assert_int_equal(st.flushes, 1); /* read at the destroy, not again at the end */
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(gpufl_trace_get_sass_metrics(t)->n, 64);
    gpufl_trace_close(t);
}

static fake_cupti_counters counters(void)
{
    fake_cupti_counters c;
    fake.get_counters(&c);
    return c;
}

/* While SASS metrics patch kernels the plugin's worker asks CUPTI for no
 * default flush of its own (on an H200 one deadlocked against the patching
 * of a first launch); the end's forced flush still brings every record.
 * The trace engine's worker, as a control, does flush meanwhile. */
static void no_worker_flush_while_sass_metrics_patch(void **state)
{
    (void)state;
    const gpufl_engine engines[] = {GPUFL_ENGINE_TRACE, GPUFL_ENGINE_SASS_METRICS, GPUFL_ENGINE_DEEP};
    for (size_t e = 0; e < sizeof engines / sizeof *engines; e++) {
        start("sass_flush", engines[e]);
        launch_three_times();
        fake_cupti_counters before = counters();
        struct timespec wait = {0, 350 * 1000000L}; /* three of the worker's 100 ms periods */
        nanosleep(&wait, NULL);
        fake_cupti_counters during = counters();
        gpufl_trace *t = tu_plugin_session_end();
        if (engines[e] == GPUFL_ENGINE_TRACE)
            assert_true(during.flushes >= before.flushes + 2);
        else
            assert_int_equal(during.flushes, before.flushes);
        assert_int_equal(gpufl_trace_get_kernels(t)->n, 3);
        gpufl_trace_close(t);
    }
}

static void deep_steps_down_to_trace_when_pc_sampling_is_refused(void **state)
{
    (void)state;
    start("deep_refused", GPUFL_ENGINE_DEEP);
    fake.refuse_pc_sampling(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    launch_three_times();
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "trace");
    if (!strstr(tu_trace_text(t, info->engine_reason), "cuptiPCSamplingEnable"))
        fail_msg("the reason does not name the refused call: %s", tu_trace_text(t, info->engine_reason));
    fake_cupti_sass_state st;
    fake.sass_get_state(&st);
    assert_false(st.enabled); /* SASS metrics stopped with it */
    gpufl_trace_close(t);
}

/* enable_source_collection with SASS metrics: the text report's findings
 * show each line's code, read from the session's sources/ copy (the
 * original is deleted first). */
static void findings_show_the_code_of_their_lines(void **state)
{
    (void)state;
    char *src = tu_mkdtemp("sass_src");
    char file[4200], cubin[4400];
    snprintf(file, sizeof file, "%s/sass.cu", src);
    char text[1024] = "";
    for (int i = 1; i <= 30; i++) {
        char l[96];
        snprintf(l, sizeof l,
                 i == 21   ? "\tfloat v = in[threadIdx.x * 8];\n"
                 : i == 24 ? "    if (threadIdx.x & 1) {  \n"
                           : "// %d\n",
                 i);
        strcat(text, l);
    }
    tu_write_file(file, text);
    snprintf(cubin, sizeof cubin, "fake-cubin file=%s line=20", file);
    start("sass_src", GPUFL_ENGINE_SASS_METRICS);
    fake.create_context(1, 0);
    fake.load_module(1, cubin);
    /* program's two findings, with counts over the analysis's floors */
    static const fake_cupti_sass_inst big[] = {
        {.pc_offset = 0x10, .inst = 2048, .thread_inst = 65536, .sectors = 65536, .sectors_ideal = 8192},
        {.pc_offset = 0x40, .inst = 2048, .thread_inst = 32768, .branch = 2048, .divergent = 1024},
    };
    fake.sass_program(KERNEL, crc32_of(cubin), big, 2);
    fake_cupti_kernel k = {.name = KERNEL, .grid = {8, 1, 1}, .block = {32, 1, 1}};
    fake.launch_kernel(&k);
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(unlink(file), 0);
    char *out = NULL, err[256];
    size_t len = 0;
    assert_int_equal(gpufl_trace_report(t, "text", 0, &out, &len, err, sizeof err), 0);
    char at[4300];
    snprintf(at, sizeof at, "uncoalesced access: %s:21", file);
    assert_non_null(strstr(out, at));
    assert_non_null(strstr(out, "\n      | float v = in[threadIdx.x * 8];\n"));
    assert_non_null(strstr(out, "\n      | if (threadIdx.x & 1) {\n"));
    gpufl_trace_free_text(out);
    gpufl_trace_close(t);
    tu_rm_rf(src);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_of_every_launch_are_read_once),
        cmocka_unit_test(findings_show_the_code_of_their_lines),
        cmocka_unit_test(kernels_of_one_module_keep_their_own_counts),
        cmocka_unit_test(a_metric_the_chip_lacks_clears_its_bit),
        cmocka_unit_test(a_context_it_cannot_measure_steps_down),
        cmocka_unit_test(deep_runs_pc_sampling_and_sass_metrics),
        cmocka_unit_test(a_launch_that_enters_without_a_context_is_measured),
        cmocka_unit_test(counts_read_at_a_context_destroy_are_all_kept),
        cmocka_unit_test(no_worker_flush_while_sass_metrics_patch),
        cmocka_unit_test(deep_steps_down_to_trace_when_pc_sampling_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
