/*
 * The column tables of the .gflt events chunk (see gflt_layout.h). Field
 * order is column order; a REF field comes after the field it refers to.
 * Appending a field to a type is compatible; changing or reordering is a new
 * GFLT_VERSION.
 */
#include "format/gflt_layout.h"

#include <stddef.h>

#define OFF(m) ((uint8_t)offsetof(gfl_event, m))
#define SZ(m) ((uint8_t)sizeof(((gfl_event *)0)->m))
// clang-format off
#define F(m, codec) {OFF(m), SZ(m), codec, 0, 0, 0}
#define OPT(m, codec) {OFF(m), SZ(m), codec, GFLT_OPT, 0, 0}
#define PRED(m, codec) {OFF(m), SZ(m), codec, GFLT_PRED, 0, 0}
#define REF(m, ref) {OFF(m), SZ(m), GFLT_REF, 0, OFF(ref), 0}
#define OPT_REF(m, ref) {OFF(m), SZ(m), GFLT_REF, GFLT_OPT, OFF(ref), 0}
#define SPAN(start, end, stream) {OFF(start), SZ(start), GFLT_SPAN, 0, OFF(end), OFF(stream)}
// clang-format on

/* Header fields every type carries; ts is coded per type. */
#define HEADER F(h.device, GFLT_VAR), F(h.tid, GFLT_VAR), F(h.flags, GFLT_VAR)

static const gpufl__gflt_field scope_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.scope.id, GFLT_DELTA),
    F(u.scope.parent_id, GFLT_DELTA),
    F(u.scope.depth, GFLT_VAR),
    F(u.scope.name, GFLT_STR),
    OPT_REF(u.scope.begin_ts, h.ts),
};

static const gpufl__gflt_field window_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.window.name, GFLT_STR),
    F(u.window.open_windows, GFLT_VAR),
};

static const gpufl__gflt_field host_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.host.valid, GFLT_VAR),
    F(u.host.cpu_count, GFLT_VAR),
    F(u.host.proc_cpu_pct_x100, GFLT_VAR),
    F(u.host.sys_cpu_pct_x100, GFLT_VAR),
    F(u.host.ram_used_bytes, GFLT_DELTA),
    F(u.host.ram_total_bytes, GFLT_DELTA),
    F(u.host.proc_rss_bytes, GFLT_DELTA),
};

static const gpufl__gflt_field device_metrics_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.dev.valid, GFLT_VAR),
    F(u.dev.gpu_util_pct, GFLT_VAR),
    F(u.dev.mem_util_pct, GFLT_VAR),
    F(u.dev.fan_pct, GFLT_VAR),
    F(u.dev.mem_used_bytes, GFLT_DELTA),
    F(u.dev.mem_total_bytes, GFLT_DELTA),
    F(u.dev.proc_mem_bytes, GFLT_DELTA),
    F(u.dev.energy_mj, GFLT_DELTA),
    F(u.dev.throttle_reasons, GFLT_VAR),
    F(u.dev.ecc_corrected, GFLT_VAR),
    F(u.dev.ecc_uncorrected, GFLT_VAR),
    F(u.dev.power_mw, GFLT_DELTA),
    F(u.dev.power_limit_mw, GFLT_VAR),
    F(u.dev.sm_clock_mhz, GFLT_VAR),
    F(u.dev.mem_clock_mhz, GFLT_VAR),
    F(u.dev.gfx_clock_mhz, GFLT_VAR),
    F(u.dev.pcie_rx_kbps, GFLT_VAR),
    F(u.dev.pcie_tx_kbps, GFLT_VAR),
    F(u.dev.temp_c, GFLT_SVAR),
    F(u.dev.mem_temp_c, GFLT_SVAR),
    F(u.dev.mem_free_bytes, GFLT_DELTA),
};

static const gpufl__gflt_field device_info_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.info.memory_total_bytes, GFLT_VAR),
    F(u.info.name, GFLT_STR),
    F(u.info.uuid, GFLT_STR),
    F(u.info.pci_bus_id, GFLT_STR),
    F(u.info.driver_version, GFLT_STR),
    F(u.info.cuda_driver_version, GFLT_SVAR),
    F(u.info.sm_count, GFLT_VAR),
    F(u.info.power_limit_mw, GFLT_VAR),
    F(u.info.max_sm_clock_mhz, GFLT_VAR),
    F(u.info.max_mem_clock_mhz, GFLT_VAR),
    F(u.info.cc_major, GFLT_SVAR),
    F(u.info.cc_minor, GFLT_SVAR),
    F(u.info.pcie_max_gen, GFLT_VAR),
    F(u.info.pcie_max_width, GFLT_VAR),
};

