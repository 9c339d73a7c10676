/*
 * The names of enum values that the outputs print (names.h): one row per
 * value, one column per family of outputs.
 */
#include "core/names.h"

#include <stddef.h>

static const gpufl__copy_kind_names copy_kinds[GFL_COPY_KIND_COUNT] = {
    {"unknown", "memcpy", "memcpy (call)", "copy", '*'},
    {"HtoD", "memcpy HtoD", "memcpy HtoD (call)", "HtoD", '>'},
    {"DtoH", "memcpy DtoH", "memcpy DtoH (call)", "DtoH", '<'},
    {"DtoD", "memcpy DtoD", "memcpy DtoD (call)", "DtoD", '='},
    {"HtoH", "memcpy HtoH", "memcpy HtoH (call)", "HtoH", '-'},
    {"PtoP", "memcpy PtoP", "memcpy PtoP (call)", "PtoP", '%'},
};

static const gpufl__sync_kind_names sync_kinds[GFL_SYNC_KIND_COUNT] = {
    {"unknown", "sync", "sync"},
    {"event", "sync event", "sync event"},
    {"stream_wait_event", "sync stream_wait_event", "stream wait event"},
    {"stream", "sync stream", "sync stream"},
    {"context", "sync context", "sync context"},
};

static const gpufl__mem_kind_names mem_kinds[GFL_MEM_KIND_COUNT] = {
    {"unknown"}, {"pageable"}, {"pinned"}, {"device"}, {"array"}, {"managed"}, {"device_static"}, {"managed_static"},
};

static const gpufl__limiter_names limiters[GFL_LIMIT_COUNT] = {
    {"unknown", ""},      {"warps", "warps"}, {"registers", "registers"}, {"shared_memory", "shared memory"},
    {"blocks", "blocks"},
};

static const gpufl__drop_reason_names drop_reasons[GFL_DROP_REASON_COUNT] = {
    {"ring_full", "ring full"},
    {"disk_limit", "disk limit"},
    {"stale", "stale"},
    {"scope_depth", "scope depth"},
    {"intern_full", "string table full"},
    {"bad_event", "bad event"},
    {"cupti", "CUPTI"},
    {"out_of_session", "out of session"},
};

#define ROW(table, i) (&(table)[(unsigned)(i) < sizeof(table) / sizeof(table)[0] ? (unsigned)(i) : 0])

const gpufl__copy_kind_names *gpufl__copy_kind(uint8_t kind) { return ROW(copy_kinds, kind); }
const gpufl__sync_kind_names *gpufl__sync_kind(uint8_t kind) { return ROW(sync_kinds, kind); }
const gpufl__mem_kind_names *gpufl__mem_kind(uint8_t kind) { return ROW(mem_kinds, kind); }
const gpufl__limiter_names *gpufl__limiter(uint8_t limiter) { return ROW(limiters, limiter); }
const gpufl__drop_reason_names *gpufl__drop_reason(uint8_t reason)
{
    return reason < GFL_DROP_REASON_COUNT ? &drop_reasons[reason] : NULL;
}

/* The key column under the names the writers and readers have always
 * called (core/event.h). */
const char *gpufl__copy_kind_name(uint8_t kind) { return gpufl__copy_kind(kind)->key; }
const char *gpufl__mem_kind_name(uint8_t kind) { return gpufl__mem_kind(kind)->key; }
const char *gpufl__sync_kind_name(uint8_t kind) { return gpufl__sync_kind(kind)->key; }
const char *gpufl__limiter_name(uint8_t limiter) { return gpufl__limiter(limiter)->key; }
const char *gpufl__names_key(unsigned family, unsigned value)
{
    switch (family) {
    case GPUFL__NAMES_COPY_KIND: return value < GFL_COPY_KIND_COUNT ? copy_kinds[value].key : NULL;
    case GPUFL__NAMES_MEM_KIND: return value < GFL_MEM_KIND_COUNT ? mem_kinds[value].key : NULL;
    case GPUFL__NAMES_SYNC_KIND: return value < GFL_SYNC_KIND_COUNT ? sync_kinds[value].key : NULL;
    case GPUFL__NAMES_LIMITER: return value < GFL_LIMIT_COUNT ? limiters[value].key : NULL;
    case GPUFL__NAMES_DROP_REASON: return value < GFL_DROP_REASON_COUNT ? drop_reasons[value].key : NULL;
    case GPUFL__NAMES_EVENT_TYPE: return value < GFL_EV_TYPE_COUNT ? gpufl__event_type_name((uint8_t)value) : NULL;
    case GPUFL__NAMES_TRIGGER_OUTCOME:
        return value < GFL_TRIGGER_OUTCOME_COUNT ? gpufl__trigger_outcome_name((uint8_t)value) : NULL;
    default: return NULL;
    }
}

const char *gpufl__drop_reason_name(uint8_t reason)
{
    const gpufl__drop_reason_names *d = gpufl__drop_reason(reason);
    return d ? d->key : "unknown";
}
