/*
 * Leak detection by repetition (src/analyze/ana_leaks.c) and the
 * statistics under it (src/analyze/ana_stats.c).
 *
 * Why: a caching allocator never frees, so "never freed" cannot tell a
 * leak; growth that goes on step after step can. The verdict must find a
 * loop that leaks 1 MiB a step (slope 1 MiB, the allocations that grew
 * named by stack), and must not find one in the same loop without the
 * leak, in a caching allocator that fills up during its first steps, or in
 * the bundled PyTorch session. The p-value rests on an incomplete beta
 * function written here: it is checked against closed forms and tables of
 * Student's t.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "ana_fixture.h"
#include "analyze/ana_stats.h"
#include "analyze/analysis.h"
#include "session_file.h"

#define MIB (1ull << 20)
#define SAMPLE GFL_SOURCE_DIR "/samples/train_sample"

TU_TEMP_DIR_FIXTURES(dir, "mem-leaks")

/* ---- statistics ------------------------------------------------------------ */

static const double pi = 3.14159265358979323846;

static void beta_function(void **state)
{
    (void)state;
    /* I_x(1, 1) = x; I_0.5(2, 3) = sum C(4, j) / 16 for j >= 2 = 11/16 */
    assert_float_equal(gpufl__ana_betai(1, 1, 0.3), 0.3, 1e-12);
    assert_float_equal(gpufl__ana_betai(2, 3, 0.5), 11.0 / 16.0, 1e-12);
    /* I_x(a, 1) = x^a; the symmetry I_x(a, b) = 1 - I_1-x(b, a) */
    assert_float_equal(gpufl__ana_betai(2.5, 1, 0.7), pow(0.7, 2.5), 1e-12);
    assert_float_equal(gpufl__ana_betai(3.5, 0.5, 0.2) + gpufl__ana_betai(0.5, 3.5, 0.8), 1.0, 1e-12);
    assert_float_equal(gpufl__ana_betai(4, 7, 0), 0, 0);
    assert_float_equal(gpufl__ana_betai(4, 7, 1), 1, 0);
    assert_true(isnan(gpufl__ana_betai(0, 1, 0.5)));
    assert_true(isnan(gpufl__ana_betai(1, 1, 1.5)));
}

static void student_t(void **state)
{
    (void)state;
    /* closed forms: 1 degree of freedom is Cauchy, 2 and 3 have their own */
    for (double t = 0.25; t < 40; t *= 1.7) {
        assert_float_equal(gpufl__ana_t_two_sided(t, 1), 1 - 2 / pi * atan(t), 1e-10);
        assert_float_equal(gpufl__ana_t_two_sided(-t, 2), 1 - t / sqrt(2 + t * t), 1e-10);
        double u = t / sqrt(3);
        assert_float_equal(gpufl__ana_t_two_sided(t, 3), 1 - 2 / pi * (atan(u) + u / (1 + u * u)), 1e-10);
    }
    /* the tables' critical values: two-sided 5 % and 1 % */
    assert_float_equal(gpufl__ana_t_two_sided(12.7062047, 1), 0.05, 1e-6);
    assert_float_equal(gpufl__ana_t_two_sided(2.7764451, 4), 0.05, 1e-6);
    assert_float_equal(gpufl__ana_t_two_sided(2.2281389, 10), 0.05, 1e-6);
    assert_float_equal(gpufl__ana_t_two_sided(3.1692727, 10), 0.01, 1e-6);
    assert_float_equal(gpufl__ana_t_two_sided(2.0085591, 50), 0.05, 1e-6);
    assert_float_equal(gpufl__ana_t_two_sided(0, 7), 1, 1e-12);
    assert_float_equal(gpufl__ana_t_two_sided(INFINITY, 7), 0, 0);
    assert_true(isnan(gpufl__ana_t_two_sided(1, 0)));
}