/* Kernels: the bulk of a Trace session, and what the size target is about. */
static const gpufl__gflt_field kernel_fields[] = {
    HEADER,
    F(u.kernel.stream, GFLT_VAR),
    F(u.kernel.context, GFLT_VAR),
    SPAN(h.ts, u.kernel.end_ts, u.kernel.stream),
    F(u.kernel.name, GFLT_STR),
    PRED(u.kernel.mangled_name, GFLT_STR),
    PRED(u.kernel.grid[0], GFLT_VAR),
    PRED(u.kernel.grid[1], GFLT_VAR),
    PRED(u.kernel.grid[2], GFLT_VAR),
    PRED(u.kernel.block[0], GFLT_VAR),
    PRED(u.kernel.block[1], GFLT_VAR),
    PRED(u.kernel.block[2], GFLT_VAR),
    PRED(u.kernel.registers, GFLT_VAR),
    PRED(u.kernel.static_smem, GFLT_VAR),
    PRED(u.kernel.dynamic_smem, GFLT_VAR),
    PRED(u.kernel.local_mem, GFLT_VAR),
    PRED(u.kernel.occupancy_x10000, GFLT_VAR),
    PRED(u.kernel.limiter, GFLT_VAR),
    F(u.kernel.correlation, GFLT_DELTA),
    OPT(u.kernel.scope_id, GFLT_DELTA),
    OPT(u.kernel.external_id, GFLT_DELTA),
    F(u.kernel.external_kind, GFLT_VAR),
    OPT(u.kernel.api_start_ts, GFLT_DELTA),
    OPT_REF(u.kernel.api_end_ts, u.kernel.api_start_ts),
    OPT(u.kernel.stack_id, GFLT_VAR),
    OPT(u.kernel.graph_id, GFLT_VAR),
    OPT(u.kernel.nvtx, GFLT_STR),
};

static const gpufl__gflt_field memcpy_fields[] = {
    HEADER,
    F(u.memcpy.stream, GFLT_VAR),
    F(u.memcpy.context, GFLT_VAR),
    SPAN(h.ts, u.memcpy.end_ts, u.memcpy.stream),
    F(u.memcpy.bytes, GFLT_VAR),
    F(u.memcpy.copy_kind, GFLT_VAR),
    F(u.memcpy.src_kind, GFLT_VAR),
    F(u.memcpy.dst_kind, GFLT_VAR),
    F(u.memcpy.dst_device, GFLT_VAR),
    F(u.memcpy.correlation, GFLT_DELTA),
    OPT(u.memcpy.scope_id, GFLT_DELTA),
    OPT(u.memcpy.external_id, GFLT_DELTA),
    OPT(u.memcpy.api_start_ts, GFLT_DELTA),
    OPT_REF(u.memcpy.api_end_ts, u.memcpy.api_start_ts),
    OPT(u.memcpy.stack_id, GFLT_VAR),
    OPT(u.memcpy.nvtx, GFLT_STR),
    OPT(u.memcpy.graph_id, GFLT_VAR),
};

static const gpufl__gflt_field memset_fields[] = {
    HEADER,
    F(u.memset.stream, GFLT_VAR),
    F(u.memset.context, GFLT_VAR),
    SPAN(h.ts, u.memset.end_ts, u.memset.stream),
    F(u.memset.bytes, GFLT_VAR),
    F(u.memset.value, GFLT_VAR),
    F(u.memset.mem_kind, GFLT_VAR),
    F(u.memset.correlation, GFLT_DELTA),
    OPT(u.memset.scope_id, GFLT_DELTA),
    OPT(u.memset.external_id, GFLT_DELTA),
    OPT(u.memset.api_start_ts, GFLT_DELTA),
    OPT_REF(u.memset.api_end_ts, u.memset.api_start_ts),
    OPT(u.memset.nvtx, GFLT_STR),
    OPT(u.memset.graph_id, GFLT_VAR),
};

