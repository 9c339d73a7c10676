/*
 * The pc_sampling engine against kernels built to show one stall each.
 *
 * k_chase follows a random cycle of pointers through 256 MiB: each load
 * needs the previous one, from DRAM, so its warps wait on memory
 * (long_scoreboard) nearly all the time. k_math runs a chain of dependent
 * FMAs on registers: no memory at all. After gpufl_shutdown() the
 * session's pc_sample rows are read back: k_chase's top stall must be the
 * memory dependency, at a line inside k_chase of this file (built with
 * -lineinfo); k_math must have samples and no long_scoreboard majority;
 * the engine event must say pc_sampling ran, or name why not.
 *
 *     test_pc_sampling [early|late|deep|plain]
 *       early  gpufl_init before the first CUDA call (the default)
 *       late   the CUDA context exists first: sampling still starts on it
 *       deep   profiling_engine deep: PC sampling with SASS metrics alongside
 *       two    two processes PC-sample the GPU at once: one records
 *              pc_sampling, the other steps down to trace naming the first
 *              one's pid, and neither crashes (on an H100 the second got no
 *              samples and then crashed inside CUPTI; see pcs_claim.h)
 *       plain  no gpufl at all, for ncu to profile the same kernels
 *
 * Prints each kernel's stall shares, for comparison with ncu's warp state
 * statistics on the same kernels. Exits 1 on a failed check, 77 without a GPU.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <jansson.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs_util.h"
#include "gpu_skip.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"

#ifndef GFL_CUPTI_PLUGIN
#define GFL_CUPTI_PLUGIN ""
#endif

#define CUDA_OK(call) CHECK((call) == cudaSuccess, "%s", cudaGetErrorString(cudaGetLastError()))

static const int chase_first_line = __LINE__;
__global__ void k_chase(const uint32_t *next, uint32_t n, uint32_t steps, uint32_t *out)
{
    uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) * 4099u % n;
    for (uint32_t s = 0; s < steps; s++)
        i = next[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}
static const int chase_last_line = __LINE__;

__global__ void k_math(float *out, uint32_t steps)
{
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 1e-4f;
    for (uint32_t s = 0; s < steps; s++) {
        a = fmaf(a, b, c);
        b = fmaf(b, a, -c);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}

struct stalls {
    uint64_t total = 0;
    std::map<std::string, uint64_t> by_reason;
    std::map<uint32_t, uint64_t> by_line;
    std::string file;
};

static void run_kernels()
{
    const uint32_t n = 64u << 20; /* 256 MiB of uint32 */
    std::vector<uint32_t> perm(n);
    /* one random cycle through all n slots (Sattolo's shuffle) */
    for (uint32_t k = 0; k < n; k++)
        perm[k] = k;
    uint64_t rng = 88172645463325252ull;
    for (uint32_t k = n - 1; k > 0; k--) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t j = (uint32_t)(rng % k);
        std::swap(perm[k], perm[j]);
    }
    uint32_t *next = nullptr, *out = nullptr;
    float *fout = nullptr;
    CUDA_OK(cudaMalloc(&next, (size_t)n * sizeof *next));
    CUDA_OK(cudaMalloc(&out, 1 << 20));
    CUDA_OK(cudaMalloc(&fout, 1 << 22));
    CUDA_OK(cudaMemcpy(next, perm.data(), (size_t)n * sizeof *next, cudaMemcpyHostToDevice));
    for (int r = 0; r < 10; r++)
        k_chase<<<132 * 4, 256>>>(next, n, 20000, out);
    for (int r = 0; r < 10; r++)
        k_math<<<132 * 8, 256>>>(fout, 1 << 16);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaFree(next));
    CUDA_OK(cudaFree(out));
    CUDA_OK(cudaFree(fout));
}

static const char *str(const gpufl_trace *t, uint32_t id)
{
    const char *s = gpufl_trace_string(t, id);
    return s ? s : "";
}

static stalls of_function(const gpufl_trace *t, const char *name_part)
{
    const gpufl_trace_pc_samples *p = gpufl_trace_get_pc_samples(t);
    stalls s;
    for (size_t i = 0; i < p->n; i++) {
        if (!strstr(str(t, p->function[i]), name_part))
            continue;
        s.total += p->samples[i];
        s.by_reason[str(t, p->reason[i])] += p->samples[i];
        s.by_line[p->line[i]] += p->samples[i];
        if (p->file[i])
            s.file = str(t, p->file[i]);
    }
    return s;
}