static void line_fit(void **state)
{
    (void)state;
    double x[] = {1, 2, 3, 4, 5}, y[] = {2, 4, 5, 4, 5};
    ana_linfit f;
    gpufl__ana_linfit(x, y, 5, &f);
    /* by hand: Sxx 10, Sxy 6, Syy 6, residuals' squares 2.4 */
    assert_float_equal(f.slope, 0.6, 1e-12);
    assert_float_equal(f.intercept, 2.2, 1e-12);
    assert_float_equal(f.r_squared, 0.6, 1e-12);
    assert_float_equal(f.t, 0.6 / sqrt(0.08), 1e-9);
    double u = f.t / sqrt(3);
    assert_float_equal(f.p_value, 1 - 2 / pi * (atan(u) + u / (1 + u * u)), 1e-9);

    double line[] = {3, 5, 7, 9, 11};
    gpufl__ana_linfit(x, line, 5, &f);
    assert_float_equal(f.slope, 2, 1e-12);
    assert_float_equal(f.r_squared, 1, 0);
    assert_float_equal(f.p_value, 0, 0);

    double flat[] = {4, 4, 4, 4, 4};
    gpufl__ana_linfit(x, flat, 5, &f);
    assert_float_equal(f.slope, 0, 0);
    assert_float_equal(f.r_squared, 0, 0);
    assert_float_equal(f.p_value, 1, 0);

    gpufl__ana_linfit(x, y, 2, &f); /* two points: nothing to test */
    assert_float_equal(f.p_value, 1, 0);
}

/* ---- sessions ---------------------------------------------------------------- */

#define STEP_NS 1000000ull
#define T0 (AF_START + 100000)

/* An allocation or free line of the memory table, with what the fixture's
 * af_mem leaves out: the calling scope, a stack, a stream, the framework
 * flag. */
static void mem_line(af *f, bool is_free, uint64_t ts, uint64_t addr, uint64_t bytes, uint64_t scope, unsigned stack,
                     bool framework)
{
    char extra[128] = "";
    size_t n = 0;
    if (scope)
        n += (size_t)snprintf(extra + n, sizeof extra - n, ",\"scope\":%llu", (unsigned long long)scope);
    if (stack)
        n += (size_t)snprintf(extra + n, sizeof extra - n, ",\"stack\":%u", stack);
    if (framework)
        snprintf(extra + n, sizeof extra - n, ",\"framework\":true");
    af_line(f, AF_DEVICE,
            "{\"type\":\"%s\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":0,\"corr\":0,"
            "\"address\":\"0x%llx\",\"bytes\":%llu,\"kind\":\"device\",\"tid\":9%s}",
            is_free ? "mem_free" : "mem_alloc", (unsigned long long)ts, (unsigned long long)addr,
            (unsigned long long)bytes, extra);
}

static void allocator_line(af *f, uint64_t ts, uint64_t allocated, uint64_t reserved)
{
    af_line(f, AF_DEVICE,
            "{\"type\":\"allocator\",\"ts_ns\":%llu,\"device\":0,\"tid\":9,\"framework\":\"pytorch\","
            "\"reason\":\"step\",\"allocated\":%llu,\"reserved\":%llu,\"active\":%llu,\"inactive_split\":0}",
            (unsigned long long)ts, (unsigned long long)allocated, (unsigned long long)reserved,
            (unsigned long long)allocated);
}

enum { LEAK = 1, CACHE_WARMUP = 2, FRAMEWORK = 4, ALLOCATOR = 8 };

/* A training loop of `steps` gpufl scopes "step" (ids 100 + k) on one
 * GPU of 80 GiB. Each step allocates a 4 MiB temporary and frees it;
 * LEAK: and 1 MiB it never frees (stack 7); CACHE_WARMUP: the allocations
 * are a caching allocator's: no frees at all, 16 MiB segments in the
 * first two steps only; FRAMEWORK: the allocations are framework blocks
 * (tensors) inside one 1 GiB driver segment; ALLOCATOR: the framework's
 * allocator state is recorded after each step. */
