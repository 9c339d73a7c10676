/*
 * Which allocations were live on one device at one moment (ana_live_at.h):
 * the replay the OOM diagnosis and the last-events-before-an-incident
 * analysis share. A driver allocation and a framework block are kept
 * apart, since a block shares its address with the segment that holds it.
 */
#include "analyze/ana_live_at.h"

#include <stdlib.h>

#include "analyze/ana_util.h"
#include "core/event.h"
#include "gpufl/gpufl.h"

static bool host_kind(uint8_t kind) { return kind == GFL_MEM_PINNED || kind == GFL_MEM_PAGEABLE; }

int gpufl__ana_live_at(const gpufl__rows *a, uint32_t device, uint64_t at_ns, bool device_memory_only,
                       uint8_t **live_out)
{
    size_t n = gpufl__m_n(a);
    uint8_t *live = calloc(n ? n : 1, 1);
    *live_out = NULL;
    if (!live)
        return GPUFL_ENOMEM;
    ana_map where = {0};
    int rc = 0;
    for (size_t i = 0; i < n && gpufl__m_ts(a, i) <= at_ns; i++) {
        if (gpufl__m_device(a, i) != device || gpufl__m_failed(a, i) ||
            (device_memory_only && host_kind(gpufl__m_kind(a, i))))
            continue;
        uint64_t layer = a->memory->framework && a->memory->framework[i] ? 1 : 0, addr = gpufl__m_address(a, i);
        uint32_t j;
        if (gpufl__m_is_free(a, i)) {
            if (gpufl__ana_map_get(&where, layer, addr, &j)) {
                live[j] = 0;
                gpufl__ana_map_del(&where, layer, addr);
            }
            continue;
        }
        int put = gpufl__ana_map_put(&where, layer, addr, (uint32_t)i, &j);
        if (put < 0) {
            rc = put;
            break;
        }
        if (put == 1) { /* the address came back unfreed: the old one is gone */
            live[j] = 0;
            gpufl__ana_map_set(&where, layer, addr, (uint32_t)i);
        }
        live[i] = 1;
    }
    gpufl__ana_map_free(&where);
    if (rc != 0) {
        free(live);
        return rc;
    }
    *live_out = live;
    return 0;
}
