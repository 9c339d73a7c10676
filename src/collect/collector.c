/*
 * The collector thread (see collector.h).
 */
#include "collect/collector.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/crash.h"
#include "collect/session_json.h"
#include "collect/stats.h"
#include "core/clock.h"
#include "core/clock_pair.h"
#include "core/log.h"
#include "core/os.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"

#define BATCH_PER_PRODUCER 4096
#define TICK_NS 100000000ull        /* write buffers out every 100 ms */
#define CHECKPOINT_NS 2000000000ull /* rewrite session.json every 2 s */
#define MIN_SLEEP_NS 1000000ull
#define MAX_SLEEP_NS 10000000ull
#define FINAL_PASSES 64

struct gpufl__collector {
    gpufl__collector_config cfg;
    pthread_t thread;
    pthread_mutex_t lock; /* guards stats, stop and the sinks' status */
    pthread_cond_t wake;
    bool stop;
    gpufl__stats stats;
    uint64_t last_tick_ns, last_checkpoint_ns;
    uint64_t checkpoint_failures;
    gfl_event clock_start; /* type 0: none */
    uint64_t last_clock_ns;
    uint64_t last_publish_ns;
};

/* ---- one event ---------------------------------------------------------- */

static void deliver(gpufl__collector *c, const gfl_event *ev, uint64_t now)
{
    gpufl__stats_add(&c->stats, ev);
    if (c->cfg.metrics)
        gpufl__metrics_agg_add(c->cfg.metrics, ev);
    for (size_t i = 0; i < c->cfg.nsinks; i++)
        (void)c->cfg.sinks[i].event(c->cfg.sinks[i].self, ev, now);
    if (c->cfg.triggers)
        gpufl__triggers_check(c->cfg.triggers, ev);
}

/* A trigger's own event, delivered as it fires. */
static void emit_trigger(void *ctx, const gfl_event *ev)
{
    gpufl__collector *c = ctx;
    deliver(c, ev, gpufl__now_ns());
}

static size_t drain_pass(gpufl__collector *c);

/* Fires the triggers waiting. A pass that began before a request came may
 * have passed a ring before the requester's last events reached it (the
 * CUPTI plugin pushes what it flushed, then asks): one more whole pass,
 * begun after the request was seen, takes everything pushed before it. */
static void poll_triggers(gpufl__collector *c)
{
    if (!c->cfg.triggers || !gpufl__triggers_pending(c->cfg.triggers))
        return;
    (void)drain_pass(c);
    gpufl__triggers_poll(c->cfg.triggers, gpufl__now_ns(), emit_trigger, c);
}

static void process(gpufl__collector *c, const gfl_event *ev, uint64_t now)
{
    if (ev->h.type == GFL_EV_NONE || ev->h.type >= GFL_EV_TYPE_COUNT) {
        gpufl__stats_drop(&c->stats, GFL_DROP_BAD_EVENT, GFL_CHANNEL_DEVICE, 1);
        return;
    }
    /* Left in a ring by a thread that raced the previous session's end. */
    if (ev->h.ts < c->cfg.info->start_ns) {
        gpufl__stats_drop(&c->stats, GFL_DROP_STALE, gpufl__event_channel(ev->h.type), 1);
        return;
    }
    deliver(c, ev, now);
}

/* ---- losses ------------------------------------------------------------- */

static void report_losses(gpufl__collector *c, gpufl__producer *p, uint64_t now)
{
    for (unsigned r = 0; r < GFL_DROP_REASON_COUNT; r++)
        for (unsigned ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
            uint64_t total = gpufl__producer_lost(p, r, ch);
            if (total == p->reported[r][ch])
                continue;
            gfl_event ev;
            memset(&ev, 0, sizeof ev);
            ev.h.type = GFL_EV_DROPPED;
            ev.h.tid = gpufl__producer_tid(p);
            ev.h.ts = now;
            ev.u.dropped.count = total - p->reported[r][ch];
            ev.u.dropped.total = total - p->base[r][ch];
            ev.u.dropped.reason = (uint8_t)r;
            ev.u.dropped.channel = (uint8_t)ch;
            p->reported[r][ch] = total;
            gpufl__stats_drop(&c->stats, r, ch, ev.u.dropped.count);
            deliver(c, &ev, now);
        }
}

/* Losses from before this session are not this session's: start counting
 * from what every existing producer has lost so far. */
