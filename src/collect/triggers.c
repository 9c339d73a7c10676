/*
 * Triggers (see triggers.h).
 */
#include "collect/triggers.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dump_rules.h"
#include "core/intern.h"
#include "core/log.h"
#include "gpufl/gpufl.h"

#define SLOTS 8
#define KIND_MAX 32
#define DETAIL_MAX 256
#define MAX_DEVICES 64
#define HITS_MAX 16

enum { SLOT_FREE = 0, SLOT_WRITING = 1, SLOT_READY = 2 };

typedef struct slot {
    atomic_int state;
    char kind[KIND_MAX];
    char detail[DETAIL_MAX];
    uint64_t token;
} slot;

typedef struct hit {
    char kind[KIND_MAX];
    char detail[DETAIL_MAX];
} hit;

struct gpufl__triggers {
    gpufl__trigger_hooks hooks;
    bool has_window, dump_on_crash, dump_on_oom, trace_on_trigger;
    uint64_t min_interval_ns;
    uint32_t signal_number;
    gpufl__dump_rules rules;
    uint32_t scope_name[GFL_DUMP_RULES_MAX]; /* slow_scope rules: the name's id */
    /* threshold rules fire on the way up and re-arm on the way down, per
     * device, so a GPU that stays hot is one trigger, not one a sample */
    uint8_t above[GFL_DUMP_RULES_MAX][MAX_DEVICES];

    slot slots[SLOTS];
    atomic_uint signals;   /* dump signals received, not yet fired */
    atomic_ullong refused; /* requests that found every slot taken */

    hit hits[HITS_MAX]; /* rule hits waiting for the next poll (collector thread) */
    size_t nhits;
    uint64_t hits_lost;

    uint64_t last_dump_ns; /* 0: none yet */
    uint32_t dumps;        /* numbers the dumps' names */
    uint64_t fired;
};

int gpufl__triggers_create(gpufl__triggers **out, const gpufl_options *o, bool has_window,
                           const gpufl__trigger_hooks *hooks, char *err, size_t err_len)
{
    gpufl__triggers *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, err_len, "out of memory setting up the triggers");
        return GPUFL_ENOMEM;
    }
    char why[256] = "";
    if (gpufl__dump_rules_parse(o->dump_rules, &t->rules, why, sizeof why) != 0) {
        snprintf(err, err_len, "option dump_rules: %s", why);
        free(t);
        return GPUFL_ECONFIG;
    }
    t->hooks = *hooks;
    t->has_window = has_window;
    t->dump_on_crash = o->dump_on_crash;
    t->dump_on_oom = o->dump_on_oom;
    t->trace_on_trigger = o->trace_on_trigger && hooks->trace;
    t->min_interval_ns = (uint64_t)o->dump_min_interval_s * 1000000000ull;
    int sig = gpufl__signal_parse(o->dump_signal);
    t->signal_number = sig > 0 ? (uint32_t)sig : 0;
    for (size_t i = 0; i < t->rules.n; i++)
        if (t->rules.rule[i].kind == GFL_RULE_SLOW_SCOPE)
            t->scope_name[i] = gpufl__intern(t->rules.rule[i].name);
    *out = t;
    return 0;
}

void gpufl__triggers_free(gpufl__triggers *t) { free(t); }

uint64_t gpufl__triggers_fired(const gpufl__triggers *t) { return t->fired; }

/* ---- requests ----------------------------------------------------------- */

