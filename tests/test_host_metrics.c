/*
 * Host metrics from /proc (src/backend/host/host_metrics.h).
 *
 * The sampler reads these every period for the life of the program, so they
 * must be exact (they feed reports and regressions), must say "unknown"
 * (a clear validity bit) rather than a made-up number, and must survive any
 * /proc content. The tests point the reader at a fake proc root whose files
 * they rewrite between samples, and inject the process CPU clock, so every
 * expected value is computed exactly: process CPU over the wall time since
 * the previous sample, machine CPU from /proc/stat jiffies over a window of
 * at least 250 ms, RAM as MemTotal - MemAvailable, RSS as resident pages.
 * Missing and garbage files clear exactly their own bits. A last test reads
 * the real /proc.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/host/host_metrics.h"
#include "core/clock.h"
#include "test_util.h"

#define MS 1000000ull
#define ALL_BITS (GFL_HOST_PROC_CPU | GFL_HOST_SYS_CPU | GFL_HOST_RAM | GFL_HOST_RSS)

/* ---- the injected process CPU clock ------------------------------------ */

static uint64_t fake_cpu_ns;
static bool fake_cpu_fails;

static int fake_cpu_clock(uint64_t *ns)
{
    if (fake_cpu_fails)
        return -1;
    *ns = fake_cpu_ns;
    return 0;
}

/* ---- the fake proc root ------------------------------------------------- */

/* The ten "cpu " columns of /proc/stat, in jiffies. */
typedef struct jiffies {
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice;
} jiffies;

/* Busy and total as the kernel defines them: guest time is already inside
 * user and nice, so the last two columns are not added again. */
static uint64_t j_idle(const jiffies *j) { return j->idle + j->iowait; }
static uint64_t j_busy(const jiffies *j) { return j->user + j->nice + j->system + j->irq + j->softirq + j->steal; }

static uint32_t expected_sys(const jiffies *from, const jiffies *to)
{
    uint64_t busy = j_busy(to) - j_busy(from);
    uint64_t total = busy + j_idle(to) - j_idle(from);
    return (uint32_t)(busy * 10000 / total);
}

static uint32_t expected_proc(uint64_t cpu_ns, uint64_t wall_ns) { return (uint32_t)(cpu_ns * 10000 / wall_ns); }

typedef struct fake_proc {
    char *root;
    char stat[512], meminfo[512], statm[512];
} fake_proc;

static void fake_proc_init(fake_proc *fp)
{
    fp->root = tu_mkdtemp("hostm");
    snprintf(fp->stat, sizeof fp->stat, "%s/stat", fp->root);
    snprintf(fp->meminfo, sizeof fp->meminfo, "%s/meminfo", fp->root);
    snprintf(fp->statm, sizeof fp->statm, "%s/self/statm", fp->root);
    char self[512];
    snprintf(self, sizeof self, "%s/self", fp->root);
    assert_int_equal(mkdir(self, 0755), 0);
}

static void fake_proc_free(fake_proc *fp)
{
    tu_rm_rf(fp->root);
    free(fp->root);
}

/* Rewritten in place (same inode), as the kernel's files change under the
 * reader's open descriptors. */
static void write_stat(const fake_proc *fp, const jiffies *j)
{
    char text[1024];
    snprintf(text, sizeof text,
             "cpu  %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n"
             "cpu0 1 2 3 4 5 6 7 8 9 10\n"
             "intr 123456 0 0 0\nctxt 987654\nbtime 1700000000\nprocesses 4242\n",
             (unsigned long long)j->user, (unsigned long long)j->nice, (unsigned long long)j->system,
             (unsigned long long)j->idle, (unsigned long long)j->iowait, (unsigned long long)j->irq,
             (unsigned long long)j->softirq, (unsigned long long)j->steal, (unsigned long long)j->guest,
             (unsigned long long)j->guest_nice);
    tu_write_file(fp->stat, text);
}

