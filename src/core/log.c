/*
 * Library diagnostics and gpufl_last_error() (see log.h).
 */
#include "core/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/intern.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"

static _Atomic bool debug_on;
static _Atomic bool recording_on;
static __thread char last_error[512];

void gpufl__log_set_debug(bool on) { atomic_store_explicit(&debug_on, on, memory_order_relaxed); }

void gpufl__log_set_recording(bool on)
{
    atomic_store_explicit(&recording_on, on, memory_order_release);
}

static void record(int level, const char *msg)
{
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return;
    gfl_event *ev = gpufl__ring_reserve(&p->ring, GFL_CHANNEL_SYSTEM);
    if (!ev)
        return;
    ev->h.type = GFL_EV_LOG;
    ev->h.flags = 0;
    ev->h.device = 0;
    ev->h.tid = gpufl__producer_tid(p);
    ev->h.ts = gpufl__now_ns();
    ev->u.log.message = gpufl__intern(msg);
    ev->u.log.level = (uint8_t)level;
    gpufl__ring_commit(&p->ring);
}

void gpufl__log(int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (level >= GFL_LOG_WARN || atomic_load_explicit(&debug_on, memory_order_relaxed)) {
        static const char *const prefix[] = {"debug: ", "", "warning: ", "error: "};
        fprintf(stderr, "gpufl: %s%s\n", prefix[level & 3], msg);
    }
    /* Debug lines go into the session only when asked for, like on stderr. */
    if (atomic_load_explicit(&recording_on, memory_order_acquire) &&
        (level >= GFL_LOG_INFO || atomic_load_explicit(&debug_on, memory_order_relaxed)))
        record(level, msg);
}

void gpufl__set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

void gpufl__clear_error(void) { last_error[0] = '\0'; }

GPUFL_API const char *gpufl_last_error(void) { return last_error; }
