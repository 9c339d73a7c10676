/*
 * The flight window and its dumps (issue 13): what a dump holds, what the
 * window lets go of, each trigger writing exactly one dump, the storm gap,
 * retention, and gpufl_dump()'s errors.
 *
 * Why: the window is what a production job leaves on; a dump must hold the
 * minutes before the trigger and nothing else, every trigger must write one
 * dump (not none, not a storm of them), and the dumps must not fill the disk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "core/os.h"
#include "core/session_info.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "sink/window_dump.h"
#include "test_util.h"

static char *log_path;

static void start_with(gpufl_options *o)
{
    log_path = tu_mkdtemp("window");
    o->app_name = "window";
    o->log_path = log_path;
    o->log_format = GPUFL_LOG_NDJSON;
    assert_true(gpufl_init(o));
}

static void start(uint32_t window_s, uint32_t min_interval_s)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.flight_window_s = window_s;
    o.dump_min_interval_s = min_interval_s;
    start_with(&o);
}

static int cleanup(void **state)
{
    (void)state;
    tu_end_session(&log_path);
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Names of the dumps (sorted, hidden ones left out) into names; returns how many. */
static size_t list_dumps(char names[][64], size_t cap)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/dumps", gpufl_session_dir());
    DIR *d = opendir(path);
    size_t n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && n < cap)
            snprintf(names[n++], 64, "%s", e->d_name);
    closedir(d);
    for (size_t i = 1; i < n; i++) /* few: insertion sort */
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char tmp[64];
            memcpy(tmp, names[j], 64);
            memcpy(names[j], names[j - 1], 64);
            memcpy(names[j - 1], tmp, 64);
        }
    return n;
}

static gpufl_trace *open_dump(const char *name)
{
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/dumps/%s", gpufl_session_dir(), name);
    gpufl_trace *t = NULL;
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("cannot read dump %s: %s", path, err);
    return t;
}

/* How many scopes of the trace are called name. */
static size_t scopes_named(const gpufl_trace *t, const char *name)
{
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(t);
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += strcmp(gpufl_trace_string(t, s->name[i]), name) == 0;
    return n;
}

static void record_scopes(const char *name, int n)
{
    for (int i = 0; i < n; i++)
        gpufl_scope_end(gpufl_scope_begin(name));
}

/* ---- what a dump holds -------------------------------------------------- */

static void a_dump_holds_the_window_and_names_its_trigger(void **state)
{
    (void)state;
    start(60, 0);
    for (int i = 0; i < 5; i++) { /* in batches the ring holds */
        record_scopes("work", 1000);
        sleep_ms(20);
    }
    assert_int_equal(gpufl_dump("by hand"), 0);
    char names[8][64];
    assert_int_equal(list_dumps(names, 8), 1);
    assert_string_equal(names[0], "0001-dump");
    gpufl_trace *t = open_dump(names[0]);
    assert_int_equal(scopes_named(t, "work"), 5000);
    gpufl_trace_close(t);

    char path[4200];
    snprintf(path, sizeof path, "%s/dumps/%s", gpufl_session_dir(), names[0]);
    json_t *sj = tu_session_json(path);
    assert_string_equal(tu_str(sj, "status"), "dump");
    json_t *d = json_object_get(sj, "dump");
    assert_string_equal(tu_str(d, "trigger"), "dump");
    assert_string_equal(tu_str(d, "detail"), "by hand");
    assert_true(tu_int(d, "events") >= 10000);
    json_decref(sj);
    /* the program goes on recording */
    assert_true(gpufl_is_recording());
}

static void the_window_lets_go_of_what_is_older_but_keeps_what_is_open(void **state)
{
    (void)state;
    start(1, 0);
    gpufl_scope outer = gpufl_scope_begin("outer");
    record_scopes("old", 1000);
    sleep_ms(2600); /* the old scopes' chunk goes out of the 1 s window */
    record_scopes("new", 1000);
    assert_int_equal(gpufl_dump(NULL), 0);
    gpufl_scope_end(outer);
    char names[8][64];
    assert_int_equal(list_dumps(names, 8), 1);
    gpufl_trace *t = open_dump(names[0]);
    assert_int_equal(scopes_named(t, "new"), 1000);
    assert_int_equal(scopes_named(t, "old"), 0);
    /* begun before the window and still open at the dump: kept aside */
    assert_int_equal(scopes_named(t, "outer"), 1);
    /* and the latest clock pair, the start's, so the dump maps to wall time */
    const gpufl_trace_clocks *c = gpufl_trace_get_clocks(t);
    assert_int_equal(c->n, 1);
    assert_string_equal(gpufl_trace_string(t, c->point[0]), "start");
    gpufl_trace_close(t);
}

/* ---- errors ------------------------------------------------------------- */