static void write_meminfo(const fake_proc *fp, uint64_t total_kb, uint64_t avail_kb)
{
    char text[1024];
    snprintf(text, sizeof text,
             "MemTotal:       %llu kB\n"
             "MemFree:         123456 kB\n"
             "MemAvailable:   %llu kB\n"
             "Buffers:          20480 kB\n"
             "Cached:          999999 kB\n"
             "SwapTotal:      8388604 kB\n",
             (unsigned long long)total_kb, (unsigned long long)avail_kb);
    tu_write_file(fp->meminfo, text);
}

static void write_statm(const fake_proc *fp, uint64_t size_pages, uint64_t resident_pages)
{
    char text[256];
    snprintf(text, sizeof text, "%llu %llu 1234 56 0 7890 0\n", (unsigned long long)size_pages,
             (unsigned long long)resident_pages);
    tu_write_file(fp->statm, text);
}

static gpufl__host_metrics *open_fake(const fake_proc *fp)
{
    gpufl__host_metrics *h = NULL;
    assert_int_equal(gpufl__host_metrics_open(&h, fp->root), 0);
    assert_non_null(h);
    gpufl__host_metrics_set_cpu_clock(h, fake_cpu_clock);
    fake_cpu_fails = false;
    return h;
}

static uint64_t page_size(void) { return (uint64_t)sysconf(_SC_PAGESIZE); }

static uint32_t online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

static gfl_host_metrics_payload sample(gpufl__host_metrics *h, uint64_t now_ns)
{
    gfl_host_metrics_payload m;
    memset(&m, 0xee, sizeof m); /* the reader must set every field it reports */
    gpufl__host_metrics_read(h, now_ns, &m);
    return m;
}

/* ---- exact values ------------------------------------------------------- */

