/*
 * For the CUPTI plugin's tests: the fake libcupti (GFL_FAKE_CUPTI, built
 * from tests/fake_cupti) loaded as the plugin will load it, and the fake's
 * steering functions resolved. A test lists the functions it uses as an
 * X-macro, FAKE_FUNCTIONS(X), and keeps them in a struct named `fake` with
 * a member `lib` and one member per function:
 *
 *     static struct { void *lib; __typeof__(&fake_cupti_launch_kernel) launch_kernel; } fake;
 *     static int setup(void **state) { TU_FAKE_CUPTI_SETUP(); ... }
 */
#ifndef GPUFL_TEST_FAKE_CUPTI_SETUP_H
#define GPUFL_TEST_FAKE_CUPTI_SETUP_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"

#define TU__RESOLVE_FAKE(name)                                                                                         \
    if (!(*(void **)&fake.name = dlsym(fake.lib, "fake_cupti_" #name)))                                                \
        return -1;

/* In a cmocka group setup: points the plugin at the fake, opens it and
 * resolves FAKE_FUNCTIONS into `fake`; returns -1 from the setup when any
 * of that fails. */
#define TU_FAKE_CUPTI_SETUP()                                                                                          \
    do {                                                                                                               \
        setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI, 1);                                                              \
        fake.lib = dlopen(GFL_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);                                                      \
        if (!fake.lib)                                                                                                 \
            return -1;                                                                                                 \
        FAKE_FUNCTIONS(TU__RESOLVE_FAKE)                                                                               \
    } while (0)

/* The CRC the fake gives a cubin (FNV-1a over its bytes and the NUL), by
 * which the plugin keys modules; the SASS metrics API reports its low 32
 * bits. */
static inline uint64_t tu_fake_cubin_crc(const char *cubin)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < strlen(cubin) + 1; i++)
        h = (h ^ (uint8_t)cubin[i]) * 1099511628211ull;
    return h;
}

/* Shuts the session down and opens what it recorded; fails the test (cmocka)
 * when it cannot. */
static inline gpufl_trace *tu_plugin_session_end(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", gpufl_session_dir());
    gpufl_shutdown();
    gpufl_trace *t = NULL;
    char err[512];
    if (gpufl_trace_open(dir, &t, err, sizeof err) != 0)
        fail_msg("%s: %s", dir, err);
    return t;
}

/* A string of t's table by id, "" for none. */
static inline const char *tu_trace_text(const gpufl_trace *t, uint32_t id)
{
    const char *s = gpufl_trace_string(t, id);
    return s ? s : "";
}

#endif /* GPUFL_TEST_FAKE_CUPTI_SETUP_H */
