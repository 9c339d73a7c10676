/*
 * NDJSON line -> gfl_event (see ndjson_parse.h).
 *
 * Table-driven: every known key has a number (one hash lookup per field),
 * and every line type has a table saying, per key, where the value goes in
 * the event and how to read it. The tables mirror the writer,
 * src/format/ndjson_format.c, and docs/FORMAT.md.
 */
#include "read/ndjson_parse.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "read/json_scan.h"

/* ---- names: keys and types ---------------------------------------------- */

// clang-format off
#define KEYS(X)                                                                                    \
    X(type) X(ts_ns) X(tid) X(id) X(parent) X(depth) X(name) X(begin_ns) X(dur_ns) X(implicit)     \
    X(open) X(cpu_count) X(proc_cpu_pct) X(sys_cpu_pct) X(ram_used_bytes) X(ram_total_bytes)       \
    X(proc_rss_bytes) X(device) X(gpu_util_pct) X(mem_util_pct) X(mem_used_bytes)                  \
    X(mem_free_bytes) X(mem_total_bytes) X(proc_mem_bytes) X(temp_c) X(mem_temp_c) X(power_mw)     \
    X(power_limit_mw) X(energy_mj) X(sm_clock_mhz) X(mem_clock_mhz) X(gfx_clock_mhz)               \
    X(throttle_mask) X(throttle) X(pcie_rx_kbps) X(pcie_tx_kbps) X(fan_pct) X(ecc_corrected)       \
    X(ecc_uncorrected) X(uuid) X(pci_bus_id) X(compute_capability) X(sm_count)                     \
    X(memory_total_bytes) X(max_sm_clock_mhz) X(max_mem_clock_mhz) X(pcie_max_gen)                 \
    X(pcie_max_width) X(driver_version) X(cuda_driver_version) X(start_ns) X(end_ns) X(context)    \
    X(stream) X(corr) X(scope) X(nvtx) X(ext_id) X(ext_kind) X(stack) X(api_start_ns)              \
    X(api_end_ns) X(graph_id) X(mangled) X(grid) X(block) X(regs) X(smem_static) X(smem_dynamic)   \
    X(local_mem) X(occupancy) X(limiter) X(kind) X(src_kind) X(dst_kind) X(bytes) X(dst_device)    \
    X(value) X(mem_kind) X(cuda_event) X(address) X(async) X(domain) X(reason) X(channel)          \
    X(count) X(total) X(level) X(message) X(wall_ns) X(session_id) X(app_name) X(pid) X(host)      \
    X(part) X(format_version) X(gpufl_version) X(lines) X(lost) X(detail) X(first) X(truncated)    \
    X(frames) X(signal) X(signal_name) X(code) X(code_name) X(action) X(stack_frames)               \
    X(stack_truncated) X(stack_unavailable) X(open_scopes) X(open_scopes_lost) X(dropped)          \
    X(requested) X(engine) X(plugin)
// clang-format on

#define KEY_ENUM(k) K_##k,
enum { K_NONE = 0, KEYS(KEY_ENUM) K_COUNT };
#define KEY_NAME(k) #k,
static const char *const key_names[K_COUNT] = {"", KEYS(KEY_NAME)};

/* Line types beyond the event types. */
enum { T_SESSION_START = GFL_EV_TYPE_COUNT, T_SESSION_END, T_LOG_STOPPED, T_COUNT };

#define NAME_SLOTS 512
typedef struct name_table {
    const char *name[NAME_SLOTS];
    uint8_t len[NAME_SLOTS];
    uint8_t id[NAME_SLOTS];
} name_table;

static name_table keys, types;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* Every key and type name differs from the others in its length, first,
 * middle or last bytes often enough that these alone make a good hash, and
 * hashing every byte of every key of every line would cost more. */
static uint32_t name_hash(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    return (uint32_t)n * 2654435761u ^ (uint8_t)s[0] * 40503u ^ (uint8_t)s[n / 2] * 9973u ^ (uint8_t)s[n - 1] * 31u;
}

static void name_add(name_table *t, const char *name, uint8_t id)
{
    size_t n = strlen(name);
    uint32_t i = name_hash(name, n) % NAME_SLOTS;
    while (t->name[i])
        i = (i + 1) % NAME_SLOTS;
    t->name[i] = name;
    t->len[i] = (uint8_t)n;
    t->id[i] = id;
}

/* The id of s[0..n) in t, 0 when unknown. */
static uint8_t name_find(const name_table *t, const char *s, size_t n)
{
    for (uint32_t i = name_hash(s, n) % NAME_SLOTS; t->name[i]; i = (i + 1) % NAME_SLOTS)
        if (t->len[i] == n && memcmp(t->name[i], s, n) == 0)
            return t->id[i];
    return 0;
}