static void test_exact_values_over_a_sequence(void **state)
{
    (void)state;
    fake_proc fp;
    fake_proc_init(&fp);
    const uint64_t t0 = 5000 * MS;
    jiffies j[8] = {{1000, 10, 500, 8000, 100, 5, 7, 3, 50, 0}};
    /* deltas chosen so that every choice of window start gives a different
     * answer: the reading says which start was used */
    static const jiffies step[7] = {
        {10, 0, 0, 30, 0, 0, 0, 0, 10, 0}, /* +100 ms */
        {0, 0, 20, 10, 10, 0, 0, 0, 0, 0}, /* +200 ms */
        {5, 0, 0, 40, 0, 1, 1, 1, 5, 3},   /* +300 ms */
        {30, 0, 0, 10, 0, 0, 0, 0, 0, 0},  /* +400 ms */
        {0, 2, 0, 60, 0, 0, 0, 0, 0, 0},   /* +600 ms */
        {50, 0, 0, 50, 0, 0, 0, 0, 0, 0},  /* +700 ms */
        {7, 0, 3, 900, 0, 0, 0, 0, 0, 0},  /* +2000 ms */
    };
    static const uint64_t at_ms[8] = {0, 100, 200, 300, 400, 600, 700, 2000};
    static const uint64_t cpu_step_ms[8] = {0, 50, 150, 0, 100, 400, 1, 2600};
    for (int i = 1; i < 8; i++) {
        j[i] = j[i - 1];
        j[i].user += step[i - 1].user;
        j[i].nice += step[i - 1].nice;
        j[i].system += step[i - 1].system;
        j[i].idle += step[i - 1].idle;
        j[i].iowait += step[i - 1].iowait;
        j[i].irq += step[i - 1].irq;
        j[i].softirq += step[i - 1].softirq;
        j[i].steal += step[i - 1].steal;
        j[i].guest += step[i - 1].guest;
        j[i].guest_nice += step[i - 1].guest_nice;
    }

    write_stat(&fp, &j[0]);
    write_meminfo(&fp, 16384000, 12000000);
    write_statm(&fp, 50000, 12345);
    gpufl__host_metrics *h = open_fake(&fp);
    fake_cpu_ns = 777 * MS;

    /* first read: RAM and RSS, but no rate without a previous reading */
    gfl_host_metrics_payload m = sample(h, t0);
    assert_int_equal(m.valid, GFL_HOST_RAM | GFL_HOST_RSS);
    assert_int_equal(m.cpu_count, online_cpus());
    assert_int_equal(m.proc_cpu_pct_x100, 0);
    assert_int_equal(m.sys_cpu_pct_x100, 0);
    assert_int_equal(m.ram_total_bytes, 16384000ull * 1024);
    assert_int_equal(m.ram_used_bytes, (16384000ull - 12000000ull) * 1024);
    assert_int_equal(m.proc_rss_bytes, 12345 * page_size());

    /* machine CPU windows: none under 250 ms; then from the newest reading
     * that is at least 250 ms old when the window start moves */
    static const int sys_from[8] = {-1, -1, -1, 0, 0, 3, 3, 5};
    for (int i = 1; i < 8; i++) {
        fake_cpu_ns += cpu_step_ms[i] * MS;
        write_stat(&fp, &j[i]);
        write_meminfo(&fp, 16384000, 12000000 - (uint64_t)i * 1000);
        write_statm(&fp, 50000 + (uint64_t)i, 12345 + (uint64_t)i * 100);
        m = sample(h, t0 + at_ms[i] * MS);

        uint32_t want_valid = GFL_HOST_PROC_CPU | GFL_HOST_RAM | GFL_HOST_RSS;
        if (sys_from[i] >= 0)
            want_valid |= GFL_HOST_SYS_CPU;
        if (m.valid != want_valid)
            fail_msg("read %d at +%llu ms: valid 0x%x, expected 0x%x", i, (unsigned long long)at_ms[i], m.valid,
                     want_valid);
        assert_int_equal(m.proc_cpu_pct_x100, expected_proc(cpu_step_ms[i] * MS, (at_ms[i] - at_ms[i - 1]) * MS));
        if (sys_from[i] >= 0) {
            uint32_t want = expected_sys(&j[sys_from[i]], &j[i]);
            if (m.sys_cpu_pct_x100 != want)
                fail_msg("read %d at +%llu ms: sys %u, expected %u (window from +%llu ms)", i,
                         (unsigned long long)at_ms[i], m.sys_cpu_pct_x100, want,
                         (unsigned long long)at_ms[sys_from[i]]);
        }
        assert_int_equal(m.ram_total_bytes, 16384000ull * 1024);
        assert_int_equal(m.ram_used_bytes, (16384000ull - 12000000ull + (uint64_t)i * 1000) * 1024);
        assert_int_equal(m.proc_rss_bytes, (12345 + (uint64_t)i * 100) * page_size());
        assert_int_equal(m.cpu_count, online_cpus());
    }
    /* spot values, so the reference formulas are not the only witness:
     * 150 ms of CPU in 100 ms is 150 % of one CPU */
    fake_cpu_ns += 150 * MS;
    j[7].user += 25;
    j[7].idle += 75;
    write_stat(&fp, &j[7]);
    m = sample(h, t0 + 2100 * MS);
    assert_int_equal(m.proc_cpu_pct_x100, 15000);
    /* 100 ms after the start moved to +600 ms (at +2000 ms), the window
     * still starts there: busy 50+7+3+25 of 50+50+7+3+900+25+75 jiffies */
    assert_int_equal(m.valid, ALL_BITS);
    assert_int_equal(m.sys_cpu_pct_x100, 85u * 10000 / 1110);

    gpufl__host_metrics_close(h);
    fake_proc_free(&fp);
}

/* A sampler with a short period: every machine-CPU reading spans at least
 * 250 ms, never less. */
