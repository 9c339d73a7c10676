/*
 * Ring records: how an event travels from its producer to the collector in
 * as few bytes as it needs (event.h's gfl_event is 128 bytes for every
 * type, which a scope begin of about 30 bytes of facts would waste four
 * times over in ring space, cache lines and memory bandwidth).
 *
 * A record is a multiple of GFL_RECORD_ALIGN bytes, its length known from
 * its first bytes (gpufl__record_len), so a ring of records needs no
 * length field:
 *
 *  - Most types: the event's 16-byte header and the first bytes of its
 *    payload, up to the payload's size (a stack piece: up to its last used
 *    frame). The layout is gfl_event's own, so encoding is one copy.
 *  - Scope begin and end, the hottest records, are packed: the header's
 *    device and tid (always 0 and the producer's thread for a scope) carry
 *    the depth and name instead, and the scope id and its parent share one
 *    word, because both are the producer's index above bit 40 (scope.c) and
 *    the consumer knows which producer it drains: the low 40 bits are the
 *    scope's sequence number, the high 24 the distance back to its parent's
 *    (0: no parent). A begin is 24 bytes, an end (which repeats the begin
 *    time, so an end whose begin was dropped is still whole) 32. A parent
 *    2^24 or more scopes back is written in full after them
 *    (GFL_F_SCOPE_WIDE, 8 bytes more).
 *
 * A record never starts with GFL_EV_NONE: rings use that byte to mark the
 * unused space before they wrap (ring.h).
 *
 * Threads: pure functions.
 */
#ifndef GPUFL_CORE_RECORD_H
#define GPUFL_CORE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/event.h"

#define GFL_RECORD_ALIGN 8u
#define GFL_RECORD_MAX ((size_t)GFL_EVENT_SIZE) /* no record is longer than the event it carries */

#define GFL_F_SCOPE_WIDE 0x80 /* scope record: the parent's id follows in full (ring only) */

#define GFL_SCOPE_SEQ_BITS 40 /* scope id = producer index << 40 | sequence number (scope.c) */
#define GFL_SCOPE_SEQ_MASK ((UINT64_C(1) << GFL_SCOPE_SEQ_BITS) - 1)
#define GFL_SCOPE_NEAR_LIMIT (UINT64_C(1) << (64 - GFL_SCOPE_SEQ_BITS)) /* parent distances that pack */

/* A packed scope record; a begin ends before begin_ts. */
typedef struct gfl_scope_record {
    uint8_t type; /* GFL_EV_SCOPE_BEGIN or GFL_EV_SCOPE_END */
    uint8_t flags;
    uint16_t depth;
    uint32_t name;
    uint64_t ts;
    uint64_t ids;      /* sequence | parent distance << 40 */
    uint64_t begin_ts; /* end only */
    uint64_t parent;   /* GFL_F_SCOPE_WIDE only, after ids (begin) or begin_ts (end) */
} gfl_scope_record;

#define GFL_SCOPE_BEGIN_RECORD offsetof(gfl_scope_record, begin_ts) /* 24 */
#define GFL_SCOPE_END_RECORD offsetof(gfl_scope_record, parent)     /* 32 */

static inline size_t gpufl__record_round(size_t n)
{
    return (n + GFL_RECORD_ALIGN - 1) & ~(size_t)(GFL_RECORD_ALIGN - 1);
}

/* The payload bytes a generic record of `type` carries (stack pieces: the
 * most; see gpufl__record_len). */
size_t gpufl__record_payload_size(unsigned type);

static inline size_t gpufl__stack_record_len(unsigned frames)
{
    if (frames > GFL_STACK_FRAMES_PER_EVENT)
        frames = GFL_STACK_FRAMES_PER_EVENT;
    return gpufl__record_round(sizeof(gfl_event_header) + offsetof(gfl_stack_payload, frames) +
                               frames * sizeof(gfl_stack_frame));
}

/* The length of the record that starts at rec (one written by this file's
 * encoders or gpufl__scope_record_*). */
static inline size_t gpufl__record_len(const void *rec)
{
    const uint8_t *b = rec;
    switch (b[0]) {
    case GFL_EV_SCOPE_BEGIN: return GFL_SCOPE_BEGIN_RECORD + (b[1] & GFL_F_SCOPE_WIDE ? 8 : 0);
    case GFL_EV_SCOPE_END: return GFL_SCOPE_END_RECORD + (b[1] & GFL_F_SCOPE_WIDE ? 8 : 0);
    case GFL_EV_STACK:
    case GFL_EV_CRASH_STACK:
        return gpufl__stack_record_len(b[sizeof(gfl_event_header) + offsetof(gfl_stack_payload, count)]);
    default: return gpufl__record_round(sizeof(gfl_event_header) + gpufl__record_payload_size(b[0]));
    }
}

/* The record length of ev in the generic layout, or 0 for the types that
 * have their own (scope begin and end: gpufl__scope_record_put) and for
 * types that do not exist. The generic layout is the event's own prefix,
 * so the event is measured as the record it would be. */
static inline size_t gpufl__record_len_of(const gfl_event *ev)
{
    unsigned t = ev->h.type;
    if (t == GFL_EV_NONE || t >= GFL_EV_TYPE_COUNT || t == GFL_EV_SCOPE_BEGIN || t == GFL_EV_SCOPE_END)
        return 0;
    return gpufl__record_len(ev);
}

/*
 * Writes a scope begin (end_ts 0) or end record into rec, which has room
 * for gpufl__scope_record_len() bytes. seq and parent_seq are sequence
 * numbers of one producer (parent_seq 0: outermost).
 */
static inline size_t gpufl__scope_record_len(uint8_t type, uint64_t seq, uint64_t parent_seq)
{
    size_t n = type == GFL_EV_SCOPE_BEGIN ? GFL_SCOPE_BEGIN_RECORD : GFL_SCOPE_END_RECORD;
    return parent_seq && seq - parent_seq >= GFL_SCOPE_NEAR_LIMIT ? n + 8 : n;
}

static inline void gpufl__scope_record_put(void *rec, uint8_t type, uint8_t flags, uint16_t depth, uint32_t name,
                                           uint64_t ts, uint64_t begin_ts, uint64_t seq, uint64_t parent_seq)
{
    gfl_scope_record *r = rec;
    uint64_t gap = parent_seq ? seq - parent_seq : 0;
    bool wide = gap >= GFL_SCOPE_NEAR_LIMIT;
    r->type = type;
    r->flags = (uint8_t)(flags | (wide ? GFL_F_SCOPE_WIDE : 0));
    r->depth = depth;
    r->name = name;
    r->ts = ts;
    r->ids = (seq & GFL_SCOPE_SEQ_MASK) | (wide ? 0 : gap << GFL_SCOPE_SEQ_BITS);
    uint64_t *after = &r->begin_ts;
    if (type == GFL_EV_SCOPE_END)
        *after++ = begin_ts;
    if (wide)
        memcpy(after, &parent_seq, sizeof parent_seq);
}

/*
 * The event a record carries, whole (unused payload bytes zero). index and
 * tid are those of the producer whose ring held it: a scope record's ids are
 * completed with the index, and its header gets the tid.
 */
void gpufl__record_expand(const void *rec, uint32_t index, uint32_t tid, gfl_event *out);

#endif /* GPUFL_CORE_RECORD_H */
