/*
 * A recorded session for the read-back tests (see record.h).
 */
#include "record.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <time.h>

#include "test_util.h"

char *tu_record_synthetic(const char *log_path, const char *app, gpufl_log_format format, uint64_t rotate_bytes)
{
    tu_setenv("GPUFL_SYNTHETIC", "kernels=2000,copies=200,memsets=20,syncs=20,allocs=20,metrics=10,"
                                 "devices=2,streams=4,threads=2,pace=1");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = app;
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    o.log_format = format;
    o.ring_events = 1u << 18;
    o.system_sample_rate_ms = 5;
    o.continuous_system_sampling = true;
    if (rotate_bytes)
        o.log_rotate_bytes = rotate_bytes;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 30; i++) {
        gpufl_scope outer = gpufl_scope_begin("epoch");
        gpufl_scope inner = gpufl_scope_begin(i % 2 ? "forward \"pass\"" : "backward\tpass");
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        gpufl_scope_end(inner);
        gpufl_scope_end(outer);
    }
    gpufl_shutdown();
    tu_unsetenv("GPUFL_SYNTHETIC");
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    return dir;
}
