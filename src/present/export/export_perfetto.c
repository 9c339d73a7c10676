/*
 * The Perfetto export: the shared timeline (timeline_walk.h) as a
 * .perfetto-trace, a protobuf `Trace` of `TracePacket`s written by hand
 * (pb_writer.h) that ui.perfetto.dev and trace_processor open.
 *
 * Packets, in file order:
 *   1. a ClockSnapshot: CLOCK_MONOTONIC (the session clock) at the session
 *      start and the wall clock then, with MONOTONIC as the trace's primary
 *      clock, so timestamps need no conversion and the UI can show dates;
 *      it also clears the sequence's incremental state
 *      (SEQ_INCREMENTAL_STATE_CLEARED, first_packet_on_sequence)
 *   2. TracePacketDefaults: timestamp_clock_id MONOTONIC for the sequence,
 *      and the interned debug-annotation names
 *   3. a TrackDescriptor per track (process, threads, devices, streams,
 *      syncs, counters; overflow lanes just before their first event)
 *   4. TrackEvents: SLICE_BEGIN/END pairs per track in time order, INSTANTs
 *      (NVTX marks), then COUNTERs. Names are interned (InternedData
 *      event_names, name_iid), each added in the packet that first uses it;
 *      so are kernels' launch configurations, as debug annotation string
 *      values; every event packet says SEQ_NEEDS_INCREMENTAL_STATE. Launch
 *      calls carry flow_ids, the work they launched terminating_flow_ids;
 *      device work carries its correlation id. The slices of PyTorch's
 *      op ranges carry seq, forward_op and module (analysis.h, "PyTorch
 *      ops"), their names interned when first used.
 * All packets are on one sequence (trusted_packet_sequence_id 1);
 * timestamps are absolute session-clock ns. Track uuids are the timeline's
 * track ids + 1.
 *
 * A job (export_job.h) is this per rank, written through the same code
 * with the rank's process (export_proc.h): its own sequence, its uuids and
 * flow ids after the previous rank's, its times shifted, the clock
 * snapshot only in the first rank's first packet, and the process
 * descriptor with the rank's pid, label and sort index.
 *
 * Size: about 107 bytes per recorded event of a Trace-engine session (a
 * kernel is four packets: its launch call's begin and end, its own begin
 * and end); bench/bench_export measures it and the speed.
 *
 * Field numbers are those of Perfetto's public protos, named beside each
 * constant (protos/perfetto/trace/...). Built for millions of events per
 * second: a packet is encoded straight into the output buffer, names are
 * looked up in arrays indexed by string id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "present/export/export.h"
#include "present/export/export_out.h"
#include "present/export/export_proc.h"
#include "present/export/pb_writer.h"

/* trace.proto: message Trace */
#define TRACE_PACKET 1
/* trace_packet.proto: message TracePacket */
#define PKT_CLOCK_SNAPSHOT 6
#define PKT_TIMESTAMP 8
#define PKT_TRUSTED_SEQUENCE_ID 10
#define PKT_TRACK_EVENT 11
#define PKT_INTERNED_DATA 12
#define PKT_SEQUENCE_FLAGS 13
#define PKT_DEFAULTS 59
#define PKT_TRACK_DESCRIPTOR 60
#define PKT_FIRST_ON_SEQUENCE 87
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
/* trace_packet_defaults.proto: message TracePacketDefaults */
#define DEFAULTS_TIMESTAMP_CLOCK_ID 58
/* clock_snapshot.proto: ClockSnapshot, ClockSnapshot.Clock; common/builtin_clock.proto */
#define CLOCKS_CLOCK 1
#define CLOCKS_PRIMARY_TRACE_CLOCK 2
#define CLOCK_ID 1
#define CLOCK_TIMESTAMP 2
#define BUILTIN_CLOCK_REALTIME 1
#define BUILTIN_CLOCK_MONOTONIC 3
/* track_event/track_descriptor.proto: message TrackDescriptor */
#define TD_UUID 1
#define TD_NAME 2
#define TD_PROCESS 3
#define TD_THREAD 4
#define TD_PARENT_UUID 5
#define TD_COUNTER 8
/* track_event/process_descriptor.proto, thread_descriptor.proto */
#define PD_PID 1
#define PD_LEGACY_SORT_INDEX 3
#define PD_PROCESS_NAME 6
#define THD_PID 1
#define THD_TID 2
/* track_event/counter_descriptor.proto: message CounterDescriptor */
#define CD_UNIT 3
#define CD_UNIT_SIZE_BYTES 3
/* track_event/track_event.proto: message TrackEvent */
#define TE_DEBUG_ANNOTATIONS 4
#define TE_TYPE 9
#define TE_NAME_IID 10
#define TE_TRACK_UUID 11
#define TE_COUNTER_VALUE 30
#define TE_DOUBLE_COUNTER_VALUE 44
#define TE_FLOW_IDS 47
#define TE_TERMINATING_FLOW_IDS 48
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
#define TYPE_COUNTER 4
/* interned_data/interned_data.proto: InternedData; EventName and
 * DebugAnnotationName are {iid = 1, name = 2} */
