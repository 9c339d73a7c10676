/*
 * The PyTorch ops analysis (src/analyze/ana_op_rows.c, ana_ops.c) and what
 * the outputs make of it.
 *
 * Why: backward kernels run on autograd's threads inside backward op
 * ranges, so their GPU time only reaches the op (and the module) the user
 * wrote through autograd's sequence number; a wrong rule puts a model's
 * backward pass under the wrong op, or under none. Checked on a hand-made
 * training step (ops_fixture.h) with known answers: which NVTX rows are
 * ops, backward, modules; each backward op's forward op and module (the
 * innermost op with its seq, across threads; an op run by a backward op
 * inherits; the autograd engine's wrapper is backward with no forward op);
 * GPU ns per op, forward and backward, per module, outside any op; calls;
 * the hotspots' ops; the text report's section, the JSON report's "ops",
 * the Chrome export's args. The names' rules are Python's regular
 * expressions, edge cases included. A session without op ranges gives an
 * empty result and no section.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "analyze/analysis.h"
#include "ops_fixture.h"
#include "present/export/export.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"
#include "report_render.h"
#include "report_schema.h"

TU_TEMP_DIR_FIXTURES(dir, "analyze-ops")

/* The NVTX row of the range with id. */
static uint32_t row_of(const gpufl_trace *t, uint64_t id)
{
    const gpufl_trace_scopes *s = gpufl_trace_get_nvtx(t);
    for (size_t i = 0; i < s->n; i++)
        if (s->id[i] == id)
            return (uint32_t)i;
    fail_msg("no NVTX range %llu", (unsigned long long)id);
    return 0;
}

static const char *name_of_row(const gpufl_trace *t, uint32_t row)
{
    return row == GPUFL__ANA_NONE ? "(none)" : gpufl_trace_string(t, gpufl_trace_get_nvtx(t)->name[row]);
}

/* flags, forward op name and module name of range id */
static void expect_row(const gpufl_trace *t, const gpufl__ana_op_rows *r, uint64_t id, unsigned flags,
                       const char *forward, const char *module)
{
    uint32_t row = row_of(t, id);
    if (r->flags[row] != flags)
        fail_msg("range %llu: flags %u, expected %u", (unsigned long long)id, r->flags[row], flags);
    assert_string_equal(name_of_row(t, r->forward[row]), forward);
    assert_string_equal(name_of_row(t, r->module[row]), module);
}

static gpufl_trace *torch_session(const char *name)
{
    af f = {0};
    of_torch_session(&f);
    return af_open(&f, dir, name);
}

enum { OP = GPUFL__ANA_OPROW_OP, BW = GPUFL__ANA_OPROW_BACKWARD, INH = GPUFL__ANA_OPROW_INHERITED };

static void classifies_rows(void **state)
{
    (void)state;
    gpufl_trace *t = torch_session("rows");
    gpufl__ana_op_rows r;
    assert_int_equal(gpufl__analyze_op_rows(t, &r), 0);
    assert_int_equal(r.ops, 10);
    assert_int_equal(r.backward_ops, 5);
    assert_int_equal(r.modules, 2);
    expect_row(t, &r, 1, GPUFL__ANA_OPROW_MODULE, "(none)", "(none)");
    expect_row(t, &r, 3, OP, "(none)", "nn.Module: Net.fc");
    expect_row(t, &r, 5, OP, "(none)", "nn.Module: Net.fc");
    expect_row(t, &r, 6, OP, "(none)", "nn.Module: Net");
    /* by name, with its forward op by seq and that one's module */
    expect_row(t, &r, 7, OP | BW, "aten::addmm", "nn.Module: Net.fc");
    /* seq 5: the innermost op of the two with it */
    expect_row(t, &r, 8, OP | BW, "aten::t", "nn.Module: Net.fc");
    /* backward by its seq, on another thread than aten::relu */
    expect_row(t, &r, 9, OP | BW, "aten::relu", "nn.Module: Net");
    /* run by AddmmBackward0 */
    expect_row(t, &r, 12, OP | BW | INH, "aten::addmm", "nn.Module: Net.fc");
    /* the engine's wrapper: backward by name, no seq, no forward op */
    expect_row(t, &r, 13, OP | BW, "(none)", "(none)");
    expect_row(t, &r, 10, OP, "(none)", "(none)");
    expect_row(t, &r, 11, 0, "(none)", "(none)");
    /* the innermost op of each range */
    assert_int_equal(r.op[row_of(t, 12)], row_of(t, 12));
    assert_int_equal(r.op[row_of(t, 2)], GPUFL__ANA_NONE);
    assert_int_equal(r.op[row_of(t, 11)], GPUFL__ANA_NONE);
    assert_int_equal(gpufl__ana_op_effective(&r, row_of(t, 12)), row_of(t, 5));
    assert_string_equal(gpufl__ana_module_path("nn.Module: Net.fc"), "Net.fc");
    assert_string_equal(gpufl__ana_module_path("Net.fc"), "Net.fc");
    gpufl__ana_op_rows_free(&r);
    gpufl_trace_close(t);
}