static void without_a_window_gpufl_dump_refuses(void **state)
{
    (void)state;
    assert_int_equal(gpufl_dump("x"), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "no session"));
    start(0, 0);
    assert_int_equal(gpufl_dump("x"), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "flight_window_s"));
}

static void bad_rules_and_signals_fail_init_naming_them(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_path = "/nonexistent-never-created";
    o.dump_rules = "slow_scope=step";
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "dump_rules"));
    assert_non_null(strstr(gpufl_last_error(), "NAME:MS"));
    o.dump_rules = "power_w=0";
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "1..100000"));
    o.dump_rules = "gpu_temp=3";
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "no such rule"));
    o.dump_rules = "";
    o.dump_signal = "SIGSEGV";
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "dump_signal"));
}

/* ---- triggers ------------------------------------------------------------ */

static void a_storm_writes_one_dump_and_records_every_trigger(void **state)
{
    (void)state;
    start(60, 60);
    record_scopes("work", 100);
    assert_int_equal(gpufl_dump("first"), 0);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(gpufl_dump("again"), GPUFL_ESTATE);
        assert_non_null(strstr(gpufl_last_error(), "dump_min_interval_s"));
    }
    char names[8][64];
    assert_int_equal(list_dumps(names, 8), 1);
    char *dir = strdup(gpufl_session_dir());
    gpufl_shutdown();
    tu_ndjson sys;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &sys), 0);
    assert_int_equal(tu_count_type(&sys, "trigger"), 201);
    size_t storms = 0;
    for (size_t i = 0; i < 201; i++)
        storms += strcmp(tu_str(tu_nth_type(&sys, "trigger", i), "outcome"), "storm") == 0;
    assert_int_equal(storms, 200);
    assert_string_equal(tu_str(tu_nth_type(&sys, "trigger", 0), "dump"), "0001-dump");
    tu_ndjson_free(&sys);
    free(dir);
}

static void retention_keeps_the_newest_dumps(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    o.flight_window_s = 60;
    o.dump_min_interval_s = 0;
    o.dump_max_count = 2;
    start_with(&o);
    for (int i = 0; i < 5; i++) {
        record_scopes("work", 10);
        assert_int_equal(gpufl_dump(NULL), 0);
    }
    char names[8][64];
    assert_int_equal(list_dumps(names, 8), 2);
    assert_string_equal(names[0], "0004-dump");
    assert_string_equal(names[1], "0005-dump");
}

static void the_dump_signal_writes_one_dump(void **state)
{
    (void)state;
    start(60, 0);
    record_scopes("work", 10);
    assert_int_equal(raise(SIGUSR2), 0);
    char names[8][64];
    size_t n = 0;
    for (int i = 0; i < 500 && n == 0; i++) {
        sleep_ms(10);
        n = list_dumps(names, 8);
    }
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "0001-signal");
    /* the note `gpufl dump PID` reads names the session */
    char note[512];
    snprintf(note, sizeof note, "/tmp/gpufl-%u/%d", (unsigned)getuid(), (int)getpid());
    if (getenv("XDG_RUNTIME_DIR") && getenv("XDG_RUNTIME_DIR")[0] == '/')
        snprintf(note, sizeof note, "%s/gpufl/%d", getenv("XDG_RUNTIME_DIR"), (int)getpid());
    FILE *f = fopen(note, "r");
    assert_non_null(f);
    char line1[64], line2[4200];
    assert_non_null(fgets(line1, sizeof line1, f));
    assert_non_null(fgets(line2, sizeof line2, f));
    fclose(f);
    assert_int_equal(atoi(line1), SIGUSR2);
    line2[strcspn(line2, "\n")] = '\0';
    assert_string_equal(line2, gpufl_session_dir());
    gpufl_shutdown();
    assert_int_equal(access(note, F_OK), -1); /* gone with the session */
}

static void a_slow_scope_rule_writes_one_dump(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    o.flight_window_s = 60;
    o.dump_min_interval_s = 0;
    o.dump_rules = "slow_scope=step:20,power_w=100000";
    start_with(&o);
    record_scopes("step", 50); /* fast: nothing */
    gpufl_scope s = gpufl_scope_begin("step");
    sleep_ms(40);
    gpufl_scope_end(s);
    gpufl_scope other = gpufl_scope_begin("other"); /* slow, but not a step */
    sleep_ms(40);
    gpufl_scope_end(other);
    char names[8][64];
    size_t n = 0;
    for (int i = 0; i < 500 && n == 0; i++) {
        sleep_ms(10);
        n = list_dumps(names, 8);
    }
    sleep_ms(100);
    assert_int_equal(list_dumps(names, 8), 1);
    assert_string_equal(names[0], "0001-slow_scope");
    gpufl_trace *t = open_dump(names[0]);
    assert_int_equal(scopes_named(t, "step"), 51);
    gpufl_trace_close(t);
}