static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strnlen(src, cap - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

int gpufl__triggers_request(gpufl__triggers *t, const char *kind, const char *detail, uint64_t token)
{
    for (size_t i = 0; i < SLOTS; i++) {
        int expect = SLOT_FREE;
        if (!atomic_compare_exchange_strong_explicit(&t->slots[i].state, &expect, SLOT_WRITING, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        slot *s = &t->slots[i];
        copy_text(s->kind, sizeof s->kind, kind);
        copy_text(s->detail, sizeof s->detail, detail);
        s->token = token;
        atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
        return 0;
    }
    atomic_fetch_add_explicit(&t->refused, 1, memory_order_relaxed);
    return -1;
}

void gpufl__triggers_signal(gpufl__triggers *t) { atomic_fetch_add_explicit(&t->signals, 1, memory_order_relaxed); }

/* ---- rules -------------------------------------------------------------- */

static void queue_hit(gpufl__triggers *t, const char *kind, const char *detail)
{
    if (t->nhits == HITS_MAX) {
        t->hits_lost++;
        return;
    }
    copy_text(t->hits[t->nhits].kind, KIND_MAX, kind);
    copy_text(t->hits[t->nhits].detail, DETAIL_MAX, detail);
    t->nhits++;
}

static void check_scope(gpufl__triggers *t, const gfl_event *ev)
{
    uint64_t ms = (ev->h.ts - ev->u.scope.begin_ts) / 1000000ull;
    for (size_t i = 0; i < t->rules.n; i++) {
        const gpufl__dump_rule *r = &t->rules.rule[i];
        if (r->kind != GFL_RULE_SLOW_SCOPE || t->scope_name[i] != ev->u.scope.name || ms <= r->limit)
            continue;
        char detail[DETAIL_MAX];
        snprintf(detail, sizeof detail, "scope `%s` took %llu ms, over %llu ms (thread %u)", r->name,
                 (unsigned long long)ms, (unsigned long long)r->limit, ev->h.tid);
        queue_hit(t, "slow_scope", detail);
    }
}

/* The value a threshold rule compares, and whether the sample has it. */
static bool metric_of(const gpufl__dump_rule *r, const gfl_device_metrics_payload *d, uint64_t *v)
{
    switch (r->kind) {
    case GFL_RULE_DEVICE_MEMORY:
        if (!(d->valid & GFL_DEV_MEM) || d->mem_total_bytes == 0)
            return false;
        *v = d->mem_used_bytes * 100 / d->mem_total_bytes;
        return true;
    case GFL_RULE_TEMPERATURE:
        if (!(d->valid & GFL_DEV_TEMP) || d->temp_c < 0)
            return false;
        *v = (uint64_t)d->temp_c;
        return true;
    case GFL_RULE_POWER:
        if (!(d->valid & GFL_DEV_POWER))
            return false;
        *v = d->power_mw / 1000;
        return true;
    default: return false;
    }
}

static void check_device(gpufl__triggers *t, const gfl_event *ev)
{
    unsigned dev = ev->h.device < MAX_DEVICES ? ev->h.device : MAX_DEVICES - 1;
    static const char *const kinds[] = {
        [GFL_RULE_DEVICE_MEMORY] = "device_memory", [GFL_RULE_TEMPERATURE] = "temperature", [GFL_RULE_POWER] = "power"};
    static const char *const units[] = {
        [GFL_RULE_DEVICE_MEMORY] = "% of its memory in use", [GFL_RULE_TEMPERATURE] = " C", [GFL_RULE_POWER] = " W"};
    for (size_t i = 0; i < t->rules.n; i++) {
        const gpufl__dump_rule *r = &t->rules.rule[i];
        uint64_t v;
        if (r->kind == GFL_RULE_SLOW_SCOPE || !metric_of(r, &ev->u.dev, &v))
            continue;
        if (v <= r->limit) {
            t->above[i][dev] = 0; /* re-armed */
            continue;
        }
        if (t->above[i][dev])
            continue;
        t->above[i][dev] = 1;
        char detail[DETAIL_MAX];
        snprintf(detail, sizeof detail, "GPU %u at %llu%s, over %llu (%s=%llu)", ev->h.device, (unsigned long long)v,
                 units[r->kind], (unsigned long long)r->limit, gpufl__dump_rule_key(r->kind),
                 (unsigned long long)r->limit);
        queue_hit(t, kinds[r->kind], detail);
    }
}

void gpufl__triggers_check(gpufl__triggers *t, const gfl_event *ev)
{
    if (t->rules.n == 0)
        return;
    if (ev->h.type == GFL_EV_SCOPE_END)
        check_scope(t, ev);
    else if (ev->h.type == GFL_EV_DEVICE_METRICS)
        check_device(t, ev);
}

/* ---- firing ------------------------------------------------------------- */

/* Records one trigger and dumps or refuses it. storm_applies: false for a
 * crash, after which there is no later dump to wait for. */
static void fire(gpufl__triggers *t, const char *kind, const char *detail, uint64_t token, uint64_t now_ns,
                 bool wants_dump, bool storm_applies, bool wait, gpufl__trigger_emit_fn emit, void *ctx)
{
    t->fired++;
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_TRIGGER;
    ev.h.ts = now_ns;
    ev.u.trigger.kind = gpufl__intern(kind);
    char name[64] = "";
    if (!t->has_window || !wants_dump) {
        ev.u.trigger.outcome = GFL_TRIGGER_NO_WINDOW;
    } else if (storm_applies && t->last_dump_ns && now_ns - t->last_dump_ns < t->min_interval_ns) {
        ev.u.trigger.outcome = GFL_TRIGGER_STORM;
    } else {
        ev.u.trigger.outcome = GFL_TRIGGER_DUMPED;
        t->last_dump_ns = now_ns;
        snprintf(name, sizeof name, "%04u-%s", ++t->dumps, kind);
        ev.u.trigger.dump = gpufl__intern(name);
    }
    /* a storm's details would fill the string table with one-off texts */
    if (detail && detail[0] && ev.u.trigger.outcome != GFL_TRIGGER_STORM)
        ev.u.trigger.detail = gpufl__intern(detail);
    emit(ctx, &ev);
    if (ev.u.trigger.outcome == GFL_TRIGGER_DUMPED)
        t->hooks.write_dump(t->hooks.ctx, &ev, name, token, wait);
    else if (token)
        t->hooks.refused(t->hooks.ctx, token, (gfl_trigger_outcome)ev.u.trigger.outcome);
    if (t->trace_on_trigger)
        t->hooks.trace(t->hooks.ctx);
}

static bool wants_dump(const gpufl__triggers *t, const char *kind)
{
    return strcmp(kind, "oom") != 0 || t->dump_on_oom;
}

bool gpufl__triggers_pending(gpufl__triggers *t)
{
    if (t->nhits || atomic_load_explicit(&t->signals, memory_order_relaxed))
        return true;
    for (size_t i = 0; i < SLOTS; i++)
        if (atomic_load_explicit(&t->slots[i].state, memory_order_acquire) == SLOT_READY)
            return true;
    return false;
}

void gpufl__triggers_poll(gpufl__triggers *t, uint64_t now_ns, gpufl__trigger_emit_fn emit, void *ctx)
{
    unsigned signals = atomic_exchange_explicit(&t->signals, 0, memory_order_relaxed);
    if (signals) {
        char detail[DETAIL_MAX];
        snprintf(detail, sizeof detail, "signal %u received%s", t->signal_number,
                 signals > 1 ? " (several times)" : "");
        fire(t, "signal", detail, 0, now_ns, true, true, false, emit, ctx);
    }
    for (size_t i = 0; i < SLOTS; i++) {
        slot *s = &t->slots[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_READY)
            continue;
        char kind[KIND_MAX], detail[DETAIL_MAX];
        memcpy(kind, s->kind, sizeof kind);
        memcpy(detail, s->detail, sizeof detail);
        uint64_t token = s->token;
        atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
        fire(t, kind, detail, token, now_ns, wants_dump(t, kind), true, false, emit, ctx);
    }
    for (size_t i = 0; i < t->nhits; i++)
        fire(t, t->hits[i].kind, t->hits[i].detail, 0, now_ns, true, true, false, emit, ctx);
    t->nhits = 0;
    uint64_t refused = atomic_exchange_explicit(&t->refused, 0, memory_order_relaxed) + t->hits_lost;
    t->hits_lost = 0;
    if (refused)
        gpufl__log(GFL_LOG_WARN, "%llu triggers came faster than they could be recorded; only the others are",
                   (unsigned long long)refused);
}

void gpufl__triggers_crash(gpufl__triggers *t, const char *detail, uint64_t now_ns, gpufl__trigger_emit_fn emit,
                           void *ctx)
{
    fire(t, "crash", detail, 0, now_ns, t->dump_on_crash, false, true, emit, ctx);
}
