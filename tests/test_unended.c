/*
 * Scopes a program died inside: every output gives them the same end, the
 * session's last recorded time, and says they never ended.
 *
 * Why: this is the case a flight recorder exists for. A child records a
 * few closed scopes, opens two nested ones, waits until its own session
 * reads back with them and with host samples taken after them, and kills
 * itself with SIGKILL (no handler, no destructor, no final summary). The
 * parent then reads the session through the trace API and through every
 * command that shows scopes: `gpufl summary` (whose session.json holds
 * only the checkpoint taken at the start), `report` (text and JSON),
 * `view`, and `export` to Chrome JSON and CSV, and checks that each shows
 * both open scopes ending at the trace's last_ns, marked unended, and the
 * closed ones not marked. Once with NDJSON logs, once with both formats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "test_util.h"

#define CLOSED 3

TU_TEMP_DIR_FIXTURES(tmp, "unended")

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

/* Whether the session reads back with both open scopes and host samples
 * taken at least 20 ms after the inner one began. */
static bool recorded(const char *dir)
{
    gpufl_trace *t;
    char err[512];
    if (gpufl_trace_open(dir, &t, err, sizeof err) != 0)
        return false;
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(t);
    const gpufl_trace_host_samples *h = gpufl_trace_get_host_samples(t);
    bool ok = s->n == CLOSED + 2 && h->n && h->ts_ns[h->n - 1] > s->begin_ns[s->n - 1] + 20000000;
    gpufl_trace_close(t);
    return ok;
}

/* Never returns: it kills itself inside two scopes. */
static void child_main(const char *log_path, gpufl_log_format format)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(60);
    tu_setenv("GPUFL_SYNTHETIC", "kernels=40,copies=4,memsets=2,syncs=2,allocs=2,metrics=3,pace=1");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "unended";
    o.log_path = log_path;
    o.log_format = format;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    o.flush_logs_always = true; /* every event on disk as soon as the collector has it */
    o.system_sample_rate_ms = 5;
    o.continuous_system_sampling = true;
    if (!gpufl_init(&o))
        _exit(2);
    for (int i = 0; i < CLOSED; i++) {
        gpufl_scope s = gpufl_scope_begin("done");
        sleep_ms(2);
        gpufl_scope_end(s);
    }
    gpufl_scope outer = gpufl_scope_begin("crash.outer");
    gpufl_scope inner = gpufl_scope_begin("crash.inner");
    (void)outer;
    (void)inner;
    while (!recorded(gpufl_session_dir()))
        sleep_ms(10);
    raise(SIGKILL);
    _exit(3);
}

/* ---- the parent ----------------------------------------------------------- */

typedef struct open_scope {
    const char *name;
    uint64_t begin, end; /* end: the trace's last_ns */
} open_scope;

static open_scope want[2] = {{"crash.outer", 0, 0}, {"crash.inner", 0, 0}};
static uint64_t start_ns;

/* The trace: the open scopes end at last_ns, which no recorded time passes. */
static void check_trace(const char *dir)
{
    gpufl_trace *t;
    char err[512];
    assert_int_equal(gpufl_trace_open(dir, &t, err, sizeof err), 0);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_int_equal(info->end_ns, 0); /* killed */
    start_ns = info->start_ns;
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(t);
    const gpufl_trace_host_samples *h = gpufl_trace_get_host_samples(t);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    assert_int_equal(s->n, CLOSED + 2);
    assert_true(h->n > 0);
    uint64_t latest = h->ts_ns[h->n - 1];
    for (size_t i = 0; i < k->n; i++)
        if (gpufl_trace_kernel_end(k, i) > latest)
            latest = gpufl_trace_kernel_end(k, i);
    assert_true(info->last_ns >= latest);
    size_t open = 0;
    for (size_t i = 0; i < s->n; i++) {
        const char *name = gpufl_trace_string(t, s->name[i]);
        assert_true(s->begin_ns[i] <= info->last_ns && s->end_ns[i] <= info->last_ns);
        if (strcmp(name, "done") == 0) {
            assert_int_equal(s->unended[i], 0);
            continue;
        }
        assert_int_equal(s->unended[i], 1);
        assert_int_equal(s->end_ns[i], info->last_ns);
        open_scope *w = !strcmp(name, want[0].name) ? &want[0] : &want[1];
        assert_string_equal(name, w->name);
        w->begin = s->begin_ns[i];
        w->end = s->end_ns[i];
        open++;
    }
    assert_int_equal(open, 2);
    /* the samples taken after the inner scope began are inside it */
    assert_true(want[1].end > want[1].begin + 20000000);
    gpufl_trace_close(t);
}

/* The caller owns *out. An out-parameter rather than a returned local:
 * gcc 12 at -O2 mistakes the inlined local for a dangling pointer. */
static void run(const char *command, const char *const *args, char **out)
{
    char *err = NULL;
    *out = NULL;
    int rc = tu_run_subcommand(GFL_CLI, command, args, out, &err);
    if (rc != 0)
        fail_msg("gpufl %s exited %d: %s", command, rc, err ? err : "");
    free(err);
}

/* A string field that may be absent (NULL then). */
static const char *opt_str(json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }

static open_scope *open_named(const char *name)
{
    for (int k = 0; k < 2; k++)
        if (name && !strcmp(name, want[k].name))
            return &want[k];
    return NULL;
}

/* Whether a line of text holds both a and b. */
static bool line_has(const char *text, const char *a, const char *b)
{
    for (const char *l = text; *l;) {
        const char *eol = strchr(l, '\n');
        size_t n = eol ? (size_t)(eol - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), l);
        if (strstr(line, a) && strstr(line, b))
            return true;
        l += n + (eol != NULL);
    }
    return false;
}

