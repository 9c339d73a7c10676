/*
 * /proc host metrics (see host_metrics.h). Parsing is by hand over a small
 * buffer: no stdio, no allocation after open.
 */
#include "backend/host/host_metrics.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpufl/gpufl.h"

enum { F_STAT, F_MEMINFO, F_SELF_STATM, F_COUNT };

/* Machine CPU comes in 10 ms ticks; a rate over less than this would be
 * mostly rounding, so readings cover at least this long. */
#define MIN_SYS_WINDOW_NS 250000000ull

struct gpufl__host_metrics {
    int fd[F_COUNT];
    long page_size;
    uint32_t cpu_count;
    int (*process_cpu_ns)(uint64_t *ns);
    bool have_proc, have_sys, have_next;
    uint64_t proc_cpu, proc_ns;              /* previous process CPU reading */
    uint64_t sys_busy, sys_total;            /* machine CPU at the start of the window */
    uint64_t next_busy, next_total, next_ns; /* the next start, once it is old enough */
};

/* CPU time of the whole process, all threads, in ns: exact, where
 * /proc/self/stat would give 10 ms ticks. */
static int real_process_cpu_ns(uint64_t *ns)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return -1;
    *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return 0;
}

int gpufl__host_metrics_open(gpufl__host_metrics **out, const char *proc_root)
{
    static const char *const names[F_COUNT] = {"stat", "meminfo", "self/statm"};
    gpufl__host_metrics *h = calloc(1, sizeof *h);
    if (!h)
        return GPUFL_ENOMEM;
    for (int i = 0; i < F_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", proc_root ? proc_root : "/proc", names[i]);
        h->fd[i] = open(path, O_RDONLY | O_CLOEXEC);
    }
    h->process_cpu_ns = real_process_cpu_ns;
    h->page_size = sysconf(_SC_PAGESIZE);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    h->cpu_count = cpus > 0 ? (uint32_t)cpus : 1;
    *out = h;
    return 0;
}

void gpufl__host_metrics_close(gpufl__host_metrics *h)
{
    if (!h)
        return;
    for (int i = 0; i < F_COUNT; i++)
        if (h->fd[i] >= 0)
            close(h->fd[i]);
    free(h);
}

/* Reads a whole (small) proc file into buf, NUL-terminated; false if empty
 * or unreadable. */
static bool slurp(int fd, char *buf, size_t len)
{
    if (fd < 0)
        return false;
    ssize_t n = pread(fd, buf, len - 1, 0);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

static const char *skip_spaces(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Parses an unsigned decimal at *p, advancing it; false if none. */
static bool parse_u64(const char **p, uint64_t *v)
{
    const char *s = skip_spaces(*p);
    if (*s < '0' || *s > '9')
        return false;
    uint64_t x = 0;
    while (*s >= '0' && *s <= '9')
        x = x * 10 + (uint64_t)(*s++ - '0');
    *v = x;
    *p = s;
    return true;
}

/* Busy and total jiffies of all CPUs, from the "cpu " line of /proc/stat. */
static bool read_sys_ticks(gpufl__host_metrics *h, uint64_t *busy, uint64_t *total)
{
    char buf[4096];
    if (!slurp(h->fd[F_STAT], buf, sizeof buf) || strncmp(buf, "cpu ", 4) != 0)
        return false;
    const char *p = buf + 4;
    uint64_t v[8] = {0}; /* user nice system idle iowait irq softirq steal */
    int n = 0;
    while (n < 8 && parse_u64(&p, &v[n]))
        n++;
    if (n < 4)
        return false;
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    uint64_t idle = v[3] + (n > 4 ? v[4] : 0);
    *total = sum;
    *busy = sum - idle;
    return true;
}

/* A "Key:   123 kB" line of /proc/meminfo, in bytes. */
static bool meminfo_field(const char *buf, const char *key, uint64_t *bytes)
{
    size_t klen = strlen(key);
    for (const char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, key, klen) != 0 || line[klen] != ':')
            continue;
        const char *p = line + klen + 1;
        uint64_t kb;
        if (!parse_u64(&p, &kb))
            return false;
        *bytes = kb * 1024;
        return true;
    }
    return false;
}

