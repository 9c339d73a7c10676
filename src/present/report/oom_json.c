/*
 * oom.json (see oom_json.h; members: docs/FORMAT.md, "oom.json").
 */
#include "present/report/oom_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "present/report/jwriter.h"
#include "present/report/summary_text.h"

#define FORMAT_VERSION 1

static void str_id(jw *w, const gpufl_trace *t, const char *key, uint32_t id)
{
    if (id)
        gpufl__jw_str(w, key, gpufl_trace_string(t, id));
    else
        gpufl__jw_null(w, key);
}

static void opt_u64(jw *w, const char *key, bool has, uint64_t v)
{
    if (has)
        gpufl__jw_u64(w, key, v);
    else
        gpufl__jw_null(w, key);
}

typedef struct b {
    char s[32];
} b;

static b bytes(uint64_t v)
{
    b out;
    gpufl__format_bytes(v, out.s, sizeof out.s);
    return out;
}

/* The classification in words, with the figures it rests on. */
static void explain(const gpufl__ana_oom *o, char *buf, size_t len)
{
    char req_s[32] = "unknown";
    if (o->has_requested)
        gpufl__format_bytes(o->requested_bytes, req_s, sizeof req_s);
    switch (o->classification) {
    case GPUFL__OOM_ANOTHER_PROCESS:
        snprintf(buf, len,
                 "Other processes held %s of GPU %u's %s; without them the request of %s would have fit "
                 "(%s free + %s theirs). Find them with `gpufl mem info`.",
                 bytes(o->other_processes_bytes).s, o->device,
                 o->has_total ? bytes(o->device_total_bytes).s : "unknown total", req_s, bytes(o->device_free_bytes).s,
                 bytes(o->other_processes_bytes).s);
        break;
    case GPUFL__OOM_FRAGMENTATION:
        snprintf(buf, len,
                 "Enough memory was free in all (%s: %s cached by the allocator, reserved %s - allocated %s, of "
                 "which %s in split blocks, + %s free on the device) for the request of %s, but no single free "
                 "block was that large (the largest: %s). The memory is fragmented: fewer sizes of tensors, "
                 "freeing the cache (torch.cuda.empty_cache()) or expandable segments "
                 "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) help.",
                 bytes(o->reclaimable_bytes).s, bytes(o->cached_free_bytes).s, bytes(o->reserved).s,
                 bytes(o->allocated).s, bytes(o->inactive_split).s, bytes(o->device_free_bytes).s, req_s,
                 bytes(o->largest_block_bytes).s);
        break;
    default: {
        char used[96] = "";
        if (o->has_process_used)
            snprintf(used, sizeof used, ", %s of it by this process", bytes(o->process_used_bytes).s);
        if (!o->has_requested)
            snprintf(buf, len,
                     "The size of the request was not recorded; nothing shows memory held by other processes or "
                     "fragmented, so the memory was in use%s. The largest live allocations below hold it.",
                     used);
        else if (o->has_free)
            snprintf(buf, len,
                     "The request of %s was more than all the memory that could be freed (%s: %s free on the "
                     "device + %s cached by the allocator): the memory was in use%s. The largest live "
                     "allocations below hold it.",
                     req_s, bytes(o->reclaimable_bytes).s, bytes(o->device_free_bytes).s, bytes(o->cached_free_bytes).s,
                     used);
        else
            snprintf(buf, len,
                     "The request of %s failed with %s cached by the allocator and the device's free memory not "
                     "recorded (no NVML sample, no allocator state with it); nothing shows memory held by other "
                     "processes or fragmented, so the memory was in use%s. The largest live allocations below "
                     "hold it.",
                     req_s, bytes(o->cached_free_bytes).s, used);
        break;
    }
    }
}

/* A frame as text: a Python frame's own text, a CPU frame module+0xoffset. */
static void frame_text(const gpufl__stack_frame_rec *f, char *buf, size_t len)
{
    if (!f->present)
        snprintf(buf, len, "?");
    else if (f->source)
        snprintf(buf, len, "%s", f->module ? f->module : "?");
    else
        snprintf(buf, len, "%s+0x%" PRIx64, f->module ? f->module : "?", f->offset);
}

