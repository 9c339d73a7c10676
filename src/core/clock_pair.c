/*
 * Clock pairs (see clock_pair.h).
 */
#include "core/clock_pair.h"

#include <string.h>
#include <sys/timex.h>

#include "core/clock.h"
#include "core/intern.h"

#define PAIR_TRIES 5

void gpufl__clock_pair_read(gpufl__clock_pair *out)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < PAIR_TRIES; i++) {
        uint64_t s1 = gpufl__now_ns();
        uint64_t mono = gpufl__mono_ns();
        uint64_t wall = gpufl__wall_ns();
        uint64_t s2 = gpufl__now_ns();
        /* a session clock that went back (it never should: clock.h) is
         * no bound at all; the widest pair still gets kept over none */
        uint64_t width = s2 >= s1 ? s2 - s1 : UINT32_MAX;
        if (width < best) {
            best = width;
            out->session_ns = s1 + width / 2;
            out->mono_ns = mono;
            out->wall_ns = wall;
            out->uncertainty_ns = width > UINT32_MAX ? UINT32_MAX : (uint32_t)width;
        }
    }
}

void gpufl__ntp_from_timex(int state, const void *txp, gpufl__ntp_state *out)
{
    memset(out, 0, sizeof *out);
    if (state < 0)
        return;
    const struct timex *tx = txp;
    out->known = true;
    out->status = (uint32_t)tx->status;
    out->synced = state != TIME_ERROR && !(tx->status & STA_UNSYNC);
    out->offset_ns = (tx->status & STA_NANO) ? (int64_t)tx->offset : (int64_t)tx->offset * 1000;
    out->maxerror_ns = tx->maxerror > 0 ? (uint64_t)tx->maxerror * 1000 : 0;
    out->esterror_ns = tx->esterror > 0 ? (uint64_t)tx->esterror * 1000 : 0;
}

void gpufl__ntp_read(gpufl__ntp_state *out)
{
    struct timex tx;
    memset(&tx, 0, sizeof tx); /* modes 0: only read, which needs no privilege */
    gpufl__ntp_from_timex(adjtimex(&tx), &tx, out);
}

void gpufl__clock_event(const char *point, gfl_event *ev)
{
    gpufl__clock_pair p;
    gpufl__ntp_state ntp;
    gpufl__ntp_read(&ntp);
    gpufl__clock_pair_read(&p);
    memset(ev, 0, sizeof *ev);
    ev->h.type = GFL_EV_CLOCK;
    ev->h.ts = p.session_ns;
    ev->u.clock.mono_ns = p.mono_ns;
    ev->u.clock.wall_ns = p.wall_ns;
    ev->u.clock.uncertainty_ns = p.uncertainty_ns;
    ev->u.clock.point = gpufl__intern(point);
    if (ntp.known) {
        ev->u.clock.ntp = gpufl__intern(ntp.synced ? "synchronised" : "unsynchronised");
        ev->u.clock.ntp_offset_ns = ntp.offset_ns;
        ev->u.clock.ntp_maxerror_ns = ntp.maxerror_ns;
        ev->u.clock.ntp_esterror_ns = ntp.esterror_ns;
        ev->u.clock.ntp_status = ntp.status;
    }
}
