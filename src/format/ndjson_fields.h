/*
 * The NDJSON line types and their fields (docs/FORMAT.md): the one table
 * that the writer (format/ndjson_format.c) expands into its formatting code
 * and the reader (read/ndjson_parse.c) into its parse tables, so a field
 * added here is written and read back without a second list to keep in
 * step. It is a table of X-macros rather than data because the writer runs
 * for every event on the collector thread: expanded at compile time it is
 * the same straight-line code as a hand-written formatter (bench_writer),
 * where walking a table at run time would cost a branch per field.
 *
 * A row is X(key, member, kind, arg, when), in the order the writer writes:
 *   key     the JSON key, a bare word; every key is also in GFL_NDJSON_KEYS
 *   member  where the value lives in gfl_event (gpufl__meta_line for the
 *           session lines)
 *   kind    how the value is spelled (the GFL_NDJ kinds below)
 *   arg     the validity bit of a VALID_* field, the flag bit of a FLAG,
 *           the name table of an ENUM (gpufl__<arg>_name), else 0
 *   when    when the writer writes it (GFL_NDJ_IF_<when>); REQ fields are
 *           always written and a line without them is damaged. The reader
 *           takes every field of the line type whatever `when` says.
 *
 * Kinds: U unsigned and I signed integers; STR a string id; FIX2/FIX4 a
 * fixed-point number with 2 or 4 decimals; FLAG `true` for a bit of h.flags;
 * BOOL `true` for a nonzero byte; ENUM a name; HEX "0x..."; DIMS [x,y,z];
 * CC "major.minor" from two int8 (the minor follows the major); CUDA
 * "13.0" from 13000; FRAMES a stack piece's frames; STALLS a PC sample's
 * {"reason": samples, ...}; DROPS the final losses
 * object of session_end. Written but not read, because they follow from
 * other fields: DUR_UNTIL (member - h.ts), DUR_SINCE (h.ts - member),
 * THROTTLE (names of the mask's bits), SIGNAL_NAME and CODE_NAME.
 *
 * Any thread: it is only macros.
 */
#ifndef GPUFL_FORMAT_NDJSON_FIELDS_H
#define GPUFL_FORMAT_NDJSON_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

/* ---- when the writer writes a field ------------------------------------- */

/* ev: the event; v: the field's value; a: the row's arg. */
#define GFL_NDJ_IF_REQ(ev, v, a) 1
#define GFL_NDJ_IF_ALWAYS(ev, v, a) 1
#define GFL_NDJ_IF_NONZERO(ev, v, a) ((v) != 0)
#define GFL_NDJ_IF_VALID_HOST(ev, v, a) (((ev)->u.host.valid & (a)) != 0)
#define GFL_NDJ_IF_VALID_DEV(ev, v, a) (((ev)->u.dev.valid & (a)) != 0)
#define GFL_NDJ_IF_FLAGGED(ev, v, a) (((ev)->h.flags & (a)) != 0)
/* scope lines: scope_end and crash_scope carry the begin time; only
 * scope_end its duration and whether it was closed implicitly */
#define GFL_NDJ_IF_NOT_SCOPE_BEGIN(ev, v, a) ((ev)->h.type != GFL_EV_SCOPE_BEGIN)
#define GFL_NDJ_IF_SCOPE_END(ev, v, a) ((ev)->h.type == GFL_EV_SCOPE_END)
#define GFL_NDJ_IF_SCOPE_END_FLAGGED(ev, v, a) (GFL_NDJ_IF_SCOPE_END(ev, v, a) && GFL_NDJ_IF_FLAGGED(ev, v, a))
/* a crash's stack is the crash's, and has no id */
#define GFL_NDJ_IF_IS_STACK(ev, v, a) ((ev)->h.type == GFL_EV_STACK)
/* a range without "depth" is a start/end range */
#define GFL_NDJ_IF_NESTED_RANGE(ev, v, a) (!((ev)->h.flags & GFL_F_NVTX_START_END))
#define GFL_NDJ_IF_MANGLED(ev, v, a) ((v) != 0 && (v) != (ev)->u.kernel.name)
#define GFL_NDJ_IF_PEER_COPY(ev, v, a) ((ev)->u.memcpy.copy_kind == GFL_COPY_PTOP)
#define GFL_NDJ_IF_KERNEL_EXT_KIND(ev, v, a) ((ev)->u.kernel.external_id != 0 && (v) != 0)
#define GFL_NDJ_IF_API_kernel(ev, v, a) ((ev)->u.kernel.api_start_ts != 0)
#define GFL_NDJ_IF_API_memcpy(ev, v, a) ((ev)->u.memcpy.api_start_ts != 0)
#define GFL_NDJ_IF_API_memset(ev, v, a) ((ev)->u.memset.api_start_ts != 0)
#define GFL_NDJ_IF_CC_KNOWN(ev, v, a) ((v) >= 0)
#define GFL_NDJ_IF_POSITIVE(ev, v, a) ((v) > 0)
/* nccl_coll lines: the root of a rooted collective or the peer of a
 * point-to-point call; none is -1 */
