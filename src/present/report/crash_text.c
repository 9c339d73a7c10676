/*
 * The crash of a session as text and JSON (see crash_text.h). Any thread;
 * a crash has at most 64 frames and a few thousand open scopes.
 */
#include "present/report/crash_text.h"

#include <inttypes.h>
#include <string.h>

#include "present/report/summary_text.h"

static const char *action_text(uint32_t action)
{
    switch (action) {
    case 1: return "the program's own handler ran next";
    case 2: return "the program ignores this signal; the fault killed it anyway";
    default: return "the default action ended the process";
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void gpufl__crash_render_text(const gpufl_trace *t, FILE *out, const char *label, int indent)
{
    const gpufl_trace_crash *c = gpufl_trace_get_crash(t);
    if (!c)
        return;
    const gpufl_trace_info *in = gpufl_trace_get_info(t);
    const char *code = gpufl_trace_string(t, c->code_name);
    fprintf(out, "%s%s", label, gpufl_trace_string(t, c->signal_name));
    if (code[0])
        fprintf(out, " (%s)", code);
    if (c->sender_pid)
        fprintf(out, " sent by pid %" PRIu32, c->sender_pid);
    else
        fprintf(out, " at 0x%" PRIx64, c->address);
    fprintf(out, " on thread %" PRIu32 ", +%.3f s; %s\n", c->tid,
            c->ts_ns > in->start_ns ? (double)(c->ts_ns - in->start_ns) / 1e9 : 0.0, action_text(c->action));
    if (c->stack_unavailable)
        fprintf(out, "%*sstack     not recorded (libunwind could not be loaded)\n", indent, "");
    for (uint32_t i = 0; i < c->nframes; i++) {
        const gpufl_trace_crash_frame *f = &c->frames[i];
        fprintf(out, "%*s%s #%-2" PRIu32 " ", indent, "", i ? "         " : "stack    ", i);
        if (!f->present)
            fprintf(out, "(not recorded)\n");
        else if (f->module)
            fprintf(out, "%s+0x%" PRIx64 "   %s\n", base_name(gpufl_trace_string(t, f->module)), f->offset,
                    gpufl_trace_string(t, f->module));
        else
            fprintf(out, "0x%" PRIx64 " (in no file)\n", f->offset);
    }
    if (c->stack_truncated)
        fprintf(out, "%*s          ... deeper frames not recorded\n", indent, "");
    if (!c->nscopes)
        fprintf(out, "%*sopen      no gpufl scope was open\n", indent, "");
    for (uint32_t i = 0; i < c->nscopes; i++) {
        const gpufl_trace_crash_scope *s = &c->scopes[i];
        char open_for[32];
        gpufl__format_duration(c->ts_ns > s->begin_ns ? c->ts_ns - s->begin_ns : 0, open_for, sizeof open_for);
        fprintf(out, "%*s%s thread %-7" PRIu32 " %*s%s (open %s)\n", indent, "", i ? "         " : "open     ", s->tid,
                (int)(2 * (s->depth < 40 ? s->depth : 40)), "", gpufl_trace_string(t, s->name), open_for);
    }
    if (c->scopes_lost)
        fprintf(out, "%*s          ... and %" PRIu32 " more open scopes not recorded\n", indent, "", c->scopes_lost);
}

void gpufl__crash_render_json(const gpufl_trace *t, jw *w, const char *key)
{
    const gpufl_trace_crash *c = gpufl_trace_get_crash(t);
    if (!c) {
        gpufl__jw_null(w, key);
        return;
    }
    char hex[24];
    gpufl__jw_obj(w, key);
    gpufl__jw_u64(w, "ts_ns", c->ts_ns);
    gpufl__jw_u64(w, "tid", c->tid);
    gpufl__jw_i64(w, "signal", c->signal);
    gpufl__jw_str(w, "signal_name", gpufl_trace_string(t, c->signal_name));
    gpufl__jw_i64(w, "code", c->code);
    gpufl__jw_str(w, "code_name", gpufl_trace_string(t, c->code_name));
    snprintf(hex, sizeof hex, "0x%" PRIx64, c->address);
    gpufl__jw_str(w, "address", hex);
    gpufl__jw_u64(w, "sender_pid", c->sender_pid);
    gpufl__jw_str(w, "action", c->action == 1 ? "handler" : c->action == 2 ? "ignored" : "default");
    gpufl__jw_bool(w, "stack_unavailable", c->stack_unavailable != 0);
    gpufl__jw_bool(w, "stack_truncated", c->stack_truncated != 0);
    gpufl__jw_arr(w, "stack");
    for (uint32_t i = 0; i < c->nframes; i++) {
        const gpufl_trace_crash_frame *f = &c->frames[i];
        gpufl__jw_obj(w, NULL);
        if (f->present && f->module)
            gpufl__jw_str(w, "module", gpufl_trace_string(t, f->module));
        else
            gpufl__jw_null(w, "module");
        snprintf(hex, sizeof hex, "0x%" PRIx64, f->offset);
        gpufl__jw_str(w, "offset", hex);
        gpufl__jw_bool(w, "present", f->present != 0);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_arr(w, "open_scopes");
    for (uint32_t i = 0; i < c->nscopes; i++) {
        const gpufl_trace_crash_scope *s = &c->scopes[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "tid", s->tid);
        gpufl__jw_u64(w, "id", s->id);
        gpufl__jw_u64(w, "parent", s->parent);
        gpufl__jw_u64(w, "depth", s->depth);
        gpufl__jw_str(w, "name", gpufl_trace_string(t, s->name));
        gpufl__jw_u64(w, "begin_ns", s->begin_ns);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_u64(w, "open_scopes_lost", c->scopes_lost);
    gpufl__jw_obj_end(w);
}

json_t *gpufl__crash_json(const gpufl_trace *t)
{
    jw w;
    gpufl__jw_init(&w);
    gpufl__jw_obj(&w, NULL);
    gpufl__crash_render_json(t, &w, "crash");
    gpufl__jw_obj_end(&w);
    json_t *o = gpufl__jw_finish(&w) == 0 ? json_loadb(w.buf, w.n, 0, NULL) : NULL;
    gpufl__jw_free(&w);
    json_t *crash = json_incref(json_object_get(o, "crash"));
    json_decref(o);
    return crash;
}
