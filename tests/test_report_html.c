/*
 * The HTML report (src/present/report_html*.c): what gpufl__report_html()
 * writes for a hand-made session with hostile names, for a large synthetic
 * one, for the real PyTorch session in samples/train_sample, and for a
 * hand-made PyTorch training step with op ranges (ops_fixture.h), and for
 * a session with trace windows, triggers and an out-of-memory
 * (flight_fixture.h).
 *
 * Why: the page must be safe whatever a trace's strings hold (kernel names
 * carry <, > and &; scope names and paths may be anything, bytes that are
 * not UTF-8 included), must carry the counts the trace has even when it
 * merges slices to stay light, and must stay small on a big session. The
 * tables must be plain HTML. What a browser makes of it is checked by
 * tests/browser/check_report_html.py (ctest label "browser"), which opens
 * the pages this test leaves in <build>/tests/report_html/ together with
 * what it expects of each (<name>.expect.json).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "core/intern.h"
#include "flight_fixture.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "ops_fixture.h"
#include "present/report/report_html.h"
#include "session_file.h"

static char *tmp;
static char outdir[4096];

static int setup(void **state)
{
    (void)state;
    tmp = tu_mkdtemp("report-html");
    snprintf(outdir, sizeof outdir, "%s/tests/report_html", GFL_BINARY_DIR);
    char parent[4200];
    snprintf(parent, sizeof parent, "%s/tests", GFL_BINARY_DIR);
    mkdir(parent, 0755);
    mkdir(outdir, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(tmp);
    free(tmp);
    return 0;
}

/* ---- writing a session ---------------------------------------------------------- */

typedef struct writer {
    tu_gflt_file f;
    gpufl__session_meta m;
} writer;

static void writer_open(writer *wr, const char *path, const char *app)
{
    wr->m = (gpufl__session_meta){.session_id = "s-1",
                                  .app_name = app,
                                  .host = "node<1>",
                                  .gpufl_version = "0.1.0",
                                  .pid = 77,
                                  .start_ns = 1000000,
                                  .start_wall_ns = 1790000000000000000ull,
                                  .format_version = 1,
                                  .ended = true,
                                  .end_ns = 0};
    tu_gflt_open(&wr->f, path, &wr->m, 4096, -1);
}

static void writer_add(writer *wr, const gfl_event *ev) { tu_gflt_add(&wr->f, ev); }

static void writer_close(writer *wr, uint64_t end_ns)
{
    wr->m.end_ns = end_ns;
    wr->m.end_wall_ns = wr->m.start_wall_ns + (end_ns - wr->m.start_ns);
    tu_gflt_close(&wr->f, &wr->m);
}

static gfl_event ev_of(uint8_t type, uint64_t ts, uint32_t tid)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = type;
    ev.h.ts = ts;
    ev.h.tid = tid;
    return ev;
}

static gfl_event kernel(uint64_t start, uint64_t dur, const char *name, uint32_t stream, uint32_t corr)
{
    gfl_event ev = ev_of(GFL_EV_KERNEL, start, 7);
    ev.u.kernel = (gfl_kernel_payload){.end_ts = start + dur,
                                       .api_start_ts = start - 3000,
                                       .api_end_ts = start - 1000,
                                       .name = gpufl__intern(name),
                                       .context = 1,
                                       .stream = stream,
                                       .correlation = corr,
                                       .grid = {64, 8, 1},
                                       .block = {256, 1, 1},
                                       .registers = 96,
                                       .occupancy_x10000 = 5000,
                                       .limiter = GFL_LIMIT_REGISTERS};
    return ev;
}

static gfl_event scope(uint8_t type, uint64_t ts, uint64_t id, uint64_t parent, uint16_t depth, const char *name,
                       uint64_t begin)
{
    gfl_event ev = ev_of(type, ts, 7);
    ev.u.scope = (gfl_scope_payload){id, parent, type == GFL_EV_SCOPE_END ? begin : 0, gpufl__intern(name), depth};
    return ev;
}

#define GEMM "void gemm<float, 128>(Foo&, Bar<int>*)"
#define GEMM_HTML "void gemm&lt;float, 128&gt;(Foo&amp;, Bar&lt;int&gt;*)"
#define EVIL "evil</script><img id=gfl-pwned src=x onerror=alert(1)><!--"
#define BAD_UTF8 "loss\xff\xfe<b>&\"'"

