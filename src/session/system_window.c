/*
 * gpufl_system_start / gpufl_system_stop (see system_window.h).
 */
#include "session/system_window.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/clock.h"
#include "core/intern.h"
#include "core/log.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "session/sampler.h"
#include "session/session.h"

#define MAX_NAMES 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint32_t name;
    uint32_t open;
} windows[MAX_NAMES];
static unsigned n_names;
static _Atomic uint32_t open_total; /* read by the sampler without the lock */

uint32_t gpufl__system_windows_open(void) { return atomic_load_explicit(&open_total, memory_order_relaxed); }

void gpufl__system_windows_reset(void)
{
    pthread_mutex_lock(&lock);
    n_names = 0;
    atomic_store_explicit(&open_total, 0, memory_order_relaxed);
    pthread_mutex_unlock(&lock);
}

static void push_window_event(uint8_t type, uint32_t name, uint32_t open, uint64_t ts)
{
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return;
    gfl_event ev = {.h = {.type = type, .ts = ts}};
    ev.u.window.name = name;
    ev.u.window.open_windows = open;
    (void)gpufl__ring_push(&p->ring, &ev, gpufl__producer_tid(p)); /* a full ring counts it lost */
}

/* Changes the count of `name` by delta (+1 or -1). Returns the windows open
 * afterwards, or -1 for a stop without a matching start. */
static int64_t change(uint32_t name, int delta)
{
    pthread_mutex_lock(&lock);
    unsigned i = 0;
    while (i < n_names && windows[i].name != name)
        i++;
    int64_t result = -1;
    if (i == n_names && delta > 0 && n_names < MAX_NAMES) {
        windows[n_names].name = name;
        windows[n_names].open = 0;
        n_names++;
    }
    if (i < n_names && (delta > 0 || windows[i].open > 0)) {
        windows[i].open += (uint32_t)delta;
        uint32_t total = atomic_load_explicit(&open_total, memory_order_relaxed) + (uint32_t)delta;
        atomic_store_explicit(&open_total, total, memory_order_relaxed);
        result = total;
    }
    pthread_mutex_unlock(&lock);
    return result;
}

GPUFL_API void gpufl_system_start(const char *name)
{
    if (!gpufl__is_recording())
        return;
    uint32_t id = gpufl__intern(name && name[0] ? name : "system");
    /* The time is taken before the window opens (and, in stop, after it
     * closes; the lock orders both), so every sample the sampler takes while
     * it sees the window open lies inside [start, stop]. */
    uint64_t ts = gpufl__now_ns();
    int64_t open = change(id, +1);
    if (open < 0) {
        gpufl__log(GFL_LOG_WARN, "gpufl_system_start(\"%s\"): more than %d window names; ignored",
                   name ? name : "system", MAX_NAMES);
        return;
    }
    push_window_event(GFL_EV_SYSTEM_START, id, (uint32_t)open, ts);
    gpufl__sampler_kick();
}

GPUFL_API void gpufl_system_stop(const char *name)
{
    if (!gpufl__is_recording())
        return;
    uint32_t id = gpufl__intern(name && name[0] ? name : "system");
    int64_t open = change(id, -1);
    if (open < 0) {
        gpufl__log(GFL_LOG_DEBUG, "gpufl_system_stop(\"%s\") without a matching start; ignored",
                   name ? name : "system");
        return;
    }
    push_window_event(GFL_EV_SYSTEM_STOP, id, (uint32_t)open, gpufl__now_ns());
}
