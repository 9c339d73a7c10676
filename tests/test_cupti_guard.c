/*
 * The CUPTI guard that `gpufl run` preloads (backend/cupti/cupti_guard.h),
 * against the fake libcupti, which like CUPTI before 13.2 takes one
 * subscriber at a time.
 *
 * Why: another CUPTI client in a traced program (torch.profiler) is refused
 * while gpufl holds CUPTI and records nothing without a word. The program's
 * user must hear it once on stderr, with the way out, and the session must
 * name the client; a client that gets CUPTI after gpufl_trace_pause() must
 * not be reported, and a process with no libcupti loaded must get an error
 * code from the guard, not a crash.
 *
 * Each case runs this program again ("--child NAME") with the guard in
 * LD_PRELOAD, as `gpufl run` starts programs; the other client is
 * libother_cupti_client.so (cupti_client/other_client.c), whose CUPTI
 * references the loader binds to the guard.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cupti.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "test_util.h"

#define CLIENT_NAME "libother_cupti_client.so"
#define REFUSED_NOTICE "gpufl: another CUPTI client (" CLIENT_NAME ") was refused because gpufl holds CUPTI"

/* ---- the children: each returns 0, or the number of the step that failed ---- */

typedef struct other_client {
    int (*subscribe)(void);
    int (*subscribe_v2)(void);
    CUpti_SubscriberHandle (*handle)(void);
    int (*take_buffers)(void);
} other_client;

static int load_client(other_client *c)
{
    void *lib = dlopen(GFL_CUPTI_CLIENT, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return -1;
    }
    *(void **)&c->subscribe = dlsym(lib, "other_client_subscribe");
    *(void **)&c->subscribe_v2 = dlsym(lib, "other_client_subscribe_v2");
    *(void **)&c->handle = dlsym(lib, "other_client_handle");
    *(void **)&c->take_buffers = dlsym(lib, "other_client_take_buffers");
    return c->subscribe && c->subscribe_v2 && c->handle && c->take_buffers ? 0 : -1;
}

/* gpufl traces; the other client is refused twice (v1, v2), gets CUPTI
 * during a pause, keeps gpufl from resuming until it lets go, then, once
 * gpufl holds CUPTI again, registers activity buffers over gpufl's. */