static gpufl_trace *loop(int how, unsigned steps, const char *name)
{
    af f = {.end_ns = T0 + (steps + 2) * STEP_NS};
    af_device(&f, 0, "NVIDIA H100", 80ull << 30);
    bool fw = how & FRAMEWORK;
    if (fw)
        mem_line(&f, false, T0 - 1000, 0x7000000000, 1ull << 30, 0, 0, false);
    uint64_t leaked = 0;
    for (unsigned k = 0; k < steps; k++) {
        uint64_t b = T0 + k * STEP_NS, id = 100 + k;
        af_scope(&f, 9, id, 0, 0, "step", b, b + STEP_NS / 2);
        if (how & CACHE_WARMUP) {
            if (k < 2)
                mem_line(&f, false, b + 1000, 0x7100000000 + k * (16 * MIB), 16 * MIB, id, 3, false);
        } else {
            mem_line(&f, false, b + 1000, 0x7000000000 + 0x100000, 4 * MIB, id, 5, fw);
            mem_line(&f, true, b + 2000, 0x7000000000 + 0x100000, 4 * MIB, id, 0, fw);
        }
        if (how & LEAK) {
            mem_line(&f, false, b + 3000, 0x7200000000 + k * MIB, MIB, id, 7, fw);
            leaked += MIB;
        }
        if (how & ALLOCATOR)
            allocator_line(&f, b + STEP_NS / 2 + 100, 10 * MIB + leaked, 64 * MIB);
    }
    return af_open(&f, dir, name);
}

static const gpufl__ana_leak *find(const gpufl__ana_leaks *l, const gpufl_trace *t, const char *name)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (!strcmp(gpufl_trace_string(t, l->rows[i].name), name))
            return &l->rows[i];
    return NULL;
}

static void leak_found(void **state)
{
    (void)state;
    gpufl_trace *t = loop(LEAK, 10, "leak");
    gpufl__ana_leaks l;
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.min_steps, 5);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.detected, 1);
    const gpufl__ana_leak *r = find(&l, t, "step");
    assert_non_null(r);
    assert_int_equal(r->tree, GPUFL__ANA_TREE_SCOPES);
    assert_int_equal(r->series, GPUFL__ANA_MEM_DRIVER);
    assert_int_equal(r->repetitions, 10);
    assert_int_equal(r->warmup, 2);
    assert_true(r->detected);
    assert_float_equal(r->slope, (double)MIB, 1);
    assert_float_equal(r->r_squared, 1, 1e-12);
    assert_true(r->p_value < 1e-6);
    assert_int_equal(r->increase_bytes, 7 * MIB);           /* over the 8 fitted steps */
    assert_int_equal(r->severity, GPUFL__ANA_SEVERITY_LOW); /* 7 MiB of 80 GiB */
    assert_int_equal(r->window_ns, 7 * STEP_NS + STEP_NS / 2);
    assert_int_equal(r->live[0], MIB);
    assert_int_equal(r->live[9], 10 * MIB);
    /* the allocations that grew: made in the 8 fitted steps, all at stack 7 */
    assert_int_equal(r->ngroups, 1);
    assert_int_equal(r->groups[0].stack, 7);
    assert_int_equal(r->groups[0].count, 8);
    assert_int_equal(r->groups[0].bytes, 8 * MIB);
    assert_int_equal(r->grew_bytes, 8 * MIB);
    assert_false(r->blocks);
    assert_true(r->nsuggestions >= 1);
    assert_non_null(strstr(r->suggestions[0], "free"));
    gpufl__ana_leaks_free(&l);
    gpufl_trace_close(t);
}

static void no_leak(void **state)
{
    (void)state;
    gpufl_trace *t = loop(0, 10, "noleak");
    gpufl__ana_leaks l;
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.detected, 0);
    assert_false(l.rows[0].detected);
    assert_int_equal(l.rows[0].severity, GPUFL__ANA_SEVERITY_NONE);
    assert_float_equal(l.rows[0].slope, 0, 0);
    assert_float_equal(l.rows[0].p_value, 1, 0);
    assert_int_equal(l.rows[0].ngroups, 0);
    assert_int_equal(l.rows[0].nsuggestions, 0);
    gpufl__ana_leaks_free(&l);
    gpufl_trace_close(t);
}

