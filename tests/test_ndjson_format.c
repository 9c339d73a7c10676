/*
 * NDJSON formatting of events (src/format/ndjson_format.h) and the JSON output
 * primitives under it (src/format/json_out.h).
 *
 * The NDJSON logs are the contract with jq, log shippers and our own reader
 * (docs/FORMAT.md): every line must be one complete JSON object with the
 * right "type", exact field values, and no field whose value is unknown.
 * The formatter writes by hand into a buffer sized by gpufl__ndjson_bound(),
 * so a bound that is too small is a heap overflow on the collector thread.
 *
 * Checked: every event type field by field (parsed back with jansson), the
 * validity bits and optional ids that leave fields out, the bound with the
 * worst-case names, string escaping (exact cases plus a seeded differential
 * test against a table-driven UTF-8 reference) and number formatting
 * (exact cases plus differentials against snprintf), and the cached names
 * of the live writer against the uncached formatter on random events.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/intern.h"
#include "format/json_names.h"
#include "format/json_out.h"
#include "format/ndjson_format.h"

#define CANARY 0xa5
#define SLACK 64

/* ---- helpers ------------------------------------------------------------ */

typedef struct line {
    char *buf;
    size_t len, bound;
    json_t *obj;
} line;

/* Formats ev into exactly its bound plus a canary tail, checks the framing
 * and parses it. */
static line format_line(const gfl_event *ev)
{
    line l = {0};
    l.bound = gpufl__ndjson_bound(ev, &gpufl__intern_lookup);
    l.buf = malloc(l.bound + SLACK);
    assert_non_null(l.buf);
    memset(l.buf, CANARY, l.bound + SLACK);
    l.len = gpufl__ndjson_format(ev, &gpufl__intern_lookup, l.buf);
    if (l.len > l.bound)
        fail_msg("type %u: line of %zu bytes, bound %zu", ev->h.type, l.len, l.bound);
    for (size_t i = l.len; i < l.bound + SLACK; i++)
        if ((unsigned char)l.buf[i] != CANARY)
            fail_msg("type %u: byte %zu written past the line's end (%zu)", ev->h.type, i, l.len);
    assert_true(l.len >= 2);
    assert_int_equal(l.buf[l.len - 1], '\n');
    assert_null(memchr(l.buf, '\n', l.len - 1)); /* exactly one newline */
    assert_null(memchr(l.buf, '\0', l.len));
    json_error_t err;
    l.obj = json_loadb(l.buf, l.len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
    if (!l.obj)
        fail_msg("type %u: does not parse (%s at %d): %.*s", ev->h.type, err.text, err.position,
                 (int)(l.len > 400 ? 400 : l.len), l.buf);
    assert_true(json_is_object(l.obj));
    return l;
}

static void line_free(line *l)
{
    json_decref(l->obj);
    free(l->buf);
}

static void expect_type(const line *l, const char *type)
{
    json_t *t = json_object_get(l->obj, "type");
    assert_non_null(t);
    assert_string_equal(json_string_value(t), type);
}

/* The object has exactly these keys (NULL-terminated), no more. */
static void expect_keys(const line *l, const char *const *keys)
{
    size_t n = 0;
    for (; keys[n]; n++)
        if (!json_object_get(l->obj, keys[n]))
            fail_msg("key \"%s\" missing from %.*s", keys[n], (int)l->len, l->buf);
    if (json_object_size(l->obj) != n)
        fail_msg("%zu keys, expected %zu: %.*s", json_object_size(l->obj), n, (int)l->len, l->buf);
}
#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_u(const line *l, const char *key, uint64_t v)
{
    json_t *j = json_object_get(l->obj, key);
    if (!json_is_integer(j))
        fail_msg("\"%s\" is not an integer in %.*s", key, (int)l->len, l->buf);
    if ((uint64_t)json_integer_value(j) != v)
        fail_msg("\"%s\" is %lld, expected %" PRIu64, key, (long long)json_integer_value(j), v);
}

static void expect_i(const line *l, const char *key, int64_t v)
{
    json_t *j = json_object_get(l->obj, key);
    assert_true(json_is_integer(j));
    assert_int_equal(json_integer_value(j), v);
}

static void expect_s(const line *l, const char *key, const char *v)
{
    json_t *j = json_object_get(l->obj, key);
    if (!json_is_string(j))
        fail_msg("\"%s\" is not a string in %.*s", key, (int)l->len, l->buf);
    assert_string_equal(json_string_value(j), v);
}

static void expect_true(const line *l, const char *key) { assert_true(json_is_true(json_object_get(l->obj, key))); }

/* The raw text `"key":value` appears in the line (for fixed-point numbers,
 * whose exact spelling matters). */
static void expect_raw(const line *l, const char *key, const char *value)
{
    char want[256];
    snprintf(want, sizeof want, "\"%s\":%s", key, value);
    size_t n = strlen(want);
    bool found = false;
    for (size_t i = 0; i + n <= l->len && !found; i++)
        found = memcmp(l->buf + i, want, n) == 0 && (l->buf[i + n] == ',' || l->buf[i + n] == '}');
    if (!found)
        fail_msg("%s not in %.*s", want, (int)l->len, l->buf);
}

static gfl_event make(uint8_t type, uint64_t ts, uint32_t tid, uint16_t device)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = type;
    ev.h.ts = ts;
    ev.h.tid = tid;
    ev.h.device = device;
    return ev;
}

/* ---- scopes and windows ------------------------------------------------- */

static void test_scope_begin(void **state)
{
    (void)state;
    gfl_event ev = make(GFL_EV_SCOPE_BEGIN, 1700000000123456789ull, 4242, 0);
    ev.u.scope.id = 77;
    ev.u.scope.parent_id = 76;
    ev.u.scope.depth = 3;
    ev.u.scope.name = gpufl__intern("forward/\"attn\"");
    ev.u.scope.begin_ts = 5; /* not written on begin events */
    line l = format_line(&ev);
    expect_type(&l, "scope_begin");
    expect_keys(&l, KEYS("type", "ts_ns", "tid", "id", "parent", "depth", "name"));
    expect_u(&l, "ts_ns", 1700000000123456789ull);
    expect_u(&l, "tid", 4242);
    expect_u(&l, "id", 77);
    expect_u(&l, "parent", 76);
    expect_u(&l, "depth", 3);
    expect_s(&l, "name", "forward/\"attn\"");
    line_free(&l);

    /* the outermost scope: parent 0 and depth 0 are still written */
    ev.u.scope.parent_id = 0;
    ev.u.scope.depth = 0;
    ev.u.scope.name = 0;
    l = format_line(&ev);
    expect_keys(&l, KEYS("type", "ts_ns", "tid", "id", "parent", "depth", "name"));
    expect_u(&l, "parent", 0);
    expect_u(&l, "depth", 0);
    expect_s(&l, "name", "");
    line_free(&l);
}

static void test_scope_end(void **state)
{
    (void)state;
    gfl_event ev = make(GFL_EV_SCOPE_END, 2000, 9, 0);
    ev.u.scope.id = 5;
    ev.u.scope.parent_id = 1;
    ev.u.scope.depth = 1;
    ev.u.scope.begin_ts = 1250;
    ev.u.scope.name = gpufl__intern("backward");
    line l = format_line(&ev);
    expect_type(&l, "scope_end");
    expect_keys(&l, KEYS("type", "ts_ns", "tid", "id", "parent", "depth", "name", "begin_ns", "dur_ns"));
    expect_u(&l, "ts_ns", 2000);
    expect_u(&l, "begin_ns", 1250);
    expect_u(&l, "dur_ns", 750);
    expect_s(&l, "name", "backward");
    line_free(&l);

    /* closed because its parent ended */
    ev.h.flags = GFL_F_SCOPE_IMPLICIT;
    l = format_line(&ev);
    expect_keys(&l, KEYS("type", "ts_ns", "tid", "id", "parent", "depth", "name", "begin_ns", "dur_ns", "implicit"));
    expect_true(&l, "implicit");
    line_free(&l);

    /* other flag bits do not make it implicit */
    ev.h.flags = (uint8_t)~GFL_F_SCOPE_IMPLICIT;
    l = format_line(&ev);
    assert_null(json_object_get(l.obj, "implicit"));
    line_free(&l);

    /* a clock glitch (end before begin) gives 0, never a huge number */
    ev.h.flags = 0;
    ev.h.ts = 1000;
    l = format_line(&ev);
    expect_u(&l, "dur_ns", 0);
    expect_u(&l, "begin_ns", 1250);
    line_free(&l);
}

