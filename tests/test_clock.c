/*
 * The session timebase (src/core/clock.h).
 *
 * Every timestamp in a trace comes from gpufl__now_ns(), which switches from
 * clock_gettime() to a calibrated TSC once the kernel itself keeps time with
 * an invariant TSC. If that switch never happens the hot path pays ~2x; if it
 * happens where it should not, or the conversion drifts or steps backwards,
 * scopes get negative or wrong durations and GPU and CPU events stop lining
 * up. Checked: the forced fallback (GPUFL_CLOCK=clock_gettime), the switch
 * to "tsc" exactly where the library's own conditions hold, monotonicity
 * through the switch and later fits, and agreement with CLOCK_MONOTONIC.
 *
 * Clock setup happens once per process, so the cases that need a fresh state
 * run in forked children, which the test list runs before the parent ever
 * initialises the clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "test_util.h"

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static bool file_starts_with_word(const char *path, const char *word)
{
    char *text = tu_read_file(path, NULL);
    if (!text)
        return false;
    size_t n = strlen(word);
    bool yes = strncmp(text, word, n) == 0 && (text[n] == '\n' || text[n] == '\0' || text[n] == ' ');
    free(text);
    return yes;
}

/* Whether a flag is on the "flags" line of /proc/cpuinfo, as a whole word. */
static bool cpu_has_flag(const char *flag)
{
    char *text = tu_read_file("/proc/cpuinfo", NULL);
    if (!text)
        return false;
    bool found = false;
    char *line = strstr(text, "\nflags");
    if (line) {
        char *end = strchr(line + 1, '\n');
        if (end)
            *end = '\0';
        size_t n = strlen(flag);
        for (char *p = line; (p = strstr(p, flag)) != NULL; p += n) {
            if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\0')) {
                found = true;
                break;
            }
        }
    }
    free(text);
    return found;
}

/* What the library should pick here: the TSC only where the kernel keeps
 * CLOCK_MONOTONIC with it (or with kvm-clock over a TSC the hypervisor
 * calls reliable) and it is invariant (clock.c). */
static const char *expected_source(void)
{
#if GFL_HAVE_TSC
    static const char source[] = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    bool invariant = cpu_has_flag("constant_tsc") && cpu_has_flag("nonstop_tsc");
    if (file_starts_with_word(source, "tsc") && invariant)
        return "tsc";
    if (file_starts_with_word(source, "kvm-clock") && invariant && cpu_has_flag("tsc_reliable"))
        return "tsc";
#endif
    return "clock_gettime";
}

/* Calibrates every 5 ms for ms milliseconds, as the collector would. */
static void calibrate_for(unsigned ms)
{
    uint64_t end = gpufl__mono_ns() + (uint64_t)ms * 1000000ull;
    while (gpufl__mono_ns() < end) {
        gpufl__clock_calibrate();
        sleep_ms(5);
    }
}

/* ---- forced fallback (child) ------------------------------------------- */

static int forced_fallback_child(void)
{
    /* the parent has not initialised the clock yet: a fresh state */
    if (strcmp(gpufl__clock_source(), "clock_gettime") != 0)
        return __LINE__;
    if (setenv("GPUFL_CLOCK", "clock_gettime", 1) != 0)
        return __LINE__;
    gpufl__clock_init();
    calibrate_for(300); /* several fit intervals (20, 40, 80, 160 ms) */
    if (strcmp(gpufl__clock_source(), "clock_gettime") != 0)
        return __LINE__;
    if (atomic_load(&gpufl__clock.active) != 0)
        return __LINE__;
    /* now_ns() is then CLOCK_MONOTONIC itself */
    uint64_t a = gpufl__mono_ns(), b = gpufl__now_ns(), c = gpufl__mono_ns();
    if (b < a || b > c)
        return __LINE__;
    return 0;
}

static int forced_fallback_any_case_child(void)
{
    if (setenv("GPUFL_CLOCK", "CLOCK_GETTIME", 1) != 0)
        return __LINE__;
    gpufl__clock_init();
    calibrate_for(100);
    if (strcmp(gpufl__clock_source(), "clock_gettime") != 0)
        return __LINE__;
    return 0;
}

static void test_env_forces_clock_gettime(void **state)
{
    (void)state;
    tu_expect_child_ok(forced_fallback_child, __FILE__);
    tu_expect_child_ok(forced_fallback_any_case_child, __FILE__);
}

/* ---- monotonic through the switch and later fits (child) --------------- */

static _Atomic bool stop_calibrating;

static void *calibrator_main(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop_calibrating, memory_order_relaxed)) {
        gpufl__clock_calibrate();
        sleep_ms(1);
    }
    return NULL;
}

