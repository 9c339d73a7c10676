/*
 * A fake libnvidia-ml.so.1 for the tests, so that gpufl's NVML loader
 * (src/backend/nvml/nvml_api.c), its fallbacks and the sampler run through
 * the real dlopen path on machines without a GPU. Written from NVML's
 * public C API: int return codes, opaque device handles (here pointers into
 * a static array). Any thread may call it; counters are atomic.
 *
 * Built twice (tests/CMakeLists.txt):
 *   full    exports today's names (nvmlInit_v2, nvmlDeviceGetMemoryInfo_v2,
 *           ..._ComputeRunningProcesses_v3, nvmlDeviceGetFieldValues, ...)
 *           and, like a real driver, the older ones beside them;
 *   legacy  (-DFAKE_NVML_LEGACY) only an old driver's names: no _v2/_v3
 *           variants, no nvmlDeviceGetAttributes, FieldValues or
 *           TotalEnergyConsumption; 16-byte process records.
 *
 * Script: $FAKE_NVML, read when nvmlInit takes the library from not
 * initialised to initialised (which also zeroes every call counter):
 *   devices=N            number of GPUs (default 1, at most 128)
 *   init_error=RC        nvmlInit / nvmlInit_v2 return RC and stay down
 *   error.FN=RC          every call of function FN returns RC (e.g.
 *                        error.nvmlDeviceGetPowerUsage=3); FN is any
 *                        function below, by its exported name
 *   error.FN:I=RC        the same, for device I only
 *   hide_pid=1           the calling process is not among the running
 *                        compute processes
 * An unknown key or function name makes nvmlInit fail with 999 (Unknown
 * Error) and a line on stderr, so a typo in a test cannot pass unnoticed.
 *
 * What device i reports; k is how many earlier calls that same function had
 * on that device since init (failed ones included):
 *   name "Fake GPU i", uuid "GPU-fake-i", bus id "00000000:XX:00.0" with
 *   XX = 0x19 + i in hex; compute capability 9.0; 132 SMs (attributes) or
 *   16896 CUDA cores; memory total 141 GiB, reserved 512 MiB, used
 *   (1 + i) GiB + k MiB (the v1 call counts reserved as used, as NVML
 *   does); utilization gpu (10i + 7k) % 101 %, memory (3i + 5k) % 101 %;
 *   temperature 40 + i C, memory temperature 50 + i C; power
 *   100000 + 1000i mW, enforced limit 700000 mW; energy
 *   1000000 (1 + i) + 1000k mJ; clocks SM and graphics 1410 + 10i MHz,
 *   memory 2619 MHz, max SM 1980 and max memory 2619 MHz; clocks-event
 *   reasons 0x1 for even k, 0x4 for odd; PCIe counters tx
 *   1000000000 i + 3000000 p and rx 2000000000 i + 5000000 p bytes (p: the
 *   earlier nvmlDeviceGetFieldValues calls on that device that asked for a
 *   PCIe counter); fan NOT_SUPPORTED (an SXM board); volatile
 *   ECC corrected 3 + i, uncorrected i; PCIe gen 5 x16; processes: pid 1
 *   (2 if the caller is 1) with 1 GiB, then the caller twice, with
 *   (256 + 64i) MiB and 16 MiB (two MIG instances).
 *   Driver "580.95.05", CUDA 13000; legacy "535.104.05", CUDA 12020.
 *
 * fakeNvmlCalls(name) and fakeNvmlInitDepth() let a test see which symbols
 * the loader chose and whether it shut NVML down.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999,
};

#define MAX_DEVICES 128
#define MAX_ERRORS 32
#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define MEM_TOTAL (141 * GIB)
#define MEM_RESERVED (512 * MIB)

#ifdef FAKE_NVML_LEGACY
#define DRIVER_VERSION "535.104.05"
#define CUDA_VERSION 12020
#else
#define DRIVER_VERSION "580.95.05"
#define CUDA_VERSION 13000
#endif

/* Every function, for call counts and scripted errors (the legacy build
 * counts its absent ones too; they stay 0). */