/* ---- what goes where ----------------------------------------------------- */

typedef enum vkind {
    V_U,      /* unsigned integer, must fit the field */
    V_I,      /* signed integer, must fit the field */
    V_STR,    /* string -> id */
    V_FIX2,   /* decimal with 2 places, x100 */
    V_FIX4,   /* decimal with 4 places, x10000 */
    V_FLAG,   /* true sets `arg` in the u8 field; false nothing */
    V_BOOL,   /* true -> 1 */
    V_ENUM,   /* a name from enum table `arg` */
    V_HEX,    /* "0x..." string */
    V_DIMS,   /* [x, y, z] into three fields of `size` bytes */
    V_CC,     /* "M.m" -> two int8 */
    V_CUDA,   /* "M.m" -> M*1000 + m*10 */
    V_FRAMES, /* stack frames: [[module or null, "0x<offset>"], ...] */
    V_SKIP,   /* known, derived from other fields: ignored */
    V_DROPS,  /* {"<drop reason>": count, ...} into a meta line's dropped[] */
} vkind;

typedef struct slot {
    uint8_t key;
    uint8_t kind; /* vkind */
    uint16_t off;
    uint8_t size;
    uint8_t required;
    uint32_t arg; /* V_FLAG bits, V_ENUM table, or a validity bit */
} slot;

enum { EN_COPY, EN_MEM, EN_SYNC, EN_LIMITER, EN_DROP, EN_CHANNEL, EN_LEVEL, EN_CRASH_ACTION };

/* The slot tables are laid out by hand, a line per related group. */
// clang-format off
#define OFF(m) offsetof(gfl_event, m)
#define SZ(m) sizeof(((gfl_event *)0)->m)
#define S(k, m, kind) {K_##k, kind, OFF(m), SZ(m), 0, 0}
#define SV(k, m, kind, bit) {K_##k, kind, OFF(m), SZ(m), 0, bit}
#define SA(k, m, kind, arg) {K_##k, kind, OFF(m), SZ(m), 0, arg}
#define REQ(k, m) {K_##k, V_U, OFF(m), SZ(m), 1, 0}
#define SKIP(k) {K_##k, V_SKIP, 0, 0, 0, 0}
#define END_SLOTS {0, 0, 0, 0, 0, 0}

static const slot scope_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), S(id, u.scope.id, V_U),
    S(parent, u.scope.parent_id, V_U), S(depth, u.scope.depth, V_U), S(name, u.scope.name, V_STR),
    S(begin_ns, u.scope.begin_ts, V_U), SKIP(dur_ns),
    SA(implicit, h.flags, V_FLAG, GFL_F_SCOPE_IMPLICIT), END_SLOTS};

static const slot window_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), S(name, u.window.name, V_STR),
    S(open, u.window.open_windows, V_U), END_SLOTS};

static const slot host_slots[] = {
    REQ(ts_ns, h.ts), S(cpu_count, u.host.cpu_count, V_U),
    SV(proc_cpu_pct, u.host.proc_cpu_pct_x100, V_FIX2, GFL_HOST_PROC_CPU),
    SV(sys_cpu_pct, u.host.sys_cpu_pct_x100, V_FIX2, GFL_HOST_SYS_CPU),
    SV(ram_used_bytes, u.host.ram_used_bytes, V_U, GFL_HOST_RAM),
    SV(ram_total_bytes, u.host.ram_total_bytes, V_U, GFL_HOST_RAM),
    SV(proc_rss_bytes, u.host.proc_rss_bytes, V_U, GFL_HOST_RSS), END_SLOTS};

static const slot device_metrics_slots[] = {
    REQ(ts_ns, h.ts), S(device, h.device, V_U),
    SV(gpu_util_pct, u.dev.gpu_util_pct, V_U, GFL_DEV_GPU_UTIL),
    SV(mem_util_pct, u.dev.mem_util_pct, V_U, GFL_DEV_MEM_UTIL),
    SV(mem_used_bytes, u.dev.mem_used_bytes, V_U, GFL_DEV_MEM),
    SV(mem_free_bytes, u.dev.mem_free_bytes, V_U, GFL_DEV_MEM),
    SV(mem_total_bytes, u.dev.mem_total_bytes, V_U, GFL_DEV_MEM),
    SV(proc_mem_bytes, u.dev.proc_mem_bytes, V_U, GFL_DEV_PROC_MEM),
    SV(temp_c, u.dev.temp_c, V_I, GFL_DEV_TEMP), SV(mem_temp_c, u.dev.mem_temp_c, V_I, GFL_DEV_MEM_TEMP),
    SV(power_mw, u.dev.power_mw, V_U, GFL_DEV_POWER),
    SV(power_limit_mw, u.dev.power_limit_mw, V_U, GFL_DEV_POWER_LIMIT),
    SV(energy_mj, u.dev.energy_mj, V_U, GFL_DEV_ENERGY),
    SV(sm_clock_mhz, u.dev.sm_clock_mhz, V_U, GFL_DEV_CLOCKS),
    SV(mem_clock_mhz, u.dev.mem_clock_mhz, V_U, GFL_DEV_CLOCKS),
    SV(gfx_clock_mhz, u.dev.gfx_clock_mhz, V_U, GFL_DEV_CLOCKS),
    SV(throttle_mask, u.dev.throttle_reasons, V_U, GFL_DEV_THROTTLE), SKIP(throttle),
    SV(pcie_rx_kbps, u.dev.pcie_rx_kbps, V_U, GFL_DEV_PCIE),
    SV(pcie_tx_kbps, u.dev.pcie_tx_kbps, V_U, GFL_DEV_PCIE),
    SV(fan_pct, u.dev.fan_pct, V_U, GFL_DEV_FAN),
    SV(ecc_corrected, u.dev.ecc_corrected, V_U, GFL_DEV_ECC),
    SV(ecc_uncorrected, u.dev.ecc_uncorrected, V_U, GFL_DEV_ECC), END_SLOTS};

