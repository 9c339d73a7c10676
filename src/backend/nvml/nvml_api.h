/*
 * The slice of NVML that gpufl uses, declared here (no vendor header needed)
 * and reached through a table of function pointers filled by dlopen():
 * libgpufl has no link-time dependency on the driver, and tests substitute a
 * fake libnvidia-ml through the same loading path.
 *
 * Symbols are looked up newest version first (nvmlInit_v2 before nvmlInit,
 * nvmlDeviceGetMemoryInfo_v2 before nvmlDeviceGetMemoryInfo, ...). A function
 * the driver lacks stays NULL and the field it would fill is left absent;
 * only init, device count and device handles are required.
 *
 * Struct layouts and constants are those of NVML's public API (nvml.h).
 */
#ifndef GPUFL_BACKEND_NVML_NVML_API_H
#define GPUFL_BACKEND_NVML_NVML_API_H

#include <stddef.h>

typedef int gfl_nvml_return;
typedef struct gfl_nvml_device_st *gfl_nvml_device;

enum {
    GFL_NVML_SUCCESS = 0,
    GFL_NVML_ERROR_NOT_SUPPORTED = 3,
    GFL_NVML_ERROR_NO_PERMISSION = 4,
    GFL_NVML_ERROR_INSUFFICIENT_SIZE = 7,
    GFL_NVML_ERROR_DRIVER_NOT_LOADED = 9,
};

enum { GFL_NVML_TEMPERATURE_GPU = 0 };
enum { GFL_NVML_CLOCK_GRAPHICS = 0, GFL_NVML_CLOCK_SM = 1, GFL_NVML_CLOCK_MEM = 2 };
enum { GFL_NVML_MEMORY_ERROR_CORRECTED = 0, GFL_NVML_MEMORY_ERROR_UNCORRECTED = 1 };
enum { GFL_NVML_VOLATILE_ECC = 0 };
enum {
    GFL_NVML_FI_MEMORY_TEMP = 82,    /* °C */
    GFL_NVML_FI_PCIE_TX_BYTES = 197, /* monotonic byte counters: unlike */
    GFL_NVML_FI_PCIE_RX_BYTES = 198, /* nvmlDeviceGetPcieThroughput they don't block 20 ms */
};
enum {
    GFL_NVML_VALUE_DOUBLE = 0,
    GFL_NVML_VALUE_UINT = 1,
    GFL_NVML_VALUE_ULONG = 2,
    GFL_NVML_VALUE_ULLONG = 3,
    GFL_NVML_VALUE_SLLONG = 4,
    GFL_NVML_VALUE_SINT = 5,
    GFL_NVML_VALUE_USHORT = 6,
};

typedef struct gfl_nvml_utilization {
    unsigned int gpu;    /* % */
    unsigned int memory; /* % */
} gfl_nvml_utilization;

typedef struct gfl_nvml_memory_v1 {
    unsigned long long total, free, used;
} gfl_nvml_memory_v1;

/* v2 reports reserved memory apart, so "used" matches nvidia-smi */
typedef struct gfl_nvml_memory_v2 {
    unsigned int version; /* sizeof | 2 << 24 */
    unsigned long long total, reserved, free, used;
} gfl_nvml_memory_v2;
#define GFL_NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(gfl_nvml_memory_v2) | (2u << 24)))

typedef struct gfl_nvml_pci_info {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} gfl_nvml_pci_info;

/* nvmlProcessInfo_v1_t (16 bytes) and the _v2/_v3 layout (24 bytes) */
typedef struct gfl_nvml_process_v1 {
    unsigned int pid;
    unsigned long long used_gpu_memory;
} gfl_nvml_process_v1;
typedef struct gfl_nvml_process_v2 {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
} gfl_nvml_process_v2;

typedef struct gfl_nvml_device_attributes {
    unsigned int multiprocessor_count;
    unsigned int shared_copy_engines, shared_decoders, shared_encoders, shared_jpeg, shared_ofa;
    unsigned int gpu_instance_slices, compute_instance_slices;
    unsigned long long memory_size_mb;
} gfl_nvml_device_attributes;

typedef struct gfl_nvml_field_value {
    unsigned int field_id;
    unsigned int scope_id;
    long long timestamp;
    long long latency_us;
    unsigned int value_type;
    gfl_nvml_return nvml_return;
    union {
        double d;
        unsigned int ui;
        unsigned long ul;
        unsigned long long ull;
        long long sll;
        int si;
        unsigned short us;
    } value;
} gfl_nvml_field_value;

