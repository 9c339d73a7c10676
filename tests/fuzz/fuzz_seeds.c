/*
 * Seeds for the reader fuzzers: records small sessions with the real
 * library and the synthetic device plugin (every device event type, scopes,
 * host samples, a stop), in both formats, and copies their files into the
 * fuzzers' corpus directories:
 *
 *   fuzz_seeds CORPUS_DIR     (logs into CORPUS_DIR/ndjson, traces into CORPUS_DIR/gflt)
 *
 * Run by tests/fuzz/run.sh before the fuzzers; not a fuzzer itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fs_util.h"
#include "gpufl/gpufl.h"

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *data = tu_read_file(from, &n);
    if (!data)
        return;
    FILE *f = fopen(to, "wb");
    if (!f || fwrite(data, 1, n, f) != n) {
        fprintf(stderr, "fuzz_seeds: cannot write %s\n", to);
        exit(1);
    }
    fclose(f);
    free(data);
}

/* One session: returns its directory (static buffer). */
static const char *record(const char *logs, const char *app, gpufl_log_format format, uint64_t cap)
{
    setenv("GPUFL_SYNTHETIC",
           "kernels=60,copies=10,memsets=4,syncs=4,allocs=4,metrics=3,devices=2,streams=3,threads=1,bad=2", 1);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = app;
    o.log_path = logs;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    o.log_format = format;
    o.system_sample_rate_ms = 2;
    o.continuous_system_sampling = true;
    o.min_free_bytes = 0;
    if (cap)
        o.session_max_bytes = cap;
    if (!gpufl_init(&o)) {
        fprintf(stderr, "fuzz_seeds: %s\n", gpufl_last_error());
        exit(1);
    }
    for (int i = 0; i < 8; i++) {
        gpufl_scope a = gpufl_scope_begin("outer \"quoted\"");
        gpufl_scope_begin(i % 2 ? "inner\tλ" : "inner");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        gpufl_scope_end(a);
    }
    gpufl_system_start("window");
    gpufl_system_stop("window");
    gpufl_shutdown();
    return gpufl_session_dir();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds CORPUS_DIR\n");
        return 64;
    }
    char nd[4200], gf[4200];
    snprintf(nd, sizeof nd, "%s/ndjson", argv[1]);
    snprintf(gf, sizeof gf, "%s/gflt", argv[1]);
    mkdir(argv[1], 0755);
    mkdir(nd, 0755);
    mkdir(gf, 0755);
    char *logs = tu_mkdtemp("fuzz-seeds");
    const char *dir = record(logs, "seed", GPUFL_LOG_BOTH, 0);
    static const char *const channels[] = {"device", "scope", "system"};
    char from[4400], to[4400];
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s/%s.log", dir, channels[i]);
        snprintf(to, sizeof to, "%s/%s.log", nd, channels[i]);
        copy_file(from, to);
    }
    snprintf(from, sizeof from, "%s/trace.gflt", dir);
    snprintf(to, sizeof to, "%s/session.gflt", gf);
    copy_file(from, to);
    /* a session cut short by its disk cap: stop chunk, log_stopped lines */
    setenv("GPUFL_LOG_ROTATE_BYTES", "65536", 1);
    dir = record(logs, "capped", GPUFL_LOG_BOTH, 1u << 20);
    unsetenv("GPUFL_LOG_ROTATE_BYTES");
    snprintf(from, sizeof from, "%s/trace.gflt", dir);
    snprintf(to, sizeof to, "%s/capped.gflt", gf);
    copy_file(from, to);
    snprintf(from, sizeof from, "%s/device.log", dir);
    snprintf(to, sizeof to, "%s/capped-device.log", nd);
    copy_file(from, to);
    tu_rm_rf(logs);
    free(logs);
    return 0;
}
