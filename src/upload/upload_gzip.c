/*
 * gzip of request bodies (upload_gzip.h). Level 1: NDJSON of events
 * shrinks 8-15 times at level 1 and the upload waits on the network, not
 * on the compressor; higher levels cost several times the CPU for a few
 * per cent.
 */
#include "upload/upload_gzip.h"

#include "gpufl/gpufl.h"

#ifdef GPUFL_HAVE_ZLIB
#include <zlib.h>

int gpufl__gzip(const void *in, size_t n, gpufl__bytebuf *out)
{
    out->len = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip header and trailer around the deflate stream */
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return GPUFL_ENOMEM;
    size_t bound = deflateBound(&z, (uLong)n) + 64;
    if (gpufl__bytebuf_reserve(out, bound) != 0) {
        deflateEnd(&z);
        return GPUFL_ENOMEM;
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = out->p;
    z.avail_out = (uInt)(out->cap);
    int rc = deflate(&z, Z_FINISH);
    out->len = z.total_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : GPUFL_ENOMEM;
}

#else

int gpufl__gzip(const void *in, size_t n, gpufl__bytebuf *out)
{
    (void)in;
    (void)n;
    out->len = 0;
    return GPUFL_EUNSUPPORTED;
}

#endif
