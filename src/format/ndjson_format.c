/*
 * One event -> one NDJSON line (docs/FORMAT.md is the contract).
 *
 * Runs on the collector thread for every event, so it formats by hand into
 * the writer's buffer: the fields, their order and when each is written come
 * from format/ndjson_fields.h, expanded here at compile time into straight
 * code, one put per field. Optional fields are left out rather than written
 * as zero: a missing "scope" means the kernel ran outside any scope, a
 * missing "temp_c" means the driver could not say.
 */
#include "format/ndjson_format.h"

#include <stdbool.h>

#include "format/json_names.h"
#include "format/json_out.h"
#include "format/ndjson_fields.h"

#define FIXED_PART_BOUND 1536

static size_t name_bound(gpufl__jnames *names, uint32_t id) { return gpufl__jnames_bound(names, id); }

/* Frames a stack piece really holds: a plugin's count is not trusted. */
static unsigned stack_count(const gfl_stack_payload *s)
{
    return s->count < GFL_STACK_FRAMES_PER_EVENT ? s->count : GFL_STACK_FRAMES_PER_EVENT;
}

static size_t stack_modules_bound(const gfl_stack_payload *s, gpufl__jnames *names)
{
    size_t n = 0;
    for (unsigned i = 0; i < stack_count(s); i++)
        n += name_bound(names, s->frames[i].module);
    return n;
}

size_t gpufl__ndjson_line_bound(const gfl_event *ev, gpufl__jnames *names)
{
    switch (ev->h.type) {
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_SCOPE_END: return FIXED_PART_BOUND + name_bound(names, ev->u.scope.name);
    case GFL_EV_SYSTEM_START:
    case GFL_EV_SYSTEM_STOP: return FIXED_PART_BOUND + name_bound(names, ev->u.window.name);
    case GFL_EV_KERNEL:
        return FIXED_PART_BOUND + name_bound(names, ev->u.kernel.name) + name_bound(names, ev->u.kernel.mangled_name) +
               name_bound(names, ev->u.kernel.nvtx);
    case GFL_EV_MEMCPY: return FIXED_PART_BOUND + name_bound(names, ev->u.memcpy.nvtx);
    case GFL_EV_MEMSET: return FIXED_PART_BOUND + name_bound(names, ev->u.memset.nvtx);
    case GFL_EV_SYNC: return FIXED_PART_BOUND + name_bound(names, ev->u.sync.nvtx);
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: return FIXED_PART_BOUND + name_bound(names, ev->u.mem.nvtx);
    case GFL_EV_NVTX_RANGE:
    case GFL_EV_NVTX_MARK:
        return FIXED_PART_BOUND + name_bound(names, ev->u.nvtx.name) + name_bound(names, ev->u.nvtx.domain);
    case GFL_EV_GRAPH_LAUNCH: return FIXED_PART_BOUND + name_bound(names, ev->u.graph.nvtx);
    case GFL_EV_STACK:
    case GFL_EV_CRASH_STACK: return FIXED_PART_BOUND + stack_modules_bound(&ev->u.stack, names);
    case GFL_EV_CRASH_SCOPE: return FIXED_PART_BOUND + name_bound(names, ev->u.scope.name);
    case GFL_EV_LOG: return FIXED_PART_BOUND + name_bound(names, ev->u.log.message);
    case GFL_EV_ENGINE:
        return FIXED_PART_BOUND + name_bound(names, ev->u.engine.requested) + name_bound(names, ev->u.engine.ran) +
               name_bound(names, ev->u.engine.plugin) + name_bound(names, ev->u.engine.reason);
    case GFL_EV_TRIGGER:
        return FIXED_PART_BOUND + name_bound(names, ev->u.trigger.kind) + name_bound(names, ev->u.trigger.detail) +
               name_bound(names, ev->u.trigger.dump);
    case GFL_EV_TRACE_WINDOW:
        return FIXED_PART_BOUND + name_bound(names, ev->u.trace_window.reason) +
               name_bound(names, ev->u.trace_window.detail);
    case GFL_EV_PM_SAMPLE: return FIXED_PART_BOUND + name_bound(names, ev->u.pm_sample.metric);
    case GFL_EV_RANGE_METRIC:
        return FIXED_PART_BOUND + name_bound(names, ev->u.range_metric.metric) +
               name_bound(names, ev->u.range_metric.name);
    case GFL_EV_CLOCK:
        return FIXED_PART_BOUND + name_bound(names, ev->u.clock.point) + name_bound(names, ev->u.clock.ntp);
    case GFL_EV_NCCL_COLL:
        return FIXED_PART_BOUND + name_bound(names, ev->u.nccl.func) + name_bound(names, ev->u.nccl.datatype) +
               name_bound(names, ev->u.nccl.algo) + name_bound(names, ev->u.nccl.proto);
    case GFL_EV_ALLOCATOR:
        return FIXED_PART_BOUND + name_bound(names, ev->u.allocator.framework) +
               name_bound(names, ev->u.allocator.reason);
    case GFL_EV_PC_SAMPLE: {
        size_t n = FIXED_PART_BOUND + name_bound(names, ev->u.pc.function) + name_bound(names, ev->u.pc.source_file);
        for (unsigned i = 0; i < GFL_PC_STALLS_PER_EVENT; i++)
            n += name_bound(names, ev->u.pc.stalls[i].reason) + 12;
        return n;
    }
    case GFL_EV_SASS_METRIC:
        return FIXED_PART_BOUND + name_bound(names, ev->u.sass.function) + name_bound(names, ev->u.sass.file);
    case GFL_EV_DEVICE_INFO:
        return FIXED_PART_BOUND + name_bound(names, ev->u.info.name) + name_bound(names, ev->u.info.uuid) +
               name_bound(names, ev->u.info.pci_bus_id) + name_bound(names, ev->u.info.driver_version);
    default: return FIXED_PART_BOUND;
    }
}