static void stack(jw *w, const gpufl__stack_table *stacks, uint32_t id)
{
    const gpufl__stack_rec *s = stacks && id ? gpufl__stack_table_find(stacks, id) : NULL;
    if (!s) {
        gpufl__jw_null(w, "stack");
        return;
    }
    gpufl__jw_arr(w, "stack");
    for (uint32_t i = 0; i < s->total; i++) {
        char text[1200];
        frame_text(&s->frames[i], text, sizeof text);
        gpufl__jw_str(w, NULL, text);
    }
    gpufl__jw_arr_end(w);
}

static void largest(jw *w, const gpufl_trace *t, const gpufl__ana_oom *o, const gpufl__stack_table *stacks,
                    uint64_t start_ns)
{
    gpufl__jw_arr(w, "largest_live");
    for (uint32_t i = 0; i < o->nlive; i++) {
        const gpufl__ana_oom_live *l = &o->live[i];
        char addr[24];
        snprintf(addr, sizeof addr, "0x%" PRIx64, l->address);
        uint64_t since = l->ts_ns > start_ns ? l->ts_ns - start_ns : 0;
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "layer", l->framework ? "framework" : "driver");
        gpufl__jw_u64(w, "bytes", l->bytes);
        gpufl__jw_str(w, "address", addr);
        gpufl__jw_u64(w, "time_ns", since);
        gpufl__jw_real(w, "time_s", (double)since / 1e9, 6);
        opt_u64(w, "thread", l->tid != 0, l->tid);
        str_id(w, t, "scope", l->scope_name);
        str_id(w, t, "nvtx", l->nvtx);
        stack(w, stacks, l->stack);
        if (l->blocks_inside) { /* a segment of the framework's allocator */
            gpufl__jw_obj(w, "framework_blocks");
            gpufl__jw_u64(w, "count", l->blocks_inside);
            gpufl__jw_u64(w, "bytes", l->block_bytes_inside);
            gpufl__jw_obj_end(w);
        }
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

static void allocator(jw *w, const gpufl_trace *t, const gpufl__ana_oom *o)
{
    if (!o->has_allocator) {
        gpufl__jw_null(w, "allocator");
        gpufl__jw_null(w, "fragmentation");
        return;
    }
    gpufl__jw_obj(w, "allocator");
    str_id(w, t, "framework", o->framework);
    gpufl__jw_u64(w, "allocated", o->allocated);
    gpufl__jw_u64(w, "reserved", o->reserved);
    gpufl__jw_u64(w, "active", o->active);
    gpufl__jw_u64(w, "inactive_split", o->inactive_split);
    opt_u64(w, "largest_free", o->largest_free != 0, o->largest_free);
    gpufl__jw_u64(w, "alloc_retries", o->alloc_retries);
    gpufl__jw_u64(w, "ooms", o->ooms);
    gpufl__jw_obj_end(w);
    gpufl__jw_obj(w, "fragmentation");
    gpufl__jw_u64(w, "reserved_minus_allocated", o->cached_free_bytes);
    gpufl__jw_u64(w, "inactive_split", o->inactive_split);
    opt_u64(w, "largest_free", o->largest_free != 0, o->largest_free);
    /* the reference profiler's fragmentation_ratio: reserved memory in split
     * blocks, which the allocator can neither hand out whole nor give back */
    gpufl__jw_real(w, "fraction", o->reserved ? (double)o->inactive_split / (double)o->reserved : 0.0, 4);
    gpufl__jw_obj_end(w);
}

static void figures(jw *w, const gpufl__ana_oom *o)
{
    gpufl__jw_obj(w, "figures");
    opt_u64(w, "requested_bytes", o->has_requested, o->requested_bytes);
    opt_u64(w, "device_total_bytes", o->has_total, o->device_total_bytes);
    opt_u64(w, "device_free_bytes", o->has_free, o->device_free_bytes);
    gpufl__jw_u64(w, "cached_free_bytes", o->cached_free_bytes);
    gpufl__jw_u64(w, "reclaimable_bytes", o->reclaimable_bytes);
    gpufl__jw_u64(w, "largest_free_block_bytes", o->largest_block_bytes);
    opt_u64(w, "other_processes_bytes", o->has_other, o->other_processes_bytes);
    gpufl__jw_obj_end(w);
}

int gpufl__oom_json(const gpufl_trace *t, const gpufl__ana_oom *o, const gpufl__stack_table *stacks, char **text,
                    size_t *len)
{
    if (!t || !o || !o->found || !text || !len)
        return GPUFL_EINVAL;
    uint64_t start_ns = gpufl_trace_get_info(t)->start_ns;
    jw w;
    gpufl__jw_init(&w);
    gpufl__jw_obj(&w, NULL);
    gpufl__jw_str(&w, "format", "gpufl-oom");
    gpufl__jw_u64(&w, "format_version", FORMAT_VERSION);
    opt_u64(&w, "requested_bytes", o->has_requested, o->requested_bytes);
    gpufl__jw_u64(&w, "device", o->device);
    gpufl__jw_u64(&w, "time_ns", o->time_ns);
    gpufl__jw_real(&w, "time_s", (double)o->time_ns / 1e9, 6);
    gpufl__jw_str(&w, "source", gpufl__oom_source_name(o->source));
    str_id(&w, t, "detail", o->detail);
    opt_u64(&w, "thread", o->tid != 0, o->tid);
    str_id(&w, t, "dump", o->dump);
    opt_u64(&w, "device_free_bytes", o->has_free, o->device_free_bytes);
    opt_u64(&w, "device_total_bytes", o->has_total, o->device_total_bytes);
    gpufl__jw_str(&w, "device_memory_source", gpufl__oom_memory_source_name(o->memory_source));
    opt_u64(&w, "process_used_bytes", o->has_process_used, o->process_used_bytes);
    opt_u64(&w, "all_processes_used_bytes", o->has_all_used, o->all_processes_used_bytes);
    allocator(&w, t, o);
    gpufl__jw_obj(&w, "live");
    static const char *const layers[2] = {"driver", "framework"};
    for (int k = 0; k < 2; k++) {
        gpufl__jw_obj(&w, layers[k]);
        gpufl__jw_u64(&w, "count", o->live_count[k]);
        gpufl__jw_u64(&w, "bytes", o->live_bytes[k]);
        gpufl__jw_obj_end(&w);
    }
    gpufl__jw_obj_end(&w);
    largest(&w, t, o, stacks, start_ns);
    char why[1024];
    explain(o, why, sizeof why);
    gpufl__jw_str(&w, "classification", gpufl__oom_classification_name(o->classification));
    gpufl__jw_str(&w, "explanation", why);
    figures(&w, o);
    gpufl__jw_obj_end(&w);
    int rc = gpufl__jw_finish(&w);
    if (rc != 0) {
        gpufl__jw_free(&w);
        return rc;
    }
    *text = w.buf;
    *len = w.n;
    return 0;
}

int gpufl__oom_json_of(const char *path, char **text, size_t *len, bool *found, char *err, size_t err_len)
{
    *text = NULL;
    *len = 0;
    *found = false;
    gpufl_trace *t = NULL;
    int rc = gpufl_trace_open(path, &t, err, err_len);
    if (rc != 0)
        return rc;
    gpufl__ana_oom o;
    rc = gpufl__analyze_oom(t, &o);
    if (rc != 0) {
        snprintf(err, err_len, "%s: out of memory diagnosing it", path);
    } else if (o.found) {
        /* frames are a help, not a need: a session whose stacks cannot be
         * read still gets its diagnosis */
        gpufl__stack_table stacks;
        char why[512];
        bool have_stacks = gpufl__stack_table_load(path, &stacks, why, sizeof why) == 0;
        rc = gpufl__oom_json(t, &o, have_stacks ? &stacks : NULL, text, len);
        if (have_stacks)
            gpufl__stack_table_free(&stacks);
        if (rc != 0)
            snprintf(err, err_len, "%s: out of memory writing its diagnosis", path);
        *found = rc == 0;
    }
    gpufl_trace_close(t);
    return rc;
}