// clang-format off
#define FUNCTIONS(X)                                                                               \
    X(nvmlInit_v2) X(nvmlInit) X(nvmlShutdown) X(nvmlErrorString) X(nvmlDeviceGetCount_v2)         \
    X(nvmlDeviceGetCount) X(nvmlDeviceGetHandleByIndex_v2) X(nvmlDeviceGetHandleByIndex)           \
    X(nvmlSystemGetDriverVersion) X(nvmlSystemGetCudaDriverVersion_v2)                             \
    X(nvmlSystemGetCudaDriverVersion) X(nvmlDeviceGetName) X(nvmlDeviceGetUUID)                    \
    X(nvmlDeviceGetPciInfo_v3) X(nvmlDeviceGetPciInfo_v2) X(nvmlDeviceGetCudaComputeCapability)    \
    X(nvmlDeviceGetAttributes_v2) X(nvmlDeviceGetAttributes) X(nvmlDeviceGetNumGpuCores)           \
    X(nvmlDeviceGetMemoryInfo_v2) X(nvmlDeviceGetMemoryInfo) X(nvmlDeviceGetUtilizationRates)      \
    X(nvmlDeviceGetTemperature) X(nvmlDeviceGetPowerUsage) X(nvmlDeviceGetEnforcedPowerLimit)      \
    X(nvmlDeviceGetTotalEnergyConsumption) X(nvmlDeviceGetClockInfo) X(nvmlDeviceGetMaxClockInfo)  \
    X(nvmlDeviceGetCurrentClocksEventReasons) X(nvmlDeviceGetCurrentClocksThrottleReasons)         \
    X(nvmlDeviceGetFieldValues) X(nvmlDeviceGetFanSpeed) X(nvmlDeviceGetTotalEccErrors)            \
    X(nvmlDeviceGetComputeRunningProcesses_v3) X(nvmlDeviceGetComputeRunningProcesses_v2)          \
    X(nvmlDeviceGetComputeRunningProcesses) X(nvmlDeviceGetMaxPcieLinkGeneration)                  \
    X(nvmlDeviceGetMaxPcieLinkWidth)
// clang-format on

#define AS_ENUM(name) FN_##name,
#define AS_NAME(name) #name,
enum { FUNCTIONS(AS_ENUM) N_FN };
static const char *const fn_names[N_FN] = {FUNCTIONS(AS_NAME)};

/* ---- NVML's structs (nvml.h) --------------------------------------------- */

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t; /* _v2 and _v3 */

typedef struct {
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
    unsigned int gpuInstanceSliceCount, computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    unsigned int valueType;
    nvmlReturn_t nvmlReturn;
    union {
        double dVal;
        unsigned int uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        long long sllVal;
        int siVal;
        unsigned short usVal;
    } value;
} nvmlFieldValue_t;

_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t");

enum { FI_MEMORY_TEMP = 82, FI_PCIE_TX_BYTES = 197, FI_PCIE_RX_BYTES = 198 };
enum { VALUE_UINT = 1, VALUE_ULLONG = 3 };
enum { CLOCK_GRAPHICS = 0, CLOCK_SM = 1, CLOCK_MEM = 2 };

/* ---- state ------------------------------------------------------------- */

struct nvmlDevice_st {
    unsigned index;
    unsigned long calls[N_FN];
    unsigned long pcie_reads; /* field-value calls that asked for a PCIe counter */
};

static struct nvmlDevice_st devices[MAX_DEVICES];
static unsigned long calls[N_FN]; /* all devices, and calls without one */
static int depth;                 /* nvmlInit minus nvmlShutdown */

static struct {
    unsigned devices;
    int init_error;
    bool hide_pid;
    unsigned nerrors;
    struct {
        int fn, device; /* device -1: every device */
        nvmlReturn_t rc;
    } errors[MAX_ERRORS];
} script;

static int fn_by_name(const char *name, size_t len)
{
    for (int f = 0; f < N_FN; f++)
        if (strlen(fn_names[f]) == len && !strncmp(fn_names[f], name, len))
            return f;
    return -1;
}

