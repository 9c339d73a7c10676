/*
 * The public API used wrongly or at the wrong time. gpufl runs inside
 * programs it does not control, so every such call must have a defined,
 * harmless effect, and the logs must still pair up: shutdown without init,
 * double init, init after shutdown, ending scopes twice / out of order /
 * from an earlier session / with the 0 token, NULL and "" names, every way
 * of leaving a GFL_SCOPE block, scopes nested past GFL_SCOPE_MAX_DEPTH,
 * calls after shutdown, threads that exit inside scopes, and threads racing
 * init/shutdown cycles. Results are checked in the NDJSON logs.
 *
 * The library session is process-wide: every case shuts down at its end, and
 * the first case runs before any session existed in this process.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "test_util.h"

typedef struct fixture {
    char *tmp;
    char logs[512];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->tmp = tu_mkdtemp("misuse");
    snprintf(f->logs, sizeof f->logs, "%s/logs", f->tmp);
    tu_unsetenv("GPUFL_DISABLED");
    tu_unsetenv("GPUFL_CONFIG_FILE");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gpufl_shutdown();
    tu_rm_rf(f->tmp);
    free(f->tmp);
    free(f);
    return 0;
}

static void start_in(const char *log_path)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.log_path = log_path;
    if (!gpufl_init(&o))
        fail_msg("gpufl_init: %s", gpufl_last_error());
    assert_true(gpufl_is_recording());
}

static void start(void **state) { start_in(((fixture *)*state)->logs); }

/* Ends the session and loads its scope.log. */
static void stop_and_load_scopes(tu_ndjson *out)
{
    gpufl_shutdown();
    assert_false(gpufl_is_recording());
    assert_int_equal(tu_ndjson_load_channel(gpufl_session_dir(), "scope", out), 0);
    assert_int_equal(out->tail_bytes, 0);
}

static const char *str_field(json_t *line, const char *key)
{
    const char *s = json_string_value(json_object_get(line, key));
    assert_non_null(s);
    return s;
}

static long long int_field(json_t *line, const char *key)
{
    json_t *v = json_object_get(line, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static bool is_implicit(json_t *line) { return json_is_true(json_object_get(line, "implicit")); }

/* scope_begin and scope_end lines (each log also has session_start/_end). */
static bool is_scope_line(json_t *line) { return !strncmp(str_field(line, "type"), "scope_", 6); }

static size_t scope_lines(const tu_ndjson *f)
{
    return tu_count_type(f, "scope_begin") + tu_count_type(f, "scope_end");
}

static json_t *last_scope_line(const tu_ndjson *f)
{
    for (size_t i = f->n; i-- > 0;)
        if (is_scope_line(f->lines[i]))
            return f->lines[i];
    fail_msg("no scope lines");
    return NULL;
}

/* Lines of `type` whose name is `name`. */
static size_t count_named(const tu_ndjson *f, const char *type, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        n += !strcmp(str_field(f->lines[i], "type"), type) &&
             !strcmp(json_string_value(json_object_get(f->lines[i], "name")) ?: "", name);
    return n;
}

/* The name was opened once and closed once, explicitly. */
static void assert_one_pair(const tu_ndjson *f, const char *name)
{
    if (count_named(f, "scope_begin", name) != 1 || count_named(f, "scope_end", name) != 1)
        fail_msg("scope \"%s\": %zu begin and %zu end lines, expected one each", name,
                 count_named(f, "scope_begin", name), count_named(f, "scope_end", name));
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(str_field(f->lines[i], "type"), "scope_end") && !strcmp(str_field(f->lines[i], "name"), name) &&
            is_implicit(f->lines[i]))
            fail_msg("scope \"%s\" was ended implicitly", name);
}

/* Every scope_end has a scope_begin with the same id, name and depth. */
static void assert_ends_match_begins(const tu_ndjson *f)
{
    for (size_t i = 0; i < f->n; i++) {
        json_t *e = f->lines[i];
        if (strcmp(str_field(e, "type"), "scope_end") != 0)
            continue;
        bool found = false;
        for (size_t j = 0; j < i && !found; j++) {
            json_t *b = f->lines[j];
            found = !strcmp(str_field(b, "type"), "scope_begin") && int_field(b, "id") == int_field(e, "id") &&
                    !strcmp(str_field(b, "name"), str_field(e, "name")) &&
                    int_field(b, "depth") == int_field(e, "depth");
        }
        if (!found)
            fail_msg("scope_end of \"%s\" (id %lld) has no matching scope_begin before it", str_field(e, "name"),
                     int_field(e, "id"));
    }
}

/* Entries of a directory, "." and ".." aside. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* ---- lifecycle ------------------------------------------------------------ */

/* First in the file: no session has existed in this process yet. */
static void test_shutdown_without_init(void **state)
{
    (void)state;
    gpufl_shutdown();
    gpufl_shutdown();
    assert_false(gpufl_is_recording());
    assert_string_equal(gpufl_session_dir(), "");
    assert_int_equal(gpufl_generate_report(NULL), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "no session"));
    assert_int_equal(gpufl_scope_begin("nothing"), 0);
}