static void test_sys_window_never_shorter_than_250ms(void **state)
{
    (void)state;
    fake_proc fp;
    fake_proc_init(&fp);
    jiffies j = {100, 0, 100, 1000, 0, 0, 0, 0, 0, 0};
    write_stat(&fp, &j);
    gpufl__host_metrics *h = open_fake(&fp);
    const uint64_t period = 40 * MS, t0 = 1000 * MS;
    /* history of (time, jiffies) to compute what each window should give */
    enum { N = 60 };
    jiffies hist[N];
    uint64_t when[N];
    unsigned sys_readings = 0;
    for (int i = 0; i < N; i++) {
        /* one busy jiffy per period, plus a varying number of idle ones, so
         * windows of different lengths give different answers */
        j.user += 1 + (unsigned)i % 3;
        j.idle += 3 + (unsigned)i % 5;
        write_stat(&fp, &j);
        hist[i] = j;
        when[i] = t0 + (uint64_t)i * period;
        gfl_host_metrics_payload m = sample(h, when[i]);
        if (!(m.valid & GFL_HOST_SYS_CPU)) {
            /* only at the start, before any 250 ms window exists */
            assert_true(when[i] - t0 < 250 * MS);
            assert_int_equal(m.sys_cpu_pct_x100, 0);
            continue;
        }
        sys_readings++;
        /* the value is that of some window of 250..500+40 ms ending now */
        bool matched = false;
        for (int k = i - 1; k >= 0 && !matched; k--) {
            uint64_t span = when[i] - when[k];
            if (span < 250 * MS)
                continue;
            if (span > 540 * MS)
                break;
            matched = m.sys_cpu_pct_x100 == expected_sys(&hist[k], &hist[i]);
        }
        if (!matched)
            fail_msg("reading %d: sys %u matches no window of at least 250 ms", i, m.sys_cpu_pct_x100);
    }
    assert_true(sys_readings >= N - 7);
    gpufl__host_metrics_close(h);
    fake_proc_free(&fp);
}

/* ---- process CPU edge cases -------------------------------------------- */

static void test_process_cpu_edge_cases(void **state)
{
    (void)state;
    fake_proc fp;
    fake_proc_init(&fp);
    gpufl__host_metrics *h = open_fake(&fp);
    fake_cpu_ns = 0;
    gfl_host_metrics_payload m = sample(h, 10 * MS);
    assert_int_equal(m.valid & GFL_HOST_PROC_CPU, 0);

    /* 0 % is a real reading */
    m = sample(h, 20 * MS);
    assert_int_equal(m.valid, GFL_HOST_PROC_CPU);
    assert_int_equal(m.proc_cpu_pct_x100, 0);

    /* the clock fails: unknown, and the previous reading stays the base */
    fake_cpu_fails = true;
    fake_cpu_ns += 30 * MS;
    m = sample(h, 40 * MS);
    assert_int_equal(m.valid, 0);
    assert_int_equal(m.proc_cpu_pct_x100, 0);
    fake_cpu_fails = false;
    m = sample(h, 80 * MS); /* 30 ms of CPU over 60 ms since the last good reading */
    assert_int_equal(m.valid, GFL_HOST_PROC_CPU);
    assert_int_equal(m.proc_cpu_pct_x100, 5000);

    /* no time passed, or time went backwards: unknown, never a division by 0 */
    fake_cpu_ns += 10 * MS;
    m = sample(h, 80 * MS);
    assert_int_equal(m.valid, 0);
    fake_cpu_ns += 10 * MS;
    m = sample(h, 70 * MS);
    assert_int_equal(m.valid, 0);
    m = sample(h, 170 * MS); /* base is now (70 ms, cpu so far) */
    assert_int_equal(m.valid, GFL_HOST_PROC_CPU);
    assert_int_equal(m.proc_cpu_pct_x100, 0);

    /* a CPU clock that went backwards: unknown, not a huge number */
    fake_cpu_ns -= 5 * MS;
    m = sample(h, 270 * MS);
    assert_int_equal(m.valid, 0);
    fake_cpu_ns += 25 * MS;
    m = sample(h, 370 * MS);
    assert_int_equal(m.valid, GFL_HOST_PROC_CPU);
    assert_int_equal(m.proc_cpu_pct_x100, 2500);

    /* many threads busy: above 100 %, and absurd ratios saturate */
    fake_cpu_ns += 6400 * MS;
    m = sample(h, 470 * MS);
    assert_int_equal(m.proc_cpu_pct_x100, 640000);
    fake_cpu_ns += 1000000000ull * MS;
    m = sample(h, 470 * MS + 1);
    assert_int_equal(m.valid, GFL_HOST_PROC_CPU);
    assert_int_equal(m.proc_cpu_pct_x100, UINT32_MAX);

    gpufl__host_metrics_close(h);
    fake_proc_free(&fp);
}