/* session.json has only the first checkpoint; the summary comes from the
 * recorded events, with both open scopes timed to last_ns. */
static void check_summary(const char *dir)
{
    const char *text_args[] = {dir, NULL};
    char *text;
    run("summary", text_args, &text);
    assert_non_null(strstr(text, "did not end cleanly"));
    assert_true(line_has(text, "crash.outer", "(1 unended)"));
    assert_true(line_has(text, "crash.inner", "(1 unended)"));
    assert_false(line_has(text, "done", "unended"));
    free(text);
    const char *json_args[] = {dir, "--json", NULL};
    char *out;
    run("summary", json_args, &out);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    assert_non_null(doc);
    assert_string_equal(tu_str(doc, "figures_from"), "recorded events");
    assert_int_equal(tu_int(doc, "duration_ns"), (long long)(want[0].end - start_ns));
    assert_int_equal(tu_int(json_object_get(doc, "events"), "scope_begin"), CLOSED + 2);
    json_t *scopes = json_object_get(doc, "scopes");
    size_t seen = 0, i;
    json_t *row;
    json_array_foreach(scopes, i, row)
    {
        open_scope *w = open_named(tu_str(row, "name"));
        if (!w) {
            assert_null(json_object_get(row, "unended"));
            continue;
        }
        assert_int_equal(tu_int(row, "unended"), 1);
        assert_int_equal(tu_int(row, "total_ns"), (long long)(w->end - w->begin));
        seen++;
    }
    assert_int_equal(seen, 2);
    json_decref(doc);
    free(out);
}

static void check_report(const char *dir)
{
    const char *text_args[] = {dir, NULL};
    char *text;
    run("report", text_args, &text);
    assert_non_null(strstr(text, "1 unended"));
    free(text);
    const char *json_args[] = {dir, "--format", "json", NULL};
    char *out;
    run("report", json_args, &out);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    assert_non_null(doc);
    json_t *nodes = json_object_get(json_object_get(json_object_get(doc, "scopes"), "scopes"), "nodes");
    size_t seen = 0, i;
    json_t *nd;
    json_array_foreach(nodes, i, nd)
    {
        open_scope *w = open_named(tu_str(nd, "name"));
        assert_int_equal(tu_int(nd, "unended"), w ? 1 : 0);
        if (w) {
            assert_int_equal(tu_int(json_object_get(nd, "wall"), "max"), (long long)(w->end - w->begin));
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    json_decref(doc);
    free(out);
}

static void check_view(const char *dir)
{
    const char *args[] = {dir, "--width", "120", NULL};
    char *out;
    run("view", args, &out);
    assert_non_null(strstr(out, "crash.outer"));
    assert_non_null(strstr(out, "2 never ended (>"));
    free(out);
}

static void check_chrome(const char *dir, const char *tmp)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/trace.json", tmp);
    const char *args[] = {dir, "-f", "chrome", "-o", path, NULL};
    char *printed;
    run("export", args, &printed);
    free(printed);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    assert_non_null(doc);
    json_t *events = json_is_array(doc) ? doc : json_object_get(doc, "traceEvents");
    size_t seen = 0, i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *cat = opt_str(ev, "cat");
        if (!cat || strcmp(cat, "scope") != 0)
            continue;
        json_t *unended = json_object_get(json_object_get(ev, "args"), "unended");
        open_scope *w = open_named(opt_str(ev, "name"));
        if (!w) {
            assert_null(unended);
            continue;
        }
        assert_true(json_is_true(unended));
        /* µs with 3 decimals: the exact ns */
        double dur = json_number_value(json_object_get(ev, "dur"));
        assert_int_equal((long long)(dur * 1000.0 + 0.5), (long long)(w->end - w->begin));
        seen++;
    }
    assert_int_equal(seen, 2);
    json_decref(doc);
}

static void check_csv(const char *dir, const char *tmp)
{
    char out[4200], path[4300];
    snprintf(out, sizeof out, "%s/csv", tmp);
    const char *args[] = {dir, "-f", "csv", "-o", out, NULL};
    char *printed;
    run("export", args, &printed);
    free(printed);
    snprintf(path, sizeof path, "%s/scopes.csv", out);
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, ",unended\r\n"));
    for (int k = 0; k < 2; k++) {
        char row[256];
        snprintf(row, sizeof row, "%llu,%llu,%llu,", (unsigned long long)want[k].begin, (unsigned long long)want[k].end,
                 (unsigned long long)(want[k].end - want[k].begin));
        const char *at = strstr(text, row);
        assert_non_null(at);
        const char *eol = strstr(at, "\r\n");
        assert_true(eol && eol - at > 2 && !strncmp(eol - 2, ",1", 2));
    }
    free(text);
}

static void kill_inside_scopes(gpufl_log_format format)
{
    char log_path[4200];
    snprintf(log_path, sizeof log_path, "%s/logs", tmp);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_main(log_path, format);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    check_trace(dir);
    check_summary(dir);
    check_report(dir);
    check_view(dir);
    check_chrome(dir, tmp);
    check_csv(dir, tmp);
    free(dir);
}

static void test_ndjson(void **state)
{
    (void)state;
    kill_inside_scopes(GPUFL_LOG_NDJSON);
}

static void test_both_formats(void **state)
{
    (void)state;
    kill_inside_scopes(GPUFL_LOG_BOTH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ndjson, setup, teardown),
        cmocka_unit_test_setup_teardown(test_both_formats, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