static void test_system_start_stop(void **state)
{
    (void)state;
    static const struct {
        uint8_t type;
        const char *name;
    } kinds[] = {{GFL_EV_SYSTEM_START, "system_start"}, {GFL_EV_SYSTEM_STOP, "system_stop"}};
    for (size_t i = 0; i < 2; i++) {
        gfl_event ev = make(kinds[i].type, 123456789, 31, 0);
        ev.u.window.name = gpufl__intern("epoch-3");
        ev.u.window.open_windows = (uint32_t)(2 - i);
        line l = format_line(&ev);
        expect_type(&l, kinds[i].name);
        expect_keys(&l, KEYS("type", "ts_ns", "tid", "name", "open"));
        expect_u(&l, "ts_ns", 123456789);
        expect_u(&l, "tid", 31);
        expect_s(&l, "name", "epoch-3");
        expect_u(&l, "open", 2 - i);
        line_free(&l);
    }
}

/* ---- metrics ------------------------------------------------------------ */

static void test_host_metrics_all_validity_combinations(void **state)
{
    (void)state;
    for (uint32_t valid = 0; valid < 16; valid++) {
        gfl_event ev = make(GFL_EV_HOST_METRICS, 99000, 0, 0);
        ev.u.host.valid = valid;
        ev.u.host.cpu_count = 64;
        ev.u.host.proc_cpu_pct_x100 = 25075; /* 250.75 % */
        ev.u.host.sys_cpu_pct_x100 = 1200;   /* 12 % */
        ev.u.host.ram_used_bytes = 3ull << 33;
        ev.u.host.ram_total_bytes = 1ull << 37;
        ev.u.host.proc_rss_bytes = 123456789012ull;
        line l = format_line(&ev);
        expect_type(&l, "host_metrics");
        expect_u(&l, "ts_ns", 99000);
        expect_u(&l, "cpu_count", 64);
        size_t keys = 3;
        if (valid & GFL_HOST_PROC_CPU) {
            expect_raw(&l, "proc_cpu_pct", "250.75");
            keys++;
        } else {
            assert_null(json_object_get(l.obj, "proc_cpu_pct"));
        }
        if (valid & GFL_HOST_SYS_CPU) {
            expect_raw(&l, "sys_cpu_pct", "12");
            keys++;
        } else {
            assert_null(json_object_get(l.obj, "sys_cpu_pct"));
        }
        if (valid & GFL_HOST_RAM) {
            expect_u(&l, "ram_used_bytes", 3ull << 33);
            expect_u(&l, "ram_total_bytes", 1ull << 37);
            keys += 2;
        } else {
            assert_null(json_object_get(l.obj, "ram_used_bytes"));
            assert_null(json_object_get(l.obj, "ram_total_bytes"));
        }
        if (valid & GFL_HOST_RSS) {
            expect_u(&l, "proc_rss_bytes", 123456789012ull);
            keys++;
        } else {
            assert_null(json_object_get(l.obj, "proc_rss_bytes"));
        }
        assert_int_equal(json_object_size(l.obj), keys);
        line_free(&l);
    }

    /* a fraction below 1 % keeps its leading zeros */
    gfl_event ev = make(GFL_EV_HOST_METRICS, 1, 0, 0);
    ev.u.host.valid = GFL_HOST_PROC_CPU | GFL_HOST_SYS_CPU;
    ev.u.host.proc_cpu_pct_x100 = 5;
    ev.u.host.sys_cpu_pct_x100 = 0;
    line l = format_line(&ev);
    expect_raw(&l, "proc_cpu_pct", "0.05");
    expect_raw(&l, "sys_cpu_pct", "0");
    line_free(&l);
}

static gfl_event full_device_metrics(void)
{
    gfl_event ev = make(GFL_EV_DEVICE_METRICS, 5555, 0, 3);
    gfl_device_metrics_payload *m = &ev.u.dev;
    m->valid = (1u << 14) - 1;
    m->gpu_util_pct = 97;
    m->mem_util_pct = 41;
    m->fan_pct = 100;
    m->mem_used_bytes = 70000000000ull;
    m->mem_free_bytes = 15000000000ull;
    m->mem_total_bytes = 85899345920ull;
    m->proc_mem_bytes = 1234567890ull;
    m->energy_mj = 0x7000000000000001ull;
    /* gpu_idle, sw_power_cap, hw_thermal, display_clocks, and a bit with no name */
    m->throttle_reasons = (1ull << 0) | (1ull << 2) | (1ull << 6) | (1ull << 8) | (1ull << 40);
    m->ecc_corrected = 12;
    m->ecc_uncorrected = 1;
    m->power_mw = 301500;
    m->power_limit_mw = 700000;
    m->sm_clock_mhz = 1980;
    m->mem_clock_mhz = 2619;
    m->gfx_clock_mhz = 1755;
    m->pcie_rx_kbps = 123456;
    m->pcie_tx_kbps = 654321;
    m->temp_c = -7;
    m->mem_temp_c = 85;
    return ev;
}

/* The keys each validity bit adds. */
static const struct {
    uint32_t bit;
    const char *keys[3];
} dev_bit_keys[] = {
    {GFL_DEV_GPU_UTIL, {"gpu_util_pct"}},
    {GFL_DEV_MEM_UTIL, {"mem_util_pct"}},
    {GFL_DEV_MEM, {"mem_used_bytes", "mem_free_bytes", "mem_total_bytes"}},
    {GFL_DEV_TEMP, {"temp_c"}},
    {GFL_DEV_MEM_TEMP, {"mem_temp_c"}},
    {GFL_DEV_POWER, {"power_mw"}},
    {GFL_DEV_POWER_LIMIT, {"power_limit_mw"}},
    {GFL_DEV_ENERGY, {"energy_mj"}},
    {GFL_DEV_CLOCKS, {"sm_clock_mhz", "mem_clock_mhz", "gfx_clock_mhz"}},
    {GFL_DEV_THROTTLE, {"throttle_mask", "throttle"}},
    {GFL_DEV_PCIE, {"pcie_rx_kbps", "pcie_tx_kbps"}},
    {GFL_DEV_FAN, {"fan_pct"}},
    {GFL_DEV_ECC, {"ecc_corrected", "ecc_uncorrected"}},
    {GFL_DEV_PROC_MEM, {"proc_mem_bytes"}},
};