/* ---- missing and garbage files ----------------------------------------- */

static void test_missing_files_clear_their_bits(void **state)
{
    (void)state;
    for (unsigned present = 0; present < 8; present++) {
        fake_proc fp;
        fake_proc_init(&fp);
        jiffies j = {100, 0, 100, 1000, 0, 0, 0, 0, 0, 0};
        if (present & 1)
            write_stat(&fp, &j);
        if (present & 2)
            write_meminfo(&fp, 2048, 1024);
        if (present & 4)
            write_statm(&fp, 10, 4);
        gpufl__host_metrics *h = open_fake(&fp);
        uint32_t fixed = (present & 2 ? GFL_HOST_RAM : 0) | (present & 4 ? GFL_HOST_RSS : 0);
        gfl_host_metrics_payload m = sample(h, 1000 * MS);
        assert_int_equal(m.valid, fixed);
        assert_int_equal(m.cpu_count, online_cpus());

        /* files that appear after open are not picked up (they are opened
         * once): still invalid, still no crash */
        write_stat(&fp, &j);
        write_meminfo(&fp, 2048, 1024);
        write_statm(&fp, 10, 4);
        j.user += 10;
        j.idle += 10;
        if (present & 1)
            write_stat(&fp, &j);
        fake_cpu_ns += 100 * MS;
        m = sample(h, 2000 * MS);
        uint32_t want = fixed | GFL_HOST_PROC_CPU | (present & 1 ? GFL_HOST_SYS_CPU : 0);
        if (m.valid != want)
            fail_msg("files present 0x%x: valid 0x%x, expected 0x%x", present, m.valid, want);
        if (present & 1)
            assert_int_equal(m.sys_cpu_pct_x100, 5000);
        if (!(present & 2)) {
            assert_int_equal(m.ram_total_bytes, 0);
            assert_int_equal(m.ram_used_bytes, 0);
        }
        if (!(present & 4))
            assert_int_equal(m.proc_rss_bytes, 0);
        gpufl__host_metrics_close(h);
        fake_proc_free(&fp);
    }

    /* a root that does not exist at all */
    gpufl__host_metrics *h = NULL;
    assert_int_equal(gpufl__host_metrics_open(&h, "/nonexistent/gpufl-test-proc"), 0);
    gpufl__host_metrics_set_cpu_clock(h, fake_cpu_clock);
    gfl_host_metrics_payload m = sample(h, 1 * MS);
    assert_int_equal(m.valid, 0);
    fake_cpu_ns += MS;
    m = sample(h, 2 * MS);
    assert_int_equal(m.valid, GFL_HOST_PROC_CPU);
    assert_int_equal(m.proc_cpu_pct_x100, 10000);
    gpufl__host_metrics_close(h);
    gpufl__host_metrics_close(NULL);
}

typedef struct garbage_case {
    int file; /* 0 stat, 1 meminfo, 2 statm */
    const char *text;
    uint32_t clears;
} garbage_case;

