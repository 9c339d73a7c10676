/*
 * libFuzzer target: the .gflt reader and the trace builder over arbitrary
 * bytes taken as one .gflt file (src/read/gflt_source.c, gflt_chunks.c,
 * gflt_decode.c, trace_build.c), and the parallel loader (gflt_load.c,
 * trace_merge.c) against it (fuzz_compare.h). Whatever the input, reading must end in
 * events or an error: no crash, no out-of-bounds access (ASan), no
 * undefined behaviour (UBSan), no leak, no hang. `make fuzz` runs it,
 * seeded with the trace.gflt files of recorded sessions (fuzz_seeds.c).
 *
 * Checksums would stop almost every mutation at the first chunk, so the
 * target fixes them up first (when the input is long enough to hold a
 * header where it claims one): the fuzzer then reaches the decoders behind
 * them. One input in four (by its length) is read as it is, so that the
 * checksum paths are fuzzed too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/gflt_format.h"
#include "fuzz_compare.h"
#include "read/event_source.h"
#include "read/input.h"
#include "read/trace_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Recomputes every checksum along the chain of chunk headers. */
static void fix_checksums(uint8_t *p, size_t n)
{
    if (n < GFLT_FILE_HEADER_SIZE)
        return;
    gpufl__le32(p + 12, gpufl__crc32c(0, p, 12));
    size_t off = GFLT_FILE_HEADER_SIZE;
    while (n - off >= GFLT_CHUNK_HEADER_SIZE) {
        uint32_t stored = gpufl__rd32(p + off + 4);
        if (stored > n - off - GFLT_CHUNK_HEADER_SIZE)
            break;
        gpufl__le32(p + off + 12, gpufl__crc32c(0, p + off + GFLT_CHUNK_HEADER_SIZE, stored));
        gpufl__le32(p + off + 16, gpufl__crc32c(0, p + off, 16));
        off += GFLT_CHUNK_HEADER_SIZE + stored;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    if (size % 4 != 3)
        fix_checksums(copy, size);
    gpufl__input in;
    gpufl__input_memory(&in, copy, size, "fuzz.gflt");
    gpufl__event_source *src;
    char err[1024];
    int rc = gpufl__gflt_source_open(&in, &src, err, sizeof err);
    gpufl_trace *t = NULL;
    if (rc == 0) {
        rc = gpufl__trace_build(src, &t, err, sizeof err);
        gpufl__source_close(src);
    }
    if (fuzz_looks_gflt(copy, size, 1))
        fuzz_compare(rc, t, err, copy, size, "fuzz.gflt");
    gpufl_trace_close(t);
    free(copy);
    return 0;
}