/* A small session: two streams, hostile kernel, scope and app names. */
static void write_hand(const char *path)
{
    writer wr;
    writer_open(&wr, path, "trainer</title><script>alert(1)</script>");
    gfl_event ev = ev_of(GFL_EV_DEVICE_INFO, 1000100, 0);
    ev.u.info = (gfl_device_info_payload){.memory_total_bytes = 150754820096ull,
                                          .name = gpufl__intern("NVIDIA H200"),
                                          .sm_count = 132,
                                          .cc_major = 9,
                                          .cc_minor = 0};
    writer_add(&wr, &ev);
    ev = scope(GFL_EV_SCOPE_BEGIN, 2000000, 11, 0, 0, "step", 0);
    writer_add(&wr, &ev);
    ev = scope(GFL_EV_SCOPE_BEGIN, 2100000, 12, 11, 1, BAD_UTF8, 0);
    writer_add(&wr, &ev);
    for (uint32_t i = 0; i < 40; i++) {
        ev = kernel(2200000 + i * 20000, 15000, i % 4 == 3 ? EVIL : GEMM, 7 + i % 2, 100 + i);
        ev.u.kernel.scope_id = 12;
        writer_add(&wr, &ev);
    }
    ev = ev_of(GFL_EV_MEMCPY, 2150000, 7);
    ev.u.memcpy = (gfl_memcpy_payload){.end_ts = 2190000,
                                       .bytes = 1 << 24,
                                       .context = 1,
                                       .stream = 7,
                                       .correlation = 99,
                                       .copy_kind = GFL_COPY_HTOD,
                                       .src_kind = GFL_MEM_PINNED,
                                       .dst_kind = GFL_MEM_DEVICE,
                                       .api_start_ts = 2140000,
                                       .api_end_ts = 2141000};
    writer_add(&wr, &ev);
    ev = ev_of(GFL_EV_MEMSET, 3100000, 7);
    ev.u.memset = (gfl_memset_payload){
        .end_ts = 3101000, .bytes = 4096, .context = 1, .stream = 8, .correlation = 98, .mem_kind = GFL_MEM_DEVICE};
    writer_add(&wr, &ev);
    ev = scope(GFL_EV_SCOPE_END, 3000000, 12, 11, 1, BAD_UTF8, 2100000);
    writer_add(&wr, &ev);
    ev = ev_of(GFL_EV_NVTX_RANGE, 2210000, 9);
    ev.u.nvtx = (gfl_nvtx_payload){.end_ts = 2600000, .id = 5, .name = gpufl__intern("aten::mm <&>"), .depth = 0};
    writer_add(&wr, &ev);
    ev = ev_of(GFL_EV_NVTX_MARK, 2220000, 9);
    ev.u.nvtx = (gfl_nvtx_payload){.id = 6, .name = gpufl__intern("checkpoint")};
    writer_add(&wr, &ev);
    ev = ev_of(GFL_EV_SYNC, 3050000, 7);
    ev.u.sync = (gfl_sync_payload){
        .end_ts = 3090000, .context = 1, .stream = 7, .correlation = 97, .sync_kind = GFL_SYNC_STREAM};
    writer_add(&wr, &ev);
    ev = scope(GFL_EV_SCOPE_END, 3200000, 11, 0, 0, "step", 2000000);
    writer_add(&wr, &ev);
    for (uint32_t i = 0; i < 30; i++) {
        ev = ev_of(GFL_EV_DEVICE_METRICS, 1100000 + i * 100000, 0);
        ev.u.dev = (gfl_device_metrics_payload){.valid = GFL_DEV_GPU_UTIL | GFL_DEV_MEM | GFL_DEV_TEMP | GFL_DEV_POWER,
                                                .gpu_util_pct = (uint8_t)(i * 3),
                                                .mem_used_bytes = (10ull + i) << 30,
                                                .mem_total_bytes = 141ull << 30,
                                                .temp_c = (int16_t)(40 + i),
                                                .power_mw = 100000 + i * 5000};
        writer_add(&wr, &ev);
    }
    writer_close(&wr, 4500000);
}

/* A large session: n kernels on 4 streams, 2 us each, back to back. */
static void write_big(const char *path, uint32_t n)
{
    writer wr;
    writer_open(&wr, path, "big");
    char name[32];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "kernel_%u", i % 50);
        gfl_event ev = kernel(2000000 + (uint64_t)(i / 4) * 2500, 2000, name, 1 + i % 4, i + 1);
        writer_add(&wr, &ev);
    }
    writer_close(&wr, 2000000 + (uint64_t)(n / 4) * 2500 + 1000000);
}