/* ---- crashes, kills, the command ----------------------------------------------- */

/* A child recording with a window: n scopes, then what `then` says. */
static void child_records(const char *dir, int n, uint32_t window_s)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(60);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "child";
    o.log_path = dir;
    o.flight_window_s = window_s;
    o.dump_min_interval_s = 0;
    if (!gpufl_init(&o))
        _exit(2);
    for (int i = 0; i < n; i++) {
        gpufl_scope_end(gpufl_scope_begin("before"));
        if (i % 1000 == 999)
            sleep_ms(5);
    }
}

static char *child_session(const char *logs)
{
    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    return dir;
}

static void a_crash_writes_one_dump_holding_it(void **state)
{
    (void)state;
    log_path = tu_mkdtemp("window-crash");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        child_records(log_path, 100, 60);
        abort();
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    char *dir = child_session(log_path);
    char path[4400], err[512];
    snprintf(path, sizeof path, "%s/dumps/0001-crash", dir);
    gpufl_trace *t = NULL;
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    assert_int_equal(scopes_named(t, "before"), 100);
    assert_non_null(gpufl_trace_get_crash(t));
    gpufl_trace_close(t);
    snprintf(path, sizeof path, "%s/dumps", dir);
    DIR *d = opendir(path);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n, 1);
    free(dir);
}

/* Killed while dumping, again and again: every dump left is whole. */
static void sigkill_during_a_dump_leaves_whole_dumps_or_none(void **state)
{
    (void)state;
    log_path = tu_mkdtemp("window-kill");
    for (int round = 0; round < 6; round++) {
        char logs[4200];
        snprintf(logs, sizeof logs, "%s/%d", log_path, round);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            child_records(logs, 60000, 60);
            for (;;)
                (void)gpufl_dump("again");
        }
        sleep_ms(300 + 70 * round);
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        char *dir = child_session(logs);
        char path[4400];
        snprintf(path, sizeof path, "%s/dumps", dir);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue; /* a hidden leftover is not a dump */
            char one[4700], err[512];
            snprintf(one, sizeof one, "%s/%s", path, e->d_name);
            gpufl_trace *t = NULL;
            if (gpufl_trace_open(one, &t, err, sizeof err) != 0)
                fail_msg("a dump left by SIGKILL does not read: %s", err);
            assert_true(gpufl_trace_get_info(t)->end_ns > 0);
            gpufl_trace_close(t);
        }
        if (d)
            closedir(d);
        free(dir);
    }
}

static void gpufl_dump_pid_gets_a_running_program_to_dump(void **state)
{
    (void)state;
    log_path = tu_mkdtemp("window-cli");
    char go[4200];
    snprintf(go, sizeof go, "%s/go", log_path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        child_records(log_path, 500, 60);
        tu_write_file(go, "1");
        for (int i = 0; i < 3000; i++) /* until the parent is done */
            sleep_ms(10);
        gpufl_shutdown();
        _exit(0);
    }
    for (int i = 0; i < 1000 && access(go, F_OK) != 0; i++)
        sleep_ms(10);
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    const char *args[] = {pid_text, NULL};
    char *out = NULL, *err = NULL;
    int rc = tu_run_subcommand(GFL_CLI, "dump", args, &out, &err);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (rc != 0)
        fail_msg("gpufl dump %s: %d: %s", pid_text, rc, err);
    out[strcspn(out, "\n")] = '\0';
    assert_non_null(strstr(out, "/dumps/0001-signal"));
    gpufl_trace *t = NULL;
    char msg[512];
    if (gpufl_trace_open(out, &t, msg, sizeof msg) != 0)
        fail_msg("%s: %s", out, msg);
    assert_int_equal(scopes_named(t, "before"), 500);
    gpufl_trace_close(t);
    free(out);
    free(err);
    /* a process without a window gets nothing, and is not killed */
    snprintf(pid_text, sizeof pid_text, "%d", (int)getpid());
    rc = tu_run_subcommand(GFL_CLI, "dump", args, &out, &err);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "keeps no flight window"));
    free(out);
    free(err);
}

/* ---- bounds --------------------------------------------------------------- */

static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

static volatile int pushing;
static uint64_t pushed[2];

