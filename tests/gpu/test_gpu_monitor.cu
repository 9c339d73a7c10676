/*
 * The Monitor engine on a real GPU (issue 3): NVML samples inside a scope
 * while a kernel keeps the GPU busy, none outside the scope, the GPU busy in
 * those samples, device_info and session.json describing the device, and no
 * CUPTI library anywhere in the process (Monitor must never load it).
 */
#include <cstring>
#include <ctime>
#include <string>

#include "gpu_skip.h"
#include "spin.cuh"
#include "gpufl/gpufl.h"
#include "test_util.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
}

static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static long long num(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

int main()
{
    skip_without_gpu();
    char *logs = tu_mkdtemp("gpu-monitor");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "gpu_monitor";
    o.log_path = logs;
    o.system_sample_rate_ms = 10; /* windows only: the scope below */
    CHECK(gpufl_init(&o), "%s", gpufl_last_error());

    void *buf = nullptr;
    CHECK(cudaMalloc(&buf, 256u << 20) == cudaSuccess, "cudaMalloc");
    CHECK(cudaMemset(buf, 0, 256u << 20) == cudaSuccess, "cudaMemset");
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
    sleep_ms(150); /* no window open: no sample */

    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    gpufl_scope s = gpufl_scope_begin("busy");
    spin<<<sms * 4, 256>>>(500000000ull); /* 0.5 s on every SM */
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "spin kernel");
    gpufl_scope_end(s);
    sleep_ms(150);

    CHECK(!tu_mapped("libcupti"), "a CUPTI library is mapped in Monitor mode");
    gpufl_shutdown();
    cudaFree(buf);

    char *dir = tu_session_dir(logs);
    CHECK(dir, "one session directory under %s", logs);
    tu_ndjson scope, system, device;
    CHECK(tu_ndjson_load_channel(dir, "scope", &scope) == 0, "scope.log");
    CHECK(tu_ndjson_load_channel(dir, "system", &system) == 0, "system.log");
    CHECK(tu_ndjson_load_channel(dir, "device", &device) == 0, "device.log");

    json_t *end = tu_nth_type(&scope, "scope_end", 0);
    CHECK(end, "the busy scope ended");
    long long from = num(end, "begin_ns"), to = num(end, "ts_ns");

    size_t n = tu_count_type(&system, "device_metrics"), busy = 0;
    long long max_util = -1;
    CHECK(n >= 20, "%zu device samples in a 0.5 s window at 10 ms", n);
    for (size_t i = 0; i < n; i++) {
        json_t *m = tu_nth_type(&system, "device_metrics", i);
        long long ts = num(m, "ts_ns");
        CHECK(ts >= from && ts <= to, "device sample at %lld outside the scope [%lld, %lld]", ts, from, to);
        CHECK(num(m, "mem_total_bytes") > 0 && num(m, "mem_used_bytes") >= (256ll << 20),
              "memory used %lld holds our 256 MiB", num(m, "mem_used_bytes"));
        CHECK(json_object_get(m, "temp_c") && json_object_get(m, "power_mw"), "temperature and power");
        long long util = num(m, "gpu_util_pct");
        if (util > max_util)
            max_util = util;
        busy += util >= 50;
    }
    CHECK(max_util >= 90, "the GPU was busy in the window (max utilization %lld%%)", max_util);
    std::printf("%zu device samples in the window, %zu at >= 50%% utilization, max %lld%%\n", n, busy, max_util);
    json_t *first = tu_nth_type(&system, "device_metrics", 0);
    std::printf("proc_mem_bytes %s\n", json_object_get(first, "proc_mem_bytes") ? "reported" : "absent");

    json_t *info = tu_nth_type(&device, "device_info", 0);
    CHECK(info, "a device_info line");
    CHECK(str(info, "name") && std::strstr(str(info, "name"), "NVIDIA"), "name %s", str(info, "name"));
    CHECK(str(info, "uuid") && !std::strncmp(str(info, "uuid"), "GPU-", 4), "uuid");
    CHECK(str(info, "compute_capability"), "compute capability");
    CHECK(num(info, "sm_count") == sms, "sm_count %lld, CUDA says %d", num(info, "sm_count"), sms);
    json_t *session = tu_session_json(dir);
    json_t *dev0 = json_array_get(json_object_get(session, "devices"), 0);
    CHECK(dev0 && !std::strcmp(str(dev0, "uuid"), str(info, "uuid")), "session.json names the same GPU");
    std::printf("device 0: %s, %s, cc %s, %lld SMs, driver %s, CUDA %s\n", str(info, "name"), str(info, "pci_bus_id"),
                str(info, "compute_capability"), num(info, "sm_count"), str(info, "driver_version"),
                str(info, "cuda_driver_version"));
    json_decref(session);
    tu_ndjson_free(&scope);
    tu_ndjson_free(&system);
    tu_ndjson_free(&device);
    tu_rm_rf(logs);
    std::printf("PASS\n");
    return 0;
}