static void test_garbage_files_clear_their_bits(void **state)
{
    (void)state;
    /* each is read between good readings 1 s apart, so all four bits are
     * expected except the one the bad file feeds */
    static const garbage_case cases[] = {
        {0, "", GFL_HOST_SYS_CPU},
        {0, "garbage\n", GFL_HOST_SYS_CPU},
        {0, "cpu  x y z w\n", GFL_HOST_SYS_CPU},
        {0, "cpu  1 2 3\n", GFL_HOST_SYS_CPU},                  /* fewer than 4 columns */
        {0, "cpu0 999999 0 999999 999999\n", GFL_HOST_SYS_CPU}, /* not the total line */
        {0, "intr 1 2 3\ncpu  999999 0 999999 999999 0\n", GFL_HOST_SYS_CPU},
        {0, "cpu", GFL_HOST_SYS_CPU},
        {1, "", GFL_HOST_RAM},
        {1, "MemTotal: abc kB\nMemAvailable: 1 kB\n", GFL_HOST_RAM},
        {1, "MemTotal: 1000 kB\nMemFree: 10 kB\n", GFL_HOST_RAM},        /* no MemAvailable */
        {1, "MemAvailable: 10 kB\n", GFL_HOST_RAM},                      /* no MemTotal */
        {1, "MemTotal: 1000 kB\nMemAvailable: 2000 kB\n", GFL_HOST_RAM}, /* available > total */
        {1, "MemTotal 1000 kB\nMemAvailable 10 kB\n", GFL_HOST_RAM},     /* no colons */
        {1, "MemTotalX: 1000 kB\nMemAvailableX: 10 kB\n", GFL_HOST_RAM}, /* other keys */
        {1, "\n\n\n", GFL_HOST_RAM},
        {2, "", GFL_HOST_RSS},
        {2, "12345\n", GFL_HOST_RSS},
        {2, "abc def\n", GFL_HOST_RSS},
        {2, "-1 -2\n", GFL_HOST_RSS},
        {2, "\xff\xfe\x00", GFL_HOST_RSS},
    };
    fake_proc fp;
    fake_proc_init(&fp);
    jiffies j = {1000, 0, 1000, 10000, 0, 0, 0, 0, 0, 0};
    write_stat(&fp, &j);
    write_meminfo(&fp, 4096, 1024);
    write_statm(&fp, 100, 40);
    gpufl__host_metrics *h = open_fake(&fp);
    uint64_t now = 1000 * MS;
    (void)sample(h, now);

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        /* a good reading, then the bad file, then a good reading again */
        for (int phase = 0; phase < 3; phase++) {
            j.user += 30;
            j.idle += 70;
            write_stat(&fp, &j);
            write_meminfo(&fp, 4096, 1024);
            write_statm(&fp, 100, 40);
            if (phase == 1) {
                const char *const paths[] = {fp.stat, fp.meminfo, fp.statm};
                tu_write_file(paths[cases[c].file], cases[c].text);
            }
            now += 1000 * MS;
            fake_cpu_ns += 500 * MS;
            gfl_host_metrics_payload m = sample(h, now);
            uint32_t want = phase == 1 ? ALL_BITS & ~cases[c].clears : ALL_BITS;
            if (m.valid != want)
                fail_msg("case %zu phase %d: valid 0x%x, expected 0x%x", c, phase, m.valid, want);
            assert_int_equal(m.proc_cpu_pct_x100, 5000);
            if (m.valid & GFL_HOST_RAM) {
                assert_int_equal(m.ram_total_bytes, 4096ull * 1024);
                assert_int_equal(m.ram_used_bytes, 3072ull * 1024);
            } else {
                assert_int_equal(m.ram_total_bytes, 0);
                assert_int_equal(m.ram_used_bytes, 0);
            }
            if (m.valid & GFL_HOST_RSS)
                assert_int_equal(m.proc_rss_bytes, 40 * page_size());
            else
                assert_int_equal(m.proc_rss_bytes, 0);
            if (m.valid & GFL_HOST_SYS_CPU) {
                /* after a bad /proc/stat the window reaches back to the
                 * last good reading: 60 of 200 jiffies is still 30 % */
                assert_int_equal(m.sys_cpu_pct_x100, 3000);
            } else {
                assert_int_equal(m.sys_cpu_pct_x100, 0);
            }
        }
    }

    /* a /proc/stat larger than the read buffer (many CPUs): the total line
     * comes first and is still read */
    size_t big = 64 * 1024;
    char *text = malloc(big);
    assert_non_null(text);
    j.user += 30;
    j.idle += 70;
    int n = snprintf(text, big, "cpu  %llu 0 %llu %llu 0 0 0 0 0 0\n", (unsigned long long)j.user,
                     (unsigned long long)j.system, (unsigned long long)j.idle);
    for (int cpu = 0; (size_t)n + 64 < big; cpu++)
        n += snprintf(text + n, big - (size_t)n, "cpu%d 1 2 3 4 5 6 7 8 9 10\n", cpu);
    tu_write_file(fp.stat, text);
    free(text);
    now += 1000 * MS;
    gfl_host_metrics_payload m = sample(h, now);
    assert_true(m.valid & GFL_HOST_SYS_CPU);
    assert_int_equal(m.sys_cpu_pct_x100, 3000);

    gpufl__host_metrics_close(h);
    fake_proc_free(&fp);
}

