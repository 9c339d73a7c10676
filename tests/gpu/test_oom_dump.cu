/*
 * A CUDA program that runs out of device memory, recorded by the Trace
 * engine with a flight window (issue 13): the failing cudaMalloc leaves a
 * dump, dumps/0001-oom, that holds the failed allocation (the bytes asked
 * for, its thread and scope) and every allocation live at that moment, and
 * the program goes on (it frees and allocates again). The dump holds
 * oom.json, the diagnosis: the request that failed and a classification.
 *
 * Why: "which allocation ran us out of memory, and what held the memory"
 * is the question an OOM leaves; the dump must answer it from the minute
 * before, with nothing recorded to disk but the window.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <jansson.h>
#include <unistd.h>

#include "fs_util.h"
#include "gpu_skip.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"

int main()
{
    skip_without_gpu();
    char *logs = tu_mkdtemp("oom");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "oom";
    o.log_path = logs;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.enable_memory_tracking = true;
    o.flight_window_s = 60;
    o.log_format = GPUFL_LOG_NONE; /* the window is all there is */
    CHECK(gpufl_init(&o), "%s", gpufl_last_error());
    CHECK(cudaFree(0) == cudaSuccess, "no CUDA context");

    size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess, "cudaMemGetInfo");
    const size_t chunk = (size_t)1 << 30;
    std::vector<void *> live;
    size_t failed_at = 0;
    gpufl_scope s = gpufl_scope_begin("fill");
    for (int i = 0; i < 1024; i++) {
        void *p = nullptr;
        cudaError_t rc = cudaMalloc(&p, chunk);
        if (rc == cudaErrorMemoryAllocation) {
            failed_at = chunk;
            (void)cudaGetLastError(); /* clear it: the program goes on */
            break;
        }
        CHECK(rc == cudaSuccess, "cudaMalloc: %s", cudaGetErrorString(rc));
        live.push_back(p);
    }
    gpufl_scope_end(s);
    CHECK(failed_at, "never ran out of memory (%zu GiB free of %zu)", free_b >> 30, total_b >> 30);
    std::printf("%zu allocations of 1 GiB live when one more failed (%zu GiB free of %zu at start)\n", live.size(),
                free_b >> 30, total_b >> 30);

    std::string dump = std::string(gpufl_session_dir()) + "/dumps/0001-oom";
    bool found = false;
    for (int i = 0; i < 1000 && !found; i++) {
        found = access(dump.c_str(), F_OK) == 0;
        if (!found)
            usleep(10000);
    }
    CHECK(found, "no dump at %s", dump.c_str());
    /* the program goes on */
    for (void *p : live)
        CHECK(cudaFree(p) == cudaSuccess, "cudaFree");
    void *again = nullptr;
    CHECK(cudaMalloc(&again, chunk) == cudaSuccess, "allocating after the OOM");
    cudaFree(again);
    gpufl_shutdown();

    gpufl_trace *t = nullptr;
    char err[512];
    CHECK(gpufl_trace_open(dump.c_str(), &t, err, sizeof err) == 0, "%s: %s", dump.c_str(), err);
    const gpufl_trace_memory *m = gpufl_trace_get_memory(t);
    size_t failed = 0, live_in_dump = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->failed && m->failed[i]) {
            failed++;
            CHECK(m->bytes[i] == chunk, "the failed allocation asked for %llu bytes, not 1 GiB",
                  (unsigned long long)m->bytes[i]);
        } else if (!m->is_free[i] && m->bytes[i] == chunk) {
            live_in_dump++;
        }
    }
    std::printf("dump: %zu failed allocation, %zu live allocations of 1 GiB\n", failed, live_in_dump);
    CHECK(failed == 1, "%zu failed allocations in the dump", failed);
    CHECK(live_in_dump == live.size(), "%zu live allocations in the dump, %zu in the program", live_in_dump,
          live.size());
    const gpufl_trace_triggers *tr = gpufl_trace_get_triggers(t);
    CHECK(tr->n >= 1 && !strcmp(gpufl_trace_string(t, tr->kind[0]), "oom"), "no oom trigger in the dump");
    gpufl_trace_close(t);

    std::string oom = dump + "/oom.json";
    json_error_t jerr;
    json_t *j = json_load_file(oom.c_str(), 0, &jerr);
    CHECK(j, "%s: %s", oom.c_str(), jerr.text);
    json_t *req = json_object_get(j, "requested_bytes");
    CHECK(json_is_integer(req) && (size_t)json_integer_value(req) == chunk, "oom.json: requested_bytes is not 1 GiB");
    const char *cls = json_string_value(json_object_get(j, "classification"));
    CHECK(cls && (!strcmp(cls, "real_exhaustion") || !strcmp(cls, "fragmentation") || !strcmp(cls, "another_process")),
          "oom.json: classification %s", cls ? cls : "missing");
    CHECK(json_array_size(json_object_get(j, "largest_live")) == (live.size() < 20 ? live.size() : 20),
          "oom.json: %zu largest live allocations", json_array_size(json_object_get(j, "largest_live")));
    std::printf("oom.json: %s: %s\n", cls, json_string_value(json_object_get(j, "explanation")));
    json_decref(j);
    tu_rm_rf(logs);
    std::printf("PASS\n");
    return 0;
}
