/*
 * gpufl_record_nccl_collective (gpufl.h): one NCCL collective with its
 * payload into the calling thread's ring as a GFL_EV_NCCL_COLL event.
 *
 * Called by gpufl's NCCL profiler plugin (inject/nccl_profiler.c) on
 * NCCL's threads, once per collective (thousands a second at most), so it
 * does what a scope does: no lock (interning takes one only for a name
 * never seen, and NCCL's names are a handful), no allocation, no syscall
 * beyond a clock read when no time is given.
 */
#include <stddef.h>
#include <string.h>

#include "core/clock.h"
#include "core/event.h"
#include "core/intern.h"
#include "core/recording.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"

/* NCCL's datatype names (ncclDatatypeToString) and their sizes; the bare
 * enumerator names NCCL also uses in its headers are the same types. */
static const struct {
    const char *name;
    unsigned char size;
} datatypes[] = {
    {"ncclInt8", 1},       {"ncclChar", 1},       {"ncclUint8", 1},   {"ncclInt32", 4},   {"ncclInt", 4},
    {"ncclUint32", 4},     {"ncclInt64", 8},      {"ncclUint64", 8},  {"ncclFloat16", 2}, {"ncclHalf", 2},
    {"ncclFloat32", 4},    {"ncclFloat", 4},      {"ncclFloat64", 8}, {"ncclDouble", 8},  {"ncclBfloat16", 2},
    {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
};

GPUFL_API size_t gpufl_nccl_datatype_size(const char *datatype)
{
    if (!datatype)
        return 0;
    for (size_t i = 0; i < sizeof datatypes / sizeof datatypes[0]; i++)
        if (strcmp(datatypes[i].name, datatype) == 0)
            return datatypes[i].size;
    return 0;
}

static uint32_t name_id(const char *s) { return s && s[0] ? gpufl__intern(s) : 0; }

GPUFL_API int gpufl_record_nccl_collective(const gpufl_nccl_collective *c)
{
    if (!c || c->struct_size < offsetof(gpufl_nccl_collective, is_p2p) + sizeof c->is_p2p || !c->func || !c->func[0])
        return GPUFL_EINVAL;
    if (!gpufl__is_recording())
        return GPUFL_ESTATE;
    gfl_event ev = {.h = {.type = GFL_EV_NCCL_COLL,
                          .device = (uint16_t)c->device,
                          .ts = c->start_ns ? c->start_ns : gpufl__now_ns()}};
    gfl_nccl_coll_payload *p = &ev.u.nccl;
    p->end_ts = c->end_ns >= ev.h.ts ? c->end_ns : 0; /* an end before the start is no end */
    p->comm_hash = c->comm_hash;
    p->seq = c->seq;
    p->count = c->count;
    size_t size = gpufl_nccl_datatype_size(c->datatype);
    /* count x size must not wrap: a hostile count is kept, its bytes not */
    if (size && c->count <= UINT64_MAX / size) {
        p->bytes = c->count * size;
        ev.h.flags |= GFL_F_NCCL_BYTES;
    }
    if (c->is_p2p)
        ev.h.flags |= GFL_F_NCCL_P2P;
    p->func = name_id(c->func);
    p->datatype = name_id(c->datatype);
    p->algo = name_id(c->algo);
    p->proto = name_id(c->proto);
    p->rank = c->rank < -1 ? -1 : c->rank;
    p->root = c->root < -1 ? -1 : c->root;
    p->nranks = c->nranks;
    p->channels = (uint8_t)(c->channels > 255 ? 255 : c->channels);
    p->abi = (uint8_t)(c->abi > 255 ? 255 : c->abi);
    gpufl__producer *prod = gpufl__producer_self();
    if (!prod)
        return GPUFL_ENOMEM;
    return gpufl__ring_push(&prod->ring, &ev, gpufl__producer_tid(prod)) == 0 ? 0 : GPUFL_ENOMEM;
}