/* Counters that go backwards (a reset, CPUs going offline) give no reading,
 * and the readings after continue from the new values. */
static void test_sys_counters_going_backwards(void **state)
{
    (void)state;
    fake_proc fp;
    fake_proc_init(&fp);
    jiffies j = {5000, 0, 5000, 90000, 0, 0, 0, 0, 0, 0};
    write_stat(&fp, &j);
    gpufl__host_metrics *h = open_fake(&fp);
    (void)sample(h, 1000 * MS);
    j.user += 10;
    j.idle += 90;
    write_stat(&fp, &j);
    gfl_host_metrics_payload m = sample(h, 2000 * MS);
    assert_int_equal(m.valid & GFL_HOST_SYS_CPU, GFL_HOST_SYS_CPU);
    assert_int_equal(m.sys_cpu_pct_x100, 1000);

    jiffies back = {100, 0, 100, 1000, 0, 0, 0, 0, 0, 0};
    write_stat(&fp, &back);
    m = sample(h, 3000 * MS);
    assert_int_equal(m.valid & GFL_HOST_SYS_CPU, 0);
    assert_int_equal(m.sys_cpu_pct_x100, 0);

    /* the next window starts at the reset: the new values are the base */
    back.user += 40;
    back.idle += 60;
    write_stat(&fp, &back);
    m = sample(h, 4000 * MS);
    assert_int_equal(m.valid & GFL_HOST_SYS_CPU, GFL_HOST_SYS_CPU);
    assert_int_equal(m.sys_cpu_pct_x100, 4000); /* 40 of 100 since the reset */
    gpufl__host_metrics_close(h);
    fake_proc_free(&fp);
}

/* ---- the sampler interface ---------------------------------------------- */

static void test_metric_source(void **state)
{
    (void)state;
    fake_proc fp;
    fake_proc_init(&fp);
    write_meminfo(&fp, 1000, 250);
    write_statm(&fp, 10, 3);
    gpufl__host_metrics *h = open_fake(&fp);
    gpufl__metric_source src = gpufl__host_metrics_source(h);
    assert_string_equal(src.name, "host");
    assert_ptr_equal(src.self, h);
    assert_non_null(src.sample);
    assert_non_null(src.close);

    gfl_event ev[2];
    memset(ev, 0x5a, sizeof ev);
    assert_int_equal(src.sample(src.self, 10 * MS, ev, 0), 0);
    assert_int_equal(ev[0].h.type, 0x5a); /* untouched */

    fake_cpu_ns = 0;
    assert_int_equal(src.sample(src.self, 100 * MS, ev, 2), 1);
    assert_int_equal(ev[0].h.type, GFL_EV_HOST_METRICS);
    assert_int_equal(ev[0].h.ts, 100 * MS);
    assert_int_equal(ev[0].h.tid, 0);
    assert_int_equal(ev[0].u.host.valid, GFL_HOST_RAM | GFL_HOST_RSS);
    assert_int_equal(ev[0].u.host.ram_used_bytes, 750 * 1024);
    assert_int_equal(ev[1].h.type, 0x5a); /* one event only */

    /* idle() moves the process CPU base: the next sample covers only the
     * time since */
    assert_non_null(src.idle);
    fake_cpu_ns += 1000 * MS;
    src.idle(src.self, 1100 * MS);
    fake_cpu_ns += 25 * MS;
    assert_int_equal(src.sample(src.self, 1200 * MS, ev, 1), 1);
    assert_true(ev[0].u.host.valid & GFL_HOST_PROC_CPU);
    assert_int_equal(ev[0].u.host.proc_cpu_pct_x100, 2500);

    src.close(src.self); /* frees h (ASan would see a leak otherwise) */
    fake_proc_free(&fp);
}