/* ---- reading the page back --------------------------------------------------------- */

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Whether buf[0..n) is valid UTF-8 (no overlongs, surrogates, or bytes past U+10FFFF). */
static bool valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80                 ? 1
                   : c >= 0xc2 && c <= 0xdf ? 2
                   : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4
                                            : 0;
        if (!k || i + k > n)
            return false;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
        if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0) || (c == 0xf0 && s[i + 1] < 0x90) ||
            (c == 0xf4 && s[i + 1] >= 0x90))
            return false;
        i += k;
    }
    return true;
}

/* The page's embedded data, parsed. */
static json_t *page_data(const char *page)
{
    const char *open_tag = "<script type=\"application/json\" id=\"gfl-data\">";
    const char *a = strstr(page, open_tag);
    assert_non_null(a);
    a += strlen(open_tag);
    const char *b = strstr(a, "</script>");
    assert_non_null(b);
    json_error_t e;
    json_t *d = json_loadb(a, (size_t)(b - a), 0, &e);
    if (!d)
        fail_msg("the page's data is not JSON: %s (line %d)", e.text, e.line);
    return d;
}

/* Slices of one kind in the data, merged ones counted by what they hold. */
/* The slices of a kind in the lanes of type `type` (NULL: every lane but
 * the critical path's, which repeats work of the stream lanes). */
static uint64_t slices_in(json_t *d, int kind, const char *type)
{
    json_t *nk = json_object_get(d, "nk"), *lanes = json_object_get(d, "lanes"), *lane, *row;
    size_t i, j;
    uint64_t sum = 0;
    json_array_foreach(lanes, i, lane)
    {
        const char *t = json_string_value(json_object_get(lane, "t"));
        if (type ? !t || strcmp(t, type) != 0 : t && !strcmp(t, "critpath"))
            continue;
        json_array_foreach(json_object_get(lane, "rows"), j, row)
        {
            json_t *n = json_object_get(row, "n"), *c = json_object_get(row, "c");
            for (size_t k = 0; k < json_array_size(n); k++)
                if (json_integer_value(json_array_get(nk, (size_t)json_integer_value(json_array_get(n, k)))) == kind)
                    sum += c ? (uint64_t)json_integer_value(json_array_get(c, k)) : 1;
        }
    }
    return sum;
}

static uint64_t slices_of_kind(json_t *d, int kind) { return slices_in(d, kind, NULL); }

static uint64_t data_count(json_t *d, const char *what)
{
    return (uint64_t)json_integer_value(json_object_get(json_object_get(d, "counts"), what));
}

/* text with &, < and > escaped, as a browser's DOM serializer writes text. */
static void dom_escape(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (; *s && o + 6 < len; s++) {
        const char *r = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : NULL;
        if (r) {
            memcpy(out + o, r, strlen(r));
            o += strlen(r);
        } else {
            out[o++] = *s;
        }
    }
    out[o] = 0;
}

/* Writes the report of the trace at trace_path to <outdir>/<name>.html and
 * what the browser test expects of it to <name>.expect.json; returns the
 * page (malloc'd) and the trace's kernels. */