static void test_device_metrics_all_fields(void **state)
{
    (void)state;
    gfl_event ev = full_device_metrics();
    line l = format_line(&ev);
    expect_type(&l, "device_metrics");
    expect_keys(&l, KEYS("type", "ts_ns", "device", "gpu_util_pct", "mem_util_pct", "mem_used_bytes", "mem_free_bytes",
                         "mem_total_bytes", "proc_mem_bytes", "temp_c", "mem_temp_c", "power_mw", "power_limit_mw",
                         "energy_mj", "sm_clock_mhz", "mem_clock_mhz", "gfx_clock_mhz", "throttle_mask", "throttle",
                         "pcie_rx_kbps", "pcie_tx_kbps", "fan_pct", "ecc_corrected", "ecc_uncorrected"));
    expect_u(&l, "ts_ns", 5555);
    expect_u(&l, "device", 3);
    expect_u(&l, "gpu_util_pct", 97);
    expect_u(&l, "mem_util_pct", 41);
    expect_u(&l, "mem_used_bytes", 70000000000ull);
    expect_u(&l, "mem_free_bytes", 15000000000ull);
    expect_u(&l, "mem_total_bytes", 85899345920ull);
    expect_u(&l, "proc_mem_bytes", 1234567890ull);
    expect_i(&l, "temp_c", -7);
    expect_i(&l, "mem_temp_c", 85);
    expect_u(&l, "power_mw", 301500);
    expect_u(&l, "power_limit_mw", 700000);
    expect_u(&l, "energy_mj", 0x7000000000000001ull);
    expect_u(&l, "sm_clock_mhz", 1980);
    expect_u(&l, "mem_clock_mhz", 2619);
    expect_u(&l, "gfx_clock_mhz", 1755);
    expect_u(&l, "throttle_mask", (1ull << 0) | (1ull << 2) | (1ull << 6) | (1ull << 8) | (1ull << 40));
    json_t *names = json_object_get(l.obj, "throttle");
    assert_true(json_is_array(names));
    static const char *const want[] = {"gpu_idle", "sw_power_cap", "hw_thermal", "display_clocks"};
    assert_int_equal(json_array_size(names), 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(json_string_value(json_array_get(names, i)), want[i]);
    expect_u(&l, "pcie_rx_kbps", 123456);
    expect_u(&l, "pcie_tx_kbps", 654321);
    expect_u(&l, "fan_pct", 100);
    expect_u(&l, "ecc_corrected", 12);
    expect_u(&l, "ecc_uncorrected", 1);
    line_free(&l);

    /* every reason bit alone names exactly that reason */
    static const char *const all[] = {"gpu_idle",    "app_clocks_setting", "sw_power_cap",
                                      "hw_slowdown", "sync_boost",         "sw_thermal",
                                      "hw_thermal",  "hw_power_brake",     "display_clocks"};
    for (unsigned b = 0; b < 9; b++) {
        ev.u.dev.valid = GFL_DEV_THROTTLE;
        ev.u.dev.throttle_reasons = 1ull << b;
        l = format_line(&ev);
        names = json_object_get(l.obj, "throttle");
        assert_int_equal(json_array_size(names), 1);
        assert_string_equal(json_string_value(json_array_get(names, 0)), all[b]);
        line_free(&l);
    }
    /* no reasons: an empty list, still valid JSON */
    ev.u.dev.throttle_reasons = 0;
    l = format_line(&ev);
    expect_u(&l, "throttle_mask", 0);
    assert_int_equal(json_array_size(json_object_get(l.obj, "throttle")), 0);
    line_free(&l);
}

static void test_device_metrics_validity_bits(void **state)
{
    (void)state;
    /* nothing valid: only what identifies the sample */
    gfl_event ev = full_device_metrics();
    ev.u.dev.valid = 0;
    line l = format_line(&ev);
    expect_keys(&l, KEYS("type", "ts_ns", "device"));
    line_free(&l);

    size_t nbits = sizeof dev_bit_keys / sizeof dev_bit_keys[0];
    for (size_t i = 0; i < nbits; i++) {
        /* the bit alone adds exactly its keys ... */
        ev.u.dev.valid = dev_bit_keys[i].bit;
        l = format_line(&ev);
        size_t n = 0;
        for (; n < 3 && dev_bit_keys[i].keys[n]; n++)
            assert_non_null(json_object_get(l.obj, dev_bit_keys[i].keys[n]));
        if (json_object_size(l.obj) != 3 + n)
            fail_msg("bit 0x%x alone: %.*s", dev_bit_keys[i].bit, (int)l.len, l.buf);
        line_free(&l);

        /* ... and every other bit without it leaves exactly those out */
        ev.u.dev.valid = ((1u << 14) - 1) & ~dev_bit_keys[i].bit;
        l = format_line(&ev);
        for (size_t k = 0; k < n; k++)
            assert_null(json_object_get(l.obj, dev_bit_keys[i].keys[k]));
        assert_int_equal(json_object_size(l.obj), 24 - n);
        line_free(&l);
    }
}

/* ---- device activity ---------------------------------------------------- */

static void test_kernel(void **state)
{
    (void)state;
    gfl_event ev = make(GFL_EV_KERNEL, 1000000, 777, 1);
    gfl_kernel_payload *k = &ev.u.kernel;
    k->end_ts = 1002500;
    k->scope_id = 42;
    k->external_id = 0x7fffffffffffff00ull;
    k->name = gpufl__intern("void gemm<float, 128>(float const*, float*)");
    k->mangled_name = gpufl__intern("_Z4gemmIfLi128EEvPKT_PS0_");
    k->context = 1;
    k->stream = 7;
    k->correlation = 991;
    k->grid[0] = 65535;
    k->grid[1] = 2;
    k->grid[2] = 1;
    k->block[0] = 256;
    k->block[1] = 1;
    k->block[2] = 1;
    k->registers = 96;
    k->static_smem = 49152;
    k->dynamic_smem = 16384;
    k->local_mem = 8;
    k->stack_id = 12;
    k->occupancy_x10000 = 6250;
    k->limiter = GFL_LIMIT_REGISTERS;
    line l = format_line(&ev);
    expect_type(&l, "kernel");
    expect_keys(&l, KEYS("type", "start_ns", "end_ns", "dur_ns", "device", "context", "stream", "corr", "name",
                         "mangled", "grid", "block", "regs", "smem_static", "smem_dynamic", "local_mem", "occupancy",
                         "limiter", "tid", "scope", "ext_id", "stack"));
    expect_u(&l, "start_ns", 1000000);
    expect_u(&l, "end_ns", 1002500);
    expect_u(&l, "dur_ns", 2500);
    expect_u(&l, "device", 1);
    expect_u(&l, "context", 1);
    expect_u(&l, "stream", 7);
    expect_u(&l, "corr", 991);
    expect_s(&l, "name", "void gemm<float, 128>(float const*, float*)");
    expect_s(&l, "mangled", "_Z4gemmIfLi128EEvPKT_PS0_");
    json_t *grid = json_object_get(l.obj, "grid"), *block = json_object_get(l.obj, "block");
    assert_int_equal(json_array_size(grid), 3);
    assert_int_equal(json_integer_value(json_array_get(grid, 0)), 65535);
    assert_int_equal(json_integer_value(json_array_get(grid, 1)), 2);
    assert_int_equal(json_integer_value(json_array_get(grid, 2)), 1);
    assert_int_equal(json_array_size(block), 3);
    assert_int_equal(json_integer_value(json_array_get(block, 0)), 256);
    assert_int_equal(json_integer_value(json_array_get(block, 1)), 1);
    assert_int_equal(json_integer_value(json_array_get(block, 2)), 1);
    expect_u(&l, "regs", 96);
    expect_u(&l, "smem_static", 49152);
    expect_u(&l, "smem_dynamic", 16384);
    expect_u(&l, "local_mem", 8);
    expect_raw(&l, "occupancy", "0.625");
    expect_s(&l, "limiter", "registers");
    expect_u(&l, "tid", 777);
    expect_u(&l, "scope", 42);
    expect_u(&l, "ext_id", 0x7fffffffffffff00ull);
    expect_u(&l, "stack", 12);
    line_free(&l);

    /* full occupancy is written as 1 */
    k->occupancy_x10000 = 10000;
    l = format_line(&ev);
    expect_raw(&l, "occupancy", "1");
    line_free(&l);

    /* optional parts unknown: no mangled (0 or same as name), occupancy,
     * limiter, tid, scope, ext_id or stack; end before start gives dur 0 */
    for (int variant = 0; variant < 2; variant++) {
        k->mangled_name = variant ? k->name : 0;
        k->occupancy_x10000 = 0;
        k->limiter = GFL_LIMIT_UNKNOWN;
        k->scope_id = 0;
        k->external_id = 0;
        k->stack_id = 0;
        ev.h.tid = 0;
        k->end_ts = 999999;
        l = format_line(&ev);
        expect_keys(&l, KEYS("type", "start_ns", "end_ns", "dur_ns", "device", "context", "stream", "corr", "name",
                             "grid", "block", "regs", "smem_static", "smem_dynamic", "local_mem"));
        expect_u(&l, "dur_ns", 0);
        line_free(&l);
    }
}

static void test_memcpy(void **state)
{
    (void)state;
    gfl_event ev = make(GFL_EV_MEMCPY, 10, 55, 0);
    gfl_memcpy_payload *m = &ev.u.memcpy;
    m->end_ts = 4010;
    m->bytes = 1ull << 40;
    m->scope_id = 3;
    m->external_id = 4;
    m->context = 1;
    m->stream = 0;
    m->correlation = 17;
    m->stack_id = 5;
    m->copy_kind = GFL_COPY_HTOD;
    m->src_kind = GFL_MEM_PINNED;
    m->dst_kind = GFL_MEM_DEVICE;
    m->dst_device = 6; /* not a peer copy: not written */
    line l = format_line(&ev);
    expect_type(&l, "memcpy");
    expect_keys(&l, KEYS("type", "start_ns", "end_ns", "dur_ns", "device", "context", "stream", "corr", "kind",
                         "src_kind", "dst_kind", "bytes", "tid", "scope", "ext_id", "stack"));
    expect_u(&l, "start_ns", 10);
    expect_u(&l, "end_ns", 4010);
    expect_u(&l, "dur_ns", 4000);
    expect_u(&l, "device", 0);
    expect_u(&l, "context", 1);
    expect_u(&l, "stream", 0);
    expect_u(&l, "corr", 17);
    expect_s(&l, "kind", "HtoD");
    expect_s(&l, "src_kind", "pinned");
    expect_s(&l, "dst_kind", "device");
    expect_u(&l, "bytes", 1ull << 40);
    expect_u(&l, "tid", 55);
    expect_u(&l, "scope", 3);
    expect_u(&l, "ext_id", 4);
    expect_u(&l, "stack", 5);
    line_free(&l);

    /* peer to peer: the destination device is written, even device 0 */
    ev.h.device = 2;
    m->copy_kind = GFL_COPY_PTOP;
    m->src_kind = GFL_MEM_DEVICE;
    m->dst_device = 0;
    m->scope_id = m->external_id = 0;
    m->stack_id = 0;
    ev.h.tid = 0;
    l = format_line(&ev);
    expect_keys(&l, KEYS("type", "start_ns", "end_ns", "dur_ns", "device", "context", "stream", "corr", "kind",
                         "src_kind", "dst_kind", "bytes", "dst_device"));
    expect_s(&l, "kind", "PtoP");
    expect_u(&l, "device", 2);
    expect_u(&l, "dst_device", 0);
    line_free(&l);
    m->dst_device = 7;
    l = format_line(&ev);
    expect_u(&l, "dst_device", 7);
    line_free(&l);

    /* kinds out of range are "unknown", not garbage */
    m->copy_kind = 200;
    m->src_kind = GFL_MEM_KIND_COUNT;
    m->dst_kind = GFL_MEM_MANAGED_STATIC;
    l = format_line(&ev);
    expect_s(&l, "kind", "unknown");
    expect_s(&l, "src_kind", "unknown");
    expect_s(&l, "dst_kind", "managed_static");
    line_free(&l);
}

static void test_memset(void **state)
{
    (void)state;
    gfl_event ev = make(GFL_EV_MEMSET, 100, 8, 1);
    gfl_memset_payload *m = &ev.u.memset;
    m->end_ts = 160;
    m->bytes = 4096;
    m->scope_id = 11;
    m->external_id = 12;
    m->context = 2;
    m->stream = 3;
    m->correlation = 4;
    m->value = 0xdeadbeef;
    m->mem_kind = GFL_MEM_MANAGED;
    line l = format_line(&ev);
    expect_type(&l, "memset");
    expect_keys(&l, KEYS("type", "start_ns", "end_ns", "dur_ns", "device", "context", "stream", "corr", "bytes",
                         "value", "mem_kind", "tid", "scope", "ext_id"));
    expect_u(&l, "dur_ns", 60);
    expect_u(&l, "device", 1);
    expect_u(&l, "bytes", 4096);
    expect_u(&l, "value", 0xdeadbeef);
    expect_s(&l, "mem_kind", "managed");
    expect_u(&l, "scope", 11);
    expect_u(&l, "ext_id", 12);
    line_free(&l);

    m->scope_id = m->external_id = 0;
    ev.h.tid = 0;
    l = format_line(&ev);
    expect_keys(&l, KEYS("type", "start_ns", "end_ns", "dur_ns", "device", "context", "stream", "corr", "bytes",
                         "value", "mem_kind"));
    line_free(&l);
}

static void test_sync(void **state)
{
    (void)state;
    static const char *const kinds[] = {"unknown", "event", "stream_wait_event", "stream", "context"};
    for (uint8_t kind = 0; kind < GFL_SYNC_KIND_COUNT; kind++) {
        gfl_event ev = make(GFL_EV_SYNC, 500, 9, 0);
        ev.u.sync.end_ts = 9500;
        ev.u.sync.scope_id = 1;
        ev.u.sync.context = 1;
        ev.u.sync.stream = 14;
        ev.u.sync.correlation = 88;
        ev.u.sync.stack_id = 2;
        ev.u.sync.sync_kind = kind;
        line l = format_line(&ev);
        expect_type(&l, "sync");
        expect_keys(&l, KEYS("type", "start_ns", "end_ns", "dur_ns", "device", "context", "stream", "corr", "kind",
                             "tid", "scope", "stack"));
        expect_u(&l, "dur_ns", 9000);
        expect_u(&l, "stream", 14);
        expect_u(&l, "corr", 88);
        expect_s(&l, "kind", kinds[kind]);
        expect_u(&l, "stack", 2);
        line_free(&l);
    }
}

static void test_mem_alloc_free(void **state)
{
    (void)state;
    static const struct {
        uint8_t type;
        const char *name;
    } kinds[] = {{GFL_EV_MEM_ALLOC, "mem_alloc"}, {GFL_EV_MEM_FREE, "mem_free"}};
    for (size_t i = 0; i < 2; i++) {
        gfl_event ev = make(kinds[i].type, 31337, 12, 0);
        ev.u.mem.address = 0xffffffffffffffffull - i; /* beyond 2^53: written as a string */
        ev.u.mem.bytes = 1ull << 30;
        ev.u.mem.scope_id = 8;
        ev.u.mem.context = 1;
        ev.u.mem.stream = 2;
        ev.u.mem.correlation = 3;
        ev.u.mem.stack_id = 0;
        ev.u.mem.mem_kind = GFL_MEM_DEVICE;
        line l = format_line(&ev);
        expect_type(&l, kinds[i].name);
        expect_keys(&l, KEYS("type", "ts_ns", "device", "context", "stream", "corr", "address", "bytes", "kind", "tid",
                             "scope"));
        expect_u(&l, "ts_ns", 31337);
        expect_s(&l, "address", i ? "0xfffffffffffffffe" : "0xffffffffffffffff");
        expect_u(&l, "bytes", 1ull << 30);
        expect_s(&l, "kind", "device");
        expect_u(&l, "scope", 8);
        line_free(&l);
    }
    gfl_event ev = make(GFL_EV_MEM_FREE, 1, 0, 0);
    ev.u.mem.address = 0x7f0000001000ull;
    line l = format_line(&ev);
    expect_s(&l, "address", "0x7f0000001000");
    expect_s(&l, "kind", "unknown");
    assert_null(json_object_get(l.obj, "tid"));
    line_free(&l);
}

/* ---- bookkeeping events ------------------------------------------------- */

static void test_dropped(void **state)
{
    (void)state;
    static const char *const reasons[] = {"ring_full",   "disk_limit", "stale", "scope_depth",
                                          "intern_full", "bad_event",  "cupti", "out_of_session"};
    _Static_assert(sizeof reasons / sizeof reasons[0] == GFL_DROP_REASON_COUNT, "every reason named");
    static const char *const channels[] = {"device", "scope", "system"};
    for (uint8_t r = 0; r < GFL_DROP_REASON_COUNT; r++) {
        gfl_event ev = make(GFL_EV_DROPPED, 1000 + r, r == 0 ? 0 : 77, 0);
        ev.u.dropped.count = 10 + r;
        ev.u.dropped.total = 0x7000000000000000ull + r;
        ev.u.dropped.reason = r;
        ev.u.dropped.channel = (uint8_t)(r % GFL_CHANNEL_COUNT);
        line l = format_line(&ev);
        expect_type(&l, "dropped");
        if (r == 0)
            expect_keys(&l, KEYS("type", "ts_ns", "reason", "channel", "count", "total"));
        else
            expect_keys(&l, KEYS("type", "ts_ns", "tid", "reason", "channel", "count", "total"));
        expect_u(&l, "ts_ns", 1000 + r);
        expect_s(&l, "reason", reasons[r]);
        expect_s(&l, "channel", channels[r % GFL_CHANNEL_COUNT]);
        expect_u(&l, "count", 10 + r);
        expect_u(&l, "total", 0x7000000000000000ull + r);
        line_free(&l);
    }
    gfl_event ev = make(GFL_EV_DROPPED, 1, 0, 0);
    ev.u.dropped.reason = GFL_DROP_REASON_COUNT;
    ev.u.dropped.channel = GFL_CHANNEL_COUNT;
    line l = format_line(&ev);
    expect_s(&l, "reason", "unknown");
    expect_s(&l, "channel", "unknown");
    line_free(&l);
}

static void test_log(void **state)
{
    (void)state;
    static const char *const levels[] = {"debug", "info", "warn", "error", "unknown"};
    for (uint8_t lv = 0; lv < 5; lv++) {
        gfl_event ev = make(GFL_EV_LOG, 42, 1234, 0);
        ev.u.log.level = lv;
        ev.u.log.message = gpufl__intern("NVML not found:\n\tfalling back to host metrics");
        line l = format_line(&ev);
        expect_type(&l, "log");
        expect_keys(&l, KEYS("type", "ts_ns", "tid", "level", "message"));
        expect_u(&l, "ts_ns", 42);
        expect_u(&l, "tid", 1234);
        expect_s(&l, "level", levels[lv]);
        expect_s(&l, "message", "NVML not found:\n\tfalling back to host metrics");
        line_free(&l);
    }
}

static void test_unknown_types(void **state)
{
    (void)state;
    static const struct {
        uint8_t type;
        const char *name;
    } cases[] = {{GFL_EV_NONE, "none"}, {GFL_EV_TYPE_COUNT, "unknown"}, {255, "unknown"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gfl_event ev = make(cases[i].type, 808, 5, 0);
        memset(ev.u.raw, 0xff, sizeof ev.u.raw);
        line l = format_line(&ev);
        expect_type(&l, cases[i].name);
        expect_keys(&l, KEYS("type", "ts_ns"));
        expect_u(&l, "ts_ns", 808);
        line_free(&l);
    }
}

/* ---- bounds ------------------------------------------------------------- */

/* A name of GFL_INTERN_MAX_LEN bytes that each take 6 bytes escaped
 * (\u00XX: control characters other than \b \t \n \f \r, NUL included). */
static uint32_t worst_name(unsigned salt, char **text)
{
    static const unsigned char six[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0b,
                                        0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16,
                                        0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};
    char *s = malloc(GFL_INTERN_MAX_LEN);
    assert_non_null(s);
    for (unsigned i = 0; i < GFL_INTERN_MAX_LEN; i++)
        s[i] = (char)six[(i + salt) % sizeof six];
    uint32_t id = gpufl__intern_n(s, GFL_INTERN_MAX_LEN);
    assert_true(id > GFL_INTERN_OVERFLOW);
    uint32_t len;
    (void)gpufl__intern_str(id, &len);
    assert_int_equal(len, GFL_INTERN_MAX_LEN);
    *text = s;
    return id;
}

static void expect_name_bytes(const line *l, const char *key, const char *s, size_t n)
{
    json_t *j = json_object_get(l->obj, key);
    assert_true(json_is_string(j));
    assert_int_equal(json_string_length(j), n);
    assert_memory_equal(json_string_value(j), s, n);
}

static void test_bound_with_worst_case_names(void **state)
{
    (void)state;
    char *a, *b;
    uint32_t na = worst_name(0, &a), nb = worst_name(1, &b);

    gfl_event ev = make(GFL_EV_SCOPE_END, UINT64_MAX >> 1, UINT32_MAX, 0);
    ev.h.flags = GFL_F_SCOPE_IMPLICIT;
    ev.u.scope.id = ev.u.scope.parent_id = INT64_MAX;
    ev.u.scope.depth = UINT16_MAX;
    ev.u.scope.name = na;
    line l = format_line(&ev);
    assert_true(l.len > 6 * GFL_INTERN_MAX_LEN);
    expect_name_bytes(&l, "name", a, GFL_INTERN_MAX_LEN);
    line_free(&l);

    ev = make(GFL_EV_SYSTEM_START, 1, UINT32_MAX, 0);
    ev.u.window.name = na;
    ev.u.window.open_windows = UINT32_MAX;
    l = format_line(&ev);
    expect_name_bytes(&l, "name", a, GFL_INTERN_MAX_LEN);
    line_free(&l);

    ev = make(GFL_EV_KERNEL, 1, UINT32_MAX, UINT16_MAX);
    memset(&ev.u.kernel, 0xff, sizeof ev.u.kernel);
    ev.u.kernel.end_ts = ev.u.kernel.scope_id = ev.u.kernel.external_id = INT64_MAX;
    ev.u.kernel.api_start_ts = ev.u.kernel.api_end_ts = INT64_MAX;
    ev.u.kernel.name = na;
    ev.u.kernel.mangled_name = nb;
    ev.u.kernel.nvtx = na; /* a third worst-case name in the same line */
    ev.u.kernel.limiter = GFL_LIMIT_BLOCKS;
    ev.u.kernel.occupancy_x10000 = 9999;
    l = format_line(&ev);
    assert_true(l.len > 12 * GFL_INTERN_MAX_LEN);
    expect_name_bytes(&l, "name", a, GFL_INTERN_MAX_LEN);
    expect_name_bytes(&l, "mangled", b, GFL_INTERN_MAX_LEN);
    expect_name_bytes(&l, "nvtx", a, GFL_INTERN_MAX_LEN);
    line_free(&l);

    ev = make(GFL_EV_LOG, UINT64_MAX >> 1, UINT32_MAX, 0);
    ev.u.log.message = nb;
    ev.u.log.level = GFL_LOG_ERROR;
    l = format_line(&ev);
    expect_name_bytes(&l, "message", b, GFL_INTERN_MAX_LEN);
    line_free(&l);
    free(a);
    free(b);
}

/* Every payload byte at 0xff (all bits valid, all ids set, maximal
 * numbers): the longest line each type can make without names. */
static void test_bound_with_maximal_numbers(void **state)
{
    (void)state;
    for (unsigned type = 0; type <= 255; type++) {
        gfl_event ev;
        memset(&ev, 0xff, sizeof ev);
        ev.h.type = (uint8_t)type;
        /* names must be real ids; the rest stays at all-ones */
        switch (type) {
        case GFL_EV_SCOPE_BEGIN:
        case GFL_EV_SCOPE_END: ev.u.scope.name = 0; break;
        case GFL_EV_SYSTEM_START:
        case GFL_EV_SYSTEM_STOP: ev.u.window.name = 0; break;
        case GFL_EV_KERNEL:
            ev.u.kernel.name = GFL_INTERN_EMPTY;
            ev.u.kernel.mangled_name = GFL_INTERN_OVERFLOW;
            break;
        case GFL_EV_MEMCPY: ev.u.memcpy.copy_kind = GFL_COPY_PTOP; break;
        case GFL_EV_LOG: ev.u.log.message = GFL_INTERN_OVERFLOW; break;
        case GFL_EV_PC_SAMPLE: /* every pair, each reason a key of its own */
            for (unsigned i = 0; i < GFL_PC_STALLS_PER_EVENT; i++)
                ev.u.pc.stalls[i].reason = i % 2 ? GFL_INTERN_OVERFLOW : GFL_INTERN_EMPTY;
            ev.u.pc.count = 2;
            break;
        default: break;
        }
        size_t bound = gpufl__ndjson_bound(&ev, &gpufl__intern_lookup);
        char *buf = malloc(bound + SLACK);
        assert_non_null(buf);
        memset(buf, CANARY, bound + SLACK);
        size_t len = gpufl__ndjson_format(&ev, &gpufl__intern_lookup, buf);
        assert_true(len <= bound);
        for (size_t i = len; i < bound + SLACK; i++)
            assert_int_equal((unsigned char)buf[i], CANARY);
        assert_int_equal(buf[len - 1], '\n');
        /* integers past 2^63 are legal JSON; read them as reals here */
        json_error_t err;
        json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &err);
        if (!o)
            fail_msg("type %u: %s: %.*s", type, err.text, (int)len, buf);
        assert_true(json_is_object(o));
        json_decref(o);
        free(buf);
    }
}

/* ---- string escaping ---------------------------------------------------- */

/* gpufl__jput_str of s[0..n) into a fresh buffer; checks the bound and that
 * nothing is written past the returned end. Returns a NUL-terminated copy. */
static char *jstr(const char *s, size_t n, size_t *out_len)
{
    size_t cap = GFL_JSTR_BOUND(n) + SLACK;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    memset(buf, CANARY, cap + 1);
    char *end = gpufl__jput_str(buf, s, n);
    size_t len = (size_t)(end - buf);
    assert_true(len <= GFL_JSTR_BOUND(n));
    for (size_t i = len; i < cap + 1; i++)
        assert_int_equal((unsigned char)buf[i], CANARY);
    buf[len] = '\0';
    *out_len = len;
    return buf;
}

/* Escapes, compares with the exact expected JSON text, parses it back and
 * compares with the expected decoded bytes. */
static void expect_jstr(const char *in, size_t n, const char *want_json, const char *want_decoded,
                        size_t want_decoded_len)
{
    size_t len;
    char *out = jstr(in, n, &len);
    if (len != strlen(want_json) || memcmp(out, want_json, len) != 0)
        fail_msg("escaped to %s, expected %s", out, want_json);
    json_error_t err;
    json_t *j = json_loadb(out, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!j)
        fail_msg("%s does not parse: %s", out, err.text);
    assert_true(json_is_string(j));
    assert_int_equal(json_string_length(j), want_decoded_len);
    assert_memory_equal(json_string_value(j), want_decoded, want_decoded_len);
    json_decref(j);
    free(out);
}
#define EXPECT_JSTR(in, want_json, want_decoded)                                                                       \
    expect_jstr((in), sizeof(in) - 1, (want_json), (want_decoded), sizeof(want_decoded) - 1)

static void test_escaping_ascii(void **state)
{
    (void)state;
    EXPECT_JSTR("", "\"\"", "");
    EXPECT_JSTR("plain text 123", "\"plain text 123\"", "plain text 123");
    EXPECT_JSTR("\"", "\"\\\"\"", "\"");
    EXPECT_JSTR("\\", "\"\\\\\"", "\\");
    EXPECT_JSTR("a\"b\\c/d", "\"a\\\"b\\\\c/d\"", "a\"b\\c/d");
    EXPECT_JSTR("\x7f", "\"\x7f\"", "\x7f"); /* DEL needs no escape */
    EXPECT_JSTR("~\x7f ", "\"~\x7f \"", "~\x7f ");

    /* every control character, alone and between text */
    for (unsigned c = 0; c < 0x20; c++) {
        char want[16];
        switch (c) {
        case '\b': strcpy(want, "\"\\b\""); break;
        case '\t': strcpy(want, "\"\\t\""); break;
        case '\n': strcpy(want, "\"\\n\""); break;
        case '\f': strcpy(want, "\"\\f\""); break;
        case '\r': strcpy(want, "\"\\r\""); break;
        default: snprintf(want, sizeof want, "\"\\u%04x\"", c);
        }
        char in[1] = {(char)c};
        expect_jstr(in, 1, want, in, 1);

        char in3[3] = {'x', (char)c, 'y'};
        char want3[24];
        snprintf(want3, sizeof want3, "\"x%.*sy\"", (int)strlen(want) - 2, want + 1);
        expect_jstr(in3, 3, want3, in3, 3);
    }
}

static void test_escaping_utf8(void **state)
{
    (void)state;
    /* valid sequences are kept byte for byte, at the edges of each range */
    EXPECT_JSTR("\xc2\x80", "\"\xc2\x80\"", "\xc2\x80");                         /* U+0080 */
    EXPECT_JSTR("caf\xc3\xa9", "\"caf\xc3\xa9\"", "caf\xc3\xa9");                /* é */
    EXPECT_JSTR("\xdf\xbf", "\"\xdf\xbf\"", "\xdf\xbf");                         /* U+07FF */
    EXPECT_JSTR("\xe0\xa0\x80", "\"\xe0\xa0\x80\"", "\xe0\xa0\x80");             /* U+0800 */
    EXPECT_JSTR("\xe2\x82\xac", "\"\xe2\x82\xac\"", "\xe2\x82\xac");             /* € */
    EXPECT_JSTR("\xed\x9f\xbf", "\"\xed\x9f\xbf\"", "\xed\x9f\xbf");             /* U+D7FF */
    EXPECT_JSTR("\xee\x80\x80", "\"\xee\x80\x80\"", "\xee\x80\x80");             /* U+E000 */
    EXPECT_JSTR("\xef\xbf\xbd", "\"\xef\xbf\xbd\"", "\xef\xbf\xbd");             /* U+FFFD itself */
    EXPECT_JSTR("\xef\xbf\xbf", "\"\xef\xbf\xbf\"", "\xef\xbf\xbf");             /* U+FFFF */
    EXPECT_JSTR("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\"", "\xf0\x90\x80\x80"); /* U+10000 */
    EXPECT_JSTR("\xf0\x9d\x84\x9e", "\"\xf0\x9d\x84\x9e\"", "\xf0\x9d\x84\x9e"); /* 𝄞 */
    EXPECT_JSTR("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"", "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
    EXPECT_JSTR("\xe6\x97\xa5\xe6\x9c\xac\"\n", "\"\xe6\x97\xa5\xe6\x9c\xac\\\"\\n\"", "\xe6\x97\xa5\xe6\x9c\xac\"\n");

#define R "\\ufffd"      /* the escaped replacement */
#define D "\xef\xbf\xbd" /* U+FFFD once decoded */
    /* each byte that is not part of a valid sequence becomes U+FFFD */
    EXPECT_JSTR("a\x80"
                "b",
                "\"a" R "b\"", "a" D "b"); /* lone continuation */
    EXPECT_JSTR("\xbf", "\"" R "\"", D);
    EXPECT_JSTR("\x80\x80", "\"" R R "\"", D D);
    EXPECT_JSTR("\xc0\xaf", "\"" R R "\"", D D);                 /* overlong '/' */
    EXPECT_JSTR("\xc1\xbf", "\"" R R "\"", D D);                 /* overlong */
    EXPECT_JSTR("\xe0\x80\xaf", "\"" R R R "\"", D D D);         /* overlong, 3 bytes */
    EXPECT_JSTR("\xe0\x9f\xbf", "\"" R R R "\"", D D D);         /* overlong U+07FF */
    EXPECT_JSTR("\xf0\x80\x80\xaf", "\"" R R R R "\"", D D D D); /* overlong, 4 bytes */
    EXPECT_JSTR("\xf0\x8f\xbf\xbf", "\"" R R R R "\"", D D D D); /* overlong U+FFFF */
    EXPECT_JSTR("\xed\xa0\x80", "\"" R R R "\"", D D D);         /* surrogate U+D800 */
    EXPECT_JSTR("\xed\xbf\xbf", "\"" R R R "\"", D D D);         /* surrogate U+DFFF */
    EXPECT_JSTR("\xf4\x90\x80\x80", "\"" R R R R "\"", D D D D); /* U+110000 */
    EXPECT_JSTR("\xf5\x80\x80\x80", "\"" R R R R "\"", D D D D); /* lead 0xF5 */
    EXPECT_JSTR("\xf8\x88\x80\x80\x80", "\"" R R R R R "\"", D D D D D);
    EXPECT_JSTR("\xfe\xff", "\"" R R "\"", D D);
    EXPECT_JSTR("ok\xe2\x82", "\"ok" R R "\"", "ok" D D); /* truncated at the end */
    EXPECT_JSTR("ok\xf0\x9f\x98", "\"ok" R R R "\"", "ok" D D D);
    EXPECT_JSTR("\xc3", "\"" R "\"", D);
    EXPECT_JSTR("\xe2\x82x\xc3\xa9", "\"" R R "x\xc3\xa9\"", D D "x\xc3\xa9"); /* cut short mid-text */
    EXPECT_JSTR("\xc3\xc3\xa9", "\"" R "\xc3\xa9\"", D "\xc3\xa9");
    /* a sequence cut by the length, though the bytes after it would complete
     * it: nothing past n is read */
    expect_jstr("ok\xe2\x82\xac", 4, "\"ok" R R "\"", "ok" D D, 8);
    expect_jstr("\xf0\x9f\x98\x80", 3, "\"" R R R "\"", D D D, 9);
    expect_jstr("\xf0\x9f\x98\x80", 1, "\"" R "\"", D, 3);
    expect_jstr("\xc3\xa9", 1, "\"" R "\"", D, 3);
    expect_jstr("\xc3\xa9", 0, "\"\"", "", 0);
#undef R
#undef D
}

/* The reference: a UTF-8 validator written from the table of well-formed
 * byte sequences (Unicode §3.9, table 3-7), and the expected decoded text. */
static size_t ref_valid_len(const unsigned char *s, size_t n)
{
    static const struct {
        unsigned char lead_lo, lead_hi, second_lo, second_hi;
        size_t len;
    } rows[] = {
        {0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3}, {0xe1, 0xec, 0x80, 0xbf, 3},
        {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3}, {0xf0, 0xf0, 0x90, 0xbf, 4},
        {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (s[0] < rows[r].lead_lo || s[0] > rows[r].lead_hi)
            continue;
        if (n < rows[r].len || s[1] < rows[r].second_lo || s[1] > rows[r].second_hi)
            return 0;
        for (size_t i = 2; i < rows[r].len; i++)
            if (s[i] < 0x80 || s[i] > 0xbf)
                return 0;
        return rows[r].len;
    }
    return 0;
}

static size_t ref_decode(const unsigned char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            out[o++] = (char)s[i++];
            continue;
        }
        size_t len = ref_valid_len(s + i, n - i);
        if (len) {
            memcpy(out + o, s + i, len);
            o += len;
            i += len;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    return o;
}

static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_escaping_random_bytes_against_reference(void **state)
{
    (void)state;
    uint64_t rng = 7;
    unsigned char in[96];
    char want[96 * 3];
    for (unsigned iter = 0; iter < 50000; iter++) {
        size_t n = (size_t)(rng_next(&rng) % sizeof in);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng_next(&rng);
            /* biased towards the interesting bytes: leads, continuations,
             * control characters, quotes */
            switch (r % 6) {
            case 0: in[i] = (unsigned char)(0x80 + (r >> 8) % 0x40); break;
            case 1: in[i] = (unsigned char)(0xc0 + (r >> 8) % 0x40); break;
            case 2: in[i] = (unsigned char)((r >> 8) % 0x20); break;
            case 3: in[i] = "\"\\/ aZ\x7f"[(r >> 8) % 8]; break;
            default: in[i] = (unsigned char)(r >> 8); break;
            }
        }
        size_t len;
        char *out = jstr((const char *)in, n, &len);
        json_error_t err;
        json_t *j = json_loadb(out, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        if (!j)
            fail_msg("iteration %u: %s does not parse: %s", iter, out, err.text);
        size_t want_len = ref_decode(in, n, want);
        if (json_string_length(j) != want_len || memcmp(json_string_value(j), want, want_len) != 0)
            fail_msg("iteration %u: decoded text differs from the reference", iter);
        json_decref(j);
        free(out);
    }
}

/* ---- numbers ------------------------------------------------------------ */

static void expect_put(char *(*put)(char *), const char *want)
{
    char buf[64];
    memset(buf, CANARY, sizeof buf);
    char *end = put(buf);
    size_t len = (size_t)(end - buf);
    if (len != strlen(want) || memcmp(buf, want, len) != 0)
        fail_msg("wrote \"%.*s\", expected \"%s\"", (int)len, buf, want);
    for (size_t i = len; i < sizeof buf; i++)
        assert_int_equal((unsigned char)buf[i], CANARY);
}

static uint64_t cur_u;
static int64_t cur_i;
static unsigned cur_dec;
static char *put_u(char *p) { return gpufl__jput_u64(p, cur_u); }
static char *put_i(char *p) { return gpufl__jput_i64(p, cur_i); }
static char *put_fixed(char *p) { return gpufl__jput_fixed(p, cur_u, cur_dec); }
static char *put_hex(char *p) { return gpufl__jput_hex(p, cur_u); }

static void check_u64(uint64_t v, const char *want)
{
    cur_u = v;
    expect_put(put_u, want);
}

static void test_jput_u64(void **state)
{
    (void)state;
    check_u64(0, "0");
    check_u64(9, "9");
    check_u64(10, "10");
    check_u64(99, "99");
    check_u64(100, "100");
    check_u64(101, "101");
    check_u64(1000, "1000");
    check_u64(4294967296ull, "4294967296");
    check_u64(9999999999999999999ull, "9999999999999999999");
    check_u64(10000000000000000000ull, "10000000000000000000");
    check_u64(UINT64_MAX, "18446744073709551615");
    /* every power of ten and its neighbours, then random widths, against snprintf */
    char want[32];
    uint64_t p = 1;
    for (int e = 0; e < 20; e++, p *= 10) {
        for (int d = -1; d <= 1; d++) {
            uint64_t v = p + (uint64_t)(int64_t)d;
            snprintf(want, sizeof want, "%" PRIu64, v);
            check_u64(v, want);
        }
    }
    uint64_t rng = 99;
    for (int i = 0; i < 20000; i++) {
        uint64_t v = rng_next(&rng) >> (rng_next(&rng) % 64);
        snprintf(want, sizeof want, "%" PRIu64, v);
        check_u64(v, want);
    }
}

static void check_i64(int64_t v, const char *want)
{
    cur_i = v;
    expect_put(put_i, want);
}

static void test_jput_i64(void **state)
{
    (void)state;
    check_i64(INT64_MIN, "-9223372036854775808");
    check_i64(INT64_MIN + 1, "-9223372036854775807");
    check_i64(INT64_MAX, "9223372036854775807");
    check_i64(-1, "-1");
    check_i64(0, "0");
    check_i64(-10, "-10");
    check_i64(-273, "-273");
    char want[32];
    uint64_t rng = 5;
    for (int i = 0; i < 20000; i++) {
        int64_t v = (int64_t)(rng_next(&rng) >> (rng_next(&rng) % 64));
        if (i & 1)
            v = -v;
        snprintf(want, sizeof want, "%" PRId64, v);
        check_i64(v, want);
    }
}

static void check_fixed(uint64_t v, unsigned decimals, const char *want)
{
    cur_u = v;
    cur_dec = decimals;
    expect_put(put_fixed, want);
}

/* The reference: integer part, '.', the fraction zero-padded to `decimals`
 * digits with trailing zeros dropped; no point when the fraction is 0. */
static void ref_fixed(uint64_t v, unsigned decimals, char *out, size_t cap)
{
    uint64_t scale = 1;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    int n = snprintf(out, cap, "%" PRIu64, v / scale);
    if (v % scale) {
        n += snprintf(out + n, cap - (size_t)n, ".%0*" PRIu64, (int)decimals, v % scale);
        while (out[n - 1] == '0')
            out[--n] = '\0';
    }
}

static void test_jput_fixed(void **state)
{
    (void)state;
    check_fixed(1234, 2, "12.34");
    check_fixed(1200, 2, "12");
    check_fixed(1230, 2, "12.3");
    check_fixed(1201, 2, "12.01");
    check_fixed(5, 4, "0.0005");
    check_fixed(50, 4, "0.005");
    check_fixed(10000, 4, "1");
    check_fixed(10001, 4, "1.0001");
    check_fixed(6250, 4, "0.625");
    check_fixed(0, 2, "0");
    check_fixed(0, 0, "0");
    check_fixed(7, 0, "7");
    check_fixed(1, 2, "0.01");
    check_fixed(99, 2, "0.99");
    check_fixed(UINT32_MAX, 2, "42949672.95");
    check_fixed(UINT64_MAX, 2, "184467440737095516.15");
    check_fixed(UINT64_MAX, 0, "18446744073709551615");
    check_fixed(UINT64_MAX, 19, "1.8446744073709551615");
    check_fixed(10000000000000000000ull, 19, "1");
    /* the room json_out.h asks callers for: 21 bytes, the widest output */
    size_t widest = 0;
    for (unsigned d = 0; d <= 19; d++) {
        char buf[48];
        size_t n = (size_t)(gpufl__jput_fixed(buf, UINT64_MAX, d) - buf);
        widest = n > widest ? n : widest;
    }
    assert_int_equal(widest, 21);
    char want[48];
    uint64_t rng = 3;
    for (int i = 0; i < 20000; i++) {
        uint64_t v = rng_next(&rng) >> (rng_next(&rng) % 64);
        unsigned d = (unsigned)(rng_next(&rng) % 20);
        ref_fixed(v, d, want, sizeof want);
        check_fixed(v, d, want);
        /* and it reads back as the same number */
        char buf[48];
        char *end = gpufl__jput_fixed(buf, v, d);
        *end = '\0';
        double scale = 1;
        for (unsigned k = 0; k < d; k++)
            scale *= 10;
        double got = strtod(buf, NULL), exact = (double)v / scale;
        double diff = got > exact ? got - exact : exact - got;
        assert_true(diff <= exact * 1e-15);
    }
}

static void check_hex(uint64_t v, const char *want)
{
    cur_u = v;
    expect_put(put_hex, want);
}

static void test_jput_hex(void **state)
{
    (void)state;
    check_hex(0, "\"0x0\"");
    check_hex(0xf, "\"0xf\"");
    check_hex(0x10, "\"0x10\"");
    check_hex(0xdeadbeef, "\"0xdeadbeef\"");
    check_hex(0x7f0000001000ull, "\"0x7f0000001000\"");
    check_hex(UINT64_MAX, "\"0xffffffffffffffff\"");
    char want[32];
    uint64_t rng = 11;
    for (int i = 0; i < 20000; i++) {
        uint64_t v = rng_next(&rng) >> (rng_next(&rng) % 64);
        snprintf(want, sizeof want, "\"0x%" PRIx64 "\"", v);
        check_hex(v, want);
    }
}

/* ---- cached names (format/json_names.h) ---------------------------------
 * The live writer and gpufl convert copy each name's JSON text, made once
 * per string id: it must be the text the uncached formatter writes, and the
 * cached bound must hold the line, on a name's first line and after. */

/* Random events of every type (unknown ones too), numbers of every width,
 * names from ids[0..nid) or unknown ids. */
static void random_event(gfl_event *ev, uint64_t *rng, const uint32_t *ids, unsigned nid)
{
    unsigned char *raw = (unsigned char *)ev;
    bool dense = rng_next(rng) % 2;
    for (size_t k = 0; k < sizeof *ev; k++)
        raw[k] = dense || rng_next(rng) % 5 == 0 ? (unsigned char)rng_next(rng) : 0;
    ev->h.type = (uint8_t)(1 + rng_next(rng) % GFL_EV_TYPE_COUNT);
    uint32_t *word = (uint32_t *)(void *)ev->u.raw;
    /* every 32-bit word may be a name's id: make some of them names */
    for (size_t k = 0; k < sizeof ev->u.raw / 4; k++)
        if (rng_next(rng) % 3 == 0)
            word[k] = rng_next(rng) % 4 ? ids[rng_next(rng) % nid] : (uint32_t)(rng_next(rng) % 100000);
}

static void test_cached_names_same_bytes(void **state)
{
    (void)state;
    static const char *const texts[] = {"plain",
                                        "q\"uote\\d",
                                        "ctl\x01\x1f\n\t",
                                        "utf8 \xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80",
                                        "bad \xff \xc3( \xe2\x82",
                                        "x"};
    uint32_t ids[16];
    unsigned nid = 0;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        ids[nid++] = gpufl__intern(texts[i]);
    char *worst;
    ids[nid++] = worst_name(3, &worst);
    ids[nid++] = GFL_INTERN_EMPTY;
    gpufl__jnames j;
    gpufl__jnames_init(&j, &gpufl__intern_lookup);
    uint64_t rng = 7;
    for (int i = 0; i < 40000; i++) {
        gfl_event ev;
        random_event(&ev, &rng, ids, nid);
        /* uncached (numbers past 2^63 are valid JSON that jansson refuses,
         * so the lines are compared, not parsed) */
        line want = {0};
        want.bound = gpufl__ndjson_bound(&ev, &gpufl__intern_lookup);
        want.buf = malloc(want.bound);
        assert_non_null(want.buf);
        want.len = gpufl__ndjson_format(&ev, &gpufl__intern_lookup, want.buf);
        assert_true(want.len <= want.bound);
        size_t bound = gpufl__ndjson_line_bound(&ev, &j);
        char *buf = malloc(bound + SLACK);
        assert_non_null(buf);
        memset(buf, CANARY, bound + SLACK);
        size_t n = gpufl__ndjson_line(&ev, &j, buf);
        assert_true(n <= bound);
        for (size_t k = n; k < bound + SLACK; k++)
            assert_int_equal((unsigned char)buf[k], CANARY);
        if (n != want.len || memcmp(buf, want.buf, n) != 0)
            fail_msg("type %u: cached line differs:\n%.*s\n%.*s", ev.h.type, (int)(n > 300 ? 300 : n), buf,
                     (int)(want.len > 300 ? 300 : want.len), want.buf);
        free(buf);
        line_free(&want);
    }
    gpufl__jnames_free(&j);
    free(worst);
}

static void test_cached_names_limits(void **state)
{
    (void)state;
    gpufl__jnames j;
    gpufl__jnames_init(&j, &gpufl__intern_lookup);
    uint32_t id = gpufl__intern("cached \"name\"");
    const gpufl__jname *n = gpufl__jnames_get(&j, id);
    assert_non_null(n);
    assert_int_equal(n->len, strlen("\"cached \\\"name\\\"\""));
    assert_memory_equal(j.text + n->off, "\"cached \\\"name\\\"\"", n->len);
    assert_ptr_equal(gpufl__jnames_get(&j, id), n); /* made once */
    assert_int_equal(gpufl__jnames_bound(&j, id), n->len);

    /* an id past the table's limit is escaped every time, never kept */
    char buf[64];
    assert_null(gpufl__jnames_get(&j, GFL_JNAMES_MAX_IDS));
    assert_int_equal(gpufl__jnames_put(&j, buf, GFL_JNAMES_MAX_IDS) - buf, 2);
    assert_memory_equal(buf, "\"\"", 2);
    assert_true(j.nids <= GFL_JNAMES_MAX_IDS);
    gpufl__jnames_free(&j);

    /* uncached: the same text, nothing kept */
    gpufl__jnames_init_uncached(&j, &gpufl__intern_lookup);
    assert_null(gpufl__jnames_get(&j, id));
    char *end = gpufl__jnames_put(&j, buf, id);
    assert_int_equal(end - buf, strlen("\"cached \\\"name\\\"\""));
    assert_memory_equal(buf, "\"cached \\\"name\\\"\"", (size_t)(end - buf));
    assert_null(j.ids);
    assert_null(j.text);
    gpufl__jnames_free(&j);
}

/* Enum names are copied without escaping (ndjson_format.c, put_word):
 * every name of every table the lines use, for every byte value, must be
 * its own JSON text. */
static void test_enum_names_need_no_escaping(void **state)
{
    (void)state;
    const char *(*const tables[])(uint8_t) = {
        gpufl__limiter_name,   gpufl__copy_kind_name,    gpufl__mem_kind_name,
        gpufl__sync_kind_name, gpufl__drop_reason_name,  gpufl__channel_name,
        gpufl__log_level_name, gpufl__crash_action_name, gpufl__trigger_outcome_name};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (unsigned v = 0; v < 256; v++) {
            const char *name = tables[t]((uint8_t)v);
            size_t n = strlen(name);
            char buf[6 * 64 + 2];
            assert_true(n < 64);
            assert_int_equal(gpufl__jput_str(buf, name, n) - buf, n + 2);
            assert_memory_equal(buf + 1, name, n);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_begin),
        cmocka_unit_test(test_scope_end),
        cmocka_unit_test(test_system_start_stop),
        cmocka_unit_test(test_host_metrics_all_validity_combinations),
        cmocka_unit_test(test_device_metrics_all_fields),
        cmocka_unit_test(test_device_metrics_validity_bits),
        cmocka_unit_test(test_kernel),
        cmocka_unit_test(test_memcpy),
        cmocka_unit_test(test_memset),
        cmocka_unit_test(test_sync),
        cmocka_unit_test(test_mem_alloc_free),
        cmocka_unit_test(test_dropped),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_unknown_types),
        cmocka_unit_test(test_bound_with_worst_case_names),
        cmocka_unit_test(test_bound_with_maximal_numbers),
        cmocka_unit_test(test_escaping_ascii),
        cmocka_unit_test(test_escaping_utf8),
        cmocka_unit_test(test_escaping_random_bytes_against_reference),
        cmocka_unit_test(test_jput_u64),
        cmocka_unit_test(test_jput_i64),
        cmocka_unit_test(test_jput_fixed),
        cmocka_unit_test(test_jput_hex),
        cmocka_unit_test(test_cached_names_same_bytes),
        cmocka_unit_test(test_cached_names_limits),
        cmocka_unit_test(test_enum_names_need_no_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