/* ---- one put per kind (ndjson_fields.h) ----------------------------------
 * Each writes `key` (the literal ,"<key>": of klen bytes) and the value v of
 * the event's member, and returns the new end. */

static char *put_u(char *p, const char *key, size_t klen, uint64_t v)
{
    p = gpufl__jput_raw(p, key, klen);
    return gpufl__jput_u64(p, v);
}

static char *put_i(char *p, const char *key, size_t klen, int64_t v)
{
    p = gpufl__jput_raw(p, key, klen);
    return gpufl__jput_i64(p, v);
}

static char *put_str(char *p, gpufl__jnames *names, const char *key, size_t klen, uint32_t id)
{
    p = gpufl__jput_raw(p, key, klen);
    return gpufl__jnames_put(names, p, id);
}

static char *put_text(char *p, const char *key, size_t klen, const char *s)
{
    p = gpufl__jput_raw(p, key, klen);
    return gpufl__jput_str(p, s, strlen(s));
}

/* An enum's name: a word of gpufl's own tables, which never needs
 * escaping (test_ndjson_format holds every table to that), so it is
 * copied between quotes; copies and kernels write one or three a line. */
static char *put_word(char *p, const char *key, size_t klen, const char *s)
{
    size_t n = strlen(s);
    p = gpufl__jput_raw(p, key, klen);
    *p++ = '"';
    p = gpufl__jput_raw(p, s, n);
    *p++ = '"';
    return p;
}

static char *put_fixed(char *p, const char *key, size_t klen, uint64_t v, unsigned decimals)
{
    p = gpufl__jput_raw(p, key, klen);
    return gpufl__jput_fixed(p, v, decimals);
}

static char *put_hex(char *p, const char *key, size_t klen, uint64_t v)
{
    p = gpufl__jput_raw(p, key, klen);
    return gpufl__jput_hex(p, v);
}

static char *put_true(char *p, const char *key, size_t klen)
{
    p = gpufl__jput_raw(p, key, klen);
    return GFL_JLIT(p, "true");
}

static char *put_dims(char *p, const char *key, size_t klen, uint32_t x, uint32_t y, uint32_t z)
{
    p = gpufl__jput_raw(p, key, klen);
    *p++ = '[';
    p = gpufl__jput_u64(p, x);
    *p++ = ',';
    p = gpufl__jput_u64(p, y);
    *p++ = ',';
    p = gpufl__jput_u64(p, z);
    *p++ = ']';
    return p;
}

/* "major.minor"; an unknown minor (-1) as 0 */
static char *put_cc(char *p, const char *key, size_t klen, const int8_t *cc)
{
    p = gpufl__jput_raw(p, key, klen);
    *p++ = '"';
    p = gpufl__jput_u64(p, (uint64_t)cc[0]);
    *p++ = '.';
    p = gpufl__jput_u64(p, (uint64_t)(cc[1] >= 0 ? cc[1] : 0));
    *p++ = '"';
    return p;
}

/* 13000 -> "13.0" */
static char *put_cuda(char *p, const char *key, size_t klen, int32_t v)
{
    p = gpufl__jput_raw(p, key, klen);
    *p++ = '"';
    p = gpufl__jput_u64(p, (uint64_t)v / 1000);
    *p++ = '.';
    p = gpufl__jput_u64(p, (uint64_t)v % 1000 / 10);
    *p++ = '"';
    return p;
}

static char *put_throttle(char *p, const char *key, size_t klen, uint64_t mask)
{
    p = gpufl__jput_raw(p, key, klen);
    *p++ = '[';
    bool first = true;
    for (unsigned b = 0; b < GFL_THROTTLE_REASON_COUNT; b++) {
        if (!(mask & (1ull << b)))
            continue;
        if (!first)
            *p++ = ',';
        first = false;
        const char *name = gpufl__throttle_reason_name(b);
        p = gpufl__jput_str(p, name, strlen(name));
    }
    *p++ = ']';
    return p;
}

