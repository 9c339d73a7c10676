/*
 * libFuzzer target: the NDJSON reader and the trace builder over arbitrary
 * bytes taken as one .log file (src/read/ndjson_source.c, ndjson_parse.c,
 * json_scan.c, trace_build.c), and the parallel loader (ndjson_load.c,
 * trace_merge.c) against it (fuzz_compare.h). Whatever the input, reading
 * must end in events or an error: no crash, no out-of-bounds access
 * (ASan), no undefined behaviour (UBSan), no leak, no hang. `make fuzz`
 * runs it, seeded with the logs of recorded sessions (fuzz_seeds.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "read/event_source.h"
#include "read/input.h"
#include "read/trace_internal.h"
#include "fuzz_compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpufl__input in;
    gpufl__input_memory(&in, data, size, "fuzz.log");
    gpufl__event_source *src;
    char err[1024];
    int rc = gpufl__ndjson_source_open(NULL, 0, &in, "fuzz.log", &src, err, sizeof err);
    gpufl_trace *t = NULL;
    if (rc == 0) {
        rc = gpufl__trace_build(src, &t, err, sizeof err);
        gpufl__source_close(src);
    }
    if (!fuzz_looks_gflt(data, size, 0))
        fuzz_compare(rc, t, err, data, size, "fuzz.log");
    gpufl_trace_close(t);
    return 0;
}
