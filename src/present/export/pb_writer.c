/*
 * The protocol-buffers encoder's slow path (see pb_writer.h): a nested
 * message of 128 bytes or more, whose length needs more than the one byte
 * reserved for it.
 */
#include "present/export/pb_writer.h"

void gpufl__pb_end_long(gpufl__xout *o, size_t mark, size_t body)
{
    uint8_t len[GFL_VARINT_MAX];
    size_t n = (size_t)(gpufl__put_varint(len, body) - len);
    if (!gpufl__xout_room(o, n - 1)) {
        /* out of memory: the buffer is dropped as a whole (o->err), so the
         * unpatched length is never written anywhere */
        return;
    }
    memmove(o->p + mark + n, o->p + mark + 1, body);
    memcpy(o->p + mark, len, n);
    o->len += n - 1;
}
