/*
 * Clock pairs: the session clock read against CLOCK_MONOTONIC and
 * CLOCK_REALTIME, with the kernel's NTP/PTP state (adjtimex), as
 * GFL_EV_CLOCK events (core/event.h; docs/FORMAT.md, `clock`).
 *
 * They are what a later merge of several sessions aligns them by: sessions
 * of one host share CLOCK_MONOTONIC exactly, sessions of several hosts
 * share CLOCK_REALTIME to within what NTP or PTP keeps them, which the
 * kernel's maxerror bounds. The session takes one at its start (its start
 * time is that pair's), the collector one every GPUFL__CLOCK_PERIOD_NS and
 * the session one at its end (its end time is that pair's): a few per
 * minute, each a few hundred ns, off every producer's path.
 *
 * Any thread; nothing here keeps state.
 */
#ifndef GPUFL_CORE_CLOCK_PAIR_H
#define GPUFL_CORE_CLOCK_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

/* How often the collector records a pair between start and end: often
 * enough that a merge can follow NTP slewing the wall clock (at most 500
 * ppm: 5 ms over the period), rarely enough to cost nothing. */
#define GPUFL__CLOCK_PERIOD_NS 10000000000ull

typedef struct gpufl__clock_pair {
    uint64_t session_ns;     /* the middle of the two session clock reads */
    uint64_t mono_ns;        /* CLOCK_MONOTONIC, read between them */
    uint64_t wall_ns;        /* CLOCK_REALTIME, read between them */
    uint32_t uncertainty_ns; /* the two session clock reads apart */
} gpufl__clock_pair;

/* The kernel's time discipline (adjtimex), in ns. */
typedef struct gpufl__ntp_state {
    bool known;  /* the kernel answered; the rest is valid only then */
    bool synced; /* it says the clock is synchronised to a reference */
    int64_t offset_ns;
    uint64_t maxerror_ns, esterror_ns;
    uint32_t status; /* STA_* bits */
} gpufl__ntp_state;

/* Reads the three clocks back to back a few times and keeps the tightest
 * read. Never fails. */
void gpufl__clock_pair_read(gpufl__clock_pair *out);

/* What adjtimex(2) said (state: its return value, -1 when it failed; tx:
 * its struct timex, as void so that this header needs no <sys/timex.h>),
 * in ns: offset is µs unless STA_NANO says ns, the errors are µs. The
 * clock is synchronised unless the kernel says TIME_ERROR or STA_UNSYNC. */
void gpufl__ntp_from_timex(int state, const void *tx, gpufl__ntp_state *out);

/* The kernel's state now: known false where adjtimex fails (a seccomp
 * filter) or does not exist. */
void gpufl__ntp_read(gpufl__ntp_state *out);

/* A GFL_EV_CLOCK event of a pair and the NTP state now; point is "start",
 * "periodic" or "end" (interned). Header tid and device are 0: the pair
 * is the process's. */
void gpufl__clock_event(const char *point, gfl_event *ev);

#endif /* GPUFL_CORE_CLOCK_PAIR_H */