static void baseline_producers(gpufl__collector *c)
{
    for (gpufl__producer *p = gpufl__producer_first(); p; p = p->next) {
        for (unsigned r = 0; r < GFL_DROP_REASON_COUNT; r++)
            for (unsigned ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
                p->reported[r][ch] = p->base[r][ch] = gpufl__producer_lost(p, r, ch);
        p->collector_gen = c->cfg.session_gen;
    }
}

/* ---- the loop ----------------------------------------------------------- */

/* Drains every ring once (up to a batch each). Returns the events handled. */
static size_t drain_pass(gpufl__collector *c)
{
    size_t total = 0;
    uint64_t now = gpufl__now_ns();
    for (gpufl__producer *p = gpufl__producer_first(); p; p = p->next) {
        if (p->collector_gen != c->cfg.session_gen) {
            /* created during this session: everything it lost counts */
            memset(p->reported, 0, sizeof p->reported);
            memset(p->base, 0, sizeof p->base);
            p->collector_gen = c->cfg.session_gen;
        }
        /* acquire: an orphan's every push and loss count is visible */
        bool orphan = atomic_load_explicit(&p->state, memory_order_acquire) == GFL_PRODUCER_ORPHANED;
        uint32_t tid = 0;
        size_t n = 0;
        const void *rec;
        gfl_event ev;
        while (n < BATCH_PER_PRODUCER && (rec = gpufl__ring_read(&p->ring)) != NULL) {
            /* read after the first record's head: an adopting thread wrote
             * its id before its first record */
            if (n == 0)
                tid = gpufl__producer_tid(p);
            gpufl__record_expand(rec, p->index, tid, &ev);
            process(c, &ev, now);
            n++;
        }
        gpufl__ring_release(&p->ring);
        total += n;
        report_losses(c, p, now);
        /* Drained and its losses reported under its own thread id: only now
         * may another thread take it over. */
        if (orphan && gpufl__ring_empty(&p->ring))
            gpufl__producer_release_orphan(p);
    }
    return total;
}

static void sinks_status(gpufl__collector *c, gpufl__sink_status *out)
{
    memset(out, 0, sizeof *out);
    bool have_whole = false; /* out->lost is a copy that holds every channel */
    for (size_t i = 0; i < c->cfg.nsinks; i++) {
        gpufl__sink_status st;
        c->cfg.sinks[i].status(c->cfg.sinks[i].self, &st);
        out->bytes_written += st.bytes_written;
        for (unsigned f = 0; f < st.nfiles && out->nfiles < GFL_SINK_MAX_FILES; f++)
            out->files[out->nfiles++] = st.files[f];
        /* every whole sink holds every event (log_format both: two copies),
         * and readers read the copy that lost least (read/source_choice.c),
         * so that copy's losses are the session's. A copy without some
         * channels by design (compact's NDJSON logs) is read only when no
         * whole one can be, so it counts only when it is all there is. */
        bool whole = st.missing == 0;
        uint64_t total = 0, best = 0;
        for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
            total += st.lost[ch];
            best += out->lost[ch];
        }
        if (i == 0 || (whole && !have_whole) || (whole == have_whole && total < best))
            memcpy(out->lost, st.lost, sizeof out->lost);
        have_whole |= whole;
        if (!out->stop_reason && st.stop_reason) {
            out->stop_reason = st.stop_reason;
            out->stop_detail = st.stop_detail;
        }
    }
}

/* Under c->lock. */
static int build_summary(gpufl__collector *c, gpufl__summary *out, uint64_t end_ns, bool ended)
{
    gpufl__sink_status st;
    sinks_status(c, &st);
    return gpufl__summary_build(out, &c->stats, c->cfg.info, &st, end_ns, ended);
}

/* The figures to the metrics endpoint. Under c->lock, or after the
 * collector thread has ended. */
static void publish(gpufl__collector *c, const gpufl__sink_status *st, uint64_t now)
{
    gpufl__metrics_view v = {.stats = &c->stats, .agg = c->cfg.metrics, .sinks = st, .now_ns = now};
    c->last_publish_ns = now;
    c->cfg.publish(c->cfg.publish_ctx, &v);
}

/* Under c->lock. */
static void checkpoint(gpufl__collector *c, uint64_t now)
{
    gpufl__summary s;
    c->last_checkpoint_ns = now;
    if (build_summary(c, &s, now, false) != 0)
        return;
    if (gpufl__session_json_write(c->cfg.info, &s, NULL) != 0 && c->checkpoint_failures++ == 0)
        gpufl__log(GFL_LOG_WARN, "cannot update %s/session.json: %s", c->cfg.info->dir, strerror(errno));
    gpufl__summary_free(&s);
}