static void test_double_init(void **state)
{
    fixture *f = *state;
    start(state);
    char *first = strdup(gpufl_session_dir());
    assert_true(first[0] != '\0');

    /* Different options: ignored, the first session goes on. */
    char other[600];
    snprintf(other, sizeof other, "%s/other", f->tmp);
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.log_path = other;
    o.app_name = "second";
    assert_true(gpufl_init(&o));
    assert_true(gpufl_init(NULL));
    assert_true(gpufl_is_recording());
    assert_string_equal(gpufl_session_dir(), first);
    assert_false(tu_exists(other));
    assert_int_equal(count_entries(f->logs), 1);

    gpufl_scope s = gpufl_scope_begin("after-double-init");
    gpufl_scope_end(s);
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_string_equal(gpufl_session_dir(), first);
    assert_one_pair(&scopes, "after-double-init");
    tu_ndjson_free(&scopes);
    /* One shutdown ended it; another does nothing. */
    gpufl_shutdown();
    free(first);
}

static void test_init_after_shutdown(void **state)
{
    fixture *f = *state;
    start(state);
    gpufl_scope s = gpufl_scope_begin("first-session");
    gpufl_scope_end(s);
    gpufl_shutdown();
    char *first = strdup(gpufl_session_dir());

    start(state);
    assert_string_not_equal(gpufl_session_dir(), first);
    s = gpufl_scope_begin("second-session");
    gpufl_scope_end(s);
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_int_equal(count_entries(f->logs), 2);
    assert_one_pair(&scopes, "second-session");
    assert_int_equal(count_named(&scopes, "scope_begin", "first-session"), 0);
    tu_ndjson_free(&scopes);

    assert_int_equal(tu_ndjson_load_channel(first, "scope", &scopes), 0);
    assert_one_pair(&scopes, "first-session");
    assert_int_equal(count_named(&scopes, "scope_begin", "second-session"), 0);
    tu_ndjson_free(&scopes);
    free(first);
}

/* ---- scope tokens ------------------------------------------------------------ */

static void test_end_twice(void **state)
{
    start(state);
    gpufl_scope s = gpufl_scope_begin("twice");
    assert_true(s != 0);
    gpufl_scope_end(s);
    gpufl_scope_end(s);
    /* The stack is still sound: a new scope sits at depth 0. */
    gpufl_scope_end(gpufl_scope_begin("after"));
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_one_pair(&scopes, "twice");
    assert_int_equal(tu_count_type(&scopes, "scope_end"), 2);
    assert_int_equal(int_field(tu_nth_type(&scopes, "scope_begin", 1), "depth"), 0);
    tu_ndjson_free(&scopes);
}

static void test_token_from_earlier_session(void **state)
{
    start(state);
    gpufl_scope old = gpufl_scope_begin("old-session");
    assert_true(old != 0);
    gpufl_shutdown(); /* with "old-session" still open */

    start(state);
    gpufl_scope_end(old); /* nothing open yet: ignored */
    gpufl_scope cur = gpufl_scope_begin("new-session");
    assert_true(cur != 0 && cur != old);
    gpufl_scope_end(old); /* must not close "new-session" */
    gpufl_scope_end(cur);
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_int_equal(scope_lines(&scopes), 2);
    assert_one_pair(&scopes, "new-session");
    json_t *b = tu_nth_type(&scopes, "scope_begin", 0);
    assert_int_equal(int_field(b, "depth"), 0); /* the old stack did not carry over */
    assert_int_equal(int_field(b, "parent"), 0);
    assert_int_equal(int_field(tu_nth_type(&scopes, "scope_end", 0), "id"), (long long)cur);
    tu_ndjson_free(&scopes);
}

