/*
 * Resident memory that gpufl_init adds in Monitor mode. Two child
 * processes run the same workload for one second (three threads opening
 * scopes at a steady rate, host sampling every 10 ms): one with gpufl
 * disabled (the baseline), one recording, and one recording with a flight
 * window of 16 MiB as well. Each reports how much its RSS grew from just
 * before init to just before shutdown; the difference is gpufl's, and the
 * window's must stay within its bytes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"

#define WORKERS 3
#define RUN_NS 1000000000ull

static void *worker(void *arg)
{
    (void)arg;
    uint64_t end = bench_now_ns() + RUN_NS;
    struct timespec pause = {0, 100000};
    while (bench_now_ns() < end) {
        for (int i = 0; i < 100; i++)
            GFL_SCOPE("work/outer")
            {
                GFL_SCOPE("work/inner") {}
            }
        nanosleep(&pause, NULL); /* ~1 M scope events/s across threads */
    }
    return NULL;
}

/* Runs the workload; returns the RSS growth in bytes. */
#define WINDOW_BYTES (16ull << 20)

static uint64_t workload(bool enabled, bool window, const char *logs)
{
    uint64_t before = bench_rss_bytes();
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "bench_memory";
    o.log_path = logs;
    o.enabled = enabled;
    o.system_sample_rate_ms = 10;
    o.continuous_system_sampling = true;
    if (window) {
        o.flight_window_s = 60;
        o.flight_window_bytes = WINDOW_BYTES;
    }
    if (!gpufl_init(&o))
        return 0;
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    worker(NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    uint64_t after = bench_rss_bytes();
    gpufl_shutdown();
    return after - before;
}

static uint64_t in_child(bool enabled, bool window, const char *logs)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        uint64_t grew = workload(enabled, window, logs);
        if (write(fds[1], &grew, sizeof grew) != sizeof grew)
            _exit(1);
        _exit(0);
    }
    uint64_t grew = 0;
    if (read(fds[0], &grew, sizeof grew) != sizeof grew)
        grew = 0;
    waitpid(pid, NULL, 0);
    close(fds[0]);
    close(fds[1]);
    return grew;
}

#define ROUNDS 7
#define MiB (1024.0 * 1024.0)

static void print_spread(const char *label, const double *v, const char *note)
{
    char b[96];
    printf("  %-38s %s MiB%s\n", label, bench_spread(v, ROUNDS, 1, 2, b, sizeof b), note);
}

int main(void)
{
    char machine[512];
    bench_machine(machine, sizeof machine);
    char *logs = bench_tmpdir();
    /* rounds alternate the baseline and the recording run; the figure is
     * the difference within a round */
    double base[ROUNDS], rec[ROUNDS], added[ROUNDS], win[ROUNDS], win_added[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        base[r] = (double)in_child(false, false, logs) / MiB;
        rec[r] = (double)in_child(true, false, logs) / MiB;
        win[r] = (double)in_child(true, true, logs) / MiB;
        added[r] = rec[r] - base[r];
        win_added[r] = win[r] - base[r];
    }
    printf("bench_memory (%s; %d rounds, median [min-max])\n", machine, ROUNDS);
    print_spread("RSS growth, gpufl disabled (baseline)", base, "");
    print_spread("RSS growth, Monitor mode recording", rec, "");
    char note[96];
    snprintf(note, sizeof note, " (target <= 2; %d recording threads)", WORKERS + 1);
    print_spread("added by gpufl", added, note);
    print_spread("RSS growth, with a flight window", win, "");
    snprintf(note, sizeof note, " (target <= 2 + the window's %llu)", (unsigned long long)(WINDOW_BYTES >> 20));
    print_spread("added by gpufl with the window", win_added, note);
    tu_rm_rf(logs);
    free(logs);
    return 0;
}