static void periodic(gpufl__collector *c, size_t handled)
{
    uint64_t now = gpufl__now_ns();
    gpufl__clock_calibrate();
    if ((c->cfg.durable && handled) || now - c->last_tick_ns >= TICK_NS) {
        c->last_tick_ns = now;
        for (size_t i = 0; i < c->cfg.nsinks; i++)
            c->cfg.sinks[i].tick(c->cfg.sinks[i].self, now);
    }
    if (c->cfg.checkpoints && now - c->last_checkpoint_ns >= CHECKPOINT_NS)
        checkpoint(c, now);
    if (c->cfg.publish && now - c->last_publish_ns >= GFL_COLLECTOR_PUBLISH_NS) {
        gpufl__sink_status st;
        sinks_status(c, &st);
        publish(c, &st, now);
    }
    if (c->cfg.clock_period_ns && now - c->last_clock_ns >= c->cfg.clock_period_ns) {
        gfl_event ev;
        gpufl__clock_event("periodic", &ev);
        c->last_clock_ns = ev.h.ts;
        deliver(c, &ev, now);
    }
}

/* Every sink writes out all it buffers (tick does it for a sink without
 * flush). Under c->lock, or after the collector thread has ended. */
static void flush_sinks(gpufl__collector *c, uint64_t now)
{
    for (size_t i = 0; i < c->cfg.nsinks; i++) {
        const gpufl__sink *k = &c->cfg.sinks[i];
        if (k->flush)
            k->flush(k->self, now);
        else
            k->tick(k->self, now);
    }
}

/*
 * A crash a signal handler published (collect/crash.h), written while its
 * thread waits: first everything recorded before it, then the crash and
 * the scopes open at that moment, all flushed and session.json marked;
 * only then the stack, whose frames are named with the dynamic loader's
 * lock (which the crashed thread may hold: then the rest is already on
 * disk when the handler stops waiting). Under c->lock.
 */
static void crash_pass(gpufl__collector *c)
{
    const gpufl__crash_record *r = gpufl__crash_pending();
    if (!r)
        return;
    for (int i = 0; i < FINAL_PASSES && drain_pass(c) > 0; i++)
        ;
    uint64_t now = gpufl__now_ns();
    gfl_event ev;
    gpufl__crash_event(r, &ev);
    deliver(c, &ev, now);
    for (uint32_t i = 0; i < r->info.open_scopes; i++) {
        gpufl__crash_scope_event(r, i, &ev);
        deliver(c, &ev, now);
    }
    flush_sinks(c, now);
    if (c->cfg.checkpoints)
        checkpoint(c, now);
    gpufl__crash_written_head();
    gfl_event stack[GFL_CRASH_STACK_EVENTS];
    unsigned n = gpufl__crash_stack_events(r, stack);
    for (unsigned i = 0; i < n; i++)
        deliver(c, &stack[i], now);
    flush_sinks(c, now);
    if (c->cfg.triggers) {
        /* the flight window, with the crash in it, before the process goes */
        char detail[128];
        snprintf(detail, sizeof detail, "%s (signal %d)", gpufl__signal_name(r->info.signal), r->info.signal);
        gpufl__triggers_crash(c->cfg.triggers, detail, gpufl__now_ns(), emit_trigger, c);
        flush_sinks(c, gpufl__now_ns());
    }
    gpufl__crash_written_done();
}

static void *collector_main(void *arg)
{
    gpufl__collector *c = arg;
    uint64_t sleep_ns = MIN_SLEEP_NS;
    gpufl__crash_mark_writer_thread();
    pthread_mutex_lock(&c->lock);
    if (c->clock_start.h.type == GFL_EV_CLOCK)
        deliver(c, &c->clock_start, gpufl__now_ns());
    while (!c->stop) {
        crash_pass(c);
        size_t handled = drain_pass(c);
        poll_triggers(c);
        periodic(c, handled);
        if (handled >= BATCH_PER_PRODUCER)
            continue; /* more is waiting: no sleep */
        sleep_ns = handled ? MIN_SLEEP_NS : (sleep_ns * 2 > MAX_SLEEP_NS ? MAX_SLEEP_NS : sleep_ns * 2);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)sleep_ns;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        /* the lock is released while sleeping, so snapshots get in */
        (void)pthread_cond_timedwait(&c->wake, &c->lock, &until);
    }
    /* Final drain: producers have stopped, but a thread that passed the
     * "recording?" check just before shutdown may still add a few events. */
    for (int i = 0; i < FINAL_PASSES && drain_pass(c) > 0; i++)
        ;
    poll_triggers(c); /* a dump asked for just before the end */
    crash_pass(c);    /* one that came as the session ended */
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int gpufl__collector_start(gpufl__collector **out, const gpufl__collector_config *cfg, char *err, size_t err_len)
{
    gpufl__collector *c = calloc(1, sizeof *c);
    int rc = GPUFL_ENOMEM;
    if (!c) {
        snprintf(err, err_len, "out of memory starting the collector");
        goto fail;
    }
    c->cfg = *cfg;
    gpufl__stats_init(&c->stats);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&c->lock, NULL);
    /* last_publish_ns stays 0: the metrics endpoint gets figures at the first pass */
    c->last_tick_ns = c->last_checkpoint_ns = c->last_clock_ns = gpufl__now_ns();
    if (cfg->clock_start) {
        c->clock_start = *cfg->clock_start;
        c->last_clock_ns = cfg->clock_start->h.ts;
    }
    baseline_producers(c);

    int perr = gpufl__thread_start(&c->thread, collector_main, c, "gpufl-collect");
    if (perr != 0) {
        snprintf(err, err_len, "cannot start the collector thread: %s", strerror(perr));
        rc = GPUFL_ENOMEM;
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->wake);
        goto fail;
    }
    *out = c;
    return 0;
