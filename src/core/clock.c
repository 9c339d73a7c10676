/*
 * TSC-to-CLOCK_MONOTONIC calibration (see clock.h for why).
 *
 * Each fit takes an anchor, a (tsc, ns) pair read as close together as
 * possible, and publishes parameters that are continuous with the previous
 * fit at that anchor. The slope is the long-run ratio since the first anchor
 * plus a slew that absorbs the current error over the next interval. Fits
 * come every 20, 40, 80 ... ms at first and then once a second.
 */
#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

gpufl__clock_state gpufl__clock;

#define MAX_SLEW_PPM 1000
#define STEADY_INTERVAL_NS 1000000000ull
#define FIRST_INTERVAL_NS 20000000ull
#define FORWARD_JUMP_NS 50000000ll /* beyond this error, re-anchor instead of slewing */

static struct {
    bool initialised;
    bool tsc_ok;
    uint64_t first_tsc, first_ns;
    uint64_t last_fit_ns;
    uint64_t interval_ns;
} cal;

uint64_t gpufl__wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *gpufl__clock_source(void)
{
    return atomic_load_explicit(&gpufl__clock.active, memory_order_relaxed) ? "tsc" : "clock_gettime";
}

#if GFL_HAVE_TSC

static bool file_has_word(const char *path, const char *prefix, const char *const *words)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char line[8192];
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, prefix, strlen(prefix)) != 0)
            continue;
        found = true;
        for (const char *const *w = words; *w; w++) {
            const char *p = line;
            size_t n = strlen(*w);
            bool hit = false;
            while ((p = strstr(p, *w)) != NULL) {
                bool starts = p == line || p[-1] == ' ' || p[-1] == '\t';
                bool ends = p[n] == ' ' || p[n] == '\n' || p[n] == '\0';
                if (starts && ends) {
                    hit = true;
                    break;
                }
                p += n;
            }
            if (!hit)
                found = false;
        }
        break;
    }
    fclose(f);
    return found;
}

/* The TSC is trusted only when it ticks at a constant rate through idle
 * states and the kernel itself keeps CLOCK_MONOTONIC with it: then both
 * clocks agree across cores and the conversion is a pure rate fit. A KVM
 * guest's kvm-clock is the host's TSC scaled by the hypervisor; where the
 * hypervisor also says the guest's TSC is reliable (tsc_reliable: synced
 * across vCPUs, no watchdog needed), it is the same case one step removed,
 * and clock_gettime() there costs 2-3 times a TSC read. */
static bool tsc_trustworthy(void)
{
    const char *force = getenv("GPUFL_CLOCK");
    if (force && strcasecmp(force, "clock_gettime") == 0)
        return false;
    static const char source[] = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    static const char *const tsc_words[] = {"tsc", NULL};
    static const char *const kvm_words[] = {"kvm-clock", NULL};
    static const char *const flag_words[] = {"constant_tsc", "nonstop_tsc", NULL};
    static const char *const guest_flag_words[] = {"constant_tsc", "nonstop_tsc", "tsc_reliable", NULL};
    if (file_has_word(source, "", tsc_words))
        return file_has_word("/proc/cpuinfo", "flags", flag_words);
    return file_has_word(source, "", kvm_words) && file_has_word("/proc/cpuinfo", "flags", guest_flag_words);
}

/* Reads the TSC on both sides of clock_gettime() and keeps the tightest of a
 * few tries, so the pair is accurate to a few tens of ns. */
static void take_anchor(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best_width = 0;
    for (int i = 0; i < 7; i++) {
        uint64_t t1 = __rdtsc();
        uint64_t m = gpufl__mono_ns();
        uint64_t t2 = __rdtsc();
        /* the first try always counts, so the pair is set on every path
         * (a width of UINT64_MAX would otherwise leave it unset) */
        if (i == 0 || t2 - t1 < best_width) {
            best_width = t2 - t1;
            *tsc = t1 + (t2 - t1) / 2;
            *ns = m;
        }
    }
}

static uint64_t convert(uint64_t tsc0, uint64_t ns0, uint64_t mult, uint64_t tsc)
{
    __int128 delta = (__int128)(int64_t)(tsc - tsc0) * (__int128)mult;
    return ns0 + (uint64_t)(int64_t)(delta >> 32);
}

static void publish(uint64_t tsc0, uint64_t ns0, uint64_t mult)
{
    uint32_t active = atomic_load_explicit(&gpufl__clock.active, memory_order_relaxed);
    gpufl__clock_slot *s = &gpufl__clock.slot[active == 1 ? 1 : 0];
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    /* release fence: the odd seq must be visible before any field changes */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->tsc0, tsc0, memory_order_relaxed);
    atomic_store_explicit(&s->ns0, ns0, memory_order_relaxed);
    atomic_store_explicit(&s->mult, mult, memory_order_relaxed);
    /* release: a reader that sees the even seq sees the fields */
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
    /* release: a reader that sees the new index sees a complete slot */
    atomic_store_explicit(&gpufl__clock.active, active == 1 ? 2u : 1u, memory_order_release);
}

void gpufl__clock_init(void)
{
    if (cal.initialised)
        return;
    cal.initialised = true;
    cal.tsc_ok = tsc_trustworthy();
    if (cal.tsc_ok)
        take_anchor(&cal.first_tsc, &cal.first_ns);
    cal.last_fit_ns = cal.first_ns;
    cal.interval_ns = FIRST_INTERVAL_NS;
}

void gpufl__clock_calibrate(void)
{
    if (!cal.tsc_ok)
        return;
    uint64_t now = gpufl__mono_ns();
    if (now - cal.last_fit_ns < cal.interval_ns)
        return;
    uint64_t t, m;
    take_anchor(&t, &m);
    if (t <= cal.first_tsc)
        return;
    /* long-run slope since the first anchor, ns per tick in 32.32 */
    uint64_t slope = (uint64_t)(((unsigned __int128)(m - cal.first_ns) << 32) / (t - cal.first_tsc));
    uint32_t active = atomic_load_explicit(&gpufl__clock.active, memory_order_relaxed);
    uint64_t ns0 = m, mult = slope;
    if (active) {
        const gpufl__clock_slot *s = &gpufl__clock.slot[active - 1];
        uint64_t predicted = convert(atomic_load_explicit(&s->tsc0, memory_order_relaxed),
                                     atomic_load_explicit(&s->ns0, memory_order_relaxed),
                                     atomic_load_explicit(&s->mult, memory_order_relaxed), t);
        int64_t error = (int64_t)(m - predicted);
        if (error > FORWARD_JUMP_NS) {
            ns0 = m; /* far behind: jump forward, never backward */
        } else {
            ns0 = predicted;
            /* absorb the error over the next interval, within the slew limit */
            int64_t limit = (int64_t)(STEADY_INTERVAL_NS / 1000000ull * MAX_SLEW_PPM);
            if (error > limit)
                error = limit;
            if (error < -limit)
                error = -limit;
            __int128 adjust = (__int128)slope * error / (__int128)STEADY_INTERVAL_NS;
            mult = (uint64_t)((__int128)slope + adjust);
        }
    }
    publish(t, ns0, mult);
    cal.last_fit_ns = now;
    if (cal.interval_ns < STEADY_INTERVAL_NS)
        cal.interval_ns = cal.interval_ns * 2 > STEADY_INTERVAL_NS ? STEADY_INTERVAL_NS : cal.interval_ns * 2;
}

#else /* no TSC: gpufl__now_ns() always uses clock_gettime() */

void gpufl__clock_init(void) { cal.initialised = true; }
void gpufl__clock_calibrate(void) {}

#endif