static const slot device_info_slots[] = {
    REQ(ts_ns, h.ts), S(device, h.device, V_U), S(name, u.info.name, V_STR),
    S(uuid, u.info.uuid, V_STR), S(pci_bus_id, u.info.pci_bus_id, V_STR),
    S(compute_capability, u.info.cc_major, V_CC), S(sm_count, u.info.sm_count, V_U),
    S(memory_total_bytes, u.info.memory_total_bytes, V_U),
    S(power_limit_mw, u.info.power_limit_mw, V_U),
    S(max_sm_clock_mhz, u.info.max_sm_clock_mhz, V_U),
    S(max_mem_clock_mhz, u.info.max_mem_clock_mhz, V_U),
    S(pcie_max_gen, u.info.pcie_max_gen, V_U), S(pcie_max_width, u.info.pcie_max_width, V_U),
    S(driver_version, u.info.driver_version, V_STR),
    S(cuda_driver_version, u.info.cuda_driver_version, V_CUDA), END_SLOTS};

/* Interval records: the device ids and attribution fields they share. */
#define INTERVAL(p)                                                                                \
    REQ(start_ns, h.ts), S(end_ns, u.p.end_ts, V_U), SKIP(dur_ns), S(device, h.device, V_U),       \
        S(context, u.p.context, V_U), S(stream, u.p.stream, V_U), S(corr, u.p.correlation, V_U),   \
        S(tid, h.tid, V_U), S(scope, u.p.scope_id, V_U), S(nvtx, u.p.nvtx, V_STR),                 \
        S(ext_id, u.p.external_id, V_U)

static const slot kernel_slots[] = {
    INTERVAL(kernel), S(name, u.kernel.name, V_STR), S(mangled, u.kernel.mangled_name, V_STR),
    S(grid, u.kernel.grid, V_DIMS), S(block, u.kernel.block, V_DIMS),
    S(regs, u.kernel.registers, V_U), S(smem_static, u.kernel.static_smem, V_U),
    S(smem_dynamic, u.kernel.dynamic_smem, V_U), S(local_mem, u.kernel.local_mem, V_U),
    S(occupancy, u.kernel.occupancy_x10000, V_FIX4),
    SA(limiter, u.kernel.limiter, V_ENUM, EN_LIMITER), S(graph_id, u.kernel.graph_id, V_U),
    S(ext_kind, u.kernel.external_kind, V_U), S(stack, u.kernel.stack_id, V_U),
    S(api_start_ns, u.kernel.api_start_ts, V_U), S(api_end_ns, u.kernel.api_end_ts, V_U), END_SLOTS};

static const slot memcpy_slots[] = {
    INTERVAL(memcpy), SA(kind, u.memcpy.copy_kind, V_ENUM, EN_COPY),
    SA(src_kind, u.memcpy.src_kind, V_ENUM, EN_MEM), SA(dst_kind, u.memcpy.dst_kind, V_ENUM, EN_MEM),
    S(bytes, u.memcpy.bytes, V_U), S(dst_device, u.memcpy.dst_device, V_U),
    S(graph_id, u.memcpy.graph_id, V_U), S(stack, u.memcpy.stack_id, V_U),
    S(api_start_ns, u.memcpy.api_start_ts, V_U), S(api_end_ns, u.memcpy.api_end_ts, V_U), END_SLOTS};

static const slot memset_slots[] = {
    INTERVAL(memset), S(bytes, u.memset.bytes, V_U), S(value, u.memset.value, V_U),
    SA(mem_kind, u.memset.mem_kind, V_ENUM, EN_MEM), S(graph_id, u.memset.graph_id, V_U),
    S(api_start_ns, u.memset.api_start_ts, V_U), S(api_end_ns, u.memset.api_end_ts, V_U), END_SLOTS};