static void read_ram(gpufl__host_metrics *h, gfl_host_metrics_payload *out)
{
    char buf[8192];
    uint64_t total, avail;
    if (slurp(h->fd[F_MEMINFO], buf, sizeof buf) && meminfo_field(buf, "MemTotal", &total) &&
        meminfo_field(buf, "MemAvailable", &avail) && avail <= total) {
        out->ram_total_bytes = total;
        out->ram_used_bytes = total - avail;
        out->valid |= GFL_HOST_RAM;
    }
}

static void read_rss(gpufl__host_metrics *h, gfl_host_metrics_payload *out)
{
    char buf[256];
    uint64_t size, resident;
    const char *p = buf;
    if (slurp(h->fd[F_SELF_STATM], buf, sizeof buf) && parse_u64(&p, &size) && parse_u64(&p, &resident) &&
        h->page_size > 0) {
        out->proc_rss_bytes = resident * (uint64_t)h->page_size;
        out->valid |= GFL_HOST_RSS;
    }
}

static uint32_t pct_x100(uint64_t part, uint64_t whole)
{
    if (!whole)
        return 0;
    unsigned __int128 v = (unsigned __int128)part * 10000u / whole;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static void read_cpu(gpufl__host_metrics *h, uint64_t now_ns, gfl_host_metrics_payload *out)
{
    uint64_t cpu, busy, total;
    if (h->process_cpu_ns(&cpu) == 0) {
        if (h->have_proc && now_ns > h->proc_ns && cpu >= h->proc_cpu) {
            out->proc_cpu_pct_x100 = pct_x100(cpu - h->proc_cpu, now_ns - h->proc_ns);
            out->valid |= GFL_HOST_PROC_CPU;
        }
        h->have_proc = true;
        h->proc_cpu = cpu;
        h->proc_ns = now_ns;
    }
    if (read_sys_ticks(h, &busy, &total)) {
        /* The window starts at a reading that was at least MIN_SYS_WINDOW_NS
         * old when it became the start; the reading after it waits as the
         * next start until it is that old too. */
        if (!h->have_next || now_ns >= h->next_ns + MIN_SYS_WINDOW_NS) {
            if (h->have_next) {
                h->have_sys = true;
                h->sys_busy = h->next_busy;
                h->sys_total = h->next_total;
            }
            h->have_next = true;
            h->next_busy = busy;
            h->next_total = total;
            h->next_ns = now_ns;
        }
        if (h->have_sys && total > h->sys_total && busy >= h->sys_busy) {
            out->sys_cpu_pct_x100 = pct_x100(busy - h->sys_busy, total - h->sys_total);
            out->valid |= GFL_HOST_SYS_CPU;
        }
    }
}

void gpufl__host_metrics_read(gpufl__host_metrics *h, uint64_t now_ns, gfl_host_metrics_payload *out)
{
    memset(out, 0, sizeof *out);
    out->cpu_count = h->cpu_count;
    read_cpu(h, now_ns, out);
    read_ram(h, out);
    read_rss(h, out);
}

static size_t source_sample(void *self, uint64_t ts, gfl_event *out, size_t max)
{
    if (!max)
        return 0;
    memset(out, 0, sizeof *out);
    out->h.type = GFL_EV_HOST_METRICS;
    out->h.ts = ts;
    gpufl__host_metrics_read(self, ts, &out->u.host);
    return 1;
}

static void source_idle(void *self, uint64_t ts)
{
    gfl_host_metrics_payload scratch = {0};
    read_cpu(self, ts, &scratch);
}

static void source_close(void *self) { gpufl__host_metrics_close(self); }

void gpufl__host_metrics_set_cpu_clock(gpufl__host_metrics *h, int (*process_cpu_ns)(uint64_t *ns))
{
    h->process_cpu_ns = process_cpu_ns ? process_cpu_ns : real_process_cpu_ns;
}

gpufl__metric_source gpufl__host_metrics_source(gpufl__host_metrics *h)
{
    return (gpufl__metric_source){"host", h, source_sample, source_idle, source_close};
}
