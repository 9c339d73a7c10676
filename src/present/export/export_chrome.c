/*
 * The Chrome JSON export: the shared timeline (timeline_walk.h) in the
 * Trace Event Format that chrome://tracing and Perfetto's legacy JSON
 * importer read:
 *
 *   {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[ ... ]}
 *
 * - the program is one process (its pid); each GPU is a process of its
 *   own, pid 2^30 + device, named "GPU 0 (NVIDIA H200)";
 * - threads are the program's tids; streams, sync tracks and overflow
 *   lanes are threads numbered by their track id (lanes of a program
 *   thread and the "gpufl" track of trace windows and triggers: 2^30 +
 *   track id, in the program's process), named by "M" thread_name events,
 *   ordered by thread_sort_index;
 * - slices are "X" complete events (ts and dur in microseconds with three
 *   decimals: exact ns), NVTX marks "i" instants, counters "C" events;
 * - each launch is an "s" flow event at its call and an "f" event with
 *   "bp":"e" at the work it launched, with the flow id of the timeline;
 * - the slices of PyTorch's op ranges (analysis.h, "PyTorch ops") carry
 *   args "seq" (autograd's sequence number, when the range has one),
 *   "forward_op" (of a backward op) and "module" ("Net.fc");
 * - trace windows are "X" slices (args index, reason, detail, unended),
 *   triggers "i" instants named by their kind (args outcome, detail,
 *   dump, tid).
 * Every string is JSON-escaped; bytes that are not UTF-8 become U+FFFD.
 * One event per line. Single-threaded.
 *
 * A job (export_job.h) is this per rank, written through the same code
 * with the rank's process (export_proc.h): its pid and label, its times
 * shifted, its flow ids after the previous rank's; its GPUs' streams,
 * syncs and counters are threads of its process (tids 2^30 + track id,
 * named "GPU 0 stream 7"), so that each rank is one process; otherData,
 * which lists the ranks, comes after the events.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "core/event.h"
#include "core/utf8.h"
#include "present/export/export.h"
#include "present/export/export_out.h"
#include "present/export/export_proc.h"

#define GPU_PID_BASE (1u << 30)
#define LANE_TID_BASE (1u << 30)

typedef struct cj {
    const gpufl__rows *x;
    gpufl__xout *out;
    gpufl__export_proc *proc;
    uint32_t pid;
    uint64_t events; /* in the file so far, this session's and those before it */
} cj;

static void json_string_n(gpufl__xout *o, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    gpufl__xout_char(o, '"');
    size_t run = 0; /* bytes before i that can be copied as they are */
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            run++;
            continue;
        }
        size_t u = c >= 0x80 ? gpufl__utf8_seq(s + i, n - i) : 0;
        if (u) {
            i += u;
            run += u;
            continue;
        }
        gpufl__xout_write(o, s + i - run, run);
        run = 0;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            gpufl__xout_write(o, e, 2);
        } else if (c == '\n') {
            gpufl__xout_write(o, "\\n", 2);
        } else if (c == '\t') {
            gpufl__xout_write(o, "\\t", 2);
        } else if (c == '\r') {
            gpufl__xout_write(o, "\\r", 2);
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            gpufl__xout_write(o, e, 6);
        } else {
            gpufl__xout_write(o, "\\ufffd", 6);
        }
        i++;
    }
    gpufl__xout_write(o, s + n - run, run);
    gpufl__xout_char(o, '"');
}

static void write_json_string(gpufl__xout *o, const char *s) { json_string_n(o, s, strlen(s)); }

/* A member `"key":` (key is a plain literal) after a comma unless first. */
static void key(gpufl__xout *o, const char *k)
{
    gpufl__xout_char(o, ',');
    gpufl__xout_char(o, '"');
    gpufl__xout_str(o, k);
    gpufl__xout_str(o, "\":");
}