static const slot sync_slots[] = {
    INTERVAL(sync), SA(kind, u.sync.sync_kind, V_ENUM, EN_SYNC), S(cuda_event, u.sync.cuda_event, V_U),
    S(stack, u.sync.stack_id, V_U), END_SLOTS};

static const slot mem_slots[] = {
    REQ(ts_ns, h.ts), S(device, h.device, V_U), S(context, u.mem.context, V_U),
    S(stream, u.mem.stream, V_U), S(corr, u.mem.correlation, V_U), S(address, u.mem.address, V_HEX),
    S(bytes, u.mem.bytes, V_U), SA(kind, u.mem.mem_kind, V_ENUM, EN_MEM),
    S(async, u.mem.is_async, V_BOOL), S(tid, h.tid, V_U), S(scope, u.mem.scope_id, V_U),
    S(nvtx, u.mem.nvtx, V_STR), S(ext_id, u.mem.external_id, V_U), S(stack, u.mem.stack_id, V_U),
    END_SLOTS};

static const slot dropped_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), SA(reason, u.dropped.reason, V_ENUM, EN_DROP),
    SA(channel, u.dropped.channel, V_ENUM, EN_CHANNEL), S(count, u.dropped.count, V_U),
    S(total, u.dropped.total, V_U), END_SLOTS};

/* A range without "depth" is a start/end range (GFL_F_NVTX_START_END). */
static const slot nvtx_range_slots[] = {
    REQ(start_ns, h.ts), S(end_ns, u.nvtx.end_ts, V_U), SKIP(dur_ns), S(tid, h.tid, V_U),
    S(name, u.nvtx.name, V_STR), S(domain, u.nvtx.domain, V_STR), S(depth, u.nvtx.depth, V_U),
    S(id, u.nvtx.id, V_U), END_SLOTS};

static const slot nvtx_mark_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), S(name, u.nvtx.name, V_STR),
    S(domain, u.nvtx.domain, V_STR), S(id, u.nvtx.id, V_U), END_SLOTS};

static const slot graph_slots[] = {
    REQ(ts_ns, h.ts), S(end_ns, u.graph.end_ts, V_U), S(corr, u.graph.correlation, V_U),
    S(tid, h.tid, V_U), S(scope, u.graph.scope_id, V_U), S(nvtx, u.graph.nvtx, V_STR),
    S(ext_id, u.graph.external_id, V_U), S(stack, u.graph.stack_id, V_U), END_SLOTS};

static const slot stack_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), S(id, u.stack.id, V_U), S(first, u.stack.first, V_U),
    S(total, u.stack.total, V_U), S(truncated, u.stack.truncated, V_BOOL),
    S(frames, u.stack.frames, V_FRAMES), END_SLOTS};

static const slot crash_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), S(signal, u.crash.signal, V_I), SKIP(signal_name),
    S(code, u.crash.code, V_I), SKIP(code_name), S(address, u.crash.address, V_HEX),
    S(pid, u.crash.sender_pid, V_U), SA(action, u.crash.action, V_ENUM, EN_CRASH_ACTION),
    S(stack_frames, u.crash.frames, V_U), S(stack_truncated, u.crash.stack_truncated, V_BOOL),
    SA(stack_unavailable, h.flags, V_FLAG, GFL_F_CRASH_NO_UNWIND),
    S(open_scopes, u.crash.open_scopes, V_U), S(open_scopes_lost, u.crash.scopes_lost, V_U),
    END_SLOTS};

/* crash_scope: scope_begin's fields (scope_slots); crash_stack: a stack
 * piece without id (stack_slots). */

static const slot engine_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), S(requested, u.engine.requested, V_STR),
    S(engine, u.engine.ran, V_STR), S(plugin, u.engine.plugin, V_STR), S(reason, u.engine.reason, V_STR),
    END_SLOTS};

static const slot log_slots[] = {
    REQ(ts_ns, h.ts), S(tid, h.tid, V_U), SA(level, u.log.level, V_ENUM, EN_LEVEL),
    S(message, u.log.message, V_STR), END_SLOTS};

/* Session lines fill a gpufl__meta_line instead of an event. */
#define MOFF(m) offsetof(gpufl__meta_line, m)
#define MSZ(m) sizeof(((gpufl__meta_line *)0)->m)
#define M(k, m, kind) {K_##k, kind, MOFF(m), MSZ(m), 0, 0}
#define MREQ(k, m) {K_##k, V_U, MOFF(m), MSZ(m), 1, 0}