static const gpufl__gflt_field sync_fields[] = {
    HEADER,
    F(u.sync.stream, GFLT_VAR),
    F(u.sync.context, GFLT_VAR),
    SPAN(h.ts, u.sync.end_ts, u.sync.stream),
    F(u.sync.sync_kind, GFLT_VAR),
    OPT(u.sync.cuda_event, GFLT_VAR),
    F(u.sync.correlation, GFLT_DELTA),
    OPT(u.sync.scope_id, GFLT_DELTA),
    OPT(u.sync.external_id, GFLT_DELTA),
    OPT(u.sync.stack_id, GFLT_VAR),
    OPT(u.sync.nvtx, GFLT_STR),
};

static const gpufl__gflt_field mem_fields[] = {
    HEADER,
    F(u.mem.stream, GFLT_VAR),
    F(u.mem.context, GFLT_VAR),
    F(h.ts, GFLT_DELTA),
    F(u.mem.address, GFLT_DELTA),
    F(u.mem.bytes, GFLT_VAR),
    F(u.mem.mem_kind, GFLT_VAR),
    F(u.mem.is_async, GFLT_VAR),
    F(u.mem.correlation, GFLT_DELTA),
    OPT(u.mem.scope_id, GFLT_DELTA),
    OPT(u.mem.external_id, GFLT_DELTA),
    OPT(u.mem.stack_id, GFLT_VAR),
    OPT(u.mem.nvtx, GFLT_STR),
};

static const gpufl__gflt_field nvtx_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    OPT_REF(u.nvtx.end_ts, h.ts),
    F(u.nvtx.id, GFLT_DELTA),
    F(u.nvtx.name, GFLT_STR),
    OPT(u.nvtx.domain, GFLT_STR),
    F(u.nvtx.depth, GFLT_VAR),
    OPT(u.nvtx.seq, GFLT_VAR),
};

static const gpufl__gflt_field graph_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    REF(u.graph.end_ts, h.ts),
    F(u.graph.correlation, GFLT_DELTA),
    OPT(u.graph.scope_id, GFLT_DELTA),
    OPT(u.graph.external_id, GFLT_DELTA),
    OPT(u.graph.stack_id, GFLT_VAR),
    OPT(u.graph.nvtx, GFLT_STR),
};

/* A piece of a CPU stack: frames as module (a string) + offset. Unused
 * frames are 0 and cost a byte each before compression. */
#define FRAME(i) F(u.stack.frames[i].module, GFLT_STR), F(u.stack.frames[i].offset, GFLT_VAR)
static const gpufl__gflt_field stack_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.stack.id, GFLT_VAR),
    F(u.stack.first, GFLT_VAR),
    F(u.stack.total, GFLT_VAR),
    F(u.stack.count, GFLT_VAR),
    F(u.stack.truncated, GFLT_VAR),
    FRAME(0),
    FRAME(1),
    FRAME(2),
    FRAME(3),
    FRAME(4),
    FRAME(5),
    FRAME(6),
    FRAME(7),
    FRAME(8),
    FRAME(9),
    FRAME(10),
    FRAME(11),
};
_Static_assert(GFL_STACK_FRAMES_PER_EVENT == 12, "stack_fields lists every frame");

/* A fatal signal; its stack pieces use stack_fields (id 0) and the scopes
 * open at that moment scope_fields. */
static const gpufl__gflt_field crash_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.crash.address, GFLT_VAR),
    F(u.crash.signal, GFLT_SVAR),
    F(u.crash.code, GFLT_SVAR),
    F(u.crash.sender_pid, GFLT_VAR),
    F(u.crash.frames, GFLT_VAR),
    F(u.crash.action, GFLT_VAR),
    F(u.crash.stack_truncated, GFLT_VAR),
    F(u.crash.open_scopes, GFLT_VAR),
    F(u.crash.scopes_lost, GFLT_VAR),
};

static const gpufl__gflt_field engine_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.engine.requested, GFLT_STR),
    F(u.engine.ran, GFLT_STR),
    OPT(u.engine.plugin, GFLT_STR),
    OPT(u.engine.reason, GFLT_STR),
};

static const gpufl__gflt_field trigger_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.trigger.kind, GFLT_STR),
    OPT(u.trigger.detail, GFLT_STR),
    OPT(u.trigger.dump, GFLT_STR),
    F(u.trigger.outcome, GFLT_VAR),
};

static const gpufl__gflt_field trace_window_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    OPT(u.trace_window.end_ts, GFLT_VAR),
    F(u.trace_window.reason, GFLT_STR),
    OPT(u.trace_window.detail, GFLT_STR),
    F(u.trace_window.index, GFLT_VAR),
};