static void test_outer_end_closes_inner(void **state)
{
    start(state);
    gpufl_scope a = gpufl_scope_begin("outer");
    gpufl_scope b = gpufl_scope_begin("middle");
    gpufl_scope c = gpufl_scope_begin("inner");
    gpufl_scope_end(a);
    /* Tokens whose parent already ended: ignored. */
    gpufl_scope_end(c);
    gpufl_scope_end(b);

    /* Ending a middle scope closes what is inside it and nothing outside. */
    gpufl_scope x = gpufl_scope_begin("x-outer");
    gpufl_scope y = gpufl_scope_begin("y-middle");
    gpufl_scope_begin("z-inner");
    gpufl_scope_end(y);
    gpufl_scope_end(x);

    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_int_equal(tu_count_type(&scopes, "scope_end"), 6);
    static const struct {
        const char *name;
        int depth;
        bool implicit;
    } want[] = {
        {"inner", 2, true},   {"middle", 1, true},    {"outer", 0, false},
        {"z-inner", 2, true}, {"y-middle", 1, false}, {"x-outer", 0, false},
    };
    for (size_t i = 0; i < 6; i++) {
        json_t *e = tu_nth_type(&scopes, "scope_end", i);
        assert_string_equal(str_field(e, "name"), want[i].name);
        assert_int_equal(int_field(e, "depth"), want[i].depth);
        if (is_implicit(e) != want[i].implicit)
            fail_msg("scope_end of %s: implicit is %d", want[i].name, is_implicit(e));
    }
    json_t *inner = tu_nth_type(&scopes, "scope_end", 0);
    json_t *middle = tu_nth_type(&scopes, "scope_end", 1);
    json_t *outer = tu_nth_type(&scopes, "scope_end", 2);
    assert_int_equal(int_field(inner, "id"), (long long)c);
    assert_int_equal(int_field(inner, "parent"), (long long)b);
    assert_int_equal(int_field(middle, "id"), (long long)b);
    assert_int_equal(int_field(middle, "parent"), (long long)a);
    assert_int_equal(int_field(outer, "id"), (long long)a);
    assert_int_equal(int_field(outer, "parent"), 0);
    /* One end time for the whole cascade, taken when the outer scope ended. */
    assert_int_equal(int_field(inner, "ts_ns"), int_field(outer, "ts_ns"));
    assert_ends_match_begins(&scopes);
    tu_ndjson_free(&scopes);
}

static void test_zero_and_foreign_tokens(void **state)
{
    start(state);
    gpufl_scope_end(0);
    gpufl_scope a = gpufl_scope_begin("kept-open");
    gpufl_scope_end(0);
    gpufl_scope_end(a + 1000);          /* never handed out */
    gpufl_scope_end(0xdeadbeefcafeull); /* garbage */
    gpufl_scope_end(a);
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_int_equal(scope_lines(&scopes), 2);
    assert_one_pair(&scopes, "kept-open");
    tu_ndjson_free(&scopes);
}

static void count_call(void *arg) { (*(int *)arg)++; }

static void test_null_and_empty_names(void **state)
{
    start(state);
    gpufl_scope_end(gpufl_scope_begin(NULL));
    gpufl_scope_end(gpufl_scope_begin(""));
    int n = 0;
    gpufl_monitor(NULL, count_call, &n);
    gpufl_monitor("", count_call, &n);
    assert_int_equal(n, 2);
    GFL_SCOPE("") { n++; }
    gpufl_system_start(NULL); /* "system" */
    gpufl_system_stop("");
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_int_equal(count_named(&scopes, "scope_begin", "(unnamed)"), 5);
    assert_int_equal(count_named(&scopes, "scope_end", "(unnamed)"), 5);
    assert_int_equal(tu_count_type(&scopes, "scope_begin"), 5);
    tu_ndjson_free(&scopes);

    tu_ndjson sys;
    assert_int_equal(tu_ndjson_load_channel(gpufl_session_dir(), "system", &sys), 0);
    assert_int_equal(count_named(&sys, "system_start", "system"), 1);
    assert_int_equal(count_named(&sys, "system_stop", "system"), 1);
    tu_ndjson_free(&sys);
}