static const slot session_start_slots[] = {
    MREQ(ts_ns, ts_ns), M(wall_ns, wall_ns, V_U), M(session_id, session_id, V_STR),
    M(app_name, app_name, V_STR), M(pid, pid, V_I), M(host, host, V_STR),
    M(channel, channel, V_STR), M(part, part, V_U), M(format_version, format_version, V_U),
    M(gpufl_version, gpufl_version, V_STR), END_SLOTS};

static const slot session_end_slots[] = {
    MREQ(ts_ns, ts_ns), M(wall_ns, wall_ns, V_U), M(session_id, session_id, V_STR),
    M(app_name, app_name, V_STR), M(lines, lines, V_U), M(lost, lost, V_U),
    M(dropped, dropped, V_DROPS), END_SLOTS};

static const slot log_stopped_slots[] = {
    MREQ(ts_ns, ts_ns), M(reason, reason, V_STR), M(detail, detail, V_STR), END_SLOTS};
// clang-format on

typedef struct line_type {
    const slot *slots;
    uint16_t valid_off; /* where validity bits go; 0 = none */
} line_type;

static const line_type line_types[T_COUNT] = {
    [GFL_EV_SCOPE_BEGIN] = {scope_slots, 0},
    [GFL_EV_SCOPE_END] = {scope_slots, 0},
    [GFL_EV_SYSTEM_START] = {window_slots, 0},
    [GFL_EV_SYSTEM_STOP] = {window_slots, 0},
    [GFL_EV_HOST_METRICS] = {host_slots, OFF(u.host.valid)},
    [GFL_EV_DEVICE_METRICS] = {device_metrics_slots, OFF(u.dev.valid)},
    [GFL_EV_KERNEL] = {kernel_slots, 0},
    [GFL_EV_MEMCPY] = {memcpy_slots, 0},
    [GFL_EV_MEMSET] = {memset_slots, 0},
    [GFL_EV_SYNC] = {sync_slots, 0},
    [GFL_EV_MEM_ALLOC] = {mem_slots, 0},
    [GFL_EV_MEM_FREE] = {mem_slots, 0},
    [GFL_EV_DROPPED] = {dropped_slots, 0},
    [GFL_EV_LOG] = {log_slots, 0},
    [GFL_EV_DEVICE_INFO] = {device_info_slots, 0},
    [GFL_EV_NVTX_RANGE] = {nvtx_range_slots, 0},
    [GFL_EV_NVTX_MARK] = {nvtx_mark_slots, 0},
    [GFL_EV_GRAPH_LAUNCH] = {graph_slots, 0},
    [GFL_EV_STACK] = {stack_slots, 0},
    [GFL_EV_CRASH] = {crash_slots, 0},
    [GFL_EV_CRASH_STACK] = {stack_slots, 0},
    [GFL_EV_CRASH_SCOPE] = {scope_slots, 0},
    [GFL_EV_ENGINE] = {engine_slots, 0},
    [T_SESSION_START] = {session_start_slots, 0},
    [T_SESSION_END] = {session_end_slots, 0},
    [T_LOG_STOPPED] = {log_stopped_slots, 0},
};

/* slot_of[type][key]: index + 1 into the type's slots, 0 = not a field of it */
static uint8_t slot_of[T_COUNT][K_COUNT];

static void build_tables(void)
{
    for (uint8_t k = 1; k < K_COUNT; k++)
        name_add(&keys, key_names[k], k);
    for (uint8_t t = 1; t < GFL_EV_TYPE_COUNT; t++)
        name_add(&types, gpufl__event_type_name(t), t);
    name_add(&types, "session_start", T_SESSION_START);
    name_add(&types, "session_end", T_SESSION_END);
    name_add(&types, "log_stopped", T_LOG_STOPPED);
    for (unsigned t = 0; t < T_COUNT; t++)
        for (unsigned i = 0; line_types[t].slots && line_types[t].slots[i].key; i++)
            slot_of[t][line_types[t].slots[i].key] = (uint8_t)(i + 1);
}

/* ---- values -------------------------------------------------------------- */

static const char *enum_name(unsigned table, unsigned i)
{
    switch (table) {
    case EN_COPY: return i < GFL_COPY_KIND_COUNT ? gpufl__copy_kind_name((uint8_t)i) : NULL;
    case EN_MEM: return i < GFL_MEM_KIND_COUNT ? gpufl__mem_kind_name((uint8_t)i) : NULL;
    case EN_SYNC: return i < GFL_SYNC_KIND_COUNT ? gpufl__sync_kind_name((uint8_t)i) : NULL;
    case EN_LIMITER: return i < GFL_LIMIT_COUNT ? gpufl__limiter_name((uint8_t)i) : NULL;
    case EN_DROP: return i < GFL_DROP_REASON_COUNT ? gpufl__drop_reason_name((uint8_t)i) : NULL;
    case EN_CHANNEL: return i < GFL_CHANNEL_COUNT ? gpufl__channel_name((uint8_t)i) : NULL;
    case EN_LEVEL: return i <= GFL_LOG_ERROR ? gpufl__log_level_name((uint8_t)i) : NULL;
    case EN_CRASH_ACTION: return i < GFL_CRASH_ACTION_COUNT ? gpufl__crash_action_name((uint8_t)i) : NULL;
    }
    return NULL;
}