#define ID_EVENT_NAMES 2
#define ID_DEBUG_ANNOTATION_NAMES 3
#define ID_DEBUG_ANNOTATION_STRING_VALUES 29 /* InternedString {iid = 1, str = 2} */
#define INTERNED_IID 1
#define INTERNED_NAME 2
/* track_event/debug_annotation.proto: message DebugAnnotation */
#define DA_NAME_IID 1
#define DA_BOOL_VALUE 2
#define DA_UINT_VALUE 3
#define DA_STRING_VALUE_IID 17

/* Debug annotations on device work (interned names, iid = index + 1). A
 * kernel's launch configuration is one interned string ("grid 132x1x1,
 * block 256x1x1, 64 registers"): a session has a few hundred of them and
 * millions of kernels, so each kernel carries a 3-byte reference instead
 * of seven numbers. */
enum { A_CORRELATION, A_LAUNCH, A_BYTES, A_UNENDED, A_HEADER, A_SEQ = A_HEADER, A_FORWARD_OP, A_MODULE, A_COUNT };
static const char *const annotation_names[A_COUNT] = {"correlation", "launch",     "bytes", "unended",
                                                      "seq",         "forward_op", "module"};
/* The names from A_HEADER on (PyTorch op ranges' seq, forward_op, module)
 * are interned in the first packet that uses them, so that a session
 * without op ranges gives the same file as before they existed. Their
 * string values (an op's name; a module's path, "Net.fc") are interned
 * like launch configurations. */
enum { V_FORWARD_OP, V_MODULE, V_COUNT };

typedef struct pf {
    const gpufl__rows *x;
    gpufl__xout *out;
    gpufl__export_proc *proc;
    uint64_t packets;
    uint32_t next_iid;
    uint32_t *fixed_iid;     /* by fixed name */
    uint32_t *string_iid[2]; /* by string id: plain, "launch " */
    size_t nstrings[2];
    uint32_t *launch_iid; /* by gpufl__work_row.launch */
    uint32_t next_value_iid;
    uint8_t name_sent[A_COUNT];   /* annotation names from A_HEADER on: interned already */
    uint32_t *value_iid[V_COUNT]; /* by string id: an op's name, a module's path */
    size_t nvalues[V_COUNT];
} pf;

/* Track uuids are small (1-2 bytes on every event): the file holds one
 * session, or the ranks of a job one after another (each from where the
 * previous one's ended), whose threads Perfetto also knows by pid and tid. */
static uint64_t uuid_of(const pf *p, uint32_t track) { return p->proc->uuid_base + track + 1; }

static size_t packet_begin(pf *p)
{
    size_t m = gpufl__pb_begin(p->out, TRACE_PACKET);
    gpufl__pb_varint(p->out, PKT_TRUSTED_SEQUENCE_ID, p->proc->sequence);
    return m;
}

static int packet_end(pf *p, size_t m)
{
    gpufl__pb_end(p->out, m);
    p->packets++;
    gpufl__xout_flush_some(p->out);
    return p->out->err ? GPUFL_EIO : 0;
}

/* The first packets of the session's sequence: the one that clears its
 * incremental state (with the clock snapshot, when p->proc->clock), then
 * the defaults and the debug annotation names. */