/* ---- leaving GFL_SCOPE / GFL_SCOPED blocks ---------------------------------- */

static int scope_with_return(int *body)
{
    GFL_SCOPE("by-return")
    {
        (*body)++;
        return 7;
    }
    return 0;
}

static int scoped_with_return(int early)
{
    GFL_SCOPED("scoped-return");
    if (early)
        return 1;
    gpufl_scope_end(gpufl_scope_begin("scoped-return-child"));
    return 2;
}

static void test_gfl_scope_exits(void **state)
{
    start(state);
    int body = 0;
    GFL_SCOPE("by-break")
    {
        body++;
        break;
    }
    GFL_SCOPE("by-continue")
    {
        body++;
        continue;
    }
    assert_int_equal(scope_with_return(&body), 7);
    GFL_SCOPE("by-goto")
    {
        body++;
        goto out;
    }
    body += 100; /* skipped */
out:
    GFL_SCOPE("by-fallthrough") { body++; }
    assert_int_equal(body, 5);

    /* In C, break inside GFL_SCOPE leaves the scope block, not the loop
     * around it (documented in gpufl.h; the C++ macro differs). */
    int iterations = 0;
    for (int i = 0; i < 3; i++) {
        GFL_SCOPE("in-loop")
        {
            iterations++;
            break;
        }
    }
    assert_int_equal(iterations, 3);

    /* Nested blocks each end once, inner first. */
    GFL_SCOPE("nest-outer")
    {
        GFL_SCOPE("nest-inner") { break; }
    }
    gpufl_scope_end(gpufl_scope_begin("after-all"));

    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    static const char *const once[] = {"by-break",       "by-continue", "by-return",  "by-goto",
                                       "by-fallthrough", "nest-outer",  "nest-inner", "after-all"};
    for (size_t i = 0; i < sizeof once / sizeof once[0]; i++)
        assert_one_pair(&scopes, once[i]);
    assert_int_equal(count_named(&scopes, "scope_begin", "in-loop"), 3);
    assert_int_equal(count_named(&scopes, "scope_end", "in-loop"), 3);
    /* Nothing leaked onto the stack: the last scope is at depth 0. */
    json_t *last = last_scope_line(&scopes);
    assert_string_equal(str_field(last, "name"), "after-all");
    assert_int_equal(int_field(last, "depth"), 0);
    assert_ends_match_begins(&scopes);
    tu_ndjson_free(&scopes);
}

/* One call site of a literal name and one of a name in a buffer. */
static void site_scopes(const char *dynamic)
{
    GFL_SCOPE(dynamic)
    {
        GFL_SCOPE("site-literal") {}
    }
}

/* A literal name is looked up once per call site and its id kept (ids
 * outlive sessions, so a second session's scopes keep their names); a name
 * whose text changes between calls is looked up on every call; a cache
 * shared by two names gives the second the first's, as documented. */
static void test_scope_names_per_site(void **state)
{
    for (int session = 0; session < 2; session++) {
        start(state);
        char buf[32];
        for (int i = 0; i < 3; i++) {
            snprintf(buf, sizeof buf, "dyn-%d", i);
            site_scopes(buf);
        }
        static uint32_t shared;
        gpufl_scope_end(gpufl_scope_begin_cached("cached-a", &shared));
        gpufl_scope_end(gpufl_scope_begin_cached("cached-b", &shared));
        tu_ndjson scopes;
        stop_and_load_scopes(&scopes);
        for (int i = 0; i < 3; i++) {
            snprintf(buf, sizeof buf, "dyn-%d", i);
            assert_one_pair(&scopes, buf);
        }
        assert_int_equal(count_named(&scopes, "scope_begin", "site-literal"), 3);
        assert_int_equal(count_named(&scopes, "scope_end", "site-literal"), 3);
        assert_int_equal(count_named(&scopes, "scope_begin", "cached-a"), 2);
        assert_int_equal(count_named(&scopes, "scope_begin", "cached-b"), 0);
        assert_ends_match_begins(&scopes);
        tu_ndjson_free(&scopes);
    }
}

