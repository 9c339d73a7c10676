/*
 * A hand-written session with the flight recorder's events, as the NDJSON
 * lines docs/FORMAT.md defines (test_trace_windows_read.c reads it as
 * NDJSON and, converted, as .gflt): a session of 10 ms (1 ms to 11 ms)
 * with
 *
 *  - two kernels (gemm 2-3 ms, relu 5-5.5 ms) and a scope (step) on thread
 *    7, GPU 0;
 *  - allocations: 8 MiB at 1.6 ms never freed, 1 MiB at 1.65 ms freed at
 *    4 ms, 2 MiB at 4.5 ms never freed, and at 6 ms a failed one of 4 GiB
 *    (address 0, "failed":true);
 *  - trace window 1 (steps, "steps 100-101 of `step`") from 2 to 4 ms,
 *    opened and closed; window 2 (trigger) opened at 7 ms and never closed,
 *    so it ends at the session's end, 11 ms;
 *  - triggers: "oom" at 6 ms on thread 7, dumped as dump-0001; "dump" at
 *    8 ms (no thread), a storm (not dumped).
 *
 * Tests only.
 */
#ifndef GPUFL_TESTS_FLIGHT_FIXTURE_H
#define GPUFL_TESTS_FLIGHT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fs_util.h"

#define FF_START                                                                                                       \
    "{\"type\":\"session_start\",\"ts_ns\":1000000,\"wall_ns\":1790000000000000000,"                                   \
    "\"session_id\":\"flight-20261121-000000-42-abcd\",\"app_name\":\"flight\",\"pid\":42,"                            \
    "\"host\":\"node1\",\"part\":0,\"format_version\":1,\"gpufl_version\":\"0.1.0\","
#define FF_END                                                                                                         \
    "{\"type\":\"session_end\",\"ts_ns\":11000000,\"wall_ns\":1790000000010000000,"                                    \
    "\"session_id\":\"flight-20261121-000000-42-abcd\",\"app_name\":\"flight\",\"lines\":0,\"lost\":0}\n"

static const char ff_device[] = FF_START
    "\"channel\":\"device\"}\n"
    "{\"type\":\"device_info\",\"ts_ns\":1000100,\"device\":0,\"name\":\"NVIDIA H200\",\"uuid\":\"GPU-1\","
    "\"sm_count\":132,\"memory_total_bytes\":150754820096}\n"
    "{\"type\":\"mem_alloc\",\"ts_ns\":1600000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":20,\"tid\":7,"
    "\"address\":\"0x7f0000000000\",\"bytes\":8388608,\"kind\":\"device\"}\n"
    "{\"type\":\"mem_alloc\",\"ts_ns\":1650000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":21,\"tid\":7,"
    "\"address\":\"0x7f0000800000\",\"bytes\":1048576,\"kind\":\"device\"}\n"
    "{\"type\":\"kernel\",\"start_ns\":2000000,\"end_ns\":3000000,\"dur_ns\":1000000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":1,\"tid\":7,\"api_start_ns\":1990000,\"api_end_ns\":1995000,\"name\":\"gemm\","
    "\"grid\":[64,8,1],\"block\":[256,1,1],\"regs\":96,\"smem_static\":0,\"smem_dynamic\":0,\"local_mem\":0}\n"
    "{\"type\":\"mem_free\",\"ts_ns\":4000000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":22,\"tid\":7,"
    "\"address\":\"0x7f0000800000\",\"bytes\":1048576,\"kind\":\"device\"}\n"
    "{\"type\":\"mem_alloc\",\"ts_ns\":4500000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":23,\"tid\":7,"
    "\"address\":\"0x7f0001000000\",\"bytes\":2097152,\"kind\":\"device\"}\n"
    "{\"type\":\"kernel\",\"start_ns\":5000000,\"end_ns\":5500000,\"dur_ns\":500000,\"device\":0,\"context\":1,"
    "\"stream\":7,\"corr\":2,\"tid\":7,\"api_start_ns\":4900000,\"api_end_ns\":4905000,\"name\":\"relu\","
    "\"grid\":[128,1,1],\"block\":[128,1,1],\"regs\":16,\"smem_static\":0,\"smem_dynamic\":0,\"local_mem\":0}\n"
    "{\"type\":\"mem_alloc\",\"ts_ns\":6000000,\"device\":0,\"context\":1,\"stream\":0,\"corr\":24,\"tid\":7,"
    "\"address\":\"0x0\",\"bytes\":4294967296,\"kind\":\"device\",\"failed\":true}\n" FF_END;

static const char ff_scope[] = FF_START
    "\"channel\":\"scope\"}\n"
    "{\"type\":\"scope_begin\",\"ts_ns\":1500000,\"tid\":7,\"id\":10,\"parent\":0,\"depth\":0,\"name\":\"step\"}\n"
    "{\"type\":\"scope_end\",\"ts_ns\":5600000,\"tid\":7,\"id\":10,\"parent\":0,\"depth\":0,\"name\":\"step\","
    "\"begin_ns\":1500000,\"dur_ns\":4100000}\n" FF_END;

static const char ff_system[] = FF_START
    "\"channel\":\"system\"}\n"
    "{\"type\":\"trace_window\",\"ts_ns\":2000000,\"index\":1,\"reason\":\"steps\","
    "\"detail\":\"steps 100-101 of `step`\"}\n"
    "{\"type\":\"trace_window\",\"ts_ns\":2000000,\"end_ns\":4000000,\"index\":1,\"reason\":\"steps\","
    "\"detail\":\"steps 100-101 of `step`\"}\n"
    "{\"type\":\"trigger\",\"ts_ns\":6000000,\"tid\":7,\"kind\":\"oom\",\"detail\":\"cudaMalloc of 4.0 GiB failed\","
    "\"outcome\":\"dumped\",\"dump\":\"dump-0001\"}\n"
    "{\"type\":\"trace_window\",\"ts_ns\":7000000,\"index\":2,\"reason\":\"trigger\"}\n"
    "{\"type\":\"trigger\",\"ts_ns\":8000000,\"kind\":\"dump\",\"detail\":\"gpufl_dump\",\"outcome\":\"storm\"}\n" FF_END;

/* Writes the session into <dir>/<name>/ and returns that path in path
 * (4096 bytes). */
static inline void ff_write(const char *dir, const char *name, char *path)
{
    char file[4200];
    snprintf(path, 4096, "%s/%s", dir, name);
    if (mkdir(path, 0755) != 0) {
        perror(path);
        abort();
    }
    snprintf(file, sizeof file, "%s/device.log", path);
    tu_write_file(file, ff_device);
    snprintf(file, sizeof file, "%s/scope.log", path);
    tu_write_file(file, ff_scope);
    snprintf(file, sizeof file, "%s/system.log", path);
    tu_write_file(file, ff_system);
}

#endif /* GPUFL_TESTS_FLIGHT_FIXTURE_H */