static const gpufl__ana_op *find_op(const gpufl_trace *t, const gpufl__ana_op *ops, uint32_t n, const char *module,
                                    const char *name, bool backward_only)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(gpufl_trace_string(t, ops[i].name), name) == 0 && ops[i].backward_only == backward_only &&
            (!module || strcmp(gpufl_trace_string(t, ops[i].module), module) == 0))
            return &ops[i];
    fail_msg("no op %s", name);
    return NULL;
}

static void expect_op(const gpufl__ana_op *o, uint64_t calls, uint64_t backward_calls, uint64_t kernels, uint64_t work,
                      uint64_t fwd, uint64_t bwd)
{
    assert_int_equal(o->calls, calls);
    assert_int_equal(o->backward_calls, backward_calls);
    assert_int_equal(o->kernels, kernels);
    assert_int_equal(o->work, work);
    assert_int_equal(o->forward_ns, fwd);
    assert_int_equal(o->backward_ns, bwd);
    assert_int_equal(o->total_ns, fwd + bwd);
}

static void adds_up_ops(void **state)
{
    (void)state;
    gpufl_trace *t = torch_session("ops");
    gpufl__ana_ops o;
    assert_int_equal(gpufl__analyze_ops(t, &o), 0);
    assert_int_equal(o.op_ranges, 10);
    assert_int_equal(o.backward_ranges, 5);
    assert_int_equal(o.module_ranges, 2);
    assert_int_equal(o.work, 9);
    assert_int_equal(o.work_ns, 21700);
    assert_int_equal(o.in_ops, 8);
    assert_int_equal(o.in_ops_ns, 21000);
    assert_int_equal(o.forward_ns, 8000);
    assert_int_equal(o.backward_ns, 13000);
    assert_int_equal(o.outside, 1);
    assert_int_equal(o.outside_ns, 700);
    assert_int_equal(o.allocs, 1);
    assert_int_equal(o.alloc_bytes, 4096);
    assert_int_equal(o.outside_allocs, 0);
    /* ops: by total, then name */
    assert_int_equal(o.n, 6);
    const char *order[] = {"aten::addmm", "aten::relu", "aten::t", OF_WRAPPER, "aten::empty", "aten::linear"};
    for (uint32_t i = 0; i < o.n; i++)
        assert_string_equal(gpufl_trace_string(t, o.ops[i].name), order[i]);
    expect_op(&o.ops[0], 1, 1, 3, 3, 5000, 8000); /* AddmmBackward0's aten::mm is no second call */
    expect_op(&o.ops[1], 1, 1, 2, 3, 3000, 1500);
    expect_op(&o.ops[2], 1, 1, 1, 1, 0, 3000);
    expect_op(&o.ops[3], 0, 1, 1, 1, 0, 500);
    assert_true(o.ops[3].backward_only);
    assert_false(o.ops[0].backward_only);
    expect_op(&o.ops[4], 1, 0, 0, 0, 0, 0);
    assert_int_equal(o.ops[4].allocs, 1);
    assert_int_equal(o.ops[4].alloc_bytes, 4096);
    assert_int_equal(o.ops[0].module, 0);
    assert_true(o.ops[0].share > 13000.0 / 21700 - 1e-9 && o.ops[0].share < 13000.0 / 21700 + 1e-9);
    /* the op level: modules by total, each with its ops */
    assert_int_equal(o.nmodules, 3);
    assert_string_equal(gpufl_trace_string(t, o.modules[0].module), "nn.Module: Net.fc");
    assert_string_equal(gpufl_trace_string(t, o.modules[1].module), "nn.Module: Net");
    assert_int_equal(o.modules[2].module, 0);
    assert_int_equal(o.modules[0].total_ns, 16000);
    assert_int_equal(o.modules[0].forward_ns, 5000);
    assert_int_equal(o.modules[0].backward_ns, 11000);
    assert_int_equal(o.modules[0].kernels, 4);
    assert_int_equal(o.modules[1].total_ns, 4500);
    assert_int_equal(o.modules[2].total_ns, 500);
    assert_int_equal(o.modules[2].allocs, 1);
    assert_int_equal(o.nmodule_ops, 6);
    uint32_t expect_n[] = {3, 1, 2};
    const char *fc_ops[] = {"aten::addmm", "aten::t", "aten::linear"};
    for (uint32_t m = 0, k = 0; m < o.nmodules; m++) {
        assert_int_equal(o.modules[m].first, k);
        assert_int_equal(o.modules[m].nops, expect_n[m]);
        for (uint32_t j = 0; j < o.modules[m].nops; j++, k++) {
            assert_int_equal(o.module_ops[k].module, o.modules[m].module);
            if (m == 0)
                assert_string_equal(gpufl_trace_string(t, o.module_ops[k].name), fc_ops[j]);
        }
    }
    expect_op(find_op(t, o.module_ops, o.nmodule_ops, "nn.Module: Net", "aten::relu", false), 1, 1, 2, 3, 3000, 1500);
    expect_op(find_op(t, o.module_ops, o.nmodule_ops, "", OF_WRAPPER, true), 0, 1, 1, 1, 0, 500);
    gpufl__ana_ops_free(&o);
    gpufl_trace_close(t);
}

