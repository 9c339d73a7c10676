#!/usr/bin/env python3
"""What PM sampling at 10 us costs a PyTorch training loop, and which of the
default metric names the GPU's CUPTI accepts.

The loop is torchvision's ResNet-50 (random weights, batch 64 at 224x224,
SGD with momentum) or, without torchvision, a small convolutional net. In
one process, after warm-up, rounds of M iterations alternate: without PM
sampling, and with a gpufl.pm_sampling.Collector sampling the metrics every
10 us (GPU_TIME_INTERVAL) and a thread decoding every 100 ms, as the
recorder does. Reports ms per iteration (median of the rounds), the ratio
and its spread (min..max of the per-pair ratios), samples taken and the
mean of each metric while sampling. Needs GPUFL_LIBRARY (libgpufl.so with
libgpufl_cupti.so beside it) or an installed gpufl.

usage: bench_pm_sampling.py [--rounds R] [--iters M] [--warmup W] [--probe]
"""
import argparse
import json
import statistics
import sys
import threading
import time

sys.dont_write_bytecode = True

CANDIDATES = [
    # SM active, tensor active, DRAM read/write, PCIe read/write, per family of names
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed",
    "dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__write_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum.per_second",
    "dram__bytes_write.sum.per_second",
    "pcie__read_bytes.sum.per_second",
    "pcie__write_bytes.sum.per_second",
    "pcie__rx_bytes.sum.per_second",
    "pcie__tx_bytes.sum.per_second",
    "gr__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
]


def probe(pm):
    ok = []
    for name in CANDIDATES:
        c = pm.Collector(0)
        try:
            c.enable()
            c.configure(metrics=[name])
            ok.append(name)
            print("probe: accepted %s" % name)
        except pm.PmSamplingError as e:
            print("probe: refused %s (%s)" % (name, str(e)[:160]))
        finally:
            c.close()
    return ok


def workload():
    import torch
    dev = torch.device("cuda")
    try:
        import torchvision
        model = torchvision.models.resnet50()
        name = "ResNet-50 (torchvision), batch 64, 224x224, fp32"
        x = torch.randn(64, 3, 224, 224, device=dev)
        y = torch.randint(0, 1000, (64,), device=dev)
    except ImportError:
        nn = torch.nn
        model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, stride=2, padding=1),
                              nn.ReLU(), nn.Conv2d(128, 256, 3, stride=2, padding=1), nn.ReLU(),
                              nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.Flatten(),
                              nn.LazyLinear(1000))
        name = "4-layer conv net (no torchvision), batch 64, 128x128, fp32"
        x = torch.randn(64, 3, 128, 128, device=dev)
        y = torch.randint(0, 1000, (64,), device=dev)
    model = model.to(dev).train()
    loss_fn = torch.nn.CrossEntropyLoss()
    model(x)  # lazy layers get their shapes
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    return name, step


def timed(step, iters):
    import torch
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1000.0 / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--metrics", default="")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("SKIP: no torch")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    import gpufl.pm_sampling as pm
    name, step = workload()
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    metrics = [m for m in a.metrics.split(",") if m] or (probe(pm) if a.probe else [CANDIDATES[0]])
    # one configuration must fit one pass: keep what fits, in order
    chosen = []
    for m in metrics:
        c = pm.Collector(0)
        try:
            c.enable()
            c.configure(metrics=chosen + [m])
            chosen.append(m)
        except pm.PmSamplingError as e:
            print("left out %s: %s" % (m, str(e)[:160]))
        finally:
            c.close()
    print("metrics sampled: %s" % chosen)
    # CUPTI on an H100 refused images of 20000 samples x 6 metrics: stay near 12000 values an image
    per_image = max(1, 12000 // len(chosen))
    base, with_pm, samples, sums, overflow = [], [], 0, {m: 0.0 for m in chosen}, False
    for r in range(a.rounds):
        base.append(timed(step, a.iters))
        c = pm.Collector(0)
        c.enable()
        c.configure(metrics=chosen, sampling_interval=10000)
        stop = threading.Event()
        got = []

        def drain():
            # At 10 us the GPU samples faster than CUPTI decodes (about 25 us a
            # sample of one metric on an H100): an image that filled is followed
            # at once by the next, but only until the round ends, or this thread
            # would never catch up and the round never finish.
            while not stop.wait(0.1):
                got.append(c.decode(max_samples=per_image))
                while got[-1].more and len(got[-1]) and not stop.is_set():
                    got.append(c.decode(max_samples=per_image))

        th = threading.Thread(target=drain)
        c.start()
        th.start()
        with_pm.append(timed(step, a.iters))
        stop.set()
        th.join()
        c.stop()
        for _ in range(50):  # what is left, bounded; CUPTI refuses images much above 20000 samples
            got.append(c.decode(max_samples=per_image))
            if not got[-1].more or not len(got[-1]):
                break
        c.disable()
        c.close()
        for d in got:
            samples += len(d)
            overflow = overflow or d.overflow
            for m in chosen:
                sums[m] += sum(d.values(m))
    ratios = [w / b for w, b in zip(with_pm, base)]
    out = {
        "workload": name,
        "gpu": torch.cuda.get_device_name(0),
        "date": time.strftime("%Y-%m-%d"),
        "iters_per_round": a.iters,
        "rounds": a.rounds,
        "ms_per_iter_without": statistics.median(base),
        "ms_per_iter_with_pm_10us": statistics.median(with_pm),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "samples": samples,
        "overflow": overflow,
        "means": {m: (sums[m] / samples if samples else None) for m in chosen},
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