static std::string top_reason(const stalls &s, bool stalls_only)
{
    std::string best;
    uint64_t n = 0;
    for (auto &r : s.by_reason)
        if (r.second > n && !(stalls_only && r.first == "selected"))
            best = r.first, n = r.second;
    return best;
}

static void print(const char *name, const stalls &s)
{
    std::printf("%s: %llu samples", name, (unsigned long long)s.total);
    for (auto &r : s.by_reason)
        if (r.second * 100 >= s.total)
            std::printf(", %s %.1f%%", r.first.c_str(), 100.0 * (double)r.second / (double)s.total);
    std::printf("\n");
}

/* Line n of path, trimmed of spaces and tabs, "" when there is none. */
static std::string line_text(const std::string &path, uint32_t n)
{
    FILE *f = std::fopen(path.c_str(), "r");
    std::string out;
    char buf[4096];
    for (uint32_t at = 1; f && std::fgets(buf, sizeof buf, f); at++)
        if (at == n) {
            out = buf;
            break;
        }
    if (f)
        std::fclose(f);
    size_t b = out.find_first_not_of(" \t"), e = out.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : out.substr(b, e - b + 1);
}

/* The JSON report's code and code_from of file:line among the stall lines. */
static void report_code(const gpufl_trace *t, const std::string &file, uint32_t line, std::string *code,
                        std::string *from)
{
    char *text = nullptr, err[256];
    size_t len = 0;
    CHECK(gpufl_trace_report(t, "json", 0, &text, &len, err, sizeof err) == 0, "report: %s", err);
    json_error_t jerr;
    json_t *r = json_loads(text, 0, &jerr);
    gpufl_trace_free_text(text);
    CHECK(r, "the JSON report does not parse: %s", jerr.text);
    json_t *lines = json_object_get(json_object_get(json_object_get(r, "counters"), "stalls"), "lines"), *e;
    size_t i;
    json_array_foreach(lines, i, e)
    {
        const char *f = json_string_value(json_object_get(e, "file"));
        if (f && file == f && json_integer_value(json_object_get(e, "line")) == (json_int_t)line) {
            const char *c = json_string_value(json_object_get(e, "code"));
            const char *w = json_string_value(json_object_get(e, "code_from"));
            *code = c ? c : "";
            *from = w ? w : "";
        }
    }
    json_decref(r);
}

/* Ends the session and opens what it recorded: *engine ran, for *reason. */
static gpufl_trace *end_and_open(std::string *engine, std::string *reason)
{
    std::string dir = gpufl_session_dir();
    gpufl_shutdown();
    gpufl_trace *t = nullptr;
    char err[512];
    CHECK(gpufl_trace_open(dir.c_str(), &t, err, sizeof err) == 0, "%s: %s", dir.c_str(), err);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    *engine = str(t, info->engine);
    *reason = str(t, info->engine_reason);
    return t;
}

/* One of the processes of mode two: its CUDA context (where the GPU is
 * claimed, or refused) exists before it tells the other one and waits for
 * it, so the two sessions overlap. Returns 10 for pc_sampling, 20 for a
 * step down to trace that names another process, 2 otherwise. */
static int one_of_two(int tell, int wait_for)
{
    char *logs = tu_mkdtemp("pcs-two");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "pcs_two";
    o.log_path = logs;
    o.profiling_engine = GPUFL_ENGINE_PC_SAMPLING;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.pc_sampling_period = 15;
    CHECK(gpufl_init(&o), "%s", gpufl_last_error());
    CUDA_OK(cudaFree(0));
    char b = 'x';
    CHECK(write(tell, &b, 1) == 1 && read(wait_for, &b, 1) == 1, "the other process is gone");
    run_kernels();
    std::string engine, reason;
    gpufl_trace *t = end_and_open(&engine, &reason);
    std::printf("pid %ld: engine %s%s%s\n", (long)getpid(), engine.c_str(), reason.empty() ? "" : ": ", reason.c_str());
    int code = engine == "pc_sampling"                                                    ? 10
               : engine == "trace" && reason.find("another process") != std::string::npos ? 20
                                                                                          : 2;
    gpufl_trace_close(t);
    tu_rm_rf(logs);
    return code;
}

/* Mode two: this process and a copy of it (exec'd: CUDA does not survive a
 * bare fork) sample the GPU at once. */
