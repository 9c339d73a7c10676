/*
 * Hand-written sessions for the report tests (test_report_*.c), as the
 * NDJSON lines docs/FORMAT.md defines, so that every number of the report
 * can be worked out by hand from this file:
 *
 *  - "full": one H200, gpufl scopes step > forward, backward; NVTX ranges
 *    and a mark; five kernels (gemm three times in two configurations and
 *    on two streams, a relu shorter than its launch call, a softmax with no
 *    launch times and no scope), a pinned HtoD and a pageable DtoH copy, a
 *    memset, a sync, allocations with a leak and an unmatched free, two
 *    stacks, NVML and host samples, three dropped events;
 *  - "crashed": no session_end, no scope or system log, two kernels with
 *    nothing but their times and names.
 */
#ifndef GPUFL_TESTS_REPORT_FIXTURE_H
#define GPUFL_TESTS_REPORT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs_util.h"

#define RF_START                                                                                                       \
    "{\"type\":\"session_start\",\"ts_ns\":1000000,\"wall_ns\":1790000000000000000,"                                   \
    "\"session_id\":\"golden-20261121-000000-42-abcd\",\"app_name\":\"golden\",\"pid\":42,"                            \
    "\"host\":\"node1\",\"part\":0,\"format_version\":1,\"gpufl_version\":\"0.1.0\","
#define RF_END                                                                                                         \
    "{\"type\":\"session_end\",\"ts_ns\":11000000,\"wall_ns\":1790000000010000000,"                                    \
    "\"session_id\":\"golden-20261121-000000-42-abcd\",\"app_name\":\"golden\",\"lines\":0,\"lost\":0}\n"

