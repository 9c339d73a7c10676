/*
 * A do-nothing device plugin for the stack tests (libgpufl_stacktest.so):
 * loaded by a real session like the CUPTI plugin, it hands the test the
 * session's host functions (stacktest_host), so the test's own threads can
 * capture stacks into the real rings and read them back from device.log.
 * Its name starts with "libgpufl", so its frames count as gpufl's own:
 * stacktest_call() stands in for the CUPTI callback between the program
 * and gpufl__stack_capture().
 */
#include <stddef.h>

#include "core/plugin_api.h"

#define EXPORT __attribute__((visibility("default")))

static const gpufl_plugin_host *host;

static int start(const gpufl_plugin_host *h, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    host = h;
    return 0;
}

static void flush(void) {}
static void stop(void) {}

static const gpufl_plugin plugin = {
    .size = sizeof plugin,
    .abi = GPUFL_PLUGIN_ABI,
    .name = "stacktest",
    .start = start,
    .flush = flush,
    .stop = stop,
};

EXPORT const gpufl_plugin *gpufl_plugin_entry(void) { return &plugin; }

EXPORT const gpufl_plugin_host *stacktest_host(void) { return host; }

/* Calls fn as a CUPTI callback would call the capture. The volatile keeps
 * the call from becoming a tail call, which would take this frame away. */
EXPORT __attribute__((noinline)) uint32_t stacktest_call(uint32_t (*fn)(void))
{
    volatile uint32_t id = fn();
    return id;
}
