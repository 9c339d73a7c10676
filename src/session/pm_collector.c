/*
 * include/gpufl/pm_sampling.h: the public PM sampling calls, forwarded to
 * the device plugin's PM table (core/pm_api.h), so that libgpufl links no
 * CUDA. The plugin is dlopen'ed once per process, from GPUFL_DEVICE_PLUGIN
 * when set, else where the session would load it (beside libgpufl), and
 * stays loaded: collectors outlive sessions. Threads: a collector is one
 * thread's at a time; creating collectors is safe from any thread.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pm_api.h"
#include "gpufl/pm_sampling.h"
#include "session/plugin.h"

struct gpufl_pm_collector {
    int device;
    const gpufl_pm_ops *ops;
    gpufl_pm_handle *handle;
    int create_status; /* why handle is NULL */
    char error[512];
};

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static const gpufl_pm_ops *loaded;
static char load_error[512];

/* The plugin's PM table, or NULL with the reason in load_error. */
static const gpufl_pm_ops *load_ops(void)
{
    pthread_mutex_lock(&load_lock);
    if (!loaded) {
        char path[4096];
        const char *forced = getenv("GPUFL_DEVICE_PLUGIN");
        if (forced && forced[0])
            snprintf(path, sizeof path, "%s", forced);
        else
            gpufl__plugin_default_path(path, sizeof path);
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        gpufl_pm_entry_fn entry = lib ? (gpufl_pm_entry_fn)dlsym(lib, GPUFL_PM_ENTRY) : NULL;
        const gpufl_pm_ops *ops = entry ? entry() : NULL;
        if (!lib)
            snprintf(load_error, sizeof load_error,
                     "the device plugin, which holds PM sampling, could not be loaded (%s); it is built "
                     "where the CUDA toolkit is, and GPUFL_DEVICE_PLUGIN may name it",
                     dlerror());
        else if (!ops || ops->abi != GPUFL_PM_ABI || ops->size < sizeof *ops)
            snprintf(load_error, sizeof load_error, "%s has no PM sampling table of ABI %d", path, GPUFL_PM_ABI);
        else
            loaded = ops;
        if (lib && !loaded)
            dlclose(lib);
    }
    const gpufl_pm_ops *ops = loaded;
    pthread_mutex_unlock(&load_lock);
    return ops;
}

void gpufl_pm_config_init(gpufl_pm_config *cfg)
{
    if (cfg)
        gpufl__pm_config_defaults(cfg);
}

int gpufl_pm_collector_create(int device, gpufl_pm_collector **out)
{
    if (!out)
        return GPUFL_PM_E_INVALID_ARGUMENT;
    *out = NULL;
    gpufl_pm_collector *c = calloc(1, sizeof *c);
    if (!c)
        return GPUFL_PM_E_OUT_OF_MEMORY;
    c->device = device;
    c->ops = load_ops();
    if (!c->ops) {
        /* The collector still exists, so that its error can be read. */
        pthread_mutex_lock(&load_lock);
        snprintf(c->error, sizeof c->error, "%s", load_error);
        pthread_mutex_unlock(&load_lock);
        c->create_status = GPUFL_PM_E_LIBRARY_NOT_LOADED;
        *out = c;
        return c->create_status;
    }
    c->create_status = c->ops->open(device, &c->handle, c->error, sizeof c->error);
    *out = c;
    return c->create_status;
}

void gpufl_pm_collector_destroy(gpufl_pm_collector *c)
{
    if (!c)
        return;
    if (c->handle)
        c->ops->close(c->handle);
    free(c);
}

/* A collector whose create failed has no handle: every call says why. */
static int usable(gpufl_pm_collector *c)
{
    if (!c)
        return GPUFL_PM_E_INVALID_ARGUMENT;
    if (!c->handle) {
        if (!c->error[0])
            snprintf(c->error, sizeof c->error, "the collector of device %d could not be created", c->device);
        return c->create_status ? c->create_status : GPUFL_PM_E_INTERNAL;
    }
    c->error[0] = 0;
    return 0;
}

