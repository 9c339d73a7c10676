#!/bin/sh
# `make demo`: records an example workload with gpufl, then shows what gpufl
# makes of it: the report (text, and HTML), and a Perfetto trace.
#
#   with a GPU and PyTorch: examples/train_sample.py (a small training run)
#                           under `gpufl run`, the Trace engine recording
#                           every kernel, copy, sync and allocation;
#   otherwise:              examples/demo.c (scopes, threads, host
#                           metrics), then the bundled real session
#                           samples/train_sample, recorded on an H200.
#
# Usage: tools/demo.sh BUILD_DIR LOG_DIR
set -eu
build=$1
logs=$2
gpufl=$build/gpufl

# Reports one session: text on stdout, HTML and Perfetto files in $build.
show() {
    dir=$1 name=$2
    echo && echo "== gpufl report $dir"
    "$gpufl" report "$dir"
    "$gpufl" report "$dir" --format html -o "$build/$name-report.html"
    "$gpufl" export "$dir" -f perfetto -o "$build/$name.perfetto-trace" >/dev/null
    echo
    echo "== HTML report (open it in a browser): $build/$name-report.html"
    echo "== Perfetto trace (open it at ui.perfetto.dev): $build/$name.perfetto-trace"
}

if "$gpufl" devices >/dev/null 2>&1 && python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "== recording examples/train_sample.py on the GPU under gpufl run (Trace engine)"
    mkdir -p "$logs"
    GPUFL_ENABLE_MEMORY_TRACKING=1 "$gpufl" run --log-path "$logs" --app-name train_demo -- \
        python3 examples/train_sample.py --steps 30
    dir=$(ls -td "$logs"/train_demo-*/ | head -1)
    show "${dir%/}" demo
    exit 0
fi

echo "== recording examples/demo.c (nested scopes, loader threads, CPU work, host sampling)"
dir=$("$build/examples/demo" "$logs")
echo "== session directory: $dir" && ls -l "$dir" && echo
"$gpufl" summary "$dir"
show "$dir" demo
echo
echo "== no GPU (or no PyTorch) here: a real session recorded on an H200 (samples/train_sample)"
show samples/train_sample sample