/* ---- the real /proc ---------------------------------------------------- */

static volatile uint64_t burn_sink;

static void burn_cpu_ms(unsigned ms)
{
    uint64_t end = gpufl__mono_ns() + ms * MS;
    while (gpufl__mono_ns() < end)
        for (int i = 0; i < 1000; i++)
            burn_sink += (uint64_t)i;
}

static void test_real_proc(void **state)
{
    (void)state;
    gpufl__host_metrics *h = NULL;
    assert_int_equal(gpufl__host_metrics_open(&h, NULL), 0);
    gfl_host_metrics_payload m;
    uint64_t t0 = gpufl__mono_ns();
    gpufl__host_metrics_read(h, t0, &m);
    assert_int_equal(m.valid, GFL_HOST_RAM | GFL_HOST_RSS);
    assert_true(m.cpu_count >= 1);
    assert_int_equal(m.cpu_count, online_cpus());
    assert_true(m.ram_total_bytes > 0);
    assert_true(m.ram_used_bytes > 0 && m.ram_used_bytes <= m.ram_total_bytes);
    assert_true(m.proc_rss_bytes > 0);
    assert_true(m.proc_rss_bytes < m.ram_total_bytes);

    /* this thread burns CPU for 300 ms: the process used most of one CPU */
    burn_cpu_ms(300);
    gpufl__host_metrics_read(h, gpufl__mono_ns(), &m);
    assert_int_equal(m.valid, ALL_BITS);
    print_message("real /proc: proc %u sys %u (x100 %%), rss %llu, ram %llu/%llu, %u cpus\n", m.proc_cpu_pct_x100,
                  m.sys_cpu_pct_x100, (unsigned long long)m.proc_rss_bytes, (unsigned long long)m.ram_used_bytes,
                  (unsigned long long)m.ram_total_bytes, m.cpu_count);
    assert_true(m.proc_cpu_pct_x100 >= 100); /* >= 1 %, even on a loaded machine */
    assert_true(m.proc_cpu_pct_x100 <= m.cpu_count * 10000 + 500);
    assert_true(m.sys_cpu_pct_x100 <= 10000);
    assert_true(m.proc_rss_bytes > 0);

    /* the real clock comes back after a fake one */
    gpufl__host_metrics_set_cpu_clock(h, fake_cpu_clock);
    gpufl__host_metrics_set_cpu_clock(h, NULL);
    burn_cpu_ms(100);
    gpufl__host_metrics_read(h, gpufl__mono_ns(), &m);
    assert_true(m.valid & GFL_HOST_PROC_CPU);
    assert_true(m.proc_cpu_pct_x100 >= 100);
    gpufl__host_metrics_close(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_values_over_a_sequence),
        cmocka_unit_test(test_sys_window_never_shorter_than_250ms),
        cmocka_unit_test(test_process_cpu_edge_cases),
        cmocka_unit_test(test_missing_files_clear_their_bits),
        cmocka_unit_test(test_garbage_files_clear_their_bits),
        cmocka_unit_test(test_sys_counters_going_backwards),
        cmocka_unit_test(test_metric_source),
        cmocka_unit_test(test_real_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
