/*
 * One PyTorch training step as gpufl.torch records it, written by hand
 * (ana_fixture.h) for the tests of the ops analysis and its renderers: the
 * shape of python/tests/test_analyzer.py's _torch_session, plus what the
 * C side adds up (a copy, an allocation, the autograd engine's wrapper
 * range, work outside any op).
 *
 * Thread 100 (forward), times after the session start (+1 ms):
 *   nn.Module: Net            [1 us, 100 us)
 *     nn.Module: Net.fc       [2 us, 50 us)
 *       aten::linear seq 5    [3 us, 40 us)
 *         aten::t seq 5       [4 us, 10 us)
 *         aten::addmm seq 6   [11 us, 39 us)   kernels gemm 4 us, bias 1 us
 *     aten::relu seq 7        [60 us, 90 us)   kernel relu 2 us, a 1 us copy
 *   aten::empty               [300 us, 310 us) a 4 KiB allocation
 *   forward                   [320 us, 330 us) a 0.7 us kernel: no op
 * Thread 200 (autograd):
 *   autograd::engine::evaluate_function: AddmmBackward0 [199 us, 262 us)
 *                                                 kernel wrap 0.5 us
 *     AddmmBackward0 seq 6    [200 us, 260 us)
 *       aten::mm              [205 us, 250 us)   kernel gemm_bwd 8 us
 *   TBackward0 seq 5          [270 us, 280 us)   kernel t_bwd 3 us
 *   aten::threshold_backward seq 7 [290 us, 295 us) kernel thr_bwd 1.5 us
 *
 * So, by op (forward ns / backward ns): aten::addmm in Net.fc 5000 / 8000
 * (3 kernels), aten::relu in Net 3000 / 1500 (2 kernels and the copy),
 * aten::t in Net.fc 0 / 3000, the wrapper (backward only, no module)
 * 0 / 500, aten::linear and aten::empty nothing (aten::empty the
 * allocation); 700 ns outside any op; 21 700 ns in all.
 */
#ifndef GPUFL_TEST_OPS_FIXTURE_H
#define GPUFL_TEST_OPS_FIXTURE_H

#include "ana_fixture.h"

#define OF_T AF_START
#define OF_MAIN 100
#define OF_AUTOGRAD 200
#define OF_WRAPPER "autograd::engine::evaluate_function: AddmmBackward0"

/* An NVTX push/pop range with its depth and, when seq >= 0, PyTorch's
 * sequence number (times in us after OF_T). */
static inline void of_range(af *f, unsigned tid, uint64_t id, const char *name, unsigned depth, int seq, uint64_t b_us,
                            uint64_t e_us)
{
    char seqf[32] = "";
    if (seq >= 0)
        snprintf(seqf, sizeof seqf, ",\"seq\":%d", seq);
    af_line(f, AF_SCOPE,
            "{\"type\":\"nvtx_range\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"tid\":%u,"
            "\"name\":\"%s\",\"depth\":%u,\"id\":%llu%s}",
            (unsigned long long)(OF_T + b_us * 1000), (unsigned long long)(OF_T + e_us * 1000),
            (unsigned long long)((e_us - b_us) * 1000), tid, name, depth, (unsigned long long)id, seqf);
}

/* A kernel of dur ns at start_ns (after OF_T), launched at api_ns by tid
 * inside the range named nvtx. */
static inline void of_kernel(af *f, const char *name, uint64_t start_ns, uint64_t dur, unsigned tid, uint64_t api_ns,
                             const char *nvtx)
{
    af_kernel(f, (af_k){.stream = 7,
                        .start = OF_T + start_ns,
                        .end = OF_T + start_ns + dur,
                        .name = name,
                        .tid = tid,
                        .api_start = OF_T + api_ns,
                        .api_end = OF_T + api_ns + 500,
                        .nvtx = nvtx});
}

static inline void of_torch_session(af *f)
{
    f->end_ns = OF_T + 1000000;
    of_range(f, OF_MAIN, 1, "nn.Module: Net", 0, -1, 1, 100);
    of_range(f, OF_MAIN, 2, "nn.Module: Net.fc", 1, -1, 2, 50);
    of_range(f, OF_MAIN, 3, "aten::linear", 2, 5, 3, 40);
    of_range(f, OF_MAIN, 4, "aten::t", 3, 5, 4, 10);
    of_range(f, OF_MAIN, 5, "aten::addmm", 3, 6, 11, 39);
    of_range(f, OF_MAIN, 6, "aten::relu", 1, 7, 60, 90);
    of_range(f, OF_AUTOGRAD, 13, OF_WRAPPER, 0, -1, 199, 262);
    of_range(f, OF_AUTOGRAD, 7, "AddmmBackward0", 1, 6, 200, 260);
    of_range(f, OF_AUTOGRAD, 12, "aten::mm", 2, -1, 205, 250);
    of_range(f, OF_AUTOGRAD, 8, "TBackward0", 0, 5, 270, 280);
    of_range(f, OF_AUTOGRAD, 9, "aten::threshold_backward", 0, 7, 290, 295);
    of_range(f, OF_MAIN, 10, "aten::empty", 0, -1, 300, 310);
    of_range(f, OF_MAIN, 11, "forward", 0, -1, 320, 330);
    of_kernel(f, "gemm", 20000, 4000, OF_MAIN, 12000, "aten::addmm");
    of_kernel(f, "bias", 25000, 1000, OF_MAIN, 13000, "aten::addmm");
    of_kernel(f, "relu", 70000, 2000, OF_MAIN, 61000, "aten::relu");
    af_line(f, AF_DEVICE,
            "{\"type\":\"memcpy\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":1000,\"device\":0,\"context\":1,"
            "\"stream\":7,\"corr\":0,\"kind\":\"HtoD\",\"src_kind\":\"pinned\",\"dst_kind\":\"device\","
            "\"bytes\":4096,\"tid\":%u,\"api_start_ns\":%llu,\"api_end_ns\":%llu,\"nvtx\":\"aten::relu\"}",
            (unsigned long long)(OF_T + 80000), (unsigned long long)(OF_T + 81000), OF_MAIN,
            (unsigned long long)(OF_T + 62000), (unsigned long long)(OF_T + 62500));
    of_kernel(f, "gemm_bwd", 230000, 8000, OF_AUTOGRAD, 210000, "aten::mm");
    of_kernel(f, "wrap", 239000, 500, OF_AUTOGRAD, 199500, OF_WRAPPER);
    of_kernel(f, "t_bwd", 272000, 3000, OF_AUTOGRAD, 271000, "TBackward0");
    of_kernel(f, "thr_bwd", 292000, 1500, OF_AUTOGRAD, 291000, "aten::threshold_backward");
    of_kernel(f, "outside", 326000, 700, OF_MAIN, 325000, "forward");
    af_line(f, AF_DEVICE,
            "{\"type\":\"mem_alloc\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":0,\"corr\":0,"
            "\"address\":\"0x7f0000000000\",\"bytes\":4096,\"kind\":\"device\",\"tid\":%u,\"nvtx\":\"aten::empty\"}",
            (unsigned long long)(OF_T + 305000), OF_MAIN);
}

#endif /* GPUFL_TEST_OPS_FIXTURE_H */
