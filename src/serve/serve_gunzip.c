/* gzip bodies undone under a cap (serve_gunzip.h). */
#include "serve/serve_gunzip.h"

#include <zlib.h>

#include "gpufl/gpufl.h"

int gpufl__serve_gunzip(const void *in, size_t n, size_t cap, gpufl__bytebuf *out)
{
    out->len = 0;
    z_stream z = {0};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return GPUFL_ENOMEM;
    z.next_in = (Bytef *)in;
    int rc = 0;
    size_t left = n;
    for (;;) {
        if (z.avail_in == 0) {
            uInt take = left > (1u << 30) ? (1u << 30) : (uInt)left;
            z.avail_in = take;
            left -= take;
        }
        if (out->len == cap) {
            rc = GPUFL_EUNSUPPORTED;
            break;
        }
        size_t room = out->len + (1u << 20) > cap ? cap - out->len : (1u << 20);
        if (gpufl__bytebuf_reserve(out, room) != 0) {
            rc = GPUFL_ENOMEM;
            break;
        }
        z.next_out = out->p + out->len;
        z.avail_out = (uInt)room;
        int zr = inflate(&z, Z_NO_FLUSH);
        out->len += room - z.avail_out;
        if (zr == Z_STREAM_END) {
            if (z.avail_in == 0 && left == 0)
                break;
            /* another member follows */
            if (inflateReset(&z) != Z_OK) {
                rc = GPUFL_ECORRUPT;
                break;
            }
            continue;
        }
        if (zr == Z_BUF_ERROR && z.avail_in == 0 && left == 0) {
            rc = GPUFL_ECORRUPT; /* the stream ends before its end */
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = zr == Z_MEM_ERROR ? GPUFL_ENOMEM : GPUFL_ECORRUPT;
            break;
        }
    }
    inflateEnd(&z);
    return rc;
}
