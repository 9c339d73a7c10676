/*
 * Library diagnostics and gpufl_last_error() (see log.h).
 */
#include "core/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "gpufl/gpufl.h"

static _Atomic bool debug_on;
static gpufl__log_recorder *_Atomic recorder;
static __thread char last_error[512];

void gpufl__log_set_debug(bool on) { atomic_store_explicit(&debug_on, on, memory_order_relaxed); }

void gpufl__log_set_recorder(gpufl__log_recorder *fn) { atomic_store_explicit(&recorder, fn, memory_order_release); }

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
    gpufl__log_recorder *record = atomic_load_explicit(&recorder, memory_order_acquire);
    if (record && (level >= GFL_LOG_INFO || atomic_load_explicit(&debug_on, memory_order_relaxed)))
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