/* One key=value of the script; false if it is not understood. */
static bool parse_pair(const char *key, const char *value)
{
    char *end;
    long v = strtol(value, &end, 10);
    if (!*value || *end)
        return false;
    if (!strcmp(key, "devices") && v >= 0 && v <= MAX_DEVICES) {
        script.devices = (unsigned)v;
    } else if (!strcmp(key, "init_error")) {
        script.init_error = (int)v;
    } else if (!strcmp(key, "hide_pid")) {
        script.hide_pid = v != 0;
    } else if (!strncmp(key, "error.", 6) && script.nerrors < MAX_ERRORS) {
        const char *name = key + 6, *colon = strchr(name, ':');
        int fn = fn_by_name(name, colon ? (size_t)(colon - name) : strlen(name));
        long device = -1;
        if (colon) {
            device = strtol(colon + 1, &end, 10);
            if (!colon[1] || *end || device < 0 || device >= MAX_DEVICES)
                return false;
        }
        if (fn < 0)
            return false;
        script.errors[script.nerrors].fn = fn;
        script.errors[script.nerrors].device = (int)device;
        script.errors[script.nerrors].rc = (nvmlReturn_t)v;
        script.nerrors++;
    } else {
        return false;
    }
    return true;
}

static bool parse_script(void)
{
    memset(&script, 0, sizeof script);
    script.devices = 1;
    const char *text = getenv("FAKE_NVML");
    char buf[2048];
    if (!text)
        return true;
    if (strlen(text) >= sizeof buf) {
        fprintf(stderr, "fake_nvml: FAKE_NVML is too long\n");
        return false;
    }
    memcpy(buf, text, strlen(text) + 1);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        if (!eq || !parse_pair(kv, eq + 1)) {
            fprintf(stderr, "fake_nvml: FAKE_NVML: cannot use '%s%s%s'\n", kv, eq ? "=" : "", eq ? eq + 1 : "");
            return false;
        }
    }
    return true;
}

static nvmlReturn_t scripted_error(int fn, int device)
{
    for (unsigned e = 0; e < script.nerrors; e++)
        if (script.errors[e].fn == fn && (script.errors[e].device < 0 || script.errors[e].device == device))
            return script.errors[e].rc;
    return NVML_SUCCESS;
}

static bool initialized(void) { return __atomic_load_n(&depth, __ATOMIC_ACQUIRE) > 0; }

/* Counts a call that needs no device. */
static nvmlReturn_t enter_system(int fn)
{
    __atomic_fetch_add(&calls[fn], 1, __ATOMIC_RELAXED);
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    return scripted_error(fn, -1);
}