static int monotonic_child(void)
{
    gpufl__clock_init();
    pthread_t cal;
    atomic_store(&stop_calibrating, false);
    if (pthread_create(&cal, NULL, calibrator_main, NULL) != 0)
        return __LINE__;
    /* 1.4 s covers the switch from clock_gettime and the fits at 20, 40,
     * 80, 160, 320 and 640 ms after it */
    uint64_t end = gpufl__mono_ns() + 1400000000ull;
    uint64_t prev = gpufl__now_ns(), reads = 0, backwards = 0, worst = 0;
    for (;;) {
        uint64_t now = gpufl__now_ns();
        if (now < prev) {
            backwards++;
            if (prev - now > worst)
                worst = prev - now;
        }
        prev = now;
        if ((++reads & 1023) == 0 && gpufl__mono_ns() > end)
            break;
    }
    atomic_store(&stop_calibrating, true);
    pthread_join(cal, NULL);
    if (backwards) {
        fprintf(stderr, "now_ns went backwards %llu times (worst %llu ns) in %llu reads\n",
                (unsigned long long)backwards, (unsigned long long)worst, (unsigned long long)reads);
        return __LINE__;
    }
    if (reads < 100000) /* the loop really ran */
        return __LINE__;
    if (strcmp(gpufl__clock_source(), expected_source()) != 0)
        return __LINE__;
    return 0;
}

static void test_now_never_goes_backwards(void **state)
{
    (void)state;
    tu_expect_child_ok(monotonic_child, __FILE__);
}

/* ---- in this process --------------------------------------------------- */

static void test_calibration_switches_to_tsc_where_trusted(void **state)
{
    (void)state;
    const char *want = expected_source();
    print_message("clock source expected here: %s\n", want);
    gpufl__clock_init();
    assert_string_equal(gpufl__clock_source(), "clock_gettime"); /* until the first fit */
    calibrate_for(1500);
    assert_string_equal(gpufl__clock_source(), want);
    if (strcmp(want, "tsc") == 0) {
        /* fits come at 20, 40, 80, 160, 320, 640 ms (1.26 s in all), not on
         * each of the ~300 calls: each fit bumps one slot's seq by two */
        uint32_t fits = (atomic_load(&gpufl__clock.slot[0].seq) + atomic_load(&gpufl__clock.slot[1].seq)) / 2;
        print_message("fits in 1.5 s: %u\n", fits);
        assert_true(fits >= 5 && fits <= 7);
    }
    /* init again (each session does) keeps the calibration */
    gpufl__clock_init();
    assert_string_equal(gpufl__clock_source(), want);
}

/* now_ns() - CLOCK_MONOTONIC, from the tightest of many mono/now/mono
 * brackets: a preemption only widens the bracket it hits. */
static int64_t best_offset(void)
{
    uint64_t best_width = UINT64_MAX;
    int64_t offset = 0;
    for (int i = 0; i < 200; i++) {
        uint64_t a = gpufl__mono_ns();
        uint64_t b = gpufl__now_ns();
        uint64_t c = gpufl__mono_ns();
        if (c - a < best_width) {
            best_width = c - a;
            offset = (int64_t)(b - (a + (c - a) / 2));
        }
        if (i % 50 == 49)
            sleep_ms(1);
    }
    return offset;
}

static void test_agrees_with_clock_monotonic(void **state)
{
    (void)state;
    gpufl__clock_init();
    calibrate_for(200);
    int64_t before = best_offset();
    print_message("now_ns - mono_ns = %lld ns\n", (long long)before);
    assert_true(before > -50000 && before < 50000);
    /* and over a span both clocks advance by the same amount */
    sleep_ms(100);
    gpufl__clock_calibrate();
    int64_t after = best_offset();
    assert_true(after > -50000 && after < 50000);
    assert_true(after - before > -50000 && after - before < 50000);
}

static void test_wall_clock_is_unix_time(void **state)
{
    (void)state;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t before = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    uint64_t wall = gpufl__wall_ns();
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t after = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    assert_true(wall >= before && wall <= after);
}

int main(void)
{
    /* an inherited override would change what this machine should pick */
    tu_unsetenv("GPUFL_CLOCK");
    /* children first: they need a process whose clock was never set up */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_forces_clock_gettime),
        cmocka_unit_test(test_now_never_goes_backwards),
        cmocka_unit_test(test_calibration_switches_to_tsc_where_trusted),
        cmocka_unit_test(test_agrees_with_clock_monotonic),
        cmocka_unit_test(test_wall_clock_is_unix_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