/* 500 000 events a second per thread: 125 scopes every half millisecond. */
static void *push_scopes(void *arg)
{
    int k = (int)(intptr_t)arg;
    char name[16];
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (pushing) {
        for (int i = 0; i < 125; i++) {
            snprintf(name, sizeof name, "s%d", (i + k) % 64);
            gpufl_scope_end(gpufl_scope_begin(name));
        }
        pushed[k] += 250;
        next.tv_nsec += 500000;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    return NULL;
}

/* A million events a second for 30 s: the window stays within its bytes
 * and the process's memory stays flat once the window is full. */
static void the_window_holds_its_bounds_under_a_million_events_a_second(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    o.flight_window_s = 10;
    o.flight_window_bytes = 16ull << 20;
    o.log_format = GPUFL_LOG_NDJSON;
    o.ring_events = 1u << 16;
    log_path = tu_mkdtemp("window-rate");
    o.app_name = "rate";
    o.log_path = log_path;
    o.session_max_bytes = 1ull << 20; /* the logs stop early: the window is what is measured */
    assert_true(gpufl_init(&o));
    pushing = 1;
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&th[k], NULL, push_scopes, (void *)(intptr_t)k);
    uint64_t rss[4];
    for (int i = 0; i < 4; i++) {
        sleep_ms(i == 0 ? 12000 : 6000);
        rss[i] = rss_bytes();
    }
    pushing = 0;
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    double rate = (double)(pushed[0] + pushed[1]) / 30.0;
    print_message("%.0f events/s offered; RSS at 12/18/24/30 s: %.1f %.1f %.1f %.1f MB\n", rate, rss[0] / 1e6,
                  rss[1] / 1e6, rss[2] / 1e6, rss[3] / 1e6);
    /* flat: after the window filled (12 s), less than 8 MB of drift. Not
     * under AddressSanitizer, whose quarantine of freed memory makes RSS
     * swing by more than that on its own; the dump's bounds below hold. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    for (int i = 1; i < 4; i++)
        assert_true(rss[i] < rss[0] + (8u << 20));
#endif
    assert_int_equal(gpufl_dump("bounds"), 0);
    char names[8][64];
    assert_int_equal(list_dumps(names, 8), 1);
    char path[4200];
    snprintf(path, sizeof path, "%s/dumps/%s", gpufl_session_dir(), names[0]);
    json_t *sj = tu_session_json(path);
    json_t *d = json_object_get(sj, "dump");
    /* within the bytes (the chunks), and no older than the window (+1 s of chunk grain) */
    assert_true(tu_int(d, "bytes") <= (16ll << 20));
    assert_true(tu_int(d, "to_ns") - tu_int(d, "from_ns") <= 11000000000ll);
    print_message("dump: %lld events over %.1f s in %.1f MB\n", tu_int(d, "events"),
                  (tu_int(d, "to_ns") - tu_int(d, "from_ns")) / 1e9, tu_int(d, "bytes") / 1e6);
    json_decref(sj);
}

/* Pruning by bytes and count, oldest first, hidden leftovers removed, the
 * newest kept even when it alone is over. */
static void pruning_removes_the_oldest_first(void **state)
{
    (void)state;
    log_path = tu_mkdtemp("window-prune");
    gpufl__session_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.dir, sizeof info.dir, "%s", log_path);
    const char *names[] = {"0001-dump", "0002-oom", "0003-signal", ".tmp-0004-dump"};
    char path[4600], file[4700];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/dumps/%s", log_path, names[i]);
        assert_int_equal(gpufl__mkdir_p(path), 0);
        snprintf(file, sizeof file, "%s/trace.gflt", path);
        FILE *f = fopen(file, "w");
        for (int k = 0; k < 700 * 1024; k++)
            fputc('x', f);
        fclose(f);
    }
    /* 3 x 700 KiB against 1 MiB: only the newest stays */
    assert_int_equal(gpufl__window_dumps_prune(&info, 10, 1u << 20), 2);
    snprintf(path, sizeof path, "%s/dumps/0003-signal", log_path);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/dumps/0002-oom", log_path);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof path, "%s/dumps/.tmp-0004-dump", log_path);
    assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(a_dump_holds_the_window_and_names_its_trigger, cleanup),
        cmocka_unit_test_teardown(the_window_lets_go_of_what_is_older_but_keeps_what_is_open, cleanup),
        cmocka_unit_test_teardown(without_a_window_gpufl_dump_refuses, cleanup),
        cmocka_unit_test_teardown(bad_rules_and_signals_fail_init_naming_them, cleanup),
        cmocka_unit_test_teardown(a_storm_writes_one_dump_and_records_every_trigger, cleanup),
        cmocka_unit_test_teardown(retention_keeps_the_newest_dumps, cleanup),
        cmocka_unit_test_teardown(the_dump_signal_writes_one_dump, cleanup),
        cmocka_unit_test_teardown(a_slow_scope_rule_writes_one_dump, cleanup),
        cmocka_unit_test_teardown(a_crash_writes_one_dump_holding_it, cleanup),
        cmocka_unit_test_teardown(sigkill_during_a_dump_leaves_whole_dumps_or_none, cleanup),
        cmocka_unit_test_teardown(gpufl_dump_pid_gets_a_running_program_to_dump, cleanup),
        cmocka_unit_test_teardown(pruning_removes_the_oldest_first, cleanup),
        cmocka_unit_test_teardown(the_window_holds_its_bounds_under_a_million_events_a_second, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