static char *render(const char *trace_path, const char *name, size_t *len, size_t *kernels, const char *evil_id)
{
    /* temporaries a crashed earlier run left (a crash may leave one) */
    char tmpname[512];
    snprintf(tmpname, sizeof tmpname, "%s.html.tmp.", name);
    DIR *dir = opendir(outdir);
    assert_non_null(dir);
    for (struct dirent *e; (e = readdir(dir));)
        if (strncmp(e->d_name, tmpname, strlen(tmpname)) == 0) {
            char stale[4400];
            snprintf(stale, sizeof stale, "%s/%s", outdir, e->d_name);
            unlink(stale);
        }
    closedir(dir);

    gpufl_trace *t = tu_trace_open(trace_path);
    gpufl__ana_report r;
    assert_int_equal(gpufl__analyze_report(t, NULL, &r), 0);
    char path[4400], expect[4400], err[1024];
    snprintf(path, sizeof path, "%s/%s.html", outdir, name);
    snprintf(expect, sizeof expect, "%s/%s.expect.json", outdir, name);
    int rc = gpufl__report_html(t, &r, path, err, sizeof err);
    if (rc != 0)
        fail_msg("report: %s", err);

    /* nothing but the page is left beside it */
    dir = opendir(outdir);
    assert_non_null(dir);
    for (struct dirent *e; (e = readdir(dir));)
        if (strncmp(e->d_name, tmpname, strlen(tmpname)) == 0)
            fail_msg("a temporary is left: %s/%s", outdir, e->d_name);
    closedir(dir);

    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    *kernels = k->n;
    json_t *x =
        json_pack("{s:I,s:I,s:I,s:I,s:I}", "kernels", (json_int_t)k->n, "copies",
                  (json_int_t)gpufl_trace_get_copies(t)->n, "memsets", (json_int_t)gpufl_trace_get_memsets(t)->n,
                  "scopes", (json_int_t)gpufl_trace_get_scopes(t)->n, "nvtx", (json_int_t)gpufl_trace_get_nvtx(t)->n);
    if (r.hotspots.n) {
        char esc[8192];
        dom_escape(gpufl_trace_string(t, r.hotspots.kernels[0].name), esc, sizeof esc);
        json_object_set_new(x, "top_kernel_dom", json_string(esc));
    }
    json_object_set_new(x, "series", json_integer(gpufl_trace_get_device_samples(t)->n ? 1 : 0));
    gpufl__ana_pm pm = {0};
    assert_int_equal(gpufl__analyze_pm(t, &pm), 0);
    json_object_set_new(x, "pm", json_integer(pm.n)); /* series (device, metric) the page must chart */
    gpufl__ana_pm_free(&pm);
    json_object_set_new(x, "windows", json_integer((json_int_t)gpufl_trace_get_trace_windows(t)->n));
    json_object_set_new(x, "triggers", json_integer((json_int_t)gpufl_trace_get_triggers(t)->n));
    json_object_set_new(x, "incident", json_boolean(r.flight.incident != GPUFL__ANA_INCIDENT_NONE));
    if (evil_id)
        json_object_set_new(x, "evil_id", json_string(evil_id));
    assert_int_equal(json_dump_file(x, expect, JSON_SORT_KEYS), 0);
    json_decref(x);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
    char *page = tu_read_file(path, len);
    assert_non_null(page);
    return page;
}

/* ---- tests --------------------------------------------------------------------------- */