fail:
    for (size_t i = 0; i < cfg->nsinks; i++) {
        gpufl__session_end end = {.end_ns = gpufl__now_ns(), .end_wall_ns = gpufl__wall_ns()};
        cfg->sinks[i].close(cfg->sinks[i].self, &end);
    }
    if (c)
        gpufl__stats_free(&c->stats);
    free(c);
    return rc;
}

void gpufl__collector_stop(gpufl__collector *c, const gpufl__session_end *end, gpufl__summary *final)
{
    pthread_mutex_lock(&c->lock);
    c->stop = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);

    if (end->clock) /* the thread has ended: this one delivers now */
        deliver(c, end->clock, end->end_ns);
    /* Write the buffers out first, so the summary counts every byte. */
    flush_sinks(c, end->end_ns);
    gpufl__sink_status st;
    sinks_status(c, &st);
    gpufl__summary s;
    bool have = gpufl__summary_build(&s, &c->stats, c->cfg.info, &st, end->end_ns, true) == 0;
    if (c->cfg.publish) /* the figures the final session.json holds */
        publish(c, &st, end->end_ns);
    /* The final loss counts go into every file's closing records, so that
     * readers show what session.json shows even when the "dropped" events
     * of the end could no longer be written. */
    uint64_t dropped[GFL_CHANNEL_COUNT][GFL_DROP_REASON_COUNT];
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        for (int r = 0; r < GFL_DROP_REASON_COUNT; r++)
            dropped[ch][r] = c->stats.dropped[r][ch];
    gpufl__session_end closing = *end;
    closing.dropped = (const uint64_t(*)[GFL_DROP_REASON_COUNT])dropped;
    for (size_t i = 0; i < c->cfg.nsinks; i++)
        c->cfg.sinks[i].close(c->cfg.sinks[i].self, &closing);
    if (have) {
        if (gpufl__session_json_write(c->cfg.info, &s, end) != 0)
            gpufl__log(GFL_LOG_WARN, "cannot write %s/session.json: %s", c->cfg.info->dir, strerror(errno));
        if (final)
            *final = s;
        else
            gpufl__summary_free(&s);
    } else if (final) {
        memset(final, 0, sizeof *final);
    }
    gpufl__stats_free(&c->stats);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    free(c);
}

void gpufl__collector_flush(gpufl__collector *c)
{
    /* Holding the lock makes this thread the only drainer (the collector
     * thread drains only under it), as in the final drain. */
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < FINAL_PASSES && drain_pass(c) > 0; i++)
        ;
    uint64_t now = gpufl__now_ns();
    c->last_tick_ns = now;
    flush_sinks(c, now);
    pthread_mutex_unlock(&c->lock);
}

void gpufl__collector_checkpoint(gpufl__collector *c)
{
    pthread_mutex_lock(&c->lock); /* the only drainer meanwhile, as in flush */
    for (int i = 0; i < FINAL_PASSES && drain_pass(c) > 0; i++)
        ;
    if (c->cfg.checkpoints)
        checkpoint(c, gpufl__now_ns());
    pthread_mutex_unlock(&c->lock);
}

int gpufl__collector_snapshot(gpufl__collector *c, gpufl__summary *out)
{
    pthread_mutex_lock(&c->lock);
    int rc = build_summary(c, out, gpufl__now_ns(), false);
    pthread_mutex_unlock(&c->lock);
    return rc;
}