static void cache_warmup_is_no_leak(void **state)
{
    (void)state;
    gpufl_trace *t = loop(CACHE_WARMUP, 10, "warmup");
    gpufl__ana_leaks l;
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.n, 1);
    assert_false(l.rows[0].detected);
    assert_int_equal(l.rows[0].live[0], 16 * MIB);
    assert_int_equal(l.rows[0].live[9], 32 * MIB); /* it grew, in the warm-up only */
    assert_float_equal(l.rows[0].slope, 0, 0);
    gpufl__ana_leaks_free(&l);
    gpufl_trace_close(t);
}

/* The framework's layer is what live means when it was recorded: its
 * allocator's states, or its blocks; the driver's one segment is flat. */
static void framework_layer(void **state)
{
    (void)state;
    gpufl_trace *t = loop(LEAK | FRAMEWORK | ALLOCATOR, 10, "fw-allocator");
    gpufl__ana_leaks l;
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.n, 1);
    const gpufl__ana_leak *r = &l.rows[0];
    assert_int_equal(r->series, GPUFL__ANA_MEM_ALLOCATED);
    assert_true(r->detected);
    assert_float_equal(r->slope, (double)MIB, 1);
    assert_int_equal(r->live[0], 11 * MIB); /* the state recorded after the step */
    assert_true(r->blocks);
    assert_int_equal(r->ngroups, 1); /* the leaking blocks, not the driver segment */
    assert_int_equal(r->groups[0].stack, 7);
    assert_int_equal(r->groups[0].bytes, 8 * MIB);
    assert_non_null(strstr(r->suggestions[0], "tensors kept across steps"));
    assert_non_null(strstr(r->suggestions[1], ".item()"));
    gpufl__ana_leaks_free(&l);
    gpufl_trace_close(t);

    t = loop(FRAMEWORK | ALLOCATOR, 10, "fw-flat");
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.n, 1);
    assert_false(l.rows[0].detected);
    gpufl__ana_leaks_free(&l);
    gpufl_trace_close(t);

    t = loop(LEAK | FRAMEWORK, 10, "fw-blocks"); /* no allocator table: the blocks replayed */
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.rows[0].series, GPUFL__ANA_MEM_ALLOCATED);
    assert_true(l.rows[0].detected);
    assert_int_equal(l.rows[0].live[0], MIB);
    gpufl__ana_leaks_free(&l);
    gpufl_trace_close(t);
}

static void options(void **state)
{
    (void)state;
    gpufl_trace *t = loop(LEAK, 4, "four");
    gpufl__ana_leaks l;
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.n, 0); /* 4 repetitions: not a step by default */
    gpufl__ana_leaks_free(&l);
    gpufl__ana_leak_options o = {.min_steps = 4};
    assert_int_equal(gpufl__analyze_leaks(t, &o, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.rows[0].warmup, 1);
    assert_true(l.rows[0].detected); /* 3 steps fitted on a straight line */
    gpufl__ana_leaks_free(&l);
    o.min_steps = 3;
    assert_int_equal(gpufl__analyze_leaks(t, &o, &l), GPUFL_EINVAL);
    o = (gpufl__ana_leak_options){.scope = "forward"};
    assert_int_equal(gpufl__analyze_leaks(t, &o, &l), 0);
    assert_int_equal(l.n, 0);
    gpufl__ana_leaks_free(&l);
    assert_int_equal(gpufl__analyze_leaks(NULL, NULL, &l), GPUFL_EINVAL);
    gpufl_trace_close(t);
}

/* The bundled H200 session: PyTorch's caching allocator fills its cache in
 * the first step and holds it; 60 steps and their phases as NVTX ranges. */