/* Counts a call on a device handle; *k is the device's earlier calls of fn. */
static nvmlReturn_t enter_device(int fn, nvmlDevice_t h, struct nvmlDevice_st **dev, unsigned long *k)
{
    __atomic_fetch_add(&calls[fn], 1, __ATOMIC_RELAXED);
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    uintptr_t p = (uintptr_t)h, base = (uintptr_t)devices;
    if (p < base || p >= base + script.devices * sizeof devices[0] || (p - base) % sizeof devices[0] != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = h;
    *k = __atomic_fetch_add(&h->calls[fn], 1, __ATOMIC_RELAXED);
    return scripted_error(fn, (int)h->index);
}

#define ENTER(fn, h)                                                                                                   \
    struct nvmlDevice_st *dev;                                                                                         \
    unsigned long k;                                                                                                   \
    do {                                                                                                               \
        nvmlReturn_t rc_ = enter_device(FN_##fn, h, &dev, &k);                                                         \
        if (rc_ != NVML_SUCCESS)                                                                                       \
            return rc_;                                                                                                \
    } while (0)

#define ENTER_SYSTEM(fn)                                                                                               \
    do {                                                                                                               \
        nvmlReturn_t rc_ = enter_system(FN_##fn);                                                                      \
        if (rc_ != NVML_SUCCESS)                                                                                       \
            return rc_;                                                                                                \
    } while (0)

static nvmlReturn_t copy_string(char *buf, unsigned len, const char *s)
{
    if (!buf)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

/* ---- init, count, handles ---------------------------------------------- */

static nvmlReturn_t init(int fn)
{
    if (__atomic_load_n(&depth, __ATOMIC_ACQUIRE) == 0) {
        memset(calls, 0, sizeof calls);
        memset(devices, 0, sizeof devices);
        for (unsigned i = 0; i < MAX_DEVICES; i++)
            devices[i].index = i;
        if (!parse_script()) {
            __atomic_fetch_add(&calls[fn], 1, __ATOMIC_RELAXED);
            return NVML_ERROR_UNKNOWN;
        }
    }
    __atomic_fetch_add(&calls[fn], 1, __ATOMIC_RELAXED);
    nvmlReturn_t rc = script.init_error ? script.init_error : scripted_error(fn, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    __atomic_fetch_add(&depth, 1, __ATOMIC_RELEASE);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit(void) { return init(FN_nvmlInit); }

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    ENTER_SYSTEM(nvmlShutdown);
    __atomic_fetch_sub(&depth, 1, __ATOMIC_RELEASE);
    return NVML_SUCCESS;
}

static nvmlReturn_t device_count(int fn, unsigned int *count)
{
    nvmlReturn_t rc = enter_system(fn);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = script.devices;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return device_count(FN_nvmlDeviceGetCount, count); }

static nvmlReturn_t handle_by_index(int fn, unsigned int index, nvmlDevice_t *out)
{
    __atomic_fetch_add(&calls[fn], 1, __ATOMIC_RELAXED);
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (!out || index >= script.devices)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t rc = scripted_error(fn, (int)index);
    if (rc != NVML_SUCCESS)
        return rc;
    __atomic_fetch_add(&devices[index].calls[fn], 1, __ATOMIC_RELAXED);
    *out = &devices[index];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return handle_by_index(FN_nvmlDeviceGetHandleByIndex, index, device);
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlInit_v2(void) { return init(FN_nvmlInit_v2); }

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) { return device_count(FN_nvmlDeviceGetCount_v2, count); }

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    return handle_by_index(FN_nvmlDeviceGetHandleByIndex_v2, index, device);
}
#endif

/* NVML's own texts; unknown codes read "Unknown Error", as in NVML. */
EXPORT const char *nvmlErrorString(nvmlReturn_t rc)
{
    __atomic_fetch_add(&calls[FN_nvmlErrorString], 1, __ATOMIC_RELAXED);
    switch (rc) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 5: return "Already Initialized";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 8: return "Insufficient External Power";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 12: return "Unable to communicate with GPU because it is insufficiently powered";
    case 13: return "Function Not Found";
    case 15: return "GPU is lost";
    case 25: return "Argument version mismatch";
    default: return "Unknown Error";
    }
}

/* ---- system -------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    ENTER_SYSTEM(nvmlSystemGetDriverVersion);
    return copy_string(version, length, DRIVER_VERSION);
}

static nvmlReturn_t cuda_version(int fn, int *version)
{
    nvmlReturn_t rc = enter_system(fn);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!version)
        return NVML_ERROR_INVALID_ARGUMENT;
    *version = CUDA_VERSION;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version)
{
    return cuda_version(FN_nvmlSystemGetCudaDriverVersion, version);
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    return cuda_version(FN_nvmlSystemGetCudaDriverVersion_v2, version);
}
#endif

/* ---- identity and capability ------------------------------------------------ */

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    ENTER(nvmlDeviceGetName, device);
    (void)k;
    char s[32];
    snprintf(s, sizeof s, "Fake GPU %u", dev->index);
    return copy_string(name, length, s);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    ENTER(nvmlDeviceGetUUID, device);
    (void)k;
    char s[32];
    snprintf(s, sizeof s, "GPU-fake-%u", dev->index);
    return copy_string(uuid, length, s);
}

static void pci_of(const struct nvmlDevice_st *dev, nvmlPciInfo_t *pci)
{
    memset(pci, 0, sizeof *pci);
    pci->domain = 0;
    pci->bus = 0x19 + dev->index;
    pci->device = 0;
    pci->pciDeviceId = 0x233010de;
    pci->pciSubSystemId = 0x16c110de;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus & 0xff);
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus & 0xff);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    ENTER(nvmlDeviceGetPciInfo_v2, device);
    (void)k;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    pci_of(dev, pci);
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    ENTER(nvmlDeviceGetPciInfo_v3, device);
    (void)k;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    pci_of(dev, pci);
    return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    ENTER(nvmlDeviceGetCudaComputeCapability, device);
    (void)dev, (void)k;
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = 9;
    *minor = 0;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *cores)
{
    ENTER(nvmlDeviceGetNumGpuCores, device);
    (void)dev, (void)k;
    if (!cores)
        return NVML_ERROR_INVALID_ARGUMENT;
    *cores = 132 * 128;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
static nvmlReturn_t attributes(nvmlDeviceAttributes_t *a)
{
    if (!a)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(a, 0, sizeof *a);
    a->multiprocessorCount = 132;
    a->sharedCopyEngineCount = 7;
    a->sharedDecoderCount = 7;
    a->sharedJpegCount = 7;
    a->sharedOfaCount = 1;
    a->gpuInstanceSliceCount = 7;
    a->computeInstanceSliceCount = 7;
    a->memorySizeMB = MEM_TOTAL / MIB;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *a)
{
    ENTER(nvmlDeviceGetAttributes_v2, device);
    (void)dev, (void)k;
    return attributes(a);
}

EXPORT nvmlReturn_t nvmlDeviceGetAttributes(nvmlDevice_t device, nvmlDeviceAttributes_t *a)
{
    ENTER(nvmlDeviceGetAttributes, device);
    (void)dev, (void)k;
    return attributes(a);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *gen)
{
    ENTER(nvmlDeviceGetMaxPcieLinkGeneration, device);
    (void)dev, (void)k;
    if (!gen)
        return NVML_ERROR_INVALID_ARGUMENT;
    *gen = 5;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *width)
{
    ENTER(nvmlDeviceGetMaxPcieLinkWidth, device);
    (void)dev, (void)k;
    if (!width)
        return NVML_ERROR_INVALID_ARGUMENT;
    *width = 16;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    ENTER(nvmlDeviceGetEnforcedPowerLimit, device);
    (void)dev, (void)k;
    if (!limit)
        return NVML_ERROR_INVALID_ARGUMENT;
    *limit = 700000;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, unsigned int type, unsigned int *clock)
{
    ENTER(nvmlDeviceGetMaxClockInfo, device);
    (void)dev, (void)k;
    if (!clock || type > CLOCK_MEM)
        return NVML_ERROR_INVALID_ARGUMENT;
    *clock = type == CLOCK_MEM ? 2619 : 1980;
    return NVML_SUCCESS;
}

/* ---- state ---------------------------------------------------------------- */

static unsigned long long mem_used(const struct nvmlDevice_st *dev, unsigned long k)
{
    return (1 + dev->index) * GIB + k * MIB;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *m)
{
    ENTER(nvmlDeviceGetMemoryInfo, device);
    if (!m)
        return NVML_ERROR_INVALID_ARGUMENT;
    m->total = MEM_TOTAL;
    m->used = mem_used(dev, k) + MEM_RESERVED;
    m->free = m->total - m->used;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *m)
{
    ENTER(nvmlDeviceGetMemoryInfo_v2, device);
    if (!m)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->total = MEM_TOTAL;
    m->reserved = MEM_RESERVED;
    m->used = mem_used(dev, k);
    m->free = m->total - m->reserved - m->used;
    return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    ENTER(nvmlDeviceGetUtilizationRates, device);
    if (!u)
        return NVML_ERROR_INVALID_ARGUMENT;
    u->gpu = (unsigned)((10 * dev->index + 7 * k) % 101);
    u->memory = (unsigned)((3 * dev->index + 5 * k) % 101);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensor, unsigned int *temp)
{
    ENTER(nvmlDeviceGetTemperature, device);
    (void)k;
    if (!temp || sensor != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *temp = 40 + dev->index;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    ENTER(nvmlDeviceGetPowerUsage, device);
    (void)k;
    if (!power)
        return NVML_ERROR_INVALID_ARGUMENT;
    *power = 100000 + 1000 * dev->index;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    ENTER(nvmlDeviceGetTotalEnergyConsumption, device);
    if (!energy)
        return NVML_ERROR_INVALID_ARGUMENT;
    *energy = 1000000ull * (1 + dev->index) + 1000ull * k;
    return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned int type, unsigned int *clock)
{
    ENTER(nvmlDeviceGetClockInfo, device);
    (void)k;
    if (!clock || type > CLOCK_MEM)
        return NVML_ERROR_INVALID_ARGUMENT;
    *clock = type == CLOCK_MEM ? 2619 : 1410 + 10 * dev->index;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    ENTER(nvmlDeviceGetCurrentClocksThrottleReasons, device);
    (void)dev;
    if (!reasons)
        return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = k % 2 ? 0x4 : 0x1;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    ENTER(nvmlDeviceGetCurrentClocksEventReasons, device);
    (void)dev;
    if (!reasons)
        return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = k % 2 ? 0x4 : 0x1;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t *values)
{
    ENTER(nvmlDeviceGetFieldValues, device);
    if (count < 0 || (count > 0 && !values))
        return NVML_ERROR_INVALID_ARGUMENT;
    /* the byte counters move with each read of them, not with other fields */
    bool pcie = false;
    for (int f = 0; f < count; f++)
        pcie |= values[f].fieldId == FI_PCIE_TX_BYTES || values[f].fieldId == FI_PCIE_RX_BYTES;
    unsigned long p = pcie ? __atomic_fetch_add(&dev->pcie_reads, 1, __ATOMIC_RELAXED) : 0;
    for (int f = 0; f < count; f++) {
        nvmlFieldValue_t *v = &values[f];
        v->timestamp = 1700000000000000ll + (long long)k;
        v->latencyUsec = 0;
        v->nvmlReturn = NVML_SUCCESS;
        /* only the member valueType names is written: read another, get junk */
        memset(&v->value, 0xa5, sizeof v->value);
        switch (v->fieldId) {
        case FI_MEMORY_TEMP:
            v->valueType = VALUE_UINT;
            v->value.uiVal = 50 + dev->index;
            break;
        case FI_PCIE_TX_BYTES:
            v->valueType = VALUE_ULLONG;
            v->value.ullVal = 1000000000ull * dev->index + 3000000ull * p;
            break;
        case FI_PCIE_RX_BYTES:
            v->valueType = VALUE_ULLONG;
            v->value.ullVal = 2000000000ull * dev->index + 5000000ull * p;
            break;
        default: v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; break;
        }
    }
    return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
    ENTER(nvmlDeviceGetFanSpeed, device);
    (void)dev, (void)k, (void)speed;
    return NVML_ERROR_NOT_SUPPORTED;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, unsigned int error_type, unsigned int counter_type,
                                                unsigned long long *count)
{
    ENTER(nvmlDeviceGetTotalEccErrors, device);
    (void)k;
    if (!count || error_type > 1 || counter_type > 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = error_type == 0 ? 3 + dev->index : dev->index;
    return NVML_SUCCESS;
}

/* ---- processes -------------------------------------------------------------- */

/* Writes the device's process list as records of the given size (16: v1,
 * 24: v2/v3). *count is the capacity in, the number of processes out. */
static nvmlReturn_t processes(const struct nvmlDevice_st *dev, unsigned int *count, void *infos, size_t record)
{
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned me = (unsigned)getpid();
    nvmlProcessInfo_t list[3] = {
        {me == 1 ? 2 : 1, 1 * GIB, 0xffffffffu, 0xffffffffu},
        {me, (256 + 64ull * dev->index) * MIB, 0xffffffffu, 0xffffffffu},
        {me, 16 * MIB, 0xffffffffu, 0xffffffffu},
    };
    unsigned n = script.hide_pid ? 1 : 3;
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (!infos)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < n; i++) {
        unsigned char *rec = (unsigned char *)infos + (size_t)i * record;
        if (record == sizeof(nvmlProcessInfo_v1_t)) {
            nvmlProcessInfo_v1_t v1 = {list[i].pid, list[i].usedGpuMemory};
            memcpy(rec, &v1, sizeof v1);
        } else {
            memcpy(rec, &list[i], sizeof list[i]);
        }
    }
    *count = n;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                         nvmlProcessInfo_v1_t *infos)
{
    ENTER(nvmlDeviceGetComputeRunningProcesses, device);
    (void)k;
    return processes(dev, count, infos, sizeof(nvmlProcessInfo_v1_t));
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                                            nvmlProcessInfo_t *infos)
{
    ENTER(nvmlDeviceGetComputeRunningProcesses_v2, device);
    (void)k;
    return processes(dev, count, infos, sizeof(nvmlProcessInfo_t));
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                            nvmlProcessInfo_t *infos)
{
    ENTER(nvmlDeviceGetComputeRunningProcesses_v3, device);
    (void)k;
    return processes(dev, count, infos, sizeof(nvmlProcessInfo_t));
}
#endif

/* ---- for the tests ------------------------------------------------------------ */

/* Calls of the named function since NVML was last initialised from down
 * (all devices together), or -1 for a name this fake does not know. */
EXPORT long fakeNvmlCalls(const char *name)
{
    int fn = name ? fn_by_name(name, strlen(name)) : -1;
    return fn < 0 ? -1 : (long)__atomic_load_n(&calls[fn], __ATOMIC_RELAXED);
}

/* Successful nvmlInit calls not yet matched by nvmlShutdown. */
EXPORT int fakeNvmlInitDepth(void) { return __atomic_load_n(&depth, __ATOMIC_ACQUIRE); }