static void event_open(cj *c, const char *ph)
{
    gpufl__xout_str(c->out, c->events++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
    gpufl__xout_str(c->out, ph);
    gpufl__xout_char(c->out, '"');
}

static int event_close(cj *c)
{
    gpufl__xout_char(c->out, '}');
    gpufl__xout_flush_some(c->out);
    return c->out->err ? GPUFL_EIO : 0;
}

static uint32_t gpu_pid(uint32_t device) { return GPU_PID_BASE + (device & 0xffff); }

/* pid and tid of a track's events. */
static void pid_tid(const cj *c, const gpufl__tl_track *t, uint32_t *pid, uint32_t *tid)
{
    uint8_t kind = t->kind == GPUFL__TL_LANE ? t->of_kind : t->kind;
    if (kind == GPUFL__TL_THREAD) {
        *pid = c->pid;
        *tid = t->kind == GPUFL__TL_LANE ? LANE_TID_BASE + t->id : t->tid;
    } else if (kind == GPUFL__TL_FLIGHT) {
        *pid = c->pid;
        *tid = LANE_TID_BASE + t->id; /* no program thread: clear of real tids */
    } else if (t->device != GPUFL__TL_NONE && !c->proc->job) {
        *pid = gpu_pid(t->device);
        *tid = t->id;
    } else if (t->device != GPUFL__TL_NONE) {
        /* a job's rank is one process: its GPUs' tracks are threads in it */
        *pid = c->pid;
        *tid = LANE_TID_BASE + t->id;
    } else {
        *pid = c->pid;
        *tid = 0;
    }
}

static void where(cj *c, uint32_t pid, uint32_t tid)
{
    key(c->out, "pid");
    gpufl__xout_u64(c->out, pid);
    key(c->out, "tid");
    gpufl__xout_u64(c->out, tid);
}

static int metadata(cj *c, const char *what, uint32_t pid, uint32_t tid, const char *name, int64_t sort)
{
    event_open(c, "M");
    key(c->out, "name");
    write_json_string(c->out, what);
    where(c, pid, tid);
    key(c->out, "args");
    if (name) {
        gpufl__xout_str(c->out, "{\"name\":");
        write_json_string(c->out, name);
    } else {
        gpufl__xout_str(c->out, "{\"sort_index\":");
        gpufl__xout_i64(c->out, sort);
    }
    gpufl__xout_char(c->out, '}');
    return event_close(c);
}

static int on_track(void *ctx, const gpufl__tl_track *t)
{
    cj *c = ctx;
    uint32_t pid, tid;
    pid_tid(c, t, &pid, &tid);
    switch (t->kind) {
    case GPUFL__TL_PROCESS:
        metadata(c, "process_name", c->pid, 0, c->proc->label ? c->proc->label : t->name, 0);
        return metadata(c, "process_sort_index", c->pid, 0, NULL, c->proc->sort_index);
    case GPUFL__TL_THREAD:
        metadata(c, "thread_name", pid, tid, t->name, 0);
        return metadata(c, "thread_sort_index", pid, tid, NULL, t->id);
    case GPUFL__TL_DEVICE:
        if (c->proc->job)
            return 0; /* no process of its own; its streams say "GPU n" */
        metadata(c, "process_name", pid, 0, t->name, 0);
        return metadata(c, "process_sort_index", pid, 0, NULL, 1 + (int64_t)t->device);
    case GPUFL__TL_COUNTER: return 0; /* a counter is named by its events */
    default: {
        /* streams, syncs and lanes: named without the "GPU n " of their process */
        const char *name = t->name;
        if (t->device != GPUFL__TL_NONE && !c->proc->job && !strncmp(name, "GPU ", 4)) {
            const char *sp = strchr(name + 4, ' ');
            if (sp)
                name = sp + 1;
        }
        metadata(c, "thread_name", pid, tid, name, 0);
        return metadata(c, "thread_sort_index", pid, tid, NULL, t->id);
    }
    }
}

static void name_of(cj *c, const gpufl__tl_slice *s)
{
    gpufl__xname n;
    gpufl__xname_of(c->x, s, &n);
    if (n.fixed != GPUFL__XNAME_STRING) {
        write_json_string(c->out, gpufl__xname_fixed(n.fixed));
        return;
    }
    const char *text = gpufl__rows_str(c->x, n.string);
    if (!n.launch) {
        write_json_string(c->out, text);
        return;
    }
    /* "launch <name>": the prefix is plain ASCII, so the two halves escape
     * as one string */
    size_t len = strlen(text), pre = sizeof GPUFL__XNAME_LAUNCH - 1;
    char *buf = malloc(pre + len);
    if (!buf) {
        c->out->err = ENOMEM;
        return;
    }
    memcpy(buf, GPUFL__XNAME_LAUNCH, pre);
    memcpy(buf + pre, text, len);
    json_string_n(c->out, buf, pre + len);
    free(buf);
}

static void u32_array(gpufl__xout *o, const uint32_t v[3])
{
    gpufl__xout_char(o, '[');
    for (int i = 0; i < 3; i++) {
        if (i)
            gpufl__xout_char(o, ',');
        gpufl__xout_u64(o, v[i]);
    }
    gpufl__xout_char(o, ']');
}

/* The key of an args member, after a comma unless it is the first. */
static void arg(gpufl__xout *o, const char *k, bool *first)
{
    if (!*first)
        gpufl__xout_char(o, ',');
    *first = false;
    gpufl__xout_char(o, '"');
    gpufl__xout_str(o, k);
    gpufl__xout_str(o, "\":");
}

/* A PyTorch op range's op: its seq, and its forward op and module. */
static void torch_args(cj *c, const gpufl__tl_slice *s, bool *first)
{
    gpufl__xout *o = c->out;
    if (s->range->has_seq) {
        arg(o, "seq", first);
        gpufl__xout_u64(o, s->range->seq);
    }
    if (s->torch->forward_op) {
        arg(o, "forward_op", first);
        write_json_string(o, gpufl__rows_str(c->x, s->torch->forward_op));
    }
    if (s->torch->module) {
        arg(o, "module", first);
        write_json_string(o, gpufl__ana_module_path(gpufl__rows_str(c->x, s->torch->module)));
    }
}

static void str_arg(cj *c, const char *k, uint32_t id, bool *first)
{
    if (!id)
        return;
    arg(c->out, k, first);
    write_json_string(c->out, gpufl__rows_str(c->x, id));
}

/* A trace window's or a trigger's args. */
static void flight_args(cj *c, const gpufl__tl_slice *s)
{
    gpufl__xout *o = c->out;
    bool first = true;
    key(o, "args");
    gpufl__xout_char(o, '{');
    if (s->window) {
        arg(o, "index", &first);
        gpufl__xout_u64(o, s->window->index);
        str_arg(c, "reason", s->window->reason, &first);
        str_arg(c, "detail", s->window->detail, &first);
        if (s->window->unended) {
            arg(o, "unended", &first);
            gpufl__xout_str(o, "true");
        }
    } else {
        uint8_t oc = s->trigger->outcome;
        arg(o, "outcome", &first);
        write_json_string(o, oc < GFL_TRIGGER_OUTCOME_COUNT ? gpufl__trigger_outcome_name(oc) : "unknown");
        str_arg(c, "detail", s->trigger->detail, &first);
        str_arg(c, "dump", s->trigger->dump, &first);
        if (s->trigger->tid) {
            arg(o, "tid", &first);
            gpufl__xout_u64(o, s->trigger->tid);
        }
    }
    gpufl__xout_char(o, '}');
}

static void args(cj *c, const gpufl__tl_slice *s)
{
    gpufl__xout *o = c->out;
    if (s->window || s->trigger)
        flight_args(c, s);
    else if (s->op && s->src != GPUFL__TL_API) {
        key(o, "args");
        gpufl__xout_str(o, "{\"correlation\":");
        gpufl__xout_u64(o, s->op->correlation);
        if (s->src == GPUFL__TBL_KERNEL) {
            key(o, "grid");
            u32_array(o, s->op->grid);
            key(o, "block");
            u32_array(o, s->op->block);
            key(o, "registers");
            gpufl__xout_u64(o, s->op->registers);
        } else if (s->src != GPUFL__TBL_SYNC) {
            key(o, "bytes");
            gpufl__xout_u64(o, s->op->bytes);
        }
        gpufl__xout_char(o, '}');
    } else if (s->src == GPUFL__TL_API) {
        key(o, "args");
        gpufl__xout_str(o, "{\"correlation\":");
        gpufl__xout_u64(o, s->op->correlation);
        gpufl__xout_char(o, '}');
    } else if (s->range && (s->range->domain || s->range->unended || s->torch)) {
        key(o, "args");
        gpufl__xout_char(o, '{');
        bool first = true;
        if (s->range->domain) {
            arg(o, "domain", &first);
            write_json_string(o, gpufl__rows_str(c->x, s->range->domain));
        }
        if (s->torch)
            torch_args(c, s, &first);
        /* never ended: dur runs to the session's last recorded time */
        if (s->range->unended) {
            arg(o, "unended", &first);
            gpufl__xout_str(o, "true");
        }
        gpufl__xout_char(o, '}');
    }
}

static int flow(cj *c, const char *ph, uint64_t id, uint64_t ts, uint32_t pid, uint32_t tid)
{
    event_open(c, ph);
    gpufl__xout_str(c->out, ",\"name\":\"launch\",\"cat\":\"launch\"");
    if (ph[0] == 'f')
        gpufl__xout_str(c->out, ",\"bp\":\"e\"");
    key(c->out, "id");
    gpufl__xout_u64(c->out, id);
    key(c->out, "ts");
    gpufl__xout_us(c->out, ts);
    where(c, pid, tid);
    return event_close(c);
}

static int on_begin(void *ctx, const gpufl__tl_track *t, const gpufl__tl_slice *s)
{
    cj *c = ctx;
    uint32_t pid, tid;
    pid_tid(c, t, &pid, &tid);
    uint64_t start = gpufl__export_time(c->proc, s->start);
    event_open(c, s->instant ? "i" : "X");
    key(c->out, "name");
    name_of(c, s);
    key(c->out, "cat");
    write_json_string(c->out, gpufl__tl_src_names(s->src)->category);
    key(c->out, "ts");
    gpufl__xout_us(c->out, start);
    if (s->instant) {
        gpufl__xout_str(c->out, ",\"s\":\"t\"");
    } else {
        key(c->out, "dur");
        gpufl__xout_us(c->out, gpufl__export_time(c->proc, s->end) - start);
    }
    where(c, pid, tid);
    args(c, s);
    int rc = event_close(c);
    for (size_t f = 0; f < s->nflows && !rc; f++)
        rc = flow(c, "s", c->proc->flow_base + s->flows[f], start, pid, tid);
    if (s->flow && !rc)
        rc = flow(c, "f", c->proc->flow_base + s->flow, start, pid, tid);
    return rc;
}

static int on_end(void *ctx, const gpufl__tl_track *t, const gpufl__tl_slice *s)
{
    (void)ctx, (void)t, (void)s; /* complete events carry their duration */
    return 0;
}

static int on_counter(void *ctx, const gpufl__tl_track *t, uint64_t ts, double v)
{
    cj *c = ctx;
    uint32_t pid, tid;
    pid_tid(c, t, &pid, &tid);
    event_open(c, "C");
    key(c->out, "name");
    write_json_string(c->out, t->name);
    key(c->out, "ts");
    gpufl__xout_us(c->out, gpufl__export_time(c->proc, ts));
    key(c->out, "pid");
    gpufl__xout_u64(c->out, pid);
    gpufl__xout_str(c->out, ",\"args\":{\"value\":");
    gpufl__xout_double(c->out, v);
    gpufl__xout_char(c->out, '}');
    return event_close(c);
}

/* Writes x's events into o as process proc (a comma before each unless it
 * is the file's first: r->packets counts the events before). */
static int write_session(void *ctx, gpufl__xout *o, const gpufl__rows *x, gpufl__export_proc *proc,
                         gpufl__export_result *r)
{
    cj c;
    memset(&c, 0, sizeof c);
    c.x = x;
    c.out = o;
    c.proc = proc;
    c.pid = proc->pid;
    c.events = r->packets;
    gpufl__tl_sink sink = {&c, on_track, on_begin, on_end, on_counter};
    gpufl__tl_stats stats;
    int rc = gpufl__timeline_run(x, &sink, &stats);
    gpufl__tl_stats_add(&r->timeline, &stats);
    r->packets = c.events;
    r->clamped += proc->clamped;
    if (ctx && !rc) {
        /* the rank's entry of otherData.ranks, written after the events */
        gpufl__xout *m = ctx;
        gpufl__xout_str(m, m->len ? ",\n{\"pid\":" : "\n{\"pid\":");
        gpufl__xout_u64(m, proc->pid);
        key(m, "label");
        write_json_string(m, proc->label);
        key(m, "sort_index");
        gpufl__xout_i64(m, proc->sort_index);
        key(m, "session_id");
        write_json_string(m, gpufl__rows_str(x, x->info->session_id));
        key(m, "app_name");
        write_json_string(m, gpufl__rows_str(x, x->info->app_name));
        key(m, "host");
        write_json_string(m, gpufl__rows_str(x, x->info->host));
        key(m, "session_pid");
        gpufl__xout_i64(m, x->info->pid);
        key(m, "start_ns");
        gpufl__xout_u64(m, x->info->start_ns);
        key(m, "start_wall_ns");
        gpufl__xout_u64(m, x->info->start_wall_ns);
        key(m, "shift_ns");
        gpufl__xout_i64(m, proc->shift_ns);
        gpufl__xout_char(m, '}');
        if (m->err)
            rc = GPUFL_ENOMEM;
    }
    return rc;
}

int gpufl__export_chrome(const gpufl_trace *t, const char *path, gpufl__export_result *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    gpufl__rows x;
    gpufl__rows_open(&x, t);
    gpufl__export_proc proc;
    gpufl__export_proc_single(&proc, &x);
    gpufl__xout out;
    if (gpufl__xout_open(&out, path, err, err_len) != 0)
        return GPUFL_EIO;
    gpufl__xout *o = &out;
    gpufl__xout_str(o, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"session_id\":");
    write_json_string(o, gpufl__rows_str(&x, x.info->session_id));
    key(o, "app_name");
    write_json_string(o, gpufl__rows_str(&x, x.info->app_name));
    key(o, "host");
    write_json_string(o, gpufl__rows_str(&x, x.info->host));
    key(o, "gpufl_version");
    write_json_string(o, gpufl__rows_str(&x, x.info->gpufl_version));
    key(o, "start_ns");
    gpufl__xout_u64(o, x.info->start_ns);
    key(o, "start_wall_ns");
    gpufl__xout_u64(o, x.info->start_wall_ns);
    gpufl__xout_str(o, ",\"clock\":\"CLOCK_MONOTONIC\"},\"traceEvents\":[");
    int rc = write_session(NULL, o, &x, &proc, r);
    gpufl__xout_str(o, "\n]}\n");
    return gpufl__xout_finish(o, rc, &r->bytes, err, err_len);
}

int gpufl__export_chrome_job(const gpufl__export_rank *ranks, size_t n, const char *path, gpufl__export_result *r,
                             char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    gpufl__xout out, meta;
    if (gpufl__xout_open(&out, path, err, err_len) != 0)
        return GPUFL_EIO;
    /* otherData.ranks, kept in memory (a line per rank) until the events are written */
    memset(&meta, 0, sizeof meta);
    meta.fd = -1;
    gpufl__xout_str(&out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    int rc = gpufl__export_ranks(&out, ranks, n, write_session, &meta, r, err, err_len);
    if (rc != 0) {
        free(meta.p);
        gpufl__xout_abort(&out);
        return rc;
    }
    /* each rank's times are its session clock plus its shift_ns */
    gpufl__xout_str(&out, "\n],\"otherData\":{\"clock\":\"CLOCK_MONOTONIC + shift_ns\",\"ranks\":[");
    gpufl__xout_write(&out, meta.p, meta.len);
    gpufl__xout_str(&out, "\n]}}\n");
    free(meta.p);
    return gpufl__xout_finish(&out, 0, &r->bytes, err, err_len);
}