static void hotspots_name_ops(void **state)
{
    (void)state;
    gpufl_trace *t = torch_session("hot");
    gpufl__ana_hotspots h;
    assert_int_equal(gpufl__analyze_hotspots(t, NULL, &h), 0);
    const gpufl__ana_hotspot *bwd = NULL, *out = NULL;
    for (uint32_t i = 0; i < h.n; i++) {
        if (strcmp(gpufl_trace_string(t, h.kernels[i].name), "gemm_bwd") == 0)
            bwd = &h.kernels[i];
        if (strcmp(gpufl_trace_string(t, h.kernels[i].name), "outside") == 0)
            out = &h.kernels[i];
    }
    assert_non_null(bwd);
    assert_int_equal(bwd->nops, 1);
    assert_string_equal(gpufl_trace_string(t, bwd->ops[0].name), "aten::addmm"); /* its forward op */
    assert_string_equal(gpufl_trace_string(t, bwd->ops[0].module), "nn.Module: Net.fc");
    assert_false(bwd->ops[0].backward_only);
    assert_int_equal(bwd->ops[0].launches, 1);
    assert_int_equal(bwd->ops[0].gpu_ns, 8000);
    assert_true(bwd->ops[0].share == 1.0);
    assert_int_equal(bwd->unop_ns, 0);
    assert_non_null(out);
    assert_int_equal(out->nops, 0);
    assert_int_equal(out->unop_ns, 700);
    gpufl__ana_hotspots_free(&h);
    gpufl_trace_close(t);
}

/* Python's _OP_NAME, _BACKWARD_NAME and MODULE_PREFIX, edge cases. */
static void names_as_python(void **state)
{
    (void)state;
    static const struct {
        const char *json; /* the name as a JSON string's body */
        unsigned flags;
    } cases[] = {
        {"c10d::allreduce_", OP},
        {"aten::add_.Tensor", OP},
        {"a::b::c", OP},
        {"_x1::y", OP},
        {"aten::mm\\n", OP},    /* $ before a final newline */
        {"aten::mm\\n\\n", 0},  /* ... only one */
        {"aten::", 0},          /* nothing after :: */
        {"aten:: mm", 0},       /* white space */
        {"aten::m\\u00a0m", 0}, /* Unicode white space */
        {"aten::m\\u2003m", 0}, /* (an em space) */
        {"aten::m\\u00e9", OP}, /* other non-ASCII is not */
        {"1aten::mm", 0},       /* not an identifier */
        {"\\u00e9t::mm", 0},    /* ASCII identifiers only */
        {"my op", 0},
        {"Foo Backward12", OP | BW}, /* searched at the end: spaces allowed */
        {"Backward", OP | BW},
        {"XBackward0\\n", OP | BW},
        {"XBackward0x", 0},
        {"nn.Module: AddmmBackward0", GPUFL__ANA_OPROW_MODULE},
        {"nn.Module: aten::x", GPUFL__ANA_OPROW_MODULE},
    };
    size_t n = sizeof cases / sizeof cases[0];
    af f = {.end_ns = 2000000};
    for (size_t i = 0; i < n; i++)
        af_line(&f, AF_SCOPE,
                "{\"type\":\"nvtx_range\",\"start_ns\":%zu,\"end_ns\":%zu,\"dur_ns\":10,\"tid\":1,"
                "\"name\":\"%s\",\"depth\":0,\"id\":%zu}",
                1100000 + i * 100, 1100010 + i * 100, cases[i].json, i + 1);
    /* an op's name in another domain, or on a mark, is no op; a seq makes
     * any name one */
    af_line(&f, AF_SCOPE,
            "{\"type\":\"nvtx_range\",\"start_ns\":1500000,\"end_ns\":1500010,\"dur_ns\":10,\"tid\":1,"
            "\"name\":\"aten::mm\",\"domain\":\"mine\",\"seq\":3,\"depth\":0,\"id\":100}");
    af_mark(&f, 1, 101, "aten::mm", 1500100);
    af_line(&f, AF_SCOPE,
            "{\"type\":\"nvtx_range\",\"start_ns\":1500200,\"end_ns\":1500210,\"dur_ns\":10,\"tid\":1,"
            "\"name\":\"plain\",\"seq\":0,\"depth\":0,\"id\":102}");
    gpufl_trace *t = af_open(&f, dir, "names");
    gpufl__ana_op_rows r;
    assert_int_equal(gpufl__analyze_op_rows(t, &r), 0);
    for (size_t i = 0; i < n; i++)
        if (r.flags[row_of(t, i + 1)] != cases[i].flags)
            fail_msg("\"%s\": flags %u, expected %u", cases[i].json, r.flags[row_of(t, i + 1)], cases[i].flags);
    assert_int_equal(r.flags[row_of(t, 100)], 0);
    assert_int_equal(r.flags[row_of(t, 101)], 0);
    assert_int_equal(r.flags[row_of(t, 102)], OP);
    gpufl__ana_op_rows_free(&r);
    gpufl_trace_close(t);
}