#define GFL_NDJ_IF_NCCL_ROOT(ev, v, a) ((v) >= 0 && !((ev)->h.flags & GFL_F_NCCL_P2P))
#define GFL_NDJ_IF_NCCL_PEER(ev, v, a) ((v) >= 0 && ((ev)->h.flags & GFL_F_NCCL_P2P))
#define GFL_NDJ_IF_NCCL_BYTES(ev, v, a) (((ev)->h.flags & GFL_F_NCCL_BYTES) != 0)
/* clock lines: the kernel's NTP figures, when it gave them */
#define GFL_NDJ_IF_CLOCK_NTP(ev, v, a) ((ev)->u.clock.ntp != 0)
#define GFL_NDJ_IF_CODE_NAMED(ev, v, a) (gpufl__signal_code_name((ev)->u.crash.signal, (v)) != NULL)
/* session_end: when the writer is handed the final counts */
#define GFL_NDJ_IF_GIVEN(ev, v, a) ((v) != NULL)

/* ---- shared pieces -------------------------------------------------------- */

/* start/end/duration of interval records; a clock glitch gives a 0
 * duration, never a negative one */
#define GFL_NDJ_INTERVAL(X, p)                                                                                         \
    X(start_ns, h.ts, U, 0, REQ)                                                                                       \
    X(end_ns, u.p.end_ts, U, 0, ALWAYS)                                                                                \
    X(dur_ns, u.p.end_ts, DUR_UNTIL, 0, ALWAYS)

#define GFL_NDJ_DEVICE_IDS(X, p)                                                                                       \
    X(device, h.device, U, 0, ALWAYS)                                                                                  \
    X(context, u.p.context, U, 0, ALWAYS)                                                                              \
    X(stream, u.p.stream, U, 0, ALWAYS)                                                                                \
    X(corr, u.p.correlation, U, 0, ALWAYS)

/* Who launched it: thread, scope, NVTX range, framework id; each left out
 * when unknown. The CPU stack and API call times follow in the types that
 * have them. */
#define GFL_NDJ_LAUNCHER(X, p)                                                                                         \
    X(tid, h.tid, U, 0, NONZERO)                                                                                       \
    X(scope, u.p.scope_id, U, 0, NONZERO)                                                                              \
    X(nvtx, u.p.nvtx, STR, 0, NONZERO)                                                                                 \
    X(ext_id, u.p.external_id, U, 0, NONZERO)

#define GFL_NDJ_STACK_ID(X, p) X(stack, u.p.stack_id, U, 0, NONZERO)