static void test_gfl_scoped(void **state)
{
    start(state);
    {
        GFL_SCOPED("scoped-block");
        gpufl_scope_end(gpufl_scope_begin("scoped-child"));
    }
    gpufl_scope_end(gpufl_scope_begin("after-block"));
    assert_int_equal(scoped_with_return(1), 1);
    assert_int_equal(scoped_with_return(0), 2);
    gpufl_scope_end(gpufl_scope_begin("after-returns"));

    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_one_pair(&scopes, "scoped-block");
    assert_one_pair(&scopes, "after-block");
    assert_one_pair(&scopes, "after-returns");
    assert_int_equal(count_named(&scopes, "scope_begin", "scoped-return"), 2);
    assert_int_equal(count_named(&scopes, "scope_end", "scoped-return"), 2);
    /* The children ran inside, the later scopes outside. */
    for (size_t i = 0; i < scopes.n; i++) {
        json_t *l = scopes.lines[i];
        if (!is_scope_line(l))
            continue;
        const char *name = str_field(l, "name");
        long long depth = int_field(l, "depth");
        if (!strcmp(name, "scoped-child") || !strcmp(name, "scoped-return-child"))
            assert_int_equal(depth, 1);
        else
            assert_int_equal(depth, 0);
        assert_false(is_implicit(l));
    }
    assert_ends_match_begins(&scopes);
    tu_ndjson_free(&scopes);
}

static void test_monitor_null_fn(void **state)
{
    start(state);
    gpufl_monitor("null-fn", NULL, NULL);
    int n = 0;
    gpufl_monitor("real-fn", count_call, &n);
    assert_int_equal(n, 1);
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_one_pair(&scopes, "null-fn");
    assert_one_pair(&scopes, "real-fn");
    tu_ndjson_free(&scopes);
}

/* ---- depth limit -------------------------------------------------------------- */

/* Sum of "count" over "dropped" lines of a reason, in every log. */
static long long dropped_for(const char *dir, const char *reason)
{
    static const char *const channels[] = {"device", "scope", "system"};
    long long sum = 0;
    for (size_t c = 0; c < 3; c++) {
        tu_ndjson f;
        assert_int_equal(tu_ndjson_load_channel(dir, channels[c], &f), 0);
        for (size_t i = 0; i < f.n; i++)
            if (!strcmp(str_field(f.lines[i], "type"), "dropped") && !strcmp(str_field(f.lines[i], "reason"), reason)) {
                assert_string_equal(str_field(f.lines[i], "channel"), "scope");
                sum += int_field(f.lines[i], "count");
            }
        tu_ndjson_free(&f);
    }
    return sum;
}

#define OVER 3

static void test_depth_limit(void **state)
{
    start(state);
    gpufl_scope tokens[GFL_SCOPE_MAX_DEPTH + OVER];
    for (int i = 0; i < GFL_SCOPE_MAX_DEPTH + OVER; i++) {
        char name[32];
        snprintf(name, sizeof name, "depth-%03d", i);
        tokens[i] = gpufl_scope_begin(name);
        if (i < GFL_SCOPE_MAX_DEPTH)
            assert_true(tokens[i] != 0);
        else
            assert_int_equal(tokens[i], 0);
    }
    for (int i = GFL_SCOPE_MAX_DEPTH + OVER; i-- > 0;)
        gpufl_scope_end(tokens[i]);
    /* The stack is whole again. */
    gpufl_scope_end(gpufl_scope_begin("after-deep"));

    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_int_equal(tu_count_type(&scopes, "scope_begin"), GFL_SCOPE_MAX_DEPTH + 1);
    assert_int_equal(tu_count_type(&scopes, "scope_end"), GFL_SCOPE_MAX_DEPTH + 1);
    for (int i = 0; i < GFL_SCOPE_MAX_DEPTH + OVER; i++) {
        char name[32];
        snprintf(name, sizeof name, "depth-%03d", i);
        if (i < GFL_SCOPE_MAX_DEPTH)
            assert_one_pair(&scopes, name);
        else
            assert_int_equal(count_named(&scopes, "scope_begin", name), 0);
    }
    assert_one_pair(&scopes, "after-deep");
    assert_int_equal(int_field(tu_nth_type(&scopes, "scope_begin", GFL_SCOPE_MAX_DEPTH - 1), "depth"),
                     GFL_SCOPE_MAX_DEPTH - 1);
    assert_ends_match_begins(&scopes);
    tu_ndjson_free(&scopes);
    /* Each refused scope is counted (its begin and its end). */
    assert_int_equal(dropped_for(gpufl_session_dir(), "scope_depth"), 2 * OVER);
}