static int child_held(void)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "guard";
    o.log_path = getenv("GUARD_TEST_LOGS");
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.system_sample_rate_ms = 0;
    if (!gpufl_init(&o))
        return 1;
    other_client c;
    if (load_client(&c) != 0)
        return 2;
    void *fake = dlopen(GFL_FAKE_CUPTI, RTLD_NOW | RTLD_NOLOAD);
    __typeof__(&cuptiUnsubscribe) unsubscribe =
        fake ? (__typeof__(&cuptiUnsubscribe))dlsym(fake, "cuptiUnsubscribe") : NULL;
    if (!unsubscribe)
        return 3;
    if (c.subscribe() != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return 4;
    if (c.subscribe_v2() != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return 5;
    if (gpufl_trace_pause() != 0)
        return 6;
    if (c.subscribe() != CUPTI_SUCCESS)
        return 7;
    if (gpufl_trace_resume() == 0) /* gpufl is the one refused now: not the guard's business */
        return 8;
    if (unsubscribe(c.handle()) != CUPTI_SUCCESS)
        return 9;
    if (gpufl_trace_resume() != 0)
        return 10;
    if (c.take_buffers() != CUPTI_SUCCESS)
        return 11;
    gpufl_shutdown();
    return 0;
}

/* No libcupti in the process: the guard has nothing to pass the call to. */
static int child_no_cupti(void)
{
    other_client c;
    if (load_client(&c) != 0)
        return 1;
    if (dlopen(GFL_FAKE_CUPTI, RTLD_NOW | RTLD_NOLOAD))
        return 2;
    return c.subscribe() == CUPTI_ERROR_NOT_INITIALIZED ? 0 : 3;
}

/* ---- the tests ------------------------------------------------------------------ */

static size_t occurrences(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static int run_child(const char *name, char **out, char **err)
{
    tu_setenv("LD_PRELOAD", GFL_CUPTI_GUARD);
    const char *argv[] = {"/proc/self/exe", "--child", name, NULL};
    int rc = tu_run(argv, out, err);
    tu_unsetenv("LD_PRELOAD");
    return rc;
}

/* A log line of the session's system channel that holds `what`. */
static bool logged(const tu_ndjson *sys, const char *what)
{
    for (size_t i = 0; i < sys->n; i++) {
        const char *m = json_string_value(json_object_get(sys->lines[i], "message"));
        if (m && strstr(m, what))
            return true;
    }
    return false;
}

static void test_refused_client_is_told_once(void **state)
{
    (void)state;
    char *logs = tu_mkdtemp("guard");
    tu_setenv("GUARD_TEST_LOGS", logs);
    char *out = NULL, *err = NULL;
    int rc = run_child("held", &out, &err);
    if (rc != 0)
        fail_msg("the child failed at step %d; stderr:\n%s", rc, err ? err : "");
    assert_int_equal(occurrences(err, REFUSED_NOTICE), 1);
    assert_non_null(strstr(err, "Call gpufl_trace_pause() before it and gpufl_trace_resume() after it"));
    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    tu_ndjson sys;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &sys), 0);
    /* two refusals (the pause's subscription was not one), the client named */
    assert_true(logged(&sys, "another CUPTI client (" CLIENT_NAME ") was refused 2 times because gpufl held CUPTI"));
    assert_true(logged(&sys, "registered its own activity buffers 1 time while gpufl held CUPTI"));
    assert_true(logged(&sys, "trace paused by gpufl_trace_pause()"));
    tu_ndjson_free(&sys);
    free(dir);
    free(out);
    free(err);
    tu_rm_rf(logs);
    free(logs);
}

static void test_no_libcupti_is_an_error_code(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    int rc = run_child("no_cupti", &out, &err);
    if (rc != 0)
        fail_msg("the child failed at step %d; stderr:\n%s", rc, err ? err : "");
    assert_int_equal(occurrences(err, "gpufl:"), 0);
    free(out);
    free(err);
}

/* `gpufl run` puts the guard first in LD_PRELOAD and keeps what was there. */
static void test_gpufl_run_preloads_the_guard(void **state)
{
    (void)state;
    char guard[PATH_MAX];
    assert_non_null(realpath(GFL_CUPTI_GUARD, guard));
    char *logs = tu_mkdtemp("guard-run");
    const char *argv[] = {GFL_CLI, "run", "--log-path", logs, "--", "/bin/sh", "-c", "printf '%s' \"$LD_PRELOAD\"",
                          NULL};
    char *out = NULL;
    tu_unsetenv("LD_PRELOAD");
    assert_int_equal(tu_run(argv, &out, NULL), 0);
    assert_string_equal(out, guard);
    free(out);

    char both[2 * PATH_MAX + 2];
    snprintf(both, sizeof both, "%s:%s", guard, GFL_FAKE_CUPTI_NVTX);
    tu_setenv("LD_PRELOAD", GFL_FAKE_CUPTI_NVTX);
    int rc = tu_run(argv, &out, NULL);
    tu_unsetenv("LD_PRELOAD");
    assert_int_equal(rc, 0);
    assert_string_equal(out, both);
    free(out);
    tu_rm_rf(logs);
    free(logs);
}

int main(int argc, char **argv)
{
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/gpufl-test/libnvidia-ml.so.1");
    tu_setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI);
    if (argc == 3 && !strcmp(argv[1], "--child")) {
        if (!strcmp(argv[2], "held"))
            return child_held();
        if (!strcmp(argv[2], "no_cupti"))
            return child_no_cupti();
        return 100;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_client_is_told_once),
        cmocka_unit_test(test_no_libcupti_is_an_error_code),
        cmocka_unit_test(test_gpufl_run_preloads_the_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