static void text_report(void **state)
{
    (void)state;
    gpufl_trace *t = torch_session("text");
    char *text = tu_render_report(t, false);
    const char *sec = strstr(text, "\nPyTorch ops\n-----------\n");
    if (!sec)
        fail_msg("no ops section in:\n%s", text);
    assert_true(sec > strstr(text, "\nScopes\n") && sec < strstr(text, "\nHotspots\n"));
    assert_non_null(strstr(sec, "10 op ranges (5 backward) in 2 module ranges"));
    assert_non_null(strstr(sec, "\n  aten::addmm                                                1       1        3"
                                "     5.00 us     8.00 us    13.00 us  59.9 %\n"));
    assert_non_null(strstr(sec, "\n  autograd::engine::evaluate_functi... (backward only)       0       1        1"
                                "        0 ns      500 ns      500 ns   2.3 %\n"));
    assert_non_null(strstr(sec, "\n  allocations made in ops: 1 (4.00 KiB); outside any op: 0\n"));
    assert_non_null(strstr(sec, "\n  Net.fc                                                                      4"
                                "     5.00 us    11.00 us    16.00 us  73.7 %\n"
                                "    aten::addmm  "));
    assert_non_null(strstr(sec, "\n    aten::t  "));
    assert_non_null(strstr(sec, "\n  (no module)  "));
    /* the hotspots name the op of each kernel */
    const char *hot = strstr(text, " 1. gemm_bwd  ");
    assert_non_null(hot);
    assert_non_null(strstr(hot, "      ops     aten::addmm in Net.fc 100.0 % (1 launch)\n"));
    assert_non_null(strstr(text, "      ops     " OF_WRAPPER " (backward only) 100.0 % (1 launch)\n"));
    assert_non_null(strstr(text, "      ops     outside any: 100.0 %\n"));
    free(text);
    gpufl_trace_close(t);
}

static json_t *json_report(gpufl_trace *t)
{
    char *text = tu_render_report(t, true);
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad JSON: %s", e.text);
    free(text);
    return j;
}

static void json_report_ops(void **state)
{
    (void)state;
    gpufl_trace *t = torch_session("json");
    json_t *j = json_report(t);
    char why[512];
    if (report_schema_check(j, why, sizeof why) != 0)
        fail_msg("the JSON report does not follow its schema: %s", why);
    json_t *o = json_object_get(j, "ops");
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "op_ranges")), 10);
    assert_int_equal(json_integer_value(json_object_get(o, "outside_ns")), 700);
    json_t *first = json_array_get(json_object_get(o, "ops"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "name")), "aten::addmm");
    assert_int_equal(json_integer_value(json_object_get(first, "forward_ns")), 5000);
    assert_int_equal(json_integer_value(json_object_get(first, "backward_ns")), 8000);
    assert_int_equal(json_integer_value(json_object_get(first, "backward_calls")), 1);
    json_t *wrapper = json_array_get(json_object_get(o, "ops"), 3);
    assert_true(json_is_true(json_object_get(wrapper, "backward_only")));
    json_t *mods = json_object_get(o, "modules");
    assert_int_equal(json_array_size(mods), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(mods, 0), "module")), "Net.fc");
    assert_true(json_is_null(json_object_get(json_array_get(mods, 2), "module")));
    json_t *fc_ops = json_object_get(json_array_get(mods, 0), "ops");
    assert_int_equal(json_array_size(fc_ops), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(fc_ops, 1), "name")), "aten::t");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(fc_ops, 1), "backward_ns")), 3000);
    json_decref(j);
    gpufl_trace_close(t);
}