/* ---- after shutdown -------------------------------------------------------------- */

static void test_calls_after_shutdown(void **state)
{
    fixture *f = *state;
    start(state);
    gpufl_scope_end(gpufl_scope_begin("before-shutdown"));
    gpufl_scope open = gpufl_scope_begin("open-at-shutdown");
    gpufl_system_start("win");
    gpufl_shutdown();

    const char *dir = gpufl_session_dir();
    char scope_log[4200], system_log[4200];
    snprintf(scope_log, sizeof scope_log, "%s/scope.log", dir);
    snprintf(system_log, sizeof system_log, "%s/system.log", dir);
    size_t scope_len, system_len;
    free(tu_read_file(scope_log, &scope_len));
    free(tu_read_file(system_log, &system_len));

    assert_int_equal(gpufl_scope_begin("late"), 0);
    gpufl_scope_end(open);
    gpufl_scope_end(0);
    gpufl_monitor("late-monitor", NULL, NULL);
    GFL_SCOPE("late-block") {}
    gpufl_system_stop("win");
    gpufl_system_start("late-win");
    gpufl_system_stop("late-win");
    assert_false(gpufl_is_recording());

    /* The report is that of the session just ended. */
    char report[600];
    snprintf(report, sizeof report, "%s/after.txt", f->tmp);
    assert_int_equal(gpufl_generate_report(report), 0);
    char *text = tu_read_file(report, NULL);
    assert_non_null(text);
    const char *id = strrchr(dir, '/') + 1;
    assert_non_null(strstr(text, id));
    assert_non_null(strstr(text, "before-shutdown"));
    free(text);
    assert_int_equal(gpufl_generate_report(NULL), 0);
    char summary[4200];
    snprintf(summary, sizeof summary, "%s/summary.txt", dir);
    assert_true(tu_exists(summary));

    /* Nothing more reached the logs. */
    size_t len;
    free(tu_read_file(scope_log, &len));
    assert_int_equal(len, scope_len);
    free(tu_read_file(system_log, &len));
    assert_int_equal(len, system_len);
    tu_ndjson scopes;
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &scopes), 0);
    assert_one_pair(&scopes, "before-shutdown");
    assert_int_equal(count_named(&scopes, "scope_begin", "late"), 0);
    tu_ndjson_free(&scopes);

    /* An unwritable report path is an error, not a crash. */
    snprintf(report, sizeof report, "%s/no/such/dir/r.txt", f->tmp);
    assert_int_equal(gpufl_generate_report(report), GPUFL_EIO);
    assert_non_null(strstr(gpufl_last_error(), "no/such/dir"));
}

/* ---- threads ---------------------------------------------------------------------- */

static void *leave_scopes_open(void *arg)
{
    *(long *)arg = syscall(SYS_gettid);
    gpufl_scope_begin("thread-outer");
    gpufl_scope_begin("thread-inner");
    return NULL; /* exits with both open */
}

static void test_thread_exit_with_open_scopes(void **state)
{
    start(state);
    long tid = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, leave_scopes_open, &tid), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    gpufl_scope_end(gpufl_scope_begin("main-thread"));
    tu_ndjson scopes;
    stop_and_load_scopes(&scopes);
    assert_one_pair(&scopes, "main-thread");
    assert_int_equal(count_named(&scopes, "scope_end", "thread-outer"), 1);
    assert_int_equal(count_named(&scopes, "scope_end", "thread-inner"), 1);
    size_t k = 0;
    static const char *const order[] = {"thread-inner", "thread-outer"};
    for (size_t i = 0; i < scopes.n; i++) {
        json_t *l = scopes.lines[i];
        if (strcmp(str_field(l, "type"), "scope_end") || int_field(l, "tid") != tid)
            continue;
        assert_true(k < 2);
        assert_string_equal(str_field(l, "name"), order[k]);
        assert_true(is_implicit(l));
        k++;
    }
    assert_int_equal(k, 2);
    assert_ends_match_begins(&scopes);
    tu_ndjson_free(&scopes);
}