static const char rf_full_device[] = RF_START
    "\"channel\":\"device\"}\n"
    "{\"type\":\"device_info\",\"ts_ns\":1000100,\"device\":0,\"name\":\"NVIDIA H200\",\"uuid\":\"GPU-1\","
    "\"pci_bus_id\":\"00000000:19:00.0\",\"compute_capability\":\"9.0\",\"sm_count\":132,"
    "\"memory_total_bytes\":150754820096,\"power_limit_mw\":700000,\"pcie_max_gen\":5,\"pcie_max_width\":16,"
    "\"driver_version\":\"580.159.04\",\"cuda_driver_version\":\"13.0\"}\n"
    "{\"type\":\"stack\",\"ts_ns\":1990000,\"tid\":7,\"id\":1,\"first\":0,\"total\":2,"
    "\"frames\":[[\"/usr/lib/libcudart.so.12\",\"0x5a3c1\"],[\"/opt/app/train\",\"0x1234\"]]}\n"
    "{\"type\":\"stack\",\"ts_ns\":4550000,\"tid\":7,\"id\":2,\"first\":0,\"total\":1,\"truncated\":true,"
    "\"frames\":[[null,\"0x7f3a1c20\"]]}\n"
    "{\"type\":\"memset\",\"start_ns\":1700000,\"end_ns\":1701000,\"dur_ns\":1000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":8,\"tid\":7,\"scope\":10,\"bytes\":4096,\"value\":0,\"mem_kind\":\"device\"}\n"
    "{\"type\":\"memcpy\",\"start_ns\":1800000,\"end_ns\":1850000,\"dur_ns\":50000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":6,\"tid\":7,\"scope\":11,\"api_start_ns\":1790000,\"api_end_ns\":1795000,"
    "\"kind\":\"HtoD\",\"src_kind\":\"pinned\",\"dst_kind\":\"device\",\"bytes\":1048576}\n"
    "{\"type\":\"kernel\",\"start_ns\":2000000,\"end_ns\":3000000,\"dur_ns\":1000000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":1,\"tid\":7,\"scope\":11,\"nvtx\":\"aten::mm\",\"stack\":1,\"api_start_ns\":1990000,"
    "\"api_end_ns\":1995000,\"name\":\"gemm\",\"mangled\":\"_Z4gemmv\",\"grid\":[64,8,1],\"block\":[256,1,1],"
    "\"regs\":96,\"smem_static\":1024,\"smem_dynamic\":4096,\"local_mem\":0,\"occupancy\":0.5,"
    "\"limiter\":\"registers\"}\n"
    "{\"type\":\"kernel\",\"start_ns\":3500000,\"end_ns\":4500000,\"dur_ns\":1000000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":2,\"tid\":7,\"scope\":11,\"nvtx\":\"aten::mm\",\"stack\":1,\"api_start_ns\":3100000,"
    "\"api_end_ns\":3105000,\"name\":\"gemm\",\"mangled\":\"_Z4gemmv\",\"grid\":[64,8,1],\"block\":[256,1,1],"
    "\"regs\":96,\"smem_static\":1024,\"smem_dynamic\":4096,\"local_mem\":0,\"occupancy\":0.5,"
    "\"limiter\":\"registers\"}\n"
    "{\"type\":\"kernel\",\"start_ns\":4600000,\"end_ns\":4610000,\"dur_ns\":10000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":3,\"tid\":7,\"scope\":11,\"stack\":2,\"api_start_ns\":4550000,\"api_end_ns\":4600000,"
    "\"name\":\"relu\",\"grid\":[128,1,1],\"block\":[128,1,1],\"regs\":16,\"smem_static\":0,"
    "\"smem_dynamic\":0,\"local_mem\":0,\"occupancy\":1,\"limiter\":\"warps\"}\n"
    "{\"type\":\"dropped\",\"ts_ns\":5000000,\"tid\":7,\"reason\":\"ring_full\",\"channel\":\"device\","
    "\"count\":3,\"total\":3}\n"
    "{\"type\":\"kernel\",\"start_ns\":6000000,\"end_ns\":6500000,\"dur_ns\":500000,\"device\":0,\"context\":1,"
    "\"stream\":8,\"corr\":4,\"tid\":7,\"scope\":12,\"stack\":1,\"api_start_ns\":5900000,\"api_end_ns\":5905000,"
    "\"name\":\"gemm\",\"mangled\":\"_Z4gemmv\",\"grid\":[32,8,1],\"block\":[256,1,1],\"regs\":96,"
    "\"smem_static\":1024,\"smem_dynamic\":4096,\"local_mem\":0,\"occupancy\":0.5,\"limiter\":\"registers\"}\n"
    "{\"type\":\"kernel\",\"start_ns\":7000000,\"end_ns\":7100000,\"dur_ns\":100000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":5,\"name\":\"softmax<float, \\\"quoted\\\">\",\"grid\":[16,1,1],\"block\":[1024,1,1],"
    "\"regs\":32,\"smem_static\":0,\"smem_dynamic\":0,\"local_mem\":64}\n"
    "{\"type\":\"memcpy\",\"start_ns\":8000000,\"end_ns\":8400000,\"dur_ns\":400000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":7,\"tid\":7,\"scope\":10,\"api_start_ns\":7950000,\"api_end_ns\":7960000,"
    "\"kind\":\"DtoH\",\"src_kind\":\"device\",\"dst_kind\":\"pageable\",\"bytes\":4194304}\n"
    "{\"type\":\"sync\",\"start_ns\":8400000,\"end_ns\":8500000,\"dur_ns\":100000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":9,\"tid\":7,\"scope\":10,\"kind\":\"stream\"}\n"
    "{\"type\":\"mem_alloc\",\"ts_ns\":1600000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":20,\"tid\":7,"
    "\"scope\":10,\"address\":\"0x7f0000000000\",\"bytes\":8388608,\"kind\":\"device\"}\n"
    "{\"type\":\"mem_alloc\",\"ts_ns\":1650000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":21,\"tid\":7,"
    "\"scope\":11,\"nvtx\":\"aten::mm\",\"stack\":1,\"address\":\"0x7f0000800000\",\"bytes\":1048576,"
    "\"kind\":\"device\"}\n"
    "{\"type\":\"mem_free\",\"ts_ns\":9000000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":22,\"tid\":7,"
    "\"address\":\"0x7f0000800000\",\"bytes\":1048576,\"kind\":\"device\"}\n"
    "{\"type\":\"mem_free\",\"ts_ns\":9100000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":23,\"tid\":7,"
    "\"address\":\"0x7f00deadbee0\",\"bytes\":4096,\"kind\":\"device\"}\n" RF_END;