_Static_assert(sizeof(gfl_nvml_memory_v2) == 40, "nvmlMemory_v2_t is 40 bytes");
_Static_assert(sizeof(gfl_nvml_pci_info) == 68, "nvmlPciInfo_t is 68 bytes");
_Static_assert(sizeof(gfl_nvml_process_v1) == 16, "nvmlProcessInfo_v1_t is 16 bytes");
_Static_assert(sizeof(gfl_nvml_process_v2) == 24, "nvmlProcessInfo_v2_t is 24 bytes");
_Static_assert(sizeof(gfl_nvml_field_value) == 40, "nvmlFieldValue_t is 40 bytes");

typedef struct gpufl__nvml_api {
    void *lib;
    char path[256]; /* the library that was loaded */

    /* required */
    gfl_nvml_return (*init)(void);
    gfl_nvml_return (*shutdown)(void);
    gfl_nvml_return (*device_count)(unsigned int *count);
    gfl_nvml_return (*device_by_index)(unsigned int index, gfl_nvml_device *dev);

    /* optional: NULL when the driver lacks them */
    const char *(*error_string)(gfl_nvml_return rc);
    gfl_nvml_return (*driver_version)(char *buf, unsigned int len);
    gfl_nvml_return (*cuda_driver_version)(int *version);
    gfl_nvml_return (*device_name)(gfl_nvml_device, char *buf, unsigned int len);
    gfl_nvml_return (*device_uuid)(gfl_nvml_device, char *buf, unsigned int len);
    gfl_nvml_return (*device_pci_info)(gfl_nvml_device, gfl_nvml_pci_info *);
    gfl_nvml_return (*device_cuda_cc)(gfl_nvml_device, int *major, int *minor);
    gfl_nvml_return (*device_attributes)(gfl_nvml_device, gfl_nvml_device_attributes *);
    gfl_nvml_return (*device_num_cores)(gfl_nvml_device, unsigned int *cores);
    gfl_nvml_return (*device_memory_v2)(gfl_nvml_device, gfl_nvml_memory_v2 *);
    gfl_nvml_return (*device_memory_v1)(gfl_nvml_device, gfl_nvml_memory_v1 *);
    gfl_nvml_return (*device_utilization)(gfl_nvml_device, gfl_nvml_utilization *);
    gfl_nvml_return (*device_temperature)(gfl_nvml_device, unsigned int sensor, unsigned int *celsius);
    gfl_nvml_return (*device_power_usage)(gfl_nvml_device, unsigned int *mw);
    gfl_nvml_return (*device_power_limit)(gfl_nvml_device, unsigned int *mw);
    gfl_nvml_return (*device_energy)(gfl_nvml_device, unsigned long long *mj);
    gfl_nvml_return (*device_clock)(gfl_nvml_device, unsigned int type, unsigned int *mhz);
    gfl_nvml_return (*device_max_clock)(gfl_nvml_device, unsigned int type, unsigned int *mhz);
    gfl_nvml_return (*device_clock_reasons)(gfl_nvml_device, unsigned long long *reasons);
    gfl_nvml_return (*device_field_values)(gfl_nvml_device, int count, gfl_nvml_field_value *values);
    gfl_nvml_return (*device_fan_speed)(gfl_nvml_device, unsigned int *pct);
    gfl_nvml_return (*device_ecc_total)(gfl_nvml_device, unsigned int error_type, unsigned int counter_type,
                                        unsigned long long *count);
    /* nvmlDeviceGetComputeRunningProcesses, _v3/_v2 (24-byte records) or v1 (16) */
    gfl_nvml_return (*device_processes)(gfl_nvml_device, unsigned int *count, void *infos);
    size_t process_record_size;
    gfl_nvml_return (*device_max_pcie_gen)(gfl_nvml_device, unsigned int *gen);
    gfl_nvml_return (*device_max_pcie_width)(gfl_nvml_device, unsigned int *width);
} gpufl__nvml_api;

/*
 * Loads NVML ($GPUFL_NVML_LIBRARY if set, else libnvidia-ml.so.1, then
 * libnvidia-ml.so) and initialises it. Returns 0; GPUFL_ENOTFOUND when no
 * library could be loaded (no NVIDIA driver); GPUFL_EIO when it loaded but
 * nvmlInit failed or a required function is missing. err says which library
 * and why; on failure nothing is left loaded or initialised.
 */
int gpufl__nvml_open(gpufl__nvml_api *api, char *err, size_t err_len) __attribute__((warn_unused_result));

/* nvmlShutdown. The library stays mapped: NVML keeps its own reference
 * count and unmapping it under another user in the process is not safe. */
void gpufl__nvml_close(gpufl__nvml_api *api);

/* NVML's text for rc, or "NVML error <rc>". */
const char *gpufl__nvml_error(const gpufl__nvml_api *api, gfl_nvml_return rc);

#endif /* GPUFL_BACKEND_NVML_NVML_API_H */