static void sample_has_no_leak(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(SAMPLE);
    gpufl__ana_leaks l;
    assert_int_equal(gpufl__analyze_leaks(t, NULL, &l), 0);
    assert_int_equal(l.detected, 0);
    const gpufl__ana_leak *step = find(&l, t, "step");
    assert_non_null(step);
    assert_int_equal(step->tree, GPUFL__ANA_TREE_NVTX);
    assert_int_equal(step->series, GPUFL__ANA_MEM_DRIVER);
    assert_int_equal(step->repetitions, 60);
    assert_int_equal(step->warmup, 12);
    assert_true(step->live[1] > step->live[0]); /* the cache grew in the first steps */
    assert_false(step->detected);
    assert_null(find(&l, t, "eval")); /* 3 repetitions: not a step */
    gpufl__ana_leaks_free(&l);
    gpufl_trace_close(t);
}

/* The op ranges inside a leaking step rise with it: told as riding on the
 * step (same rise over the run, or same slope), not as leaks of their own;
 * a range on another device, rising otherwise, or not detected is not. */
static void ranges_ride_on_their_step(void **state)
{
    (void)state;
    gpufl__ana_leak rows[6];
    memset(rows, 0, sizeof rows);
    rows[0] = (gpufl__ana_leak){.tree = GPUFL__ANA_TREE_SCOPES,
                                .repetitions = 60,
                                .slope = 1048576,
                                .increase_bytes = 47 << 20,
                                .detected = true};
    /* twice a step: half the slope, the same rise */
    rows[1] = (gpufl__ana_leak){.tree = GPUFL__ANA_TREE_NVTX,
                                .repetitions = 120,
                                .slope = 524288,
                                .increase_bytes = 47 << 20,
                                .detected = true};
    /* also run before the steps: the same slope, a larger rise */
    rows[2] = (gpufl__ana_leak){.tree = GPUFL__ANA_TREE_NVTX,
                                .repetitions = 68,
                                .slope = 1048576,
                                .increase_bytes = 53 << 20,
                                .detected = true};
    /* rising at its own pace */
    rows[3] = (gpufl__ana_leak){.tree = GPUFL__ANA_TREE_NVTX,
                                .repetitions = 60,
                                .slope = 4 << 20,
                                .increase_bytes = 188 << 20,
                                .detected = true};
    /* another device */
    rows[4] = (gpufl__ana_leak){.tree = GPUFL__ANA_TREE_NVTX,
                                .device = 1,
                                .repetitions = 60,
                                .slope = 1048576,
                                .increase_bytes = 47 << 20,
                                .detected = true};
    /* not a leak at all */
    rows[5] = (gpufl__ana_leak){
        .tree = GPUFL__ANA_TREE_NVTX, .repetitions = 60, .slope = 1048576, .increase_bytes = 47 << 20};
    gpufl__ana_leaks l = {.rows = rows, .n = 6, .detected = 5};
    assert_int_equal(gpufl__ana_leak_rides_on(&l, 0), -1); /* the step itself */
    assert_int_equal(gpufl__ana_leak_rides_on(&l, 1), 0);
    assert_int_equal(gpufl__ana_leak_rides_on(&l, 2), 0);
    assert_int_equal(gpufl__ana_leak_rides_on(&l, 3), -1);
    assert_int_equal(gpufl__ana_leak_rides_on(&l, 4), -1);
    assert_int_equal(gpufl__ana_leak_rides_on(&l, 5), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(beta_function),
        cmocka_unit_test(student_t),
        cmocka_unit_test(line_fit),
        cmocka_unit_test(leak_found),
        cmocka_unit_test(no_leak),
        cmocka_unit_test(cache_warmup_is_no_leak),
        cmocka_unit_test(framework_layer),
        cmocka_unit_test(options),
        cmocka_unit_test(sample_has_no_leak),
        cmocka_unit_test(ranges_ride_on_their_step),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
