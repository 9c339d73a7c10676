/*
 * Ring records (record.h): the payload each type carries, and turning a
 * record back into a whole event.
 */
#include "core/record.h"

static const uint8_t payload_size[GFL_EV_TYPE_COUNT] = {
    [GFL_EV_SCOPE_BEGIN] = sizeof(gfl_scope_payload),
    [GFL_EV_SCOPE_END] = sizeof(gfl_scope_payload),
    [GFL_EV_SYSTEM_START] = sizeof(gfl_system_window_payload),
    [GFL_EV_SYSTEM_STOP] = sizeof(gfl_system_window_payload),
    [GFL_EV_HOST_METRICS] = sizeof(gfl_host_metrics_payload),
    [GFL_EV_DEVICE_METRICS] = sizeof(gfl_device_metrics_payload),
    [GFL_EV_KERNEL] = sizeof(gfl_kernel_payload),
    [GFL_EV_MEMCPY] = sizeof(gfl_memcpy_payload),
    [GFL_EV_MEMSET] = sizeof(gfl_memset_payload),
    [GFL_EV_SYNC] = sizeof(gfl_sync_payload),
    [GFL_EV_MEM_ALLOC] = sizeof(gfl_mem_payload),
    [GFL_EV_MEM_FREE] = sizeof(gfl_mem_payload),
    [GFL_EV_DROPPED] = sizeof(gfl_dropped_payload),
    [GFL_EV_LOG] = sizeof(gfl_log_payload),
    [GFL_EV_DEVICE_INFO] = sizeof(gfl_device_info_payload),
    [GFL_EV_NVTX_RANGE] = sizeof(gfl_nvtx_payload),
    [GFL_EV_NVTX_MARK] = sizeof(gfl_nvtx_payload),
    [GFL_EV_GRAPH_LAUNCH] = sizeof(gfl_graph_launch_payload),
    [GFL_EV_STACK] = sizeof(gfl_stack_payload),
    [GFL_EV_CRASH] = sizeof(gfl_crash_payload),
    [GFL_EV_CRASH_STACK] = sizeof(gfl_stack_payload),
    [GFL_EV_CRASH_SCOPE] = sizeof(gfl_scope_payload),
    [GFL_EV_ENGINE] = sizeof(gfl_engine_payload),
    [GFL_EV_TRIGGER] = sizeof(gfl_trigger_payload),
    [GFL_EV_TRACE_WINDOW] = sizeof(gfl_trace_window_payload),
    [GFL_EV_ALLOCATOR] = sizeof(gfl_allocator_payload),
    [GFL_EV_PC_SAMPLE] = sizeof(gfl_pc_sample_payload),
    [GFL_EV_RANGE_METRIC] = sizeof(gfl_range_metric_payload),
    [GFL_EV_SASS_METRIC] = sizeof(gfl_sass_metric_payload),
    [GFL_EV_PM_SAMPLE] = sizeof(gfl_pm_sample_payload),
    [GFL_EV_CLOCK] = sizeof(gfl_clock_payload),
    [GFL_EV_NCCL_COLL] = sizeof(gfl_nccl_coll_payload),
};
_Static_assert(GFL_EV_TYPE_COUNT == 33, "a new event type needs its payload size in the table above");

size_t gpufl__record_payload_size(unsigned type) { return type < GFL_EV_TYPE_COUNT ? payload_size[type] : 0; }

static void expand_scope(const gfl_scope_record *r, uint32_t index, uint32_t tid, gfl_event *out)
{
    uint64_t base = (uint64_t)index << GFL_SCOPE_SEQ_BITS;
    uint64_t seq = r->ids & GFL_SCOPE_SEQ_MASK, gap = r->ids >> GFL_SCOPE_SEQ_BITS;
    bool end = r->type == GFL_EV_SCOPE_END;
    out->h.type = r->type;
    out->h.flags = (uint8_t)(r->flags & ~GFL_F_SCOPE_WIDE);
    out->h.device = 0;
    out->h.tid = tid;
    out->h.ts = r->ts;
    out->u.scope.id = base | seq;
    out->u.scope.depth = r->depth;
    out->u.scope.name = r->name;
    out->u.scope.begin_ts = end ? r->begin_ts : r->ts;
    if (r->flags & GFL_F_SCOPE_WIDE) {
        uint64_t parent_seq;
        memcpy(&parent_seq, end ? &r->parent : &r->begin_ts, sizeof parent_seq);
        out->u.scope.parent_id = base | parent_seq;
    } else {
        out->u.scope.parent_id = gap ? base | (seq - gap) : 0;
    }
}

void gpufl__record_expand(const void *rec, uint32_t index, uint32_t tid, gfl_event *out)
{
    const uint8_t *b = rec;
    memset(out, 0, sizeof *out);
    if (b[0] == GFL_EV_SCOPE_BEGIN || b[0] == GFL_EV_SCOPE_END) {
        expand_scope(rec, index, tid, out);
        return;
    }
    memcpy(out, rec, gpufl__record_len(rec));
}
