/*
 * Benchmark helpers (see bench_util.h).
 */
#include "bench_util.h"

#include "fs_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *bench_spread(const double *v, size_t n, double scale, int decimals, char *buf, size_t len)
{
    double s[64];
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++)
        s[i] = v[i] / scale;
    double med = n ? bench_median(s, n) : 0; /* sorts s */
    snprintf(buf, len, "%.*f [%.*f-%.*f]", decimals, med, decimals, n ? s[0] : 0, decimals, n ? s[n - 1] : 0);
    return buf;
}

uint64_t bench_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

void bench_peak_reset(void)
{
    /* "5" resets VmHWM to the current RSS (proc(5), clear_refs). */
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

uint64_t bench_peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

void bench_machine(char *buf, size_t len)
{
    char model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *colon = strchr(line, ':');
            if (colon) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = '\0';
            }
            break;
        }
    if (f)
        fclose(f);
    struct utsname u;
    uname(&u);
    snprintf(buf, len, "%s, %ld CPUs, %s %s", model, sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release);
}

void bench_fs_type(const char *dir, char *buf, size_t len)
{
    /* the mount point that is the longest prefix of dir's real path */
    char real[4096], line[8192], best[4096] = "";
    snprintf(buf, len, "unknown");
    if (!realpath(dir, real))
        return;
    FILE *f = fopen("/proc/self/mounts", "r");
    size_t best_len = 0;
    while (f && fgets(line, sizeof line, f)) {
        char mnt[4096], type[256];
        if (sscanf(line, "%*s %4095s %255s", mnt, type) != 2)
            continue;
        size_t n = strlen(mnt);
        bool under = !strcmp(mnt, "/") || (!strncmp(real, mnt, n) && (real[n] == '/' || real[n] == '\0'));
        if (under && n >= best_len) {
            best_len = n;
            snprintf(best, sizeof best, "%s", type);
        }
    }
    if (f)
        fclose(f);
    if (best[0])
        snprintf(buf, len, "%s", best);
}

char *bench_tmpdir(void) { return tu_mkdtemp_in(getenv("BENCH_DIR"), "bench"); }