static void hand_made_session_is_escaped_and_complete(void **state)
{
    (void)state;
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/hand.gflt", tmp);
    write_hand(trace);
    size_t len, kernels;
    char *page = render(trace, "hand", &len, &kernels, "gfl-pwned");
    assert_int_equal(kernels, 40);

    /* valid UTF-8 though a scope name is not */
    assert_true(valid_utf8((const unsigned char *)page, len));
    /* no string of the trace opens or closes an element */
    assert_null(strstr(page, "<img id=gfl-pwned"));
    assert_null(strstr(page, "<script>alert"));
    assert_null(strstr(page, "<b>&"));
    assert_int_equal(count_of(page, "</script>"), 2); /* the data's and the script's */
    assert_int_equal(count_of(page, "<!--"), 0);
    /* the names are there, escaped, in the tables and the data */
    assert_non_null(strstr(page, "<td class=kname>" GEMM_HTML "</td>"));
    assert_non_null(strstr(page, "evil&lt;/script&gt;&lt;img id=gfl-pwned"));
    assert_non_null(strstr(page, "loss\xef\xbf\xbd\xef\xbf\xbd&lt;b&gt;&amp;&quot;&#39;"));
    assert_non_null(strstr(page, "\"void gemm\\u003cfloat, 128\\u003e(Foo\\u0026, Bar\\u003cint\\u003e*)\""));
    assert_non_null(strstr(page, "trainer&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    /* no fetch of anything: the policy forbids it, and nothing refers out */
    assert_non_null(strstr(page, "default-src 'none'"));
    assert_null(strstr(page, "src=\"http"));
    assert_null(strstr(page, "href=\"http"));
    assert_null(strstr(page, "url("));
    assert_null(strstr(page, "@import"));
    /* the tables need no script */
    assert_non_null(strstr(page, "<section id=hotspots>"));
    assert_non_null(strstr(page, "<section id=scopes>"));
    assert_non_null(strstr(page, "<section id=idle>"));
    assert_non_null(strstr(page, "<section id=copies>"));
    assert_null(strstr(page, "<section id=ops>")); /* no op ranges */
    assert_null(strstr(page, "href=\"#ops\""));
    assert_null(strstr(page, "<section id=incident>")); /* no flight recorder events */
    assert_null(strstr(page, "<section id=triggers>"));
    assert_null(strstr(page, "<section id=windows>"));

    json_t *d = page_data(page);
    assert_int_equal(data_count(d, "kernels"), 40);
    assert_int_equal(json_integer_value(json_object_get(d, "q")), 0); /* small: nothing merged */
    assert_int_equal(slices_of_kind(d, 0), 40);
    assert_int_equal(slices_of_kind(d, 1), 1); /* copy */
    assert_int_equal(slices_of_kind(d, 2), 1); /* memset */
    assert_int_equal(slices_of_kind(d, 3), 2); /* scopes */
    assert_int_equal(slices_of_kind(d, 4), 1); /* NVTX range */
    assert_int_equal(slices_of_kind(d, 5), 1); /* NVTX mark */
    assert_int_equal(slices_of_kind(d, 6), 1); /* sync */
    /* lanes: streams 7 and 8, then thread 7 (scopes, syncs) and thread 9 (NVTX) */
    json_t *lanes = json_object_get(d, "lanes");
    assert_int_equal(json_array_size(lanes), 5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(lanes, 0), "l")), "stream 7");
    assert_string_equal(json_string_value(json_object_get(json_array_get(lanes, 0), "g")),
                        "GPU 0 \xc2\xb7 NVIDIA H200");
    assert_string_equal(json_string_value(json_object_get(json_array_get(lanes, 2), "t")), "scopes");
    /* nested scopes: one row per depth */
    assert_int_equal(json_array_size(json_object_get(json_array_get(lanes, 2), "rows")), 2);
    json_t *series = json_object_get(d, "series");
    assert_int_equal(json_array_size(series), 1);
    assert_int_equal(json_array_size(json_object_get(json_array_get(series, 0), "util")), 30);
    /* no PM samples: no PM data, table or link */
    assert_null(json_object_get(d, "pm"));
    assert_null(strstr(page, "<section id=pm>"));
    assert_null(strstr(page, "href=\"#pm\""));
    json_decref(d);
    free(page);
}

static void big_session_is_merged_and_bounded(void **state)
{
    (void)state;
    const uint32_t n = 400000;
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/big.gflt", tmp);
    write_big(trace, n);
    size_t len, kernels;
    char *page = render(trace, "big", &len, &kernels, NULL);
    assert_int_equal(kernels, n);
    json_t *d = page_data(page);
    assert_true(json_integer_value(json_object_get(d, "q")) > 0);
    json_int_t kept = json_integer_value(json_object_get(d, "kept"));
    assert_true(kept > 0 && kept <= 2 * (json_int_t)GPUFL__HTML_SLICE_BUDGET);
    assert_true(kept < (json_int_t)n);
    /* merged marks still account for every kernel */
    assert_int_equal(slices_of_kind(d, 0), n);
    assert_int_equal(data_count(d, "kernels"), n);
    /* about 15 bytes per kept mark, plus the page */
    assert_true(len < 40u * (size_t)GPUFL__HTML_SLICE_BUDGET);
    printf("big session: %u kernels, %lld marks kept, page %zu bytes\n", n, (long long)kept, len);
    json_decref(d);
    free(page);
}

static void real_sample_session(void **state)
{
    (void)state;
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/samples/train_sample/trace.gflt", GFL_SOURCE_DIR);
    size_t len, kernels;
    char *page = render(trace, "sample", &len, &kernels, NULL);
    assert_true(kernels > 0);
    assert_true(valid_utf8((const unsigned char *)page, len));
    assert_int_equal(count_of(page, "</script>"), 2);
    json_t *d = page_data(page);
    assert_int_equal(data_count(d, "kernels"), kernels);
    assert_int_equal(slices_of_kind(d, 0), kernels);
    assert_true(json_array_size(json_object_get(d, "series")) >= 1);
    /* the critical path of the median step: its own lane, first, and a section */
    json_t *first = json_array_get(json_object_get(d, "lanes"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "t")), "critpath");
    assert_string_equal(json_string_value(json_object_get(first, "g")), "critical path");
    uint64_t on_path = slices_in(d, 0, "critpath");
    assert_true(on_path > 0 && on_path < kernels);
    assert_int_equal(count_of(page, "<section id=critpath>"), 1);
    printf("train_sample: %zu kernels, page %zu bytes\n", kernels, len);
    json_decref(d);
    free(page);
}