static const char rf_full_scope[] = RF_START
    "\"channel\":\"scope\"}\n"
    "{\"type\":\"scope_begin\",\"ts_ns\":1500000,\"tid\":7,\"id\":10,\"parent\":0,\"depth\":0,\"name\":\"step\"}\n"
    "{\"type\":\"scope_begin\",\"ts_ns\":1550000,\"tid\":7,\"id\":11,\"parent\":10,\"depth\":1,\"name\":\"forward\"}\n"
    "{\"type\":\"nvtx_range\",\"start_ns\":1980000,\"end_ns\":2000000,\"dur_ns\":20000,\"tid\":7,"
    "\"name\":\"aten::mm\",\"domain\":\"PyTorch\",\"depth\":0,\"id\":1}\n"
    "{\"type\":\"nvtx_range\",\"start_ns\":3090000,\"end_ns\":3200000,\"dur_ns\":110000,\"tid\":7,"
    "\"name\":\"aten::mm\",\"domain\":\"PyTorch\",\"depth\":0,\"id\":2}\n"
    "{\"type\":\"scope_end\",\"ts_ns\":4700000,\"tid\":7,\"id\":11,\"parent\":10,\"depth\":1,\"name\":\"forward\","
    "\"begin_ns\":1550000,\"dur_ns\":3150000}\n"
    "{\"type\":\"scope_begin\",\"ts_ns\":5000000,\"tid\":7,\"id\":12,\"parent\":10,\"depth\":1,\"name\":\"backward\"}\n"
    "{\"type\":\"nvtx_mark\",\"ts_ns\":5500000,\"tid\":7,\"name\":\"checkpoint\",\"id\":3}\n"
    "{\"type\":\"scope_end\",\"ts_ns\":6100000,\"tid\":7,\"id\":12,\"parent\":10,\"depth\":1,\"name\":\"backward\","
    "\"begin_ns\":5000000,\"dur_ns\":1100000}\n"
    "{\"type\":\"scope_end\",\"ts_ns\":9500000,\"tid\":7,\"id\":10,\"parent\":0,\"depth\":0,\"name\":\"step\","
    "\"begin_ns\":1500000,\"dur_ns\":8000000}\n" RF_END;

static const char rf_full_system[] =
    RF_START "\"channel\":\"system\"}\n"
             "{\"type\":\"host_metrics\",\"ts_ns\":2500000,\"cpu_count\":8,\"proc_cpu_pct\":50.5,"
             "\"proc_rss_bytes\":1000000000}\n"
             "{\"type\":\"device_metrics\",\"ts_ns\":2500000,\"device\":0,\"gpu_util_pct\":90,"
             "\"mem_used_bytes\":10737418240,\"mem_total_bytes\":150754820096,\"proc_mem_bytes\":1073741824}\n"
             "{\"type\":\"device_metrics\",\"ts_ns\":7500000,\"device\":0,\"gpu_util_pct\":40,"
             "\"mem_used_bytes\":12884901888,\"mem_total_bytes\":150754820096,\"proc_mem_bytes\":2147483648}\n" RF_END;

static const char rf_crashed_device[] = RF_START
    "\"channel\":\"device\"}\n"
    "{\"type\":\"kernel\",\"start_ns\":2000000,\"end_ns\":2300000,\"dur_ns\":300000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":1,\"name\":\"step_kernel\",\"grid\":[1,1,1],\"block\":[32,1,1],\"regs\":16,"
    "\"smem_static\":0,\"smem_dynamic\":0,\"local_mem\":0}\n"
    "{\"type\":\"kernel\",\"start_ns\":2500000,\"end_ns\":2600000,\"dur_ns\":100000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":2,\"name\":\"step_kernel\",\"grid\":[1,1,1],\"block\":[32,1,1],\"regs\":16,"
    "\"smem_static\":0,\"smem_dynamic\":0,\"local_mem\":0}\n";

/* Writes a fixture session into <dir>/<name>/ and returns that path in
 * path (4096 bytes). */
static inline void rf_write(const char *dir, const char *name, char *path)
{
    char file[4200];
    snprintf(path, 4096, "%s/%s", dir, name);
    if (mkdir(path, 0755) != 0) {
        perror(path);
        abort();
    }
    if (!strcmp(name, "full")) {
        snprintf(file, sizeof file, "%s/device.log", path);
        tu_write_file(file, rf_full_device);
        snprintf(file, sizeof file, "%s/scope.log", path);
        tu_write_file(file, rf_full_scope);
        snprintf(file, sizeof file, "%s/system.log", path);
        tu_write_file(file, rf_full_system);
    } else {
        snprintf(file, sizeof file, "%s/device.log", path);
        tu_write_file(file, rf_crashed_device);
    }
}

#endif /* GPUFL_TESTS_REPORT_FIXTURE_H */