static int two_processes(const char *self)
{
    int to_child[2], to_parent[2];
    CHECK(pipe(to_child) == 0 && pipe(to_parent) == 0, "pipe");
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
        char tell[16], wait_for[16];
        std::snprintf(tell, sizeof tell, "%d", to_parent[1]);
        std::snprintf(wait_for, sizeof wait_for, "%d", to_child[0]);
        execl(self, self, "two_child", tell, wait_for, (char *)nullptr);
        _exit(3);
    }
    close(to_child[0]);
    close(to_parent[1]);
    int mine = one_of_two(to_child[1], to_parent[0]);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child, "waitpid");
    CHECK(WIFEXITED(status), "the other process died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    int theirs = WEXITSTATUS(status);
    CHECK((mine == 10 && theirs == 20) || (mine == 20 && theirs == 10),
          "one process should sample and the other step down naming it: got %d and %d (10 sampled, 20 stepped "
          "down)",
          mine, theirs);
    std::printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    skip_without_gpu();
    std::string mode = argc > 1 ? argv[1] : "early";
    if (mode == "two_child" && argc == 4)
        return one_of_two(std::atoi(argv[2]), std::atoi(argv[3]));
    if (mode == "two")
        return two_processes(argv[0]);
    if (mode == "plain") {
        run_kernels();
        return 0;
    }
    if (mode == "late")
        CUDA_OK(cudaFree(0)); /* the context exists before gpufl starts */
    char *logs = tu_mkdtemp("pcs");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "pcs";
    o.log_path = logs;
    o.profiling_engine = mode == "deep" ? GPUFL_ENGINE_DEEP : GPUFL_ENGINE_PC_SAMPLING;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    /* 2^15, not the default 2^19: these kernels are short, and their stall
     * shares are compared with ncu's, which need samples more than speed */
    o.pc_sampling_period = 15;
    CHECK(gpufl_init(&o), "%s", gpufl_last_error());
    run_kernels();
    std::string engine, reason;
    gpufl_trace *t = end_and_open(&engine, &reason);
    std::printf("engine %s (asked %s)%s%s\n", engine.c_str(), str(t, gpufl_trace_get_info(t)->engine_requested),
                reason.empty() ? "" : ": ", reason.c_str());
    CHECK(engine == (mode == "deep" ? "deep" : "pc_sampling"), "the session recorded as %s: %s", engine.c_str(),
          reason.c_str());

    stalls chase = of_function(t, "k_chase"), math = of_function(t, "k_math");
    print("k_chase", chase);
    print("k_math", math);
    CHECK(chase.total > 1000, "k_chase has %llu samples", (unsigned long long)chase.total);
    CHECK(math.total > 1000, "k_math has %llu samples", (unsigned long long)math.total);
    CHECK(top_reason(chase, true) == "long_scoreboard", "k_chase's top stall is %s, not long_scoreboard",
          top_reason(chase, true).c_str());
    CHECK(chase.by_reason["long_scoreboard"] * 2 > chase.total, "long_scoreboard is %llu of k_chase's %llu samples",
          (unsigned long long)chase.by_reason["long_scoreboard"], (unsigned long long)chase.total);
    CHECK(math.by_reason["long_scoreboard"] * 10 < math.total, "k_math waits on memory in %llu of %llu samples",
          (unsigned long long)math.by_reason["long_scoreboard"], (unsigned long long)math.total);
    /* the hottest line of k_chase is in k_chase, in this file */
    uint32_t hot = 0;
    uint64_t hot_n = 0;
    for (auto &l : chase.by_line)
        if (l.second > hot_n)
            hot = l.first, hot_n = l.second;
    std::printf("k_chase's hottest line: %s:%u (%.1f%% of its samples)\n", chase.file.c_str(), hot,
                chase.total ? 100.0 * (double)hot_n / (double)chase.total : 0.0);
    if (mode != "late") { /* late: the module loaded before gpufl, so no cubin */
        CHECK(chase.file.find("test_pc_sampling.cu") != std::string::npos, "k_chase's source file is \"%s\"",
              chase.file.c_str());
        CHECK(hot > (uint32_t)chase_first_line && hot < (uint32_t)chase_last_line,
              "k_chase's hottest line %u is outside k_chase (%d-%d)", hot, chase_first_line, chase_last_line);
        /* enable_source_collection: the session copied this file, and the
         * report shows the hottest line's code from the copy */
        std::string code, from, want = line_text(chase.file, hot);
        report_code(t, chase.file, hot, &code, &from);
        std::printf("k_chase's hottest line's code (%s): %s\n", from.c_str(), code.c_str());
        CHECK(from == "copy", "the hottest line's code came from \"%s\", not the session's copy", from.c_str());
        CHECK(!want.empty() && code == want, "the report's code \"%s\" is not line %u of %s (\"%s\")", code.c_str(),
              hot, chase.file.c_str(), want.c_str());
    }
    gpufl_trace_close(t);
    std::printf("ok\n");
    return 0;
}