/* PyTorch's ops: a table by op and one by module, and the op of each hot
 * kernel (ops_fixture.h). */
static void torch_ops_session(void **state)
{
    (void)state;
    af f = {0};
    of_torch_session(&f);
    gpufl_trace *t = af_open(&f, tmp, "torch");
    gpufl_trace_close(t);
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/torch", tmp);
    size_t len, kernels;
    char *page = render(trace, "torch", &len, &kernels, NULL);
    assert_int_equal(kernels, 8);
    assert_non_null(strstr(page, "<a href=\"#ops\">ops</a>"));
    const char *sec = strstr(page, "<section id=ops><h2>PyTorch ops</h2>");
    assert_non_null(sec);
    assert_non_null(strstr(sec, "<tr><td class=kname>aten::addmm</td><td class=n data-v=\"1\">1</td>"
                                "<td class=n data-v=\"1\">1</td><td class=n data-v=\"3\">3</td>"
                                "<td class=n data-v=\"5000\">"));
    assert_non_null(strstr(sec, "evaluate_function: AddmmBackward0 (backward only)</td>"));
    assert_non_null(strstr(sec, "<tr class=dev><td class=tname>Net.fc</td>"));
    assert_non_null(strstr(sec, "<tr class=dev><td class=tname>(no module)</td>"));
    /* the hot kernels name their op, a backward kernel its forward op */
    const char *bwd = strstr(page, "<td class=kname>gemm_bwd</td>");
    assert_non_null(bwd);
    assert_true(strstr(bwd, "<td class=where>aten::addmm in Net.fc 100%") < strstr(bwd, "</tr>"));
    free(page);
}

/* The flight recorder's events (flight_fixture.h): the OOM block first,
 * tables of the triggers and the trace windows with the text and JSON
 * reports' figures, and the "gpufl" lanes in the page's data. */