#define GFL_NDJ_API_TIMES(X, p)                                                                                        \
    X(api_start_ns, u.p.api_start_ts, U, 0, NONZERO)                                                                   \
    X(api_end_ns, u.p.api_end_ts, U, 0, API_##p)

/* ---- event lines ---------------------------------------------------------- */

/* scope_begin, scope_end and crash_scope (a scope open at a crash, with the
 * crash's time) */
// clang-format off
#define GFL_NDJSON_SCOPE(X)                                                                        \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, ALWAYS)                                                                    \
    X(id, u.scope.id, U, 0, ALWAYS)                                                                \
    X(parent, u.scope.parent_id, U, 0, ALWAYS)                                                     \
    X(depth, u.scope.depth, U, 0, ALWAYS)                                                          \
    X(name, u.scope.name, STR, 0, ALWAYS)                                                          \
    X(begin_ns, u.scope.begin_ts, U, 0, NOT_SCOPE_BEGIN)                                           \
    X(dur_ns, u.scope.begin_ts, DUR_SINCE, 0, SCOPE_END)                                           \
    X(implicit, h.flags, FLAG, GFL_F_SCOPE_IMPLICIT, SCOPE_END_FLAGGED)
// clang-format on

/* system_start, system_stop */
// clang-format off
#define GFL_NDJSON_WINDOW(X)                                                                       \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, ALWAYS)                                                                    \
    X(name, u.window.name, STR, 0, ALWAYS)                                                         \
    X(open, u.window.open_windows, U, 0, ALWAYS)
// clang-format on

// clang-format off
#define GFL_NDJSON_HOST_METRICS(X)                                                                 \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(cpu_count, u.host.cpu_count, U, 0, ALWAYS)                                                   \
    X(proc_cpu_pct, u.host.proc_cpu_pct_x100, FIX2, GFL_HOST_PROC_CPU, VALID_HOST)                 \
    X(sys_cpu_pct, u.host.sys_cpu_pct_x100, FIX2, GFL_HOST_SYS_CPU, VALID_HOST)                    \
    X(ram_used_bytes, u.host.ram_used_bytes, U, GFL_HOST_RAM, VALID_HOST)                          \
    X(ram_total_bytes, u.host.ram_total_bytes, U, GFL_HOST_RAM, VALID_HOST)                        \
    X(proc_rss_bytes, u.host.proc_rss_bytes, U, GFL_HOST_RSS, VALID_HOST)
// clang-format on

// clang-format off
#define GFL_NDJSON_DEVICE_METRICS(X)                                                               \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(gpu_util_pct, u.dev.gpu_util_pct, U, GFL_DEV_GPU_UTIL, VALID_DEV)                            \
    X(mem_util_pct, u.dev.mem_util_pct, U, GFL_DEV_MEM_UTIL, VALID_DEV)                            \
    X(mem_used_bytes, u.dev.mem_used_bytes, U, GFL_DEV_MEM, VALID_DEV)                             \
    X(mem_free_bytes, u.dev.mem_free_bytes, U, GFL_DEV_MEM, VALID_DEV)                             \
    X(mem_total_bytes, u.dev.mem_total_bytes, U, GFL_DEV_MEM, VALID_DEV)                           \
    X(proc_mem_bytes, u.dev.proc_mem_bytes, U, GFL_DEV_PROC_MEM, VALID_DEV)                        \
    X(temp_c, u.dev.temp_c, I, GFL_DEV_TEMP, VALID_DEV)                                            \
    X(mem_temp_c, u.dev.mem_temp_c, I, GFL_DEV_MEM_TEMP, VALID_DEV)                                \
    X(power_mw, u.dev.power_mw, U, GFL_DEV_POWER, VALID_DEV)                                       \
    X(power_limit_mw, u.dev.power_limit_mw, U, GFL_DEV_POWER_LIMIT, VALID_DEV)                     \
    X(energy_mj, u.dev.energy_mj, U, GFL_DEV_ENERGY, VALID_DEV)                                    \
    X(sm_clock_mhz, u.dev.sm_clock_mhz, U, GFL_DEV_CLOCKS, VALID_DEV)                              \
    X(mem_clock_mhz, u.dev.mem_clock_mhz, U, GFL_DEV_CLOCKS, VALID_DEV)                            \
    X(gfx_clock_mhz, u.dev.gfx_clock_mhz, U, GFL_DEV_CLOCKS, VALID_DEV)                            \
    X(throttle_mask, u.dev.throttle_reasons, U, GFL_DEV_THROTTLE, VALID_DEV)                       \
    X(throttle, u.dev.throttle_reasons, THROTTLE, GFL_DEV_THROTTLE, VALID_DEV)                     \
    X(pcie_rx_kbps, u.dev.pcie_rx_kbps, U, GFL_DEV_PCIE, VALID_DEV)                                \
    X(pcie_tx_kbps, u.dev.pcie_tx_kbps, U, GFL_DEV_PCIE, VALID_DEV)                                \
    X(fan_pct, u.dev.fan_pct, U, GFL_DEV_FAN, VALID_DEV)                                           \
    X(ecc_corrected, u.dev.ecc_corrected, U, GFL_DEV_ECC, VALID_DEV)                               \
    X(ecc_uncorrected, u.dev.ecc_uncorrected, U, GFL_DEV_ECC, VALID_DEV)
// clang-format on

#define GFL_NDJSON_KERNEL(X)                                                                                           \
    GFL_NDJ_INTERVAL(X, kernel)                                                                                        \
    GFL_NDJ_DEVICE_IDS(X, kernel)                                                                                      \
    X(name, u.kernel.name, STR, 0, ALWAYS)                                                                             \
    X(mangled, u.kernel.mangled_name, STR, 0, MANGLED)                                                                 \
    X(grid, u.kernel.grid, DIMS, 0, ALWAYS)                                                                            \
    X(block, u.kernel.block, DIMS, 0, ALWAYS)                                                                          \
    X(regs, u.kernel.registers, U, 0, ALWAYS)                                                                          \
    X(smem_static, u.kernel.static_smem, U, 0, ALWAYS)                                                                 \
    X(smem_dynamic, u.kernel.dynamic_smem, U, 0, ALWAYS)                                                               \
    X(local_mem, u.kernel.local_mem, U, 0, ALWAYS)                                                                     \
    X(occupancy, u.kernel.occupancy_x10000, FIX4, 0, NONZERO)                                                          \
    X(limiter, u.kernel.limiter, ENUM, limiter, NONZERO)                                                               \
    X(graph_id, u.kernel.graph_id, U, 0, NONZERO)                                                                      \
    GFL_NDJ_LAUNCHER(X, kernel)                                                                                        \
    X(ext_kind, u.kernel.external_kind, U, 0, KERNEL_EXT_KIND)                                                         \
    GFL_NDJ_STACK_ID(X, kernel)                                                                                        \
    GFL_NDJ_API_TIMES(X, kernel)

#define GFL_NDJSON_MEMCPY(X)                                                                                           \
    GFL_NDJ_INTERVAL(X, memcpy)                                                                                        \
    GFL_NDJ_DEVICE_IDS(X, memcpy)                                                                                      \
    X(kind, u.memcpy.copy_kind, ENUM, copy_kind, ALWAYS)                                                               \
    X(src_kind, u.memcpy.src_kind, ENUM, mem_kind, ALWAYS)                                                             \
    X(dst_kind, u.memcpy.dst_kind, ENUM, mem_kind, ALWAYS)                                                             \
    X(bytes, u.memcpy.bytes, U, 0, ALWAYS)                                                                             \
    X(dst_device, u.memcpy.dst_device, U, 0, PEER_COPY)                                                                \
    X(graph_id, u.memcpy.graph_id, U, 0, NONZERO)                                                                      \
    GFL_NDJ_LAUNCHER(X, memcpy)                                                                                        \
    GFL_NDJ_STACK_ID(X, memcpy)                                                                                        \
    GFL_NDJ_API_TIMES(X, memcpy)

#define GFL_NDJSON_MEMSET(X)                                                                                           \
    GFL_NDJ_INTERVAL(X, memset)                                                                                        \
    GFL_NDJ_DEVICE_IDS(X, memset)                                                                                      \
    X(bytes, u.memset.bytes, U, 0, ALWAYS)                                                                             \
    X(value, u.memset.value, U, 0, ALWAYS)                                                                             \
    X(mem_kind, u.memset.mem_kind, ENUM, mem_kind, ALWAYS)                                                             \
    X(graph_id, u.memset.graph_id, U, 0, NONZERO)                                                                      \
    GFL_NDJ_LAUNCHER(X, memset)                                                                                        \
    GFL_NDJ_API_TIMES(X, memset)

#define GFL_NDJSON_SYNC(X)                                                                                             \
    GFL_NDJ_INTERVAL(X, sync)                                                                                          \
    GFL_NDJ_DEVICE_IDS(X, sync)                                                                                        \
    X(kind, u.sync.sync_kind, ENUM, sync_kind, ALWAYS)                                                                 \
    X(cuda_event, u.sync.cuda_event, U, 0, NONZERO)                                                                    \
    GFL_NDJ_LAUNCHER(X, sync)                                                                                          \
    GFL_NDJ_STACK_ID(X, sync)

/* mem_alloc, mem_free */
// clang-format off
#define GFL_NDJSON_MEM(X)                                                                          \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    GFL_NDJ_DEVICE_IDS(X, mem)                                                                     \
    X(address, u.mem.address, HEX, 0, ALWAYS)                                                      \
    X(bytes, u.mem.bytes, U, 0, ALWAYS)                                                            \
    X(kind, u.mem.mem_kind, ENUM, mem_kind, ALWAYS)                                                \
    X(async, u.mem.is_async, BOOL, 0, NONZERO)                                                     \
    X(failed, h.flags, FLAG, GFL_F_MEM_FAILED, FLAGGED)                                            \
    X(framework, h.flags, FLAG, GFL_F_MEM_FRAMEWORK, FLAGGED)                                      \
    GFL_NDJ_LAUNCHER(X, mem)                                                                       \
    GFL_NDJ_STACK_ID(X, mem)
// clang-format on

// clang-format off
#define GFL_NDJSON_DROPPED(X)                                                                      \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, NONZERO)                                                                   \
    X(reason, u.dropped.reason, ENUM, drop_reason, ALWAYS)                                         \
    X(channel, u.dropped.channel, ENUM, channel, ALWAYS)                                           \
    X(count, u.dropped.count, U, 0, ALWAYS)                                                        \
    X(total, u.dropped.total, U, 0, ALWAYS)
// clang-format on

// clang-format off
#define GFL_NDJSON_LOG(X)                                                                          \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, ALWAYS)                                                                    \
    X(level, u.log.level, ENUM, log_level, ALWAYS)                                                 \
    X(message, u.log.message, STR, 0, ALWAYS)
// clang-format on

// clang-format off
#define GFL_NDJSON_DEVICE_INFO(X)                                                                  \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(name, u.info.name, STR, 0, ALWAYS)                                                           \
    X(uuid, u.info.uuid, STR, 0, ALWAYS)                                                           \
    X(pci_bus_id, u.info.pci_bus_id, STR, 0, ALWAYS)                                               \
    X(compute_capability, u.info.cc_major, CC, 0, CC_KNOWN)                                        \
    X(sm_count, u.info.sm_count, U, 0, NONZERO)                                                    \
    X(memory_total_bytes, u.info.memory_total_bytes, U, 0, NONZERO)                                \
    X(power_limit_mw, u.info.power_limit_mw, U, 0, NONZERO)                                        \
    X(max_sm_clock_mhz, u.info.max_sm_clock_mhz, U, 0, NONZERO)                                    \
    X(max_mem_clock_mhz, u.info.max_mem_clock_mhz, U, 0, NONZERO)                                  \
    X(pcie_max_gen, u.info.pcie_max_gen, U, 0, NONZERO)                                            \
    X(pcie_max_width, u.info.pcie_max_width, U, 0, NONZERO)                                        \
    X(driver_version, u.info.driver_version, STR, 0, ALWAYS)                                       \
    X(cuda_driver_version, u.info.cuda_driver_version, CUDA, 0, POSITIVE)
// clang-format on

#define GFL_NDJSON_NVTX_RANGE(X)                                                                                       \
    GFL_NDJ_INTERVAL(X, nvtx)                                                                                          \
    X(tid, h.tid, U, 0, ALWAYS)                                                                                        \
    X(name, u.nvtx.name, STR, 0, ALWAYS)                                                                               \
    X(domain, u.nvtx.domain, STR, 0, NONZERO)                                                                          \
    X(depth, u.nvtx.depth, U, 0, NESTED_RANGE)                                                                         \
    X(id, u.nvtx.id, U, 0, ALWAYS)                                                                                     \
    X(seq, u.nvtx.seq, U, GFL_F_NVTX_SEQ, FLAGGED)

// clang-format off
#define GFL_NDJSON_NVTX_MARK(X)                                                                    \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, ALWAYS)                                                                    \
    X(name, u.nvtx.name, STR, 0, ALWAYS)                                                           \
    X(domain, u.nvtx.domain, STR, 0, NONZERO)                                                      \
    X(id, u.nvtx.id, U, 0, ALWAYS)
// clang-format on

// clang-format off
#define GFL_NDJSON_GRAPH_LAUNCH(X)                                                                 \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(end_ns, u.graph.end_ts, U, 0, ALWAYS)                                                        \
    X(corr, u.graph.correlation, U, 0, ALWAYS)                                                     \
    GFL_NDJ_LAUNCHER(X, graph)                                                                     \
    GFL_NDJ_STACK_ID(X, graph)
// clang-format on

/* stack and crash_stack: frames [first, first + count) of `total`, each
 * [module path or null, "0x<offset>"] */
// clang-format off
#define GFL_NDJSON_STACK(X)                                                                        \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, ALWAYS)                                                                    \
    X(id, u.stack.id, U, 0, IS_STACK)                                                              \
    X(first, u.stack.first, U, 0, ALWAYS)                                                          \
    X(total, u.stack.total, U, 0, ALWAYS)                                                          \
    X(truncated, u.stack.truncated, BOOL, 0, NONZERO)                                              \
    X(source, h.flags, FLAG, GFL_F_STACK_SOURCE, FLAGGED)                                          \
    X(frames, u.stack.frames, FRAMES, 0, ALWAYS)
// clang-format on

/* A fatal signal (collect/crash.h); the names of the signal and its code
 * are for people: readers take the numbers. */
// clang-format off
#define GFL_NDJSON_CRASH(X)                                                                        \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, ALWAYS)                                                                    \
    X(signal, u.crash.signal, I, 0, ALWAYS)                                                        \
    X(signal_name, u.crash.signal, SIGNAL_NAME, 0, ALWAYS)                                         \
    X(code, u.crash.code, I, 0, ALWAYS)                                                            \
    X(code_name, u.crash.code, CODE_NAME, 0, CODE_NAMED)                                           \
    X(address, u.crash.address, HEX, 0, ALWAYS)                                                    \
    X(pid, u.crash.sender_pid, U, 0, NONZERO)                                                      \
    X(action, u.crash.action, ENUM, crash_action, ALWAYS)                                          \
    X(stack_frames, u.crash.frames, U, 0, ALWAYS)                                                  \
    X(stack_truncated, u.crash.stack_truncated, BOOL, 0, NONZERO)                                  \
    X(stack_unavailable, h.flags, FLAG, GFL_F_CRASH_NO_UNWIND, FLAGGED)                            \
    X(open_scopes, u.crash.open_scopes, U, 0, ALWAYS)                                              \
    X(open_scopes_lost, u.crash.scopes_lost, U, 0, NONZERO)
// clang-format on

/* The engine asked for and the one recording; plugin and reason only when
 * there are. */
// clang-format off
#define GFL_NDJSON_ENGINE(X)                                                                       \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, ALWAYS)                                                                    \
    X(requested, u.engine.requested, STR, 0, ALWAYS)                                               \
    X(engine, u.engine.ran, STR, 0, ALWAYS)                                                        \
    X(plugin, u.engine.plugin, STR, 0, NONZERO)                                                    \
    X(reason, u.engine.reason, STR, 0, NONZERO)
// clang-format on

/* A trigger that fired, and the dump it wrote (collect/triggers.h). */
// clang-format off
#define GFL_NDJSON_TRIGGER(X)                                                                      \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(tid, h.tid, U, 0, NONZERO)                                                                   \
    X(kind, u.trigger.kind, STR, 0, ALWAYS)                                                        \
    X(detail, u.trigger.detail, STR, 0, NONZERO)                                                   \
    X(outcome, u.trigger.outcome, ENUM, trigger_outcome, ALWAYS)                                   \
    X(dump, u.trigger.dump, STR, 0, NONZERO)
// clang-format on

/* A trace window opening (no end_ns) or closing. */
// clang-format off
#define GFL_NDJSON_TRACE_WINDOW(X)                                                                 \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(end_ns, u.trace_window.end_ts, U, 0, NONZERO)                                                \
    X(index, u.trace_window.index, U, 0, ALWAYS)                                                   \
    X(reason, u.trace_window.reason, STR, 0, ALWAYS)                                               \
    X(detail, u.trace_window.detail, STR, 0, NONZERO)
// clang-format on

/* A framework allocator's state (gpufl_record_allocator); the byte
 * counts that are unknown (0) are left out, the four always there. */
// clang-format off
#define GFL_NDJSON_ALLOCATOR(X)                                                                    \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(tid, h.tid, U, 0, NONZERO)                                                                   \
    X(framework, u.allocator.framework, STR, 0, ALWAYS)                                            \
    X(reason, u.allocator.reason, STR, 0, ALWAYS)                                                  \
    X(allocated, u.allocator.allocated, U, 0, ALWAYS)                                              \
    X(reserved, u.allocator.reserved, U, 0, ALWAYS)                                                \
    X(active, u.allocator.active, U, 0, ALWAYS)                                                    \
    X(inactive_split, u.allocator.inactive_split, U, 0, ALWAYS)                                    \
    X(largest_free, u.allocator.largest_free, U, 0, NONZERO)                                       \
    X(peak_allocated, u.allocator.peak_allocated, U, 0, NONZERO)                                   \
    X(peak_reserved, u.allocator.peak_reserved, U, 0, NONZERO)                                     \
    X(requested, u.allocator.requested, U, 0, NONZERO)                                             \
    X(device_free, u.allocator.device_free, U, 0, NONZERO)                                         \
    X(alloc_retries, u.allocator.alloc_retries, U, 0, NONZERO)                                     \
    X(ooms, u.allocator.ooms, U, 0, NONZERO)                                                       \
    X(scope, u.allocator.scope_id, U, 0, NONZERO)
// clang-format on

/* Warp samples at one PC (PC sampling): stalls is {"<reason>": samples}. */
// clang-format off
#define GFL_NDJSON_PC_SAMPLE(X)                                                                    \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(since_ns, u.pc.since_ts, U, 0, ALWAYS)                                                       \
    X(function, u.pc.function, STR, 0, ALWAYS)                                                     \
    X(cubin_crc, u.pc.cubin_crc, HEX, 0, ALWAYS)                                                   \
    X(pc_offset, u.pc.pc_offset, HEX, 0, ALWAYS)                                                   \
    X(file, u.pc.source_file, STR, 0, NONZERO)                                                     \
    X(line, u.pc.line, U, 0, NONZERO)                                                              \
    X(stalls, u.pc.stalls, STALLS, 0, ALWAYS)
/* One metric of one PM sampling interval (pm_sampling_metrics); value
 * with 4 decimals, in the metric's own unit (%, bytes per second, ...). */
// clang-format off
#define GFL_NDJSON_PM_SAMPLE(X)                                                                    \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(end_ns, u.pm_sample.end_ts, U, 0, ALWAYS)                                                    \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(metric, u.pm_sample.metric, STR, 0, ALWAYS)                                                  \
    X(value, u.pm_sample.value_x10000, FIX4, 0, ALWAYS)
/* One SASS instruction's counts over one launch; a count the chip does
 * not offer (its `valid` bit clear) is left out, like a zero. */
// clang-format off
#define GFL_NDJSON_SASS_METRIC(X)                                                                  \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(tid, h.tid, U, 0, NONZERO)                                                                   \
    X(corr, u.sass.correlation, U, 0, ALWAYS)                                                      \
    X(function, u.sass.function, STR, 0, ALWAYS)                                                   \
    X(function_index, u.sass.function_index, U, 0, NONZERO)                                        \
    X(cubin_crc, u.sass.cubin_crc, U, 0, ALWAYS)                                                   \
    X(pc_offset, u.sass.pc_offset, U, 0, ALWAYS)                                                   \
    X(valid, u.sass.valid, U, 0, ALWAYS)                                                           \
    X(inst_executed, u.sass.inst_executed, U, 0, ALWAYS)                                           \
    X(thread_inst_executed, u.sass.thread_inst_executed, U, 0, NONZERO)                            \
    X(sectors, u.sass.sectors, U, 0, NONZERO)                                                      \
    X(sectors_ideal, u.sass.sectors_ideal, U, 0, NONZERO)                                          \
    X(branch_targets, u.sass.branch_targets, U, 0, NONZERO)                                        \
    X(divergent_targets, u.sass.divergent_targets, U, 0, NONZERO)                                  \
    X(file, u.sass.file, STR, 0, NONZERO)                                                          \
    X(line, u.sass.line, U, 0, NONZERO)                                                            \
    X(scope, u.sass.scope_id, U, 0, NONZERO)
// clang-format on

/* One metric of one range profiler range: the scope (0: an NVTX range)
 * and its name, the range's number; value with 4 decimals, in the
 * metric's own unit. */
// clang-format off
#define GFL_NDJSON_RANGE_METRIC(X)                                                                 \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(end_ns, u.range_metric.end_ts, U, 0, ALWAYS)                                                 \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(range, u.range_metric.range, U, 0, ALWAYS)                                                   \
    X(scope, u.range_metric.scope_id, U, 0, NONZERO)                                               \
    X(name, u.range_metric.name, STR, 0, ALWAYS)                                                   \
    X(metric, u.range_metric.metric, STR, 0, ALWAYS)                                               \
    X(value, u.range_metric.value_x10000, FIX4, 0, ALWAYS)
// clang-format on

/* The session clock against CLOCK_MONOTONIC and CLOCK_REALTIME, with the
 * kernel's NTP/PTP state when it gave one (the ntp_* numbers only then). */
// clang-format off
#define GFL_NDJSON_CLOCK(X)                                                                        \
    X(ts_ns, h.ts, U, 0, REQ)                                                                      \
    X(mono_ns, u.clock.mono_ns, U, 0, ALWAYS)                                                      \
    X(wall_ns, u.clock.wall_ns, U, 0, ALWAYS)                                                      \
    X(uncertainty_ns, u.clock.uncertainty_ns, U, 0, ALWAYS)                                        \
    X(point, u.clock.point, STR, 0, ALWAYS)                                                        \
    X(ntp, u.clock.ntp, STR, 0, NONZERO)                                                           \
    X(ntp_offset_ns, u.clock.ntp_offset_ns, I, 0, CLOCK_NTP)                                       \
    X(ntp_maxerror_ns, u.clock.ntp_maxerror_ns, U, 0, CLOCK_NTP)                                   \
    X(ntp_esterror_ns, u.clock.ntp_esterror_ns, U, 0, CLOCK_NTP)                                   \
    X(ntp_status, u.clock.ntp_status, U, 0, CLOCK_NTP)
// clang-format on

/* An NCCL collective as NCCL enqueued it (NCCL's profiler plugin
 * interface): "bytes" only when the datatype's size is known (the reader
 * sets GFL_F_NCCL_BYTES from its presence), "peer" marks a point-to-point
 * call and gives its peer, "root" a rooted collective's root. */
// clang-format off
#define GFL_NDJSON_NCCL_COLL(X)                                                                    \
    X(start_ns, h.ts, U, 0, REQ)                                                                   \
    X(end_ns, u.nccl.end_ts, U, 0, NONZERO)                                                        \
    X(device, h.device, U, 0, ALWAYS)                                                              \
    X(tid, h.tid, U, 0, NONZERO)                                                                   \
    X(comm, u.nccl.comm_hash, HEX, 0, ALWAYS)                                                      \
    X(rank, u.nccl.rank, I, 0, ALWAYS)                                                             \
    X(nranks, u.nccl.nranks, U, 0, NONZERO)                                                        \
    X(seq, u.nccl.seq, U, 0, ALWAYS)                                                               \
    X(func, u.nccl.func, STR, 0, ALWAYS)                                                           \
    X(count, u.nccl.count, U, 0, ALWAYS)                                                           \
    X(datatype, u.nccl.datatype, STR, 0, NONZERO)                                                  \
    X(bytes, u.nccl.bytes, U, 0, NCCL_BYTES)                                                       \
    X(root, u.nccl.root, I, 0, NCCL_ROOT)                                                          \
    X(peer, u.nccl.root, I, 0, NCCL_PEER)                                                          \
    X(algo, u.nccl.algo, STR, 0, NONZERO)                                                          \
    X(proto, u.nccl.proto, STR, 0, NONZERO)                                                        \
    X(channels, u.nccl.channels, U, 0, NONZERO)                                                    \
    X(abi, u.nccl.abi, U, 0, NONZERO)
// clang-format on

/* Every event type with its fields, and where its validity bits live
 * (host, dev or none). L(type, fields, valid). */
// clang-format off
#define GFL_NDJSON_EVENT_LINES(L)                                                                  \
    L(GFL_EV_SCOPE_BEGIN, GFL_NDJSON_SCOPE, none)                                                  \
    L(GFL_EV_SCOPE_END, GFL_NDJSON_SCOPE, none)                                                    \
    L(GFL_EV_SYSTEM_START, GFL_NDJSON_WINDOW, none)                                                \
    L(GFL_EV_SYSTEM_STOP, GFL_NDJSON_WINDOW, none)                                                 \
    L(GFL_EV_HOST_METRICS, GFL_NDJSON_HOST_METRICS, host)                                          \
    L(GFL_EV_DEVICE_METRICS, GFL_NDJSON_DEVICE_METRICS, dev)                                       \
    L(GFL_EV_KERNEL, GFL_NDJSON_KERNEL, none)                                                      \
    L(GFL_EV_MEMCPY, GFL_NDJSON_MEMCPY, none)                                                      \
    L(GFL_EV_MEMSET, GFL_NDJSON_MEMSET, none)                                                      \
    L(GFL_EV_SYNC, GFL_NDJSON_SYNC, none)                                                          \
    L(GFL_EV_MEM_ALLOC, GFL_NDJSON_MEM, none)                                                      \
    L(GFL_EV_MEM_FREE, GFL_NDJSON_MEM, none)                                                       \
    L(GFL_EV_DROPPED, GFL_NDJSON_DROPPED, none)                                                    \
    L(GFL_EV_LOG, GFL_NDJSON_LOG, none)                                                            \
    L(GFL_EV_DEVICE_INFO, GFL_NDJSON_DEVICE_INFO, none)                                            \
    L(GFL_EV_NVTX_RANGE, GFL_NDJSON_NVTX_RANGE, none)                                              \
    L(GFL_EV_NVTX_MARK, GFL_NDJSON_NVTX_MARK, none)                                                \
    L(GFL_EV_GRAPH_LAUNCH, GFL_NDJSON_GRAPH_LAUNCH, none)                                          \
    L(GFL_EV_STACK, GFL_NDJSON_STACK, none)                                                        \
    L(GFL_EV_CRASH, GFL_NDJSON_CRASH, none)                                                        \
    L(GFL_EV_CRASH_STACK, GFL_NDJSON_STACK, none)                                                  \
    L(GFL_EV_CRASH_SCOPE, GFL_NDJSON_SCOPE, none)                                                  \
    L(GFL_EV_ENGINE, GFL_NDJSON_ENGINE, none)                                                     \
    L(GFL_EV_TRIGGER, GFL_NDJSON_TRIGGER, none)                                                    \
    L(GFL_EV_TRACE_WINDOW, GFL_NDJSON_TRACE_WINDOW, none)                                          \
    L(GFL_EV_ALLOCATOR, GFL_NDJSON_ALLOCATOR, none)                                                \
    L(GFL_EV_PC_SAMPLE, GFL_NDJSON_PC_SAMPLE, none)                                                \
    L(GFL_EV_RANGE_METRIC, GFL_NDJSON_RANGE_METRIC, none)                                          \
    L(GFL_EV_PM_SAMPLE, GFL_NDJSON_PM_SAMPLE, none)                                                \
    L(GFL_EV_SASS_METRIC, GFL_NDJSON_SASS_METRIC, none)                                            \
    L(GFL_EV_CLOCK, GFL_NDJSON_CLOCK, none)                                                        \
    L(GFL_EV_NCCL_COLL, GFL_NDJSON_NCCL_COLL, none)
// clang-format on

/* ---- session lines -------------------------------------------------------- */

/* The session facts of a session_start, session_end or log_stopped line as
 * a reader keeps them; strings are ids into the reader's table. The writer
 * (sink/ndjson_meta.c) writes them from the live session instead, in the
 * order below (tests/test_ndjson_fields.c holds it to that). */
typedef struct gpufl__meta_line {
    uint64_t ts_ns, wall_ns, part, format_version, lines, lost;
    int64_t pid;
    uint32_t session_id, app_name, host, channel, gpufl_version, reason, detail;
    uint64_t dropped[GFL_DROP_REASON_COUNT]; /* session_end: final losses by reason */
    bool has_dropped;                        /* ... when the line has them */
} gpufl__meta_line;

// clang-format off
#define GFL_NDJSON_SESSION_START(X)                                                                \
    X(ts_ns, ts_ns, U, 0, REQ)                                                                     \
    X(wall_ns, wall_ns, U, 0, ALWAYS)                                                              \
    X(session_id, session_id, STR, 0, ALWAYS)                                                      \
    X(app_name, app_name, STR, 0, ALWAYS)                                                          \
    X(pid, pid, I, 0, ALWAYS)                                                                      \
    X(host, host, STR, 0, ALWAYS)                                                                  \
    X(channel, channel, STR, 0, ALWAYS)                                                            \
    X(part, part, U, 0, ALWAYS)                                                                    \
    X(format_version, format_version, U, 0, ALWAYS)                                                \
    X(gpufl_version, gpufl_version, STR, 0, ALWAYS)
// clang-format on

/* "dropped" only when the writer is given the final counts */
// clang-format off
#define GFL_NDJSON_SESSION_END(X)                                                                  \
    X(ts_ns, ts_ns, U, 0, REQ)                                                                     \
    X(wall_ns, wall_ns, U, 0, ALWAYS)                                                              \
    X(session_id, session_id, STR, 0, ALWAYS)                                                      \
    X(app_name, app_name, STR, 0, ALWAYS)                                                          \
    X(lines, lines, U, 0, ALWAYS)                                                                  \
    X(lost, lost, U, 0, ALWAYS)                                                                    \
    X(dropped, dropped, DROPS, 0, GIVEN)
// clang-format on

// clang-format off
#define GFL_NDJSON_LOG_STOPPED(X)                                                                  \
    X(ts_ns, ts_ns, U, 0, REQ)                                                                     \
    X(reason, reason, STR, 0, ALWAYS)                                                              \
    X(detail, detail, STR, 0, ALWAYS)
// clang-format on

/* L(type name, fields) */
// clang-format off
#define GFL_NDJSON_SESSION_LINES(L)                                                                \
    L(session_start, GFL_NDJSON_SESSION_START)                                                     \
    L(session_end, GFL_NDJSON_SESSION_END)                                                         \
    L(log_stopped, GFL_NDJSON_LOG_STOPPED)
// clang-format on

/* ---- every key ------------------------------------------------------------ */

/* Every key of every line, once: the reader numbers them for its one hash
 * lookup per field. A row whose key is missing here does not compile. */
// clang-format off
#define GFL_NDJSON_KEYS(X)                                                                         \
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
    X(requested) X(engine) X(plugin) X(seq) X(failed) X(outcome) X(dump) X(index) X(framework)     \
    X(source) X(allocated) X(reserved) X(active) X(inactive_split) X(largest_free)                 \
    X(peak_allocated) X(peak_reserved) X(device_free) X(alloc_retries) X(ooms) X(since_ns)        \
    X(function) X(cubin_crc) X(pc_offset) X(file) X(line) X(stalls) X(metric) X(range)                     \
    X(function_index) X(valid) X(inst_executed) X(thread_inst_executed) X(sectors) X(sectors_ideal) \
    X(branch_targets) X(divergent_targets) X(mono_ns) X(uncertainty_ns) X(point) X(ntp) X(ntp_offset_ns)        \
    X(ntp_maxerror_ns) X(ntp_esterror_ns) X(ntp_status) X(comm) X(rank) X(nranks) X(func)          \
    X(datatype) X(root) X(peer) X(algo) X(proto) X(channels) X(abi)
// clang-format on

#endif /* GPUFL_FORMAT_NDJSON_FIELDS_H */