static const gpufl__gflt_field allocator_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.allocator.framework, GFLT_STR),
    F(u.allocator.reason, GFLT_STR),
    F(u.allocator.allocated, GFLT_VAR),
    F(u.allocator.reserved, GFLT_VAR),
    F(u.allocator.active, GFLT_VAR),
    F(u.allocator.inactive_split, GFLT_VAR),
    OPT(u.allocator.largest_free, GFLT_VAR),
    OPT(u.allocator.peak_allocated, GFLT_VAR),
    OPT(u.allocator.peak_reserved, GFLT_VAR),
    OPT(u.allocator.requested, GFLT_VAR),
    OPT(u.allocator.device_free, GFLT_VAR),
    OPT(u.allocator.alloc_retries, GFLT_VAR),
    OPT(u.allocator.ooms, GFLT_VAR),
    OPT(u.allocator.scope_id, GFLT_DELTA),
};

/* Warp samples at one PC: most PCs have one to three stall reasons, so the
 * pairs are optional columns. */
#define STALL(i) OPT(u.pc.stalls[i].reason, GFLT_STR), OPT(u.pc.stalls[i].samples, GFLT_VAR)
static const gpufl__gflt_field pc_sample_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.pc.since_ts, GFLT_DELTA),
    F(u.pc.function, GFLT_STR),
    F(u.pc.cubin_crc, GFLT_VAR),
    F(u.pc.pc_offset, GFLT_VAR),
    OPT(u.pc.source_file, GFLT_STR),
    OPT(u.pc.line, GFLT_VAR),
    F(u.pc.count, GFLT_VAR),
    STALL(0),
    STALL(1),
    STALL(2),
    STALL(3),
    STALL(4),
    STALL(5),
    STALL(6),
    STALL(7),
};
_Static_assert(GFL_PC_STALLS_PER_EVENT == 8, "pc_sample_fields lists every stall pair");
static const gpufl__gflt_field pm_sample_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    REF(u.pm_sample.end_ts, h.ts),
    F(u.pm_sample.metric, GFLT_STR),
    F(u.pm_sample.value_x10000, GFLT_VAR),
};
/* A launch's instructions come together, in pc order: the correlation,
 * crc and function repeat (deltas of 0), the pc grows by 16. */
static const gpufl__gflt_field sass_metric_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.sass.correlation, GFLT_DELTA),
    F(u.sass.cubin_crc, GFLT_DELTA),
    F(u.sass.function, GFLT_STR),
    F(u.sass.function_index, GFLT_VAR),
    F(u.sass.pc_offset, GFLT_DELTA),
    F(u.sass.valid, GFLT_VAR),
    F(u.sass.inst_executed, GFLT_VAR),
    F(u.sass.thread_inst_executed, GFLT_VAR),
    OPT(u.sass.sectors, GFLT_VAR),
    OPT(u.sass.sectors_ideal, GFLT_VAR),
    OPT(u.sass.branch_targets, GFLT_VAR),
    OPT(u.sass.divergent_targets, GFLT_VAR),
    OPT(u.sass.file, GFLT_STR),
    OPT(u.sass.line, GFLT_VAR),
    OPT(u.sass.scope_id, GFLT_DELTA),
};

static const gpufl__gflt_field range_metric_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    REF(u.range_metric.end_ts, h.ts),
    F(u.range_metric.scope_id, GFLT_DELTA),
    F(u.range_metric.name, GFLT_STR),
    F(u.range_metric.metric, GFLT_STR),
    F(u.range_metric.range, GFLT_DELTA),
    F(u.range_metric.value_x10000, GFLT_VAR),
};

static const gpufl__gflt_field clock_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    REF(u.clock.mono_ns, h.ts),
    F(u.clock.wall_ns, GFLT_DELTA),
    F(u.clock.uncertainty_ns, GFLT_VAR),
    F(u.clock.point, GFLT_STR),
    OPT(u.clock.ntp, GFLT_STR),
    OPT(u.clock.ntp_offset_ns, GFLT_SVAR),
    OPT(u.clock.ntp_maxerror_ns, GFLT_VAR),
    OPT(u.clock.ntp_esterror_ns, GFLT_VAR),
    OPT(u.clock.ntp_status, GFLT_VAR),
};

/* A communicator's collectives come in sequence: seq grows by 1, the
 * hash, names and sizes repeat. */