static void flight_session(void **state)
{
    (void)state;
    char trace[4096];
    ff_write(tmp, "flight", trace);
    size_t len, kernels;
    char *page = render(trace, "flight", &len, &kernels, NULL);
    assert_int_equal(kernels, 2);
    /* the OOM block, above the timeline */
    const char *inc = strstr(page, "<section id=incident><h2>Last events before the OOM</h2>");
    assert_non_null(inc);
    assert_true(inc < strstr(page, "<section id=\"timeline\">"));
    assert_non_null(strstr(page, "<a href=\"#incident\">OOM</a>"));
    assert_non_null(strstr(inc, "Out of memory at 5.00 ms into the session on thread 7, GPU 0"));
    assert_non_null(
        strstr(inc, "<p id=incident-failed class=warn>Failed allocation: 4.00 GiB asked for at 5.00 ms.</p>"));
    /* live then: 8 MiB and 2 MiB (the 1 MiB was freed) */
    assert_non_null(strstr(inc, "<span data-v=\"2\">2</span> allocations, <span data-v=\"10485760\">"));
    const char *largest = strstr(inc, "<table class=sortable id=incident-largest>");
    assert_non_null(largest);
    assert_non_null(strstr(largest, "<tr><td class=n data-v=\"8388608\">8.00 MiB</td><td>0x7f0000000000</td>"
                                    "<td class=n data-v=\"600000\">"));
    assert_non_null(strstr(inc, "<tr class=warn><td class=n data-v=\"5000000\">5.00 ms</td><td>FAILED alloc</td>"));
    /* triggers: time since the start, kind, detail, outcome, dump */
    const char *trg = strstr(page, "<section id=triggers><h2>Triggers</h2>");
    assert_non_null(trg);
    assert_non_null(strstr(trg, "<tr><td class=n data-v=\"5000000\">5.00 ms</td><td>oom</td>"
                                "<td>cudaMalloc of 4.0 GiB failed</td><td>dumped</td><td>dumps/dump-0001</td>"
                                "<td class=n data-v=\"7\">7</td></tr>"));
    assert_non_null(strstr(trg, "<tr><td class=n data-v=\"7000000\">7.00 ms</td><td>dump</td><td>gpufl_dump</td>"
                                "<td>storm</td><td></td><td></td></tr>"));
    /* windows: 2-4 ms and 7 ms to the session's end (11 ms), 6 of 10 ms */
    const char *win = strstr(page, "<section id=windows><h2>Trace windows</h2>");
    assert_non_null(win);
    assert_non_null(strstr(win, "2 windows, <span data-v=\"6000000\">6.00 ms</span> of <span "
                                "data-v=\"10000000\">10.00 ms</span> (60.0 %)"));
    assert_non_null(strstr(win, "<tr><td class=n data-v=\"1\">1</td><td class=n data-v=\"1000000\">1.00 ms</td>"
                                "<td class=n data-v=\"3000000\">3.00 ms</td><td class=n data-v=\"2000000\">2.00 ms</td>"
                                "<td>steps</td><td>steps 100-101 of `step`</td></tr>"));
    assert_non_null(strstr(win,
                           "<tr><td class=n data-v=\"2\">2</td><td class=n data-v=\"6000000\">6.00 ms</td>"
                           "<td class=n data-v=\"10000000\">10.00 ms</td><td class=n data-v=\"4000000\">4.00 ms</td>"
                           "<td>trigger</td><td>unended: still open at the session's end</td></tr>"));

    /* the page's data: the "gpufl" lanes first, windows (kind 7) and triggers (8) */
    json_t *d = page_data(page);
    json_t *fl = json_object_get(d, "flight");
    assert_int_equal(json_integer_value(json_object_get(fl, "windows")), 2);
    assert_int_equal(json_integer_value(json_object_get(fl, "triggers")), 2);
    assert_int_equal(slices_of_kind(d, 7), 2);
    assert_int_equal(slices_of_kind(d, 8), 2);
    json_t *lanes = json_object_get(d, "lanes");
    json_t *w = json_array_get(lanes, 0), *g = json_array_get(lanes, 1);
    assert_string_equal(json_string_value(json_object_get(w, "g")), "gpufl");
    assert_string_equal(json_string_value(json_object_get(w, "t")), "windows");
    assert_string_equal(json_string_value(json_object_get(g, "t")), "triggers");
    /* window starts and lengths, from the session's start */
    json_t *row = json_array_get(json_object_get(w, "rows"), 0);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(row, "s"), 0)), 1000000);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(row, "d"), 0)), 2000000);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(row, "s"), 1)), 5000000);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(row, "d"), 1)), 4000000);
    row = json_array_get(json_object_get(g, "rows"), 0);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(row, "s"), 0)), 5000000);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(row, "s"), 1)), 2000000);
    json_decref(d);
    free(page);
}

/* PM sampling: a series per device and metric in the page's data, each
 * point the mean of its run of samples weighted by their lengths, and a
 * table of the metrics. */
#define PM_SM "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
#define PM_DRAM "dram__bytes_read.sum.per_second"
#define US 1000ull

