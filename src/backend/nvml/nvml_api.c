/*
 * Loading NVML at run time (see nvml_api.h). Called from gpufl_init and the
 * CLI, never on a hot path.
 */
#include "backend/nvml/nvml_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

/* The first of a NULL-terminated list of symbol names that the library has:
 * callers list the newest version first. */
static void *first_symbol(void *lib, const char *const *names)
{
    for (; *names; names++) {
        void *sym = dlsym(lib, *names);
        if (sym)
            return sym;
    }
    return NULL;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define BIND(field, ...) (*(void **)&api->field = first_symbol(api->lib, NAMES(__VA_ARGS__)))

static void bind_all(gpufl__nvml_api *api)
{
    BIND(init, "nvmlInit_v2", "nvmlInit");
    BIND(shutdown, "nvmlShutdown");
    BIND(device_count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    BIND(device_by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    BIND(error_string, "nvmlErrorString");
    BIND(driver_version, "nvmlSystemGetDriverVersion");
    BIND(cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");
    BIND(device_name, "nvmlDeviceGetName");
    BIND(device_uuid, "nvmlDeviceGetUUID");
    BIND(device_pci_info, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
    BIND(device_cuda_cc, "nvmlDeviceGetCudaComputeCapability");
    BIND(device_attributes, "nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes");
    BIND(device_num_cores, "nvmlDeviceGetNumGpuCores");
    BIND(device_memory_v2, "nvmlDeviceGetMemoryInfo_v2");
    BIND(device_memory_v1, "nvmlDeviceGetMemoryInfo");
    BIND(device_utilization, "nvmlDeviceGetUtilizationRates");
    BIND(device_temperature, "nvmlDeviceGetTemperature");
    BIND(device_power_usage, "nvmlDeviceGetPowerUsage");
    BIND(device_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    BIND(device_energy, "nvmlDeviceGetTotalEnergyConsumption");
    BIND(device_clock, "nvmlDeviceGetClockInfo");
    BIND(device_max_clock, "nvmlDeviceGetMaxClockInfo");
    BIND(device_clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
    BIND(device_field_values, "nvmlDeviceGetFieldValues");
    BIND(device_fan_speed, "nvmlDeviceGetFanSpeed");
    BIND(device_ecc_total, "nvmlDeviceGetTotalEccErrors");
    BIND(device_max_pcie_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
    BIND(device_max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth");
    /* the record layout follows the symbol: v2 and v3 use 24 bytes, v1 16 */
    BIND(device_processes, "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2");
    api->process_record_size = sizeof(gfl_nvml_process_v2);
    if (!api->device_processes) {
        BIND(device_processes, "nvmlDeviceGetComputeRunningProcesses");
        api->process_record_size = sizeof(gfl_nvml_process_v1);
    }
}

const char *gpufl__nvml_error(const gpufl__nvml_api *api, gfl_nvml_return rc)
{
    static __thread char buf[32];
    const char *text = api && api->error_string ? api->error_string(rc) : NULL;
    if (text)
        return text;
    snprintf(buf, sizeof buf, "NVML error %d", rc);
    return buf;
}

int gpufl__nvml_open(gpufl__nvml_api *api, char *err, size_t err_len)
{
    memset(api, 0, sizeof *api);
    const char *forced = getenv("GPUFL_NVML_LIBRARY");
    const char *const defaults[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
    const char *const one[] = {forced, NULL};
    const char *const *candidates = forced && forced[0] ? one : defaults;
    char why[512] = "";
    for (const char *const *c = candidates; *c && !api->lib; c++) {
        api->lib = dlopen(*c, RTLD_NOW | RTLD_LOCAL);
        if (api->lib)
            snprintf(api->path, sizeof api->path, "%s", *c);
        else if (!why[0])
            snprintf(why, sizeof why, "%s", dlerror());
    }
    if (!api->lib) {
        snprintf(err, err_len, "no NVIDIA driver found: %s could not be loaded (%s)", candidates[0], why);
        return GPUFL_ENOTFOUND;
    }
    bind_all(api);
    if (!api->init || !api->shutdown || !api->device_count || !api->device_by_index) {
        snprintf(err, err_len,
                 "%s lacks nvmlInit, nvmlShutdown, nvmlDeviceGetCount or "
                 "nvmlDeviceGetHandleByIndex: not a usable NVML",
                 api->path);
        goto fail;
    }
    gfl_nvml_return rc = api->init();
    if (rc != GFL_NVML_SUCCESS) {
        snprintf(err, err_len, "%s loaded, but nvmlInit failed: %s", api->path, gpufl__nvml_error(api, rc));
        goto fail;
    }
    return 0;
fail:
    /* never initialised, so nothing of ours can still use it */
    dlclose(api->lib);
    memset(api, 0, sizeof *api);
    return GPUFL_EIO;
}

void gpufl__nvml_close(gpufl__nvml_api *api)
{
    if (api->lib && api->shutdown)
        (void)api->shutdown();
    memset(api, 0, sizeof *api);
}