/* Chrome's args of the NVTX slice named name (the first one). */
static json_t *chrome_args(json_t *events, const char *name)
{
    for (size_t i = 0; i < json_array_size(events); i++) {
        json_t *e = json_array_get(events, i);
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") == 0 &&
            strcmp(json_string_value(json_object_get(e, "name")), name) == 0 &&
            strcmp(json_string_value(json_object_get(e, "cat")), "nvtx") == 0)
            return json_object_get(e, "args");
    }
    fail_msg("no slice %s", name);
    return NULL;
}

static void chrome_export_args(void **state)
{
    (void)state;
    gpufl_trace *t = torch_session("chrome");
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/chrome.json", dir);
    gpufl__export_result r;
    assert_int_equal(gpufl__export_chrome(t, path, &r, err, sizeof err), 0);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents");
    json_t *a = chrome_args(ev, "aten::mm");
    assert_string_equal(json_string_value(json_object_get(a, "forward_op")), "aten::addmm");
    assert_string_equal(json_string_value(json_object_get(a, "module")), "Net.fc");
    assert_null(json_object_get(a, "seq"));
    a = chrome_args(ev, "AddmmBackward0");
    assert_int_equal(json_integer_value(json_object_get(a, "seq")), 6);
    assert_string_equal(json_string_value(json_object_get(a, "forward_op")), "aten::addmm");
    a = chrome_args(ev, "aten::addmm");
    assert_int_equal(json_integer_value(json_object_get(a, "seq")), 6);
    assert_string_equal(json_string_value(json_object_get(a, "module")), "Net.fc");
    assert_null(json_object_get(a, "forward_op"));
    assert_null(chrome_args(ev, "forward"));           /* no op */
    assert_null(chrome_args(ev, "nn.Module: Net.fc")); /* a module, no op */
    assert_null(json_object_get(chrome_args(ev, "aten::empty"), "module"));
    json_decref(j);
    gpufl_trace_close(t);
}

static void no_ops(void **state)
{
    (void)state;
    af f = {.end_ns = 2000000};
    af_nvtx(&f, 5, 1, "step", 1100000, 1200000);
    af_kernel(&f, (af_k){.stream = 7,
                         .start = 1300000,
                         .end = 1310000,
                         .tid = 5,
                         .api_start = 1150000,
                         .api_end = 1151000,
                         .nvtx = "step"});
    gpufl_trace *t = af_open(&f, dir, "none");
    gpufl__ana_ops o;
    assert_int_equal(gpufl__analyze_ops(t, &o), 0);
    assert_int_equal(o.op_ranges, 0);
    assert_int_equal(o.n, 0);
    assert_null(o.ops);
    assert_int_equal(o.nmodules, 0);
    assert_int_equal(o.work, 1);
    assert_int_equal(o.outside_ns, 10000);
    gpufl__ana_ops_free(&o);
    gpufl__ana_op_rows r;
    assert_int_equal(gpufl__analyze_op_rows(t, &r), 0);
    assert_null(r.flags);
    gpufl__ana_op_rows_free(&r);
    char *text = tu_render_report(t, false);
    assert_null(strstr(text, "PyTorch ops"));
    assert_null(strstr(text, "\n      ops     "));
    free(text);
    json_t *j = json_report(t);
    json_t *js = json_object_get(j, "ops");
    assert_int_equal(json_array_size(json_object_get(js, "ops")), 0);
    assert_int_equal(json_integer_value(json_object_get(js, "outside_ns")), 10000);
    json_decref(j);
    assert_int_equal(gpufl__analyze_ops(NULL, &o), GPUFL_EINVAL);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classifies_rows),    cmocka_unit_test(adds_up_ops), cmocka_unit_test(hotspots_name_ops),
        cmocka_unit_test(names_as_python),    cmocka_unit_test(text_report), cmocka_unit_test(json_report_ops),
        cmocka_unit_test(chrome_export_args), cmocka_unit_test(no_ops),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