static const gpufl__gflt_field nccl_coll_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    OPT_REF(u.nccl.end_ts, h.ts),
    F(u.nccl.comm_hash, GFLT_DELTA),
    F(u.nccl.seq, GFLT_DELTA),
    F(u.nccl.func, GFLT_STR),
    F(u.nccl.count, GFLT_DELTA),
    OPT(u.nccl.bytes, GFLT_DELTA),
    OPT(u.nccl.datatype, GFLT_STR),
    OPT(u.nccl.algo, GFLT_STR),
    OPT(u.nccl.proto, GFLT_STR),
    F(u.nccl.rank, GFLT_SVAR),
    F(u.nccl.root, GFLT_SVAR),
    OPT(u.nccl.nranks, GFLT_VAR),
    OPT(u.nccl.channels, GFLT_VAR),
    OPT(u.nccl.abi, GFLT_VAR),
};

static const gpufl__gflt_field dropped_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.dropped.count, GFLT_VAR),
    F(u.dropped.total, GFLT_VAR),
    F(u.dropped.reason, GFLT_VAR),
    F(u.dropped.channel, GFLT_VAR),
};

static const gpufl__gflt_field log_fields[] = {
    HEADER,
    F(h.ts, GFLT_DELTA),
    F(u.log.level, GFLT_VAR),
    F(u.log.message, GFLT_STR),
};

// clang-format off
#define LAYOUT(fields) {fields, (uint8_t)(sizeof fields / sizeof fields[0]), 0}
// clang-format on

static const gpufl__gflt_layout layouts[GFL_EV_TYPE_COUNT] = {
    [GFL_EV_SCOPE_BEGIN] = LAYOUT(scope_fields),
    [GFL_EV_SCOPE_END] = LAYOUT(scope_fields),
    [GFL_EV_SYSTEM_START] = LAYOUT(window_fields),
    [GFL_EV_SYSTEM_STOP] = LAYOUT(window_fields),
    [GFL_EV_HOST_METRICS] = LAYOUT(host_fields),
    [GFL_EV_DEVICE_METRICS] = LAYOUT(device_metrics_fields),
    [GFL_EV_KERNEL] = {kernel_fields, (uint8_t)(sizeof kernel_fields / sizeof kernel_fields[0]), OFF(u.kernel.name)},
    [GFL_EV_MEMCPY] = LAYOUT(memcpy_fields),
    [GFL_EV_MEMSET] = LAYOUT(memset_fields),
    [GFL_EV_SYNC] = LAYOUT(sync_fields),
    [GFL_EV_MEM_ALLOC] = LAYOUT(mem_fields),
    [GFL_EV_MEM_FREE] = LAYOUT(mem_fields),
    [GFL_EV_DROPPED] = LAYOUT(dropped_fields),
    [GFL_EV_LOG] = LAYOUT(log_fields),
    [GFL_EV_DEVICE_INFO] = LAYOUT(device_info_fields),
    [GFL_EV_NVTX_RANGE] = LAYOUT(nvtx_fields),
    [GFL_EV_NVTX_MARK] = LAYOUT(nvtx_fields),
    [GFL_EV_GRAPH_LAUNCH] = LAYOUT(graph_fields),
    [GFL_EV_STACK] = LAYOUT(stack_fields),
    [GFL_EV_CRASH] = LAYOUT(crash_fields),
    [GFL_EV_CRASH_STACK] = LAYOUT(stack_fields),
    [GFL_EV_CRASH_SCOPE] = LAYOUT(scope_fields),
    [GFL_EV_ENGINE] = LAYOUT(engine_fields),
    [GFL_EV_TRIGGER] = LAYOUT(trigger_fields),
    [GFL_EV_TRACE_WINDOW] = LAYOUT(trace_window_fields),
    [GFL_EV_ALLOCATOR] = LAYOUT(allocator_fields),
    [GFL_EV_PC_SAMPLE] = LAYOUT(pc_sample_fields),
    [GFL_EV_RANGE_METRIC] = LAYOUT(range_metric_fields),
    [GFL_EV_PM_SAMPLE] = LAYOUT(pm_sample_fields),
    [GFL_EV_SASS_METRIC] = LAYOUT(sass_metric_fields),
    [GFL_EV_CLOCK] = LAYOUT(clock_fields),
    [GFL_EV_NCCL_COLL] = LAYOUT(nccl_coll_fields),
};

const gpufl__gflt_layout *gpufl__gflt_layout_of(uint8_t type)
{
    if (type >= GFL_EV_TYPE_COUNT || !layouts[type].fields)
        return NULL;
    return &layouts[type];
}