/* A name the table does not have (a newer writer's) reads as 0, "unknown". */
static uint64_t enum_value(unsigned table, const char *s, size_t n)
{
    const char *name;
    for (unsigned i = 0; (name = enum_name(table, i)) != NULL; i++)
        if (strlen(name) == n && memcmp(name, s, n) == 0)
            return i;
    return 0;
}

static void put(void *base, const slot *sl, size_t index, uint64_t v)
{
    uint8_t *p = (uint8_t *)base + sl->off + index * sl->size;
    switch (sl->size) {
    case 1: *p = (uint8_t)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

static bool fits_unsigned(uint64_t v, unsigned size) { return size >= 8 || v >> (8 * size) == 0; }

static bool fits_signed(int64_t v, unsigned size)
{
    int64_t lim = size >= 8 ? INT64_MAX : ((int64_t)1 << (8 * size - 1)) - 1;
    return v <= lim && v >= -lim - 1;
}

/* The text of a string value, unescaped if needed (into p->scratch). */
static int string_text(gpufl__ndjson_parser *p, const gpufl__jfield *f, const char **s, size_t *n)
{
    if (!f->escaped) {
        *s = f->val;
        *n = f->val_len;
        return 0;
    }
    if (p->scratch_cap < f->val_len + 1) {
        size_t cap = f->val_len + 1 > 4096 ? f->val_len + 1 : 4096;
        char *b = realloc(p->scratch, cap);
        if (!b)
            return GPUFL_ENOMEM;
        p->scratch = b;
        p->scratch_cap = cap;
    }
    long len = gpufl__json_unescape(f->val, f->val_len, p->scratch);
    if (len < 0)
        return GPUFL_ECORRUPT;
    *s = p->scratch;
    *n = (size_t)len;
    return 0;
}

/* "M.m" into two small numbers. */
static int version_pair(const char *s, size_t n, uint64_t *major, uint64_t *minor)
{
    const char *dot = memchr(s, '.', n);
    if (!dot)
        return -1;
    return gpufl__json_u64(s, (size_t)(dot - s), major) || gpufl__json_u64(dot + 1, (size_t)(s + n - dot - 1), minor)
               ? -1
               : 0;
}

/* session_end's "dropped": the channel's final losses by reason name (a
 * reason this reader does not know, from a newer writer, is left out). */
static int drop_counts(void *base, const gpufl__jfield *f, const char **why)
{
    gpufl__meta_line *m = base;
    gpufl__jfield el[GFL_JSON_MAX_FIELDS];
    const char *bad;
    size_t at;
    int n = f->kind == GFL_J_OBJECT ? gpufl__json_fields(f->val, f->val_len, el, GFL_JSON_MAX_FIELDS, &bad, &at) : -1;
    if (n < 0) {
        *why = "is not an object of counts";
        return GPUFL_ECORRUPT;
    }
    for (int i = 0; i < n; i++) {
        uint64_t v;
        if (el[i].kind != GFL_J_NUMBER || gpufl__json_u64(el[i].val, el[i].val_len, &v) != 0) {
            *why = "holds a count that is not an unsigned integer";
            return GPUFL_ECORRUPT;
        }
        for (uint8_t r = 0; r < GFL_DROP_REASON_COUNT; r++)
            if (!el[i].key_escaped && strlen(gpufl__drop_reason_name(r)) == el[i].key_len &&
                !memcmp(gpufl__drop_reason_name(r), el[i].key, el[i].key_len))
                m->dropped[r] = v;
    }
    m->has_dropped = true;
    return 0;
}

/* The frames of a stack line into the event's frames and count. */
static int stack_frames(gpufl__ndjson_parser *p, gfl_event *ev, const gpufl__jfield *f, const char **why)
{
    gpufl__jfield el[GFL_STACK_FRAMES_PER_EVENT], pair[2];
    int n = f->kind == GFL_J_ARRAY ? gpufl__json_array(f->val, f->val_len, el, GFL_STACK_FRAMES_PER_EVENT) : -1;
    if (n < 0)
        return GPUFL_ECORRUPT;
    for (int i = 0; i < n; i++) {
        const char *s;
        size_t len;
        uint64_t offset;
        if (el[i].kind != GFL_J_ARRAY || gpufl__json_array(el[i].val, el[i].val_len, pair, 2) != 2 ||
            pair[1].kind != GFL_J_STRING || gpufl__json_hex(pair[1].val, pair[1].val_len, &offset) ||
            offset > UINT32_MAX)
            return GPUFL_ECORRUPT;
        uint32_t module = 0;
        if (pair[0].kind == GFL_J_STRING) {
            int rc = string_text(p, &pair[0], &s, &len);
            if (rc == 0 && gpufl__strtab_intern(p->names, s, len, &module) != 0)
                rc = GPUFL_ENOMEM;
            if (rc != 0) {
                *why = rc == GPUFL_ENOMEM ? "could not be stored: out of memory" : "has a bad escape";
                return rc;
            }
        } else if (pair[0].kind != GFL_J_NULL) {
            return GPUFL_ECORRUPT;
        }
        ev->u.stack.frames[i].module = module;
        ev->u.stack.frames[i].offset = (uint32_t)offset;
    }
    ev->u.stack.count = (uint8_t)n;
    return 0;
}

/* Stores field f through slot sl into base. Returns 0 or a gpufl_err with
 * *why. */
static int apply(gpufl__ndjson_parser *p, void *base, const slot *sl, const gpufl__jfield *f, const char **why)
{
    uint64_t v = 0;
    const char *s;
    size_t n;
    *why = "has a value of the wrong kind";
    switch (sl->kind) {
    case V_SKIP: return 0;
    case V_U:
        if (f->kind != GFL_J_NUMBER || gpufl__json_u64(f->val, f->val_len, &v) != 0)
            return GPUFL_ECORRUPT;
        break;
    case V_I: {
        int64_t i;
        if (f->kind != GFL_J_NUMBER || gpufl__json_i64(f->val, f->val_len, &i) != 0)
            return GPUFL_ECORRUPT;
        if (!fits_signed(i, sl->size)) {
            *why = "is out of range";
            return GPUFL_ECORRUPT;
        }
        put(base, sl, 0, (uint64_t)i);
        return 0;
    }
    case V_FIX2:
    case V_FIX4:
        if (f->kind != GFL_J_NUMBER || gpufl__json_fixed(f->val, f->val_len, sl->kind == V_FIX2 ? 2 : 4, &v) != 0)
            return GPUFL_ECORRUPT;
        break;
    case V_FLAG:
    case V_BOOL:
        if (f->kind != GFL_J_TRUE && f->kind != GFL_J_FALSE)
            return GPUFL_ECORRUPT;
        if (f->kind == GFL_J_FALSE)
            return 0;
        v = sl->kind == V_FLAG ? (*((uint8_t *)base + sl->off) | sl->arg) : 1;
        break;
    case V_STR:
    case V_ENUM:
    case V_HEX:
    case V_CC:
    case V_CUDA: {
        if (f->kind != GFL_J_STRING)
            return GPUFL_ECORRUPT;
        int rc = string_text(p, f, &s, &n);
        if (rc != 0) {
            *why = rc == GPUFL_ENOMEM ? "could not be stored: out of memory" : "has a bad escape";
            return rc;
        }
        if (sl->kind == V_STR) {
            uint32_t id;
            if (gpufl__strtab_intern(p->names, s, n, &id) != 0) {
                *why = "could not be stored: out of memory";
                return GPUFL_ENOMEM;
            }
            v = id;
        } else if (sl->kind == V_ENUM) {
            v = enum_value(sl->arg, s, n);
        } else if (sl->kind == V_HEX) {
            if (gpufl__json_hex(s, n, &v) != 0)
                return GPUFL_ECORRUPT;
        } else {
            uint64_t major, minor;
            if (version_pair(s, n, &major, &minor) != 0)
                return GPUFL_ECORRUPT;
            /* "9.0" into two int8; "13.0" into 13000 (the writer prints
             * v / 1000 "." v % 1000 / 10) */
            if (sl->kind == V_CC ? major > 127 || minor > 127 : minor > 99 || major > INT32_MAX / 1000 - 1) {
                *why = "is out of range";
                return GPUFL_ECORRUPT;
            }
            if (sl->kind == V_CC) {
                put(base, &(slot){0, 0, sl->off, 1, 0, 0}, 0, major);
                put(base, &(slot){0, 0, sl->off, 1, 0, 0}, 1, minor);
                return 0;
            }
            v = major * 1000 + minor * 10;
        }
        break;
    }
    case V_FRAMES: return stack_frames(p, base, f, why);
    case V_DROPS: return drop_counts(base, f, why);
    case V_DIMS: {
        gpufl__jfield el[3];
        unsigned size = sl->size / 3;
        if (f->kind != GFL_J_ARRAY || gpufl__json_array(f->val, f->val_len, el, 3) != 3)
            return GPUFL_ECORRUPT;
        for (size_t i = 0; i < 3; i++) {
            if (el[i].kind != GFL_J_NUMBER || gpufl__json_u64(el[i].val, el[i].val_len, &v) != 0)
                return GPUFL_ECORRUPT;
            if (!fits_unsigned(v, size)) {
                *why = "is out of range";
                return GPUFL_ECORRUPT;
            }
            put(base, &(slot){0, 0, sl->off, (uint8_t)size, 0, 0}, i, v);
        }
        return 0;
    }
    }
    if (!fits_unsigned(v, sl->size)) {
        *why = "is out of range";
        return GPUFL_ECORRUPT;
    }
    put(base, sl, 0, v);
    return 0;
}

/* ---- lines --------------------------------------------------------------- */

void gpufl__ndjson_parser_init(gpufl__ndjson_parser *p, gpufl__strtab *names)
{
    memset(p, 0, sizeof *p);
    p->names = names;
    pthread_once(&tables_once, build_tables);
}

void gpufl__ndjson_parser_free(gpufl__ndjson_parser *p)
{
    free(p->scratch);
    memset(p, 0, sizeof *p);
}

int gpufl__ndjson_parse_line(gpufl__ndjson_parser *p, const char *line, size_t n, gfl_event *ev, gpufl__meta_line *meta,
                             char *why, size_t why_len)
{
    gpufl__jfield f[GFL_JSON_MAX_FIELDS];
    const char *problem;
    size_t at;
    int nf = gpufl__json_fields(line, n, f, GFL_JSON_MAX_FIELDS, &problem, &at);
    if (nf < 0) {
        snprintf(why, why_len, "%s (byte %zu)", problem, at + 1);
        return GPUFL_ECORRUPT;
    }
    int type = -1;
    for (int i = 0; i < nf; i++)
        if (!f[i].key_escaped && name_find(&keys, f[i].key, f[i].key_len) == K_type) {
            if (f[i].kind != GFL_J_STRING) {
                snprintf(why, why_len, "\"type\" is not a string");
                return GPUFL_ECORRUPT;
            }
            type = f[i].escaped ? 0 : name_find(&types, f[i].val, f[i].val_len);
            break;
        }
    if (type < 0) {
        snprintf(why, why_len, "the line has no \"type\"");
        return GPUFL_ECORRUPT;
    }
    if (type == 0)
        return GFL_LINE_UNKNOWN;
    void *base;
    if (type < GFL_EV_TYPE_COUNT) {
        memset(ev, 0, sizeof *ev);
        ev->h.type = (uint8_t)type;
        if (type == GFL_EV_DEVICE_INFO)
            ev->u.info.cc_major = ev->u.info.cc_minor = -1;
        base = ev;
    } else {
        memset(meta, 0, sizeof *meta);
        base = meta;
    }
    const line_type *lt = &line_types[type];
    uint32_t valid = 0;
    uint64_t seen_required = 0, required = 0;
    bool has_depth = false;
    for (unsigned i = 0; lt->slots[i].key; i++)
        if (lt->slots[i].required)
            required |= 1ull << i;
    for (int i = 0; i < nf; i++) {
        /* a key spelled with escapes is none of ours */
        uint8_t key = f[i].key_escaped ? 0 : name_find(&keys, f[i].key, f[i].key_len);
        unsigned si = key ? slot_of[type][key] : 0;
        if (!si)
            continue; /* a field this reader does not know: forward compatible */
        const slot *sl = &lt->slots[si - 1];
        const char *bad;
        int rc = apply(p, base, sl, &f[i], &bad);
        if (rc != 0) {
            snprintf(why, why_len, "\"%s\" %s (byte %zu)", key_names[key], bad, (size_t)(f[i].val - line) + 1);
            return rc;
        }
        /* in types with validity bits, `arg` is the field's bit */
        valid |= sl->kind == V_SKIP ? 0 : sl->arg * (lt->valid_off != 0);
        has_depth |= key == K_depth;
        seen_required |= (uint64_t)sl->required << (si - 1);
    }
    if (seen_required != required) {
        for (unsigned i = 0; lt->slots[i].key; i++)
            if ((required & ~seen_required) >> i & 1) {
                snprintf(why, why_len, "\"%s\" is missing", key_names[lt->slots[i].key]);
                break;
            }
        return GPUFL_ECORRUPT;
    }
    if (lt->valid_off)
        memcpy((uint8_t *)ev + lt->valid_off, &valid, sizeof valid);
    if (type == GFL_EV_NVTX_RANGE && !has_depth)
        ev->h.flags |= GFL_F_NVTX_START_END;
    switch (type) {
    case T_SESSION_START: return GFL_LINE_SESSION_START;
    case T_SESSION_END: return GFL_LINE_SESSION_END;
    case T_LOG_STOPPED: return GFL_LINE_LOG_STOPPED;
    default: return GFL_LINE_EVENT;
    }
}