static void pm_session(void **state)
{
    (void)state;
    af f = {.end_ns = AF_START + 400000 * US};
    af_device(&f, 0, "NVIDIA H100", 80ull << 30);
    for (uint64_t i = 0; i < 20; i++) /* work all along, for the browser test's zoom */
        af_kernel(&f, (af_k){.start = AF_START + (1000 + 20000 * i) * US,
                             .end = AF_START + (3000 + 20000 * i) * US,
                             .name = "k",
                             .tid = 7});
    /* 10000 samples back to back: runs of three of 10, 10 and 40 us at 30,
     * 30 and 90 %, so each point of three is 70 (the plain mean would be 50) */
    const uint32_t n = 10000;
    uint64_t at = AF_START + 1000 * US;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t len = i % 3 == 2 ? 40 * US : 10 * US;
        af_pm(&f, 0, PM_SM, at, at + len, i % 3 == 2 ? 90.0 : 30.0);
        at += len;
    }
    for (uint32_t i = 0; i < 5; i++)
        af_pm(&f, 0, PM_DRAM, AF_START + (1000 + 100 * i) * US, AF_START + (1100 + 100 * i) * US, 1e9 * (i + 1));
    af_pm(&f, 1, PM_SM, AF_START + 2000 * US, AF_START + 2100 * US, 12.5);
    gpufl_trace_close(af_open(&f, tmp, "pm"));
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/pm", tmp);
    size_t len, kernels;
    char *page = render(trace, "pm", &len, &kernels, NULL);
    assert_int_equal(kernels, 20);
    assert_non_null(strstr(page, "<a href=\"#pm\">PM sampling</a>"));
    const char *sec = strstr(page, "<section id=pm><h2>PM sampling</h2>");
    assert_non_null(sec);
    /* mean (30 * 20 + 90 * 40) / 60 = 70 over every run but the last sample's 30: 69.9985 */
    assert_non_null(strstr(sec, "<tr><td class=n data-v=\"0\">0</td><td>" PM_SM "</td>"
                                "<td class=n data-v=\"10000\">10000</td>"));
    assert_non_null(strstr(sec, "<td>" PM_DRAM "</td><td class=n data-v=\"5\">5</td><td class=n "
                                "data-v=\"500000\">500.00 us</td><td class=n data-v=\"3000000000.0000\">3 GB/s</td>"
                                "<td class=n data-v=\"5000000000.0000\">5 GB/s</td>"));

    json_t *d = page_data(page);
    json_t *pm = json_object_get(d, "pm");
    assert_int_equal(json_array_size(pm), 3);
    json_t *sm = json_array_get(pm, 0), *dram = json_array_get(pm, 1), *sm1 = json_array_get(pm, 2);
    assert_string_equal(json_string_value(json_object_get(sm, "metric")), PM_SM);
    assert_string_equal(json_string_value(json_object_get(sm, "unit")), "pct");
    assert_string_equal(json_string_value(json_object_get(sm, "label")), "GPU 0 \xc2\xb7 NVIDIA H100");
    assert_int_equal(json_integer_value(json_object_get(sm, "samples")), n);
    /* 10000 samples in at most 4000 points: runs of 3, 3334 points */
    assert_int_equal(json_integer_value(json_object_get(sm, "per")), 3);
    json_t *t = json_object_get(sm, "t"), *v = json_object_get(sm, "v");
    assert_int_equal(json_array_size(t), 3334);
    assert_int_equal(json_array_size(v), 3334);
    for (size_t i = 0; i < 3333; i++) {
        double x = json_number_value(json_array_get(v, i));
        if (x < 69.9999 || x > 70.0001)
            fail_msg("point %zu is %g, not the weighted mean 70", i, x);
        /* each run starts 60 us after the last, from 1 ms into the session */
        assert_int_equal(json_integer_value(json_array_get(t, i)), (json_int_t)(1000 * US + 60 * US * i));
    }
    assert_true(fabs(json_number_value(json_array_get(v, 3333)) - 30.0) < 1e-9); /* the last sample alone */
    assert_true(fabs(json_number_value(json_object_get(sm, "max")) - 90.0) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(dram, "unit")), "bytes_per_second");
    assert_int_equal(json_integer_value(json_object_get(dram, "per")), 1);
    assert_int_equal(json_array_size(json_object_get(dram, "v")), 5);
    assert_true(fabs(json_number_value(json_array_get(json_object_get(dram, "v"), 4)) - 5e9) < 1);
    assert_true(fabs(json_number_value(json_object_get(dram, "mean")) - 3e9) < 1);
    assert_int_equal(json_integer_value(json_object_get(sm1, "dev")), 1);
    assert_true(fabs(json_number_value(json_array_get(json_object_get(sm1, "v"), 0)) - 12.5) < 1e-9);
    json_decref(d);
    free(page);
}

static void unwritable_path_fails_cleanly(void **state)
{
    (void)state;
    char trace[4200], path[4200];
    snprintf(trace, sizeof trace, "%s/hand.gflt", tmp);
    write_hand(trace);
    gpufl_trace *t = tu_trace_open(trace);
    char err[1024];
    gpufl__ana_report r;
    assert_int_equal(gpufl__analyze_report(t, NULL, &r), 0);
    snprintf(path, sizeof path, "%s/no/such/dir/r.html", tmp);
    err[0] = 0;
    assert_true(gpufl__report_html(t, &r, path, err, sizeof err) < 0);
    assert_non_null(strstr(err, path));
    assert_int_equal(access(path, F_OK), -1);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_made_session_is_escaped_and_complete),
        cmocka_unit_test(big_session_is_merged_and_bounded),
        cmocka_unit_test(real_sample_session),
        cmocka_unit_test(torch_ops_session),
        cmocka_unit_test(flight_session),
        cmocka_unit_test(pm_session),
        cmocka_unit_test(unwritable_path_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
