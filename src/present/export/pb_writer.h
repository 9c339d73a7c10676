/*
 * A minimal protocol-buffers encoder for the Perfetto export: varint,
 * fixed64 and length-delimited fields appended to an export buffer, with
 * nested messages whose length is patched in when they end. No schema, no
 * allocation beyond the buffer's; field numbers are the caller's.
 *
 * A nested message reserves one length byte; when it ends longer than 127
 * bytes its body moves up by the extra length bytes. Perfetto packets are
 * a few dozen bytes, so that move is rare (interned names, descriptors) and
 * the output carries no padded varints.
 *
 * Wire format: https://protobuf.dev/programming-guides/encoding/ (tag =
 * field << 3 | wire type; 0 varint, 1 fixed64, 2 length-delimited).
 * Single-threaded; inline because the export calls these ~10 times per
 * event.
 */
#ifndef GPUFL_PRESENT_EXPORT_PB_WRITER_H
#define GPUFL_PRESENT_EXPORT_PB_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/varint.h"
#include "present/export/export_out.h"

#define GPUFL__PB_NO_MARK ((size_t)-1)

static inline uint8_t *gpufl__pb_tag(uint8_t *p, uint32_t field, unsigned wire)
{
    return gpufl__put_varint(p, (uint64_t)field << 3 | wire);
}

static inline void gpufl__pb_varint(gpufl__xout *o, uint32_t field, uint64_t v)
{
    uint8_t *p = gpufl__xout_room(o, 2 * GFL_VARINT_MAX);
    if (!p)
        return;
    p = gpufl__put_varint(gpufl__pb_tag(p, field, 0), v);
    o->len = (size_t)(p - o->p);
}

/* int64 fields (not sint64): negative values take ten bytes. */
static inline void gpufl__pb_int64(gpufl__xout *o, uint32_t field, int64_t v)
{
    gpufl__pb_varint(o, field, (uint64_t)v);
}

static inline void gpufl__pb_fixed64(gpufl__xout *o, uint32_t field, uint64_t v)
{
    uint8_t *p = gpufl__xout_room(o, GFL_VARINT_MAX + 8);
    if (!p)
        return;
    p = gpufl__pb_tag(p, field, 1);
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    o->len = (size_t)(p - o->p);
}

static inline void gpufl__pb_double(gpufl__xout *o, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    gpufl__pb_fixed64(o, field, bits);
}

static inline void gpufl__pb_bytes(gpufl__xout *o, uint32_t field, const void *data, size_t n)
{
    uint8_t *p = gpufl__xout_room(o, 2 * GFL_VARINT_MAX + n);
    if (!p)
        return;
    p = gpufl__put_varint(gpufl__pb_tag(p, field, 2), n);
    memcpy(p, data, n);
    o->len = (size_t)(p + n - o->p);
}

static inline void gpufl__pb_string(gpufl__xout *o, uint32_t field, const char *s)
{
    gpufl__pb_bytes(o, field, s, strlen(s));
}

/* Starts a nested message (or the top-level Trace.packet). Returns the
 * mark that gpufl__pb_end takes, GPUFL__PB_NO_MARK when out of memory. */
static inline size_t gpufl__pb_begin(gpufl__xout *o, uint32_t field)
{
    uint8_t *p = gpufl__xout_room(o, GFL_VARINT_MAX + 1);
    if (!p)
        return GPUFL__PB_NO_MARK;
    p = gpufl__pb_tag(p, field, 2);
    *p++ = 0;
    o->len = (size_t)(p - o->p);
    return o->len - 1;
}

void gpufl__pb_end_long(gpufl__xout *o, size_t mark, size_t body);

/* Ends the message begun at mark: writes its length. */
static inline void gpufl__pb_end(gpufl__xout *o, size_t mark)
{
    if (mark == GPUFL__PB_NO_MARK || o->err)
        return;
    size_t body = o->len - mark - 1;
    if (body < 0x80)
        o->p[mark] = (uint8_t)body;
    else
        gpufl__pb_end_long(o, mark, body);
}

#endif /* GPUFL_PRESENT_EXPORT_PB_WRITER_H */