static void header(pf *p)
{
    const gpufl_trace_info *i = p->x->info;
    size_t m = packet_begin(p);
    gpufl__pb_varint(p->out, PKT_FIRST_ON_SEQUENCE, 1);
    gpufl__pb_varint(p->out, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    if (p->proc->clock) {
        size_t cs = gpufl__pb_begin(p->out, PKT_CLOCK_SNAPSHOT);
        size_t c = gpufl__pb_begin(p->out, CLOCKS_CLOCK);
        gpufl__pb_varint(p->out, CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
        gpufl__pb_varint(p->out, CLOCK_TIMESTAMP, gpufl__export_time(p->proc, i->start_ns));
        gpufl__pb_end(p->out, c);
        if (i->start_wall_ns) {
            c = gpufl__pb_begin(p->out, CLOCKS_CLOCK);
            gpufl__pb_varint(p->out, CLOCK_ID, BUILTIN_CLOCK_REALTIME);
            gpufl__pb_varint(p->out, CLOCK_TIMESTAMP, i->start_wall_ns);
            gpufl__pb_end(p->out, c);
        }
        gpufl__pb_varint(p->out, CLOCKS_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_MONOTONIC);
        gpufl__pb_end(p->out, cs);
    }
    packet_end(p, m);

    m = packet_begin(p);
    size_t d = gpufl__pb_begin(p->out, PKT_DEFAULTS);
    gpufl__pb_varint(p->out, DEFAULTS_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
    gpufl__pb_end(p->out, d);
    size_t in = gpufl__pb_begin(p->out, PKT_INTERNED_DATA);
    for (unsigned a = 0; a < A_HEADER; a++) {
        size_t e = gpufl__pb_begin(p->out, ID_DEBUG_ANNOTATION_NAMES);
        gpufl__pb_varint(p->out, INTERNED_IID, a + 1);
        gpufl__pb_string(p->out, INTERNED_NAME, annotation_names[a]);
        gpufl__pb_end(p->out, e);
    }
    gpufl__pb_end(p->out, in);
    packet_end(p, m);
}

static int on_track(void *ctx, const gpufl__tl_track *t)
{
    pf *p = ctx;
    uint32_t pid = p->proc->pid;
    uint64_t uuid = uuid_of(p, t->id);
    if (uuid > p->proc->uuid_end)
        p->proc->uuid_end = uuid;
    size_t m = packet_begin(p);
    size_t td = gpufl__pb_begin(p->out, PKT_TRACK_DESCRIPTOR);
    gpufl__pb_varint(p->out, TD_UUID, uuid);
    if (t->parent != GPUFL__TL_NONE && t->kind != GPUFL__TL_THREAD)
        gpufl__pb_varint(p->out, TD_PARENT_UUID, uuid_of(p, t->parent));
    if (t->kind == GPUFL__TL_PROCESS) {
        size_t pd = gpufl__pb_begin(p->out, TD_PROCESS);
        gpufl__pb_varint(p->out, PD_PID, pid);
        if (p->proc->job) /* an int32: a negative index takes ten bytes */
            gpufl__pb_int64(p->out, PD_LEGACY_SORT_INDEX, p->proc->sort_index);
        gpufl__pb_string(p->out, PD_PROCESS_NAME, p->proc->label ? p->proc->label : t->name);
        gpufl__pb_end(p->out, pd);
    } else if (t->kind == GPUFL__TL_THREAD) {
        /* named by the UI from pid and tid ("thread 1234") */
        size_t th = gpufl__pb_begin(p->out, TD_THREAD);
        gpufl__pb_varint(p->out, THD_PID, pid);
        gpufl__pb_varint(p->out, THD_TID, t->tid);
        gpufl__pb_end(p->out, th);
    } else {
        gpufl__pb_string(p->out, TD_NAME, t->name);
        if (t->kind == GPUFL__TL_COUNTER) {
            size_t cd = gpufl__pb_begin(p->out, TD_COUNTER);
            if (t->bytes)
                gpufl__pb_varint(p->out, CD_UNIT, CD_UNIT_SIZE_BYTES);
            gpufl__pb_end(p->out, cd);
        }
    }
    gpufl__pb_end(p->out, td);
    return packet_end(p, m);
}

/* The slot for string id s in a table of iids by string id (*tab of *n),
 * grown as needed; NULL when out of memory. */
static uint32_t *id_slot(uint32_t **tab, size_t *n, uint32_t s)
{
    if (s >= *n) {
        size_t m = *n ? *n : 1024;
        while (m <= s)
            m *= 2;
        uint32_t *a = realloc(*tab, m * sizeof *a);
        if (!a)
            return NULL;
        memset(a + *n, 0, (m - *n) * sizeof *a);
        *tab = a;
        *n = m;
    }
    return &(*tab)[s];
}

static uint32_t *string_slot(pf *p, int w, uint32_t s) { return id_slot(&p->string_iid[w], &p->nstrings[w], s); }

/* The packet's InternedData, begun when first needed: one per packet, as
 * readers keep only the last of a message field that occurs twice. */
static void interned_open(pf *p, size_t *in)
{
    if (*in == GPUFL__PB_NO_MARK)
        *in = gpufl__pb_begin(p->out, PKT_INTERNED_DATA);
}

/* The iid of the slice's name; when new, its entry goes into the packet's
 * InternedData (*in), before the TrackEvent that uses it. */
static uint32_t name_iid(pf *p, const gpufl__tl_slice *s, size_t *in)
{
    gpufl__xname n;
    gpufl__xname_of(p->x, s, &n);
    uint32_t *slot = n.fixed != GPUFL__XNAME_STRING ? &p->fixed_iid[n.fixed] : string_slot(p, n.launch, n.string);
    if (!slot) {
        p->out->err = ENOMEM;
        return 0;
    }
    if (*slot)
        return *slot;
    *slot = p->next_iid++;
    const char *text = n.fixed != GPUFL__XNAME_STRING ? gpufl__xname_fixed(n.fixed) : gpufl__rows_str(p->x, n.string);
    interned_open(p, in);
    size_t en = gpufl__pb_begin(p->out, ID_EVENT_NAMES);
    gpufl__pb_varint(p->out, INTERNED_IID, *slot);
    if (n.launch) {
        size_t len = strlen(text), pre = sizeof GPUFL__XNAME_LAUNCH - 1;
        size_t nm = gpufl__pb_begin(p->out, INTERNED_NAME);
        gpufl__xout_write(p->out, GPUFL__XNAME_LAUNCH, pre);
        gpufl__xout_write(p->out, text, len);
        gpufl__pb_end(p->out, nm);
    } else {
        gpufl__pb_string(p->out, INTERNED_NAME, text);
    }
    gpufl__pb_end(p->out, en);
    return *slot;
}

static void annotation(pf *p, unsigned a, uint64_t v)
{
    size_t m = gpufl__pb_begin(p->out, TE_DEBUG_ANNOTATIONS);
    gpufl__pb_varint(p->out, DA_NAME_IID, a + 1);
    gpufl__pb_varint(p->out, DA_UINT_VALUE, v);
    gpufl__pb_end(p->out, m);
}

/* The iid of a kernel's launch configuration text; when new, its entry
 * goes into the packet's InternedData (*in). */
static uint32_t launch_iid(pf *p, const gpufl__work_row *o, size_t *in)
{
    uint32_t *slot = &p->launch_iid[o->launch];
    if (*slot)
        return *slot;
    *slot = p->next_value_iid++;
    char text[160];
    int n = snprintf(text, sizeof text, "grid %ux%ux%u, block %ux%ux%u, %u registers", o->grid[0], o->grid[1],
                     o->grid[2], o->block[0], o->block[1], o->block[2], o->registers);
    interned_open(p, in);
    size_t v = gpufl__pb_begin(p->out, ID_DEBUG_ANNOTATION_STRING_VALUES);
    gpufl__pb_varint(p->out, INTERNED_IID, *slot);
    gpufl__pb_bytes(p->out, INTERNED_NAME, text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
    gpufl__pb_end(p->out, v);
    return *slot;
}

/* Interns annotation name a (from A_HEADER on) into the packet's
 * InternedData (*in) when it is used for the first time. */
static void name_once(pf *p, unsigned a, size_t *in)
{
    if (p->name_sent[a])
        return;
    p->name_sent[a] = 1;
    interned_open(p, in);
    size_t e = gpufl__pb_begin(p->out, ID_DEBUG_ANNOTATION_NAMES);
    gpufl__pb_varint(p->out, INTERNED_IID, a + 1);
    gpufl__pb_string(p->out, INTERNED_NAME, annotation_names[a]);
    gpufl__pb_end(p->out, e);
}

/* The iid of a string value of table v (V_*) for string id s, interned
 * into the packet's InternedData (*in) when new; 0 out of memory. */
static uint32_t value_iid(pf *p, unsigned v, uint32_t s, size_t *in)
{
    uint32_t *slot = id_slot(&p->value_iid[v], &p->nvalues[v], s);
    if (!slot) {
        p->out->err = ENOMEM;
        return 0;
    }
    if (*slot)
        return *slot;
    *slot = p->next_value_iid++;
    const char *text = gpufl__rows_str(p->x, s);
    if (v == V_MODULE)
        text = gpufl__ana_module_path(text);
    interned_open(p, in);
    size_t e = gpufl__pb_begin(p->out, ID_DEBUG_ANNOTATION_STRING_VALUES);
    gpufl__pb_varint(p->out, INTERNED_IID, *slot);
    gpufl__pb_string(p->out, INTERNED_NAME, text);
    gpufl__pb_end(p->out, e);
    return *slot;
}

/* An annotation of a PyTorch op range: A_* and its value (seq, or the iid
 * of a string value). */
typedef struct op_note {
    unsigned a;
    uint64_t v;
} op_note;

/* A PyTorch op range's annotations into note[], returning how many; what
 * they need interned goes into the packet's InternedData (*in). */
static size_t torch_notes(pf *p, const gpufl__tl_slice *s, size_t *in, op_note note[3])
{
    size_t n = 0;
    if (s->range->has_seq)
        note[n++] = (op_note){A_SEQ, s->range->seq};
    if (s->torch->forward_op)
        note[n++] = (op_note){A_FORWARD_OP, value_iid(p, V_FORWARD_OP, s->torch->forward_op, in)};
    if (s->torch->module)
        note[n++] = (op_note){A_MODULE, value_iid(p, V_MODULE, s->torch->module, in)};
    for (size_t i = 0; i < n; i++)
        name_once(p, note[i].a, in);
    return n;
}

static size_t event_begin(pf *p, uint64_t ts)
{
    size_t m = packet_begin(p);
    gpufl__pb_varint(p->out, PKT_TIMESTAMP, ts);
    gpufl__pb_varint(p->out, PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    return m;
}

static int on_begin(void *ctx, const gpufl__tl_track *t, const gpufl__tl_slice *s)
{
    pf *p = ctx;
    size_t m = event_begin(p, gpufl__export_time(p->proc, s->start));
    size_t in = GPUFL__PB_NO_MARK;
    uint32_t iid = name_iid(p, s, &in);
    uint32_t launch = s->src == GPUFL__TBL_KERNEL && s->op->launch ? launch_iid(p, s->op, &in) : 0;
    op_note notes[3];
    size_t nnotes = s->torch ? torch_notes(p, s, &in, notes) : 0;
    gpufl__pb_end(p->out, in);
    size_t te = gpufl__pb_begin(p->out, PKT_TRACK_EVENT);
    gpufl__pb_varint(p->out, TE_TYPE, s->instant ? TYPE_INSTANT : TYPE_SLICE_BEGIN);
    gpufl__pb_varint(p->out, TE_TRACK_UUID, uuid_of(p, t->id));
    gpufl__pb_varint(p->out, TE_NAME_IID, iid);
    for (size_t f = 0; f < s->nflows; f++)
        gpufl__pb_fixed64(p->out, TE_FLOW_IDS, p->proc->flow_base + s->flows[f]);
    if (s->flow)
        gpufl__pb_fixed64(p->out, TE_TERMINATING_FLOW_IDS, p->proc->flow_base + s->flow);
    if (s->op && s->src != GPUFL__TL_API) {
        const gpufl__work_row *o = s->op;
        if (o->correlation)
            annotation(p, A_CORRELATION, o->correlation);
        if (launch) {
            size_t a = gpufl__pb_begin(p->out, TE_DEBUG_ANNOTATIONS);
            gpufl__pb_varint(p->out, DA_NAME_IID, A_LAUNCH + 1);
            gpufl__pb_varint(p->out, DA_STRING_VALUE_IID, launch);
            gpufl__pb_end(p->out, a);
        } else if (s->src != GPUFL__TBL_SYNC && s->src != GPUFL__TBL_KERNEL) {
            annotation(p, A_BYTES, o->bytes);
        }
    }
    for (size_t i = 0; i < nnotes; i++) {
        size_t a = gpufl__pb_begin(p->out, TE_DEBUG_ANNOTATIONS);
        gpufl__pb_varint(p->out, DA_NAME_IID, notes[i].a + 1);
        gpufl__pb_varint(p->out, notes[i].a == A_SEQ ? DA_UINT_VALUE : DA_STRING_VALUE_IID, notes[i].v);
        gpufl__pb_end(p->out, a);
    }
    if ((s->range && s->range->unended) || (s->window && s->window->unended)) {
        /* never ended: the slice runs to the session's last recorded time
         * (a trace window: to the session's end) */
        size_t a = gpufl__pb_begin(p->out, TE_DEBUG_ANNOTATIONS);
        gpufl__pb_varint(p->out, DA_NAME_IID, A_UNENDED + 1);
        gpufl__pb_varint(p->out, DA_BOOL_VALUE, 1);
        gpufl__pb_end(p->out, a);
    }
    gpufl__pb_end(p->out, te);
    return packet_end(p, m);
}

static int on_end(void *ctx, const gpufl__tl_track *t, const gpufl__tl_slice *s)
{
    pf *p = ctx;
    size_t m = event_begin(p, gpufl__export_time(p->proc, s->end));
    size_t te = gpufl__pb_begin(p->out, PKT_TRACK_EVENT);
    gpufl__pb_varint(p->out, TE_TYPE, TYPE_SLICE_END);
    gpufl__pb_varint(p->out, TE_TRACK_UUID, uuid_of(p, t->id));
    gpufl__pb_end(p->out, te);
    return packet_end(p, m);
}

static int on_counter(void *ctx, const gpufl__tl_track *t, uint64_t ts, double v)
{
    pf *p = ctx;
    size_t m = event_begin(p, gpufl__export_time(p->proc, ts));
    size_t te = gpufl__pb_begin(p->out, PKT_TRACK_EVENT);
    gpufl__pb_varint(p->out, TE_TYPE, TYPE_COUNTER);
    gpufl__pb_varint(p->out, TE_TRACK_UUID, uuid_of(p, t->id));
    if (v == (double)(int64_t)v && v > -9e15 && v < 9e15)
        gpufl__pb_int64(p->out, TE_COUNTER_VALUE, (int64_t)v);
    else
        gpufl__pb_double(p->out, TE_DOUBLE_COUNTER_VALUE, v);
    gpufl__pb_end(p->out, te);
    return packet_end(p, m);
}

/* Writes x into o as process proc: its sequence's header, then its
 * timeline. The tables of iids are the sequence's own, freed here. */
static int write_session(void *ctx, gpufl__xout *o, const gpufl__rows *x, gpufl__export_proc *proc,
                         gpufl__export_result *r)
{
    (void)ctx;
    pf p;
    memset(&p, 0, sizeof p);
    p.x = x;
    p.out = o;
    p.proc = proc;
    p.next_iid = 1;
    p.next_value_iid = 1;
    p.fixed_iid = calloc(gpufl__xname_fixed_count(), sizeof *p.fixed_iid);
    p.launch_iid = calloc(gpufl__rows_launch_count(x), sizeof *p.launch_iid);
    int rc = GPUFL_ENOMEM;
    if (p.fixed_iid && p.launch_iid) {
        header(&p);
        gpufl__tl_sink sink = {&p, on_track, on_begin, on_end, on_counter};
        gpufl__tl_stats stats;
        rc = gpufl__timeline_run(x, &sink, &stats);
        gpufl__tl_stats_add(&r->timeline, &stats);
    }
    free(p.fixed_iid);
    free(p.launch_iid);
    free(p.string_iid[0]);
    free(p.string_iid[1]);
    for (unsigned v = 0; v < V_COUNT; v++)
        free(p.value_iid[v]);
    r->packets += p.packets;
    r->clamped += proc->clamped;
    return rc;
}

int gpufl__export_perfetto(const gpufl_trace *t, const char *path, gpufl__export_result *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    gpufl__rows x;
    gpufl__rows_open(&x, t);
    gpufl__export_proc proc;
    gpufl__export_proc_single(&proc, &x);
    gpufl__xout out;
    if (gpufl__xout_open(&out, path, err, err_len) != 0)
        return GPUFL_EIO;
    int rc = write_session(NULL, &out, &x, &proc, r);
    return gpufl__xout_finish(&out, rc, &r->bytes, err, err_len);
}

int gpufl__export_perfetto_job(const gpufl__export_rank *ranks, size_t n, const char *path, gpufl__export_result *r,
                               char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    gpufl__xout out;
    if (gpufl__xout_open(&out, path, err, err_len) != 0)
        return GPUFL_EIO;
    int rc = gpufl__export_ranks(&out, ranks, n, write_session, NULL, r, err, err_len);
    if (rc != 0) {
        gpufl__xout_abort(&out);
        return rc;
    }
    return gpufl__xout_finish(&out, 0, &r->bytes, err, err_len);
}