#define FORWARD(call, ...)                                                                                             \
    do {                                                                                                               \
        int rc_ = usable(c);                                                                                           \
        return rc_ ? rc_ : c->ops->call(c->handle, __VA_ARGS__);                                                       \
    } while (0)

int gpufl_pm_enable(gpufl_pm_collector *c) { FORWARD(enable, c->error, sizeof c->error); }
int gpufl_pm_configure(gpufl_pm_collector *c, const gpufl_pm_config *cfg)
{
    FORWARD(configure, cfg, c->error, sizeof c->error);
}
int gpufl_pm_start(gpufl_pm_collector *c) { FORWARD(start, c->error, sizeof c->error); }
int gpufl_pm_stop(gpufl_pm_collector *c) { FORWARD(stop, c->error, sizeof c->error); }
int gpufl_pm_disable(gpufl_pm_collector *c) { FORWARD(disable, c->error, sizeof c->error); }

int gpufl_pm_decode(gpufl_pm_collector *c, uint32_t max_samples, gpufl_pm_counter_data **out)
{
    if (!out)
        return GPUFL_PM_E_INVALID_ARGUMENT;
    *out = NULL;
    FORWARD(decode, max_samples, out, c->error, sizeof c->error);
}

void gpufl_pm_counter_data_free(gpufl_pm_counter_data *data)
{
    /* Data exists only where the plugin is loaded. */
    if (data && loaded)
        loaded->free_data(data);
}

int gpufl_pm_collector_device(const gpufl_pm_collector *c) { return c ? c->device : -1; }

const char *gpufl_pm_last_error(const gpufl_pm_collector *c) { return c ? c->error : ""; }

const char *gpufl_pm_error_string(int status)
{
    switch (status) {
    case GPUFL_PM_OK: return "GPUFL_PM_OK: no error";
    case GPUFL_PM_E_INVALID_DEVICE: return "GPUFL_PM_E_INVALID_DEVICE: no such CUDA device";
    case GPUFL_PM_E_OUT_OF_MEMORY: return "GPUFL_PM_E_OUT_OF_MEMORY: out of host or device memory";
    case GPUFL_PM_E_ALREADY_ENABLED: return "GPUFL_PM_E_ALREADY_ENABLED: PM sampling is already enabled on this device";
    case GPUFL_PM_E_NOT_ENABLED: return "GPUFL_PM_E_NOT_ENABLED: enable() first";
    case GPUFL_PM_E_NOT_CONFIGURED: return "GPUFL_PM_E_NOT_CONFIGURED: configure() first";
    case GPUFL_PM_E_ALREADY_STARTED: return "GPUFL_PM_E_ALREADY_STARTED: sampling is already running";
    case GPUFL_PM_E_ALREADY_STOPPED: return "GPUFL_PM_E_ALREADY_STOPPED: sampling is not running";
    case GPUFL_PM_E_INSUFFICIENT_PRIVILEGES:
        return "GPUFL_PM_E_INSUFFICIENT_PRIVILEGES: GPU profiling is restricted to admin users";
    case GPUFL_PM_E_LIBRARY_NOT_LOADED:
        return "GPUFL_PM_E_LIBRARY_NOT_LOADED: the device plugin or CUPTI's profiler API is missing";
    case GPUFL_PM_E_INVALID_ARGUMENT:
        return "GPUFL_PM_E_INVALID_ARGUMENT: an unknown metric, or a bad mode, interval or size";
    case GPUFL_PM_E_BUSY: return "GPUFL_PM_E_BUSY: another profiler holds the GPU's counters";
    case GPUFL_PM_E_INTERNAL: return "GPUFL_PM_E_INTERNAL: CUPTI failed";
    default: return "unknown gpufl_pm_status";
    }
}