#define HAMMER_THREADS 8
#define CYCLES 20

static atomic_bool hammer_stop;
static atomic_llong hammer_ops;

static void *hammer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    long n = 0;
    while (!atomic_load_explicit(&hammer_stop, memory_order_relaxed)) {
        gpufl_scope a = gpufl_scope_begin("h-outer");
        gpufl_scope b = gpufl_scope_begin(n % 3 ? "h-inner" : NULL);
        gpufl_system_start(n % 2 ? "h-window" : NULL);
        (void)gpufl_is_recording();
        if (n % 5 == 0)
            gpufl_scope_end(a); /* closes b implicitly */
        gpufl_scope_end(b);
        gpufl_scope_end(a);
        gpufl_system_stop(n % 2 ? "h-window" : NULL);
        if (n % 7 == 0)
            gpufl_system_stop("never-started");
        if (++n % 8 == 0) {
            /* keep the logs small: the point is the races, not the volume */
            struct timespec ts = {0, 20000 + (long)(rand_r(&seed) % 20000)};
            nanosleep(&ts, NULL);
        }
    }
    atomic_fetch_add(&hammer_ops, n);
    return NULL;
}

static void test_threads_race_init_shutdown(void **state)
{
    fixture *f = *state;
    atomic_store(&hammer_stop, false);
    atomic_store(&hammer_ops, 0);
    pthread_t threads[HAMMER_THREADS];
    for (uintptr_t i = 0; i < HAMMER_THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, hammer, (void *)(i + 1)), 0);
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        gpufl_options o;
        gpufl_options_init(&o);
        o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
        o.log_path = f->logs;
        o.ring_events = 256; /* small: overflow is part of the race */
        o.system_sample_rate_ms = cycle % 2 ? 5 : 0;
        assert_true(gpufl_init(&o));
        struct timespec ts = {0, 3000000};
        nanosleep(&ts, NULL);
        gpufl_shutdown();
    }
    atomic_store(&hammer_stop, true);
    for (int i = 0; i < HAMMER_THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_true(atomic_load(&hammer_ops) > 0);

    DIR *d = opendir(f->logs);
    assert_non_null(d);
    int sessions = 0;
    size_t n_scope_lines = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        sessions++;
        char dir[4096], path[4200];
        snprintf(dir, sizeof dir, "%s/%s", f->logs, e->d_name);
        snprintf(path, sizeof path, "%s/session.json", dir);
        json_error_t err;
        json_t *sj = json_load_file(path, 0, &err);
        if (!sj)
            fail_msg("%s: %s", path, err.text);
        const char *status = json_string_value(json_object_get(sj, "status"));
        if (!status || strcmp(status, "ended") != 0)
            fail_msg("%s: status is %s", path, status ? status : "(none)");
        json_decref(sj);
        static const char *const channels[] = {"device", "scope", "system"};
        for (size_t c = 0; c < 3; c++) {
            tu_ndjson log;
            if (tu_ndjson_load_channel(dir, channels[c], &log) != 0)
                fail_msg("%s/%s.log has a line that does not parse", dir, channels[c]);
            assert_int_equal(log.tail_bytes, 0);
            /* Each log says which session it is and that it ended. */
            assert_true(log.n >= 2);
            assert_string_equal(str_field(log.lines[0], "type"), "session_start");
            assert_string_equal(str_field(log.lines[log.n - 1], "type"), "session_end");
            if (c == 1)
                n_scope_lines += scope_lines(&log);
            tu_ndjson_free(&log);
        }
    }
    closedir(d);
    print_message("%lld iterations, %zu scope lines in %d sessions\n", (long long)atomic_load(&hammer_ops),
                  n_scope_lines, sessions);
    assert_int_equal(sessions, CYCLES);
    assert_true(n_scope_lines > 0); /* the threads did record */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shutdown_without_init, setup, teardown),
        cmocka_unit_test_setup_teardown(test_double_init, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_after_shutdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_end_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_from_earlier_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outer_end_closes_inner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_and_foreign_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_and_empty_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gfl_scope_exits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gfl_scoped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scope_names_per_site, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_null_fn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_depth_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_after_shutdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_exit_with_open_scopes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_race_init_shutdown, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