static char *put_frames(char *p, gpufl__jnames *names, const char *key, size_t klen, const gfl_stack_payload *s)
{
    p = gpufl__jput_raw(p, key, klen);
    *p++ = '[';
    for (unsigned i = 0; i < stack_count(s); i++) {
        const gfl_stack_frame *f = &s->frames[i];
        if (i)
            *p++ = ',';
        *p++ = '[';
        if (f->module) {
            p = gpufl__jnames_put(names, p, f->module);
        } else {
            p = GFL_JLIT(p, "null");
        }
        *p++ = ',';
        p = gpufl__jput_hex(p, f->offset);
        *p++ = ']';
    }
    *p++ = ']';
    return p;
}

/* Pairs a PC sample really holds: a plugin's count is not trusted. */
static unsigned stall_count(const gfl_pc_sample_payload *pc)
{
    return pc->count < GFL_PC_STALLS_PER_EVENT ? pc->count : GFL_PC_STALLS_PER_EVENT;
}

static char *put_stalls(char *p, gpufl__jnames *names, const char *key, size_t klen, const gfl_pc_sample_payload *pc)
{
    p = gpufl__jput_raw(p, key, klen);
    *p++ = '{';
    for (unsigned i = 0; i < stall_count(pc); i++) {
        if (i)
            *p++ = ',';
        p = gpufl__jnames_put(names, p, pc->stalls[i].reason);
        *p++ = ':';
        p = gpufl__jput_u32(p, pc->stalls[i].samples);
    }
    *p++ = '}';
    return p;
}

/* a clock glitch gives a 0 duration, never a negative one */
static uint64_t span(uint64_t from, uint64_t to) { return to > from ? to - from : 0; }

/* The put of each kind: K is the key literal and its length, v the
 * member's value. */
#define PUT_U(K, v, a) put_u(p, K, (v))
#define PUT_I(K, v, a) put_i(p, K, (v))
#define PUT_STR(K, v, a) put_str(p, names, K, (v))
#define PUT_FIX2(K, v, a) put_fixed(p, K, (v), 2)
#define PUT_FIX4(K, v, a) put_fixed(p, K, (v), 4)
#define PUT_FLAG(K, v, a) put_true(p, K)
#define PUT_BOOL(K, v, a) put_true(p, K)
#define PUT_ENUM(K, v, a) put_word(p, K, gpufl__##a##_name(v))
#define PUT_HEX(K, v, a) put_hex(p, K, (v))
#define PUT_DIMS(K, v, a) put_dims(p, K, (v)[0], (v)[1], (v)[2])
#define PUT_CC(K, v, a) put_cc(p, K, &(v))
#define PUT_CUDA(K, v, a) put_cuda(p, K, (v))
#define PUT_FRAMES(K, v, a) put_frames(p, names, K, &ev->u.stack)
#define PUT_STALLS(K, v, a) put_stalls(p, names, K, &ev->u.pc)
#define PUT_DUR_UNTIL(K, v, a) put_u(p, K, span(ev->h.ts, (v)))
#define PUT_DUR_SINCE(K, v, a) put_u(p, K, span((v), ev->h.ts))
#define PUT_THROTTLE(K, v, a) put_throttle(p, K, (v))
#define PUT_SIGNAL_NAME(K, v, a) put_text(p, K, gpufl__signal_name(v))
#define PUT_CODE_NAME(K, v, a) put_text(p, K, gpufl__signal_code_name(ev->u.crash.signal, (v)))

#define KEY_LIT(key) ",\"" #key "\":", sizeof(",\"" #key "\":") - 1

/* One row of ndjson_fields.h: the field, when the table says to write it. */
#define WRITE_FIELD(key, member, kind, arg, when)                                                                      \
    if (GFL_NDJ_IF_##when(ev, ev->member, arg))                                                                        \
        p = PUT_##kind(KEY_LIT(key), ev->member, arg);

#define WRITE_LINE(type, fields, valid)                                                                                \
    case type: fields(WRITE_FIELD) break;

size_t gpufl__ndjson_line(const gfl_event *ev, gpufl__jnames *names, char *buf)
{
    char *p = GFL_JLIT(buf, "{\"type\":\"");
    const char *type = gpufl__event_type_name(ev->h.type);
    p = gpufl__jput_raw(p, type, strlen(type));
    *p++ = '"';
    switch (ev->h.type) {
        GFL_NDJSON_EVENT_LINES(WRITE_LINE)
    default:
        /* a type ndjson_fields.h does not list */
        p = put_u(p, KEY_LIT(ts_ns), ev->h.ts);
        break;
    }
    p = GFL_JLIT(p, "}\n");
    return (size_t)(p - buf);
}

size_t gpufl__ndjson_bound(const gfl_event *ev, const gpufl__string_lookup *names)
{
    gpufl__jnames j;
    gpufl__jnames_init_uncached(&j, names);
    return gpufl__ndjson_line_bound(ev, &j);
}

size_t gpufl__ndjson_format(const gfl_event *ev, const gpufl__string_lookup *names, char *buf)
{
    gpufl__jnames j;
    gpufl__jnames_init_uncached(&j, names);
    return gpufl__ndjson_line(ev, &j, buf);
}
