/*
 * NDJSON line -> gfl_event (see ndjson_parse.h).
 *
 * Table-driven: every known key has a number (one hash lookup per field),
 * and every line type has a table saying, per key, where the value goes in
 * the event and how to read it. The tables are expanded from the one the
 * writer is expanded from, format/ndjson_fields.h, so they cannot drift.
 */
#include "read/ndjson_parse.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "core/uint_field.h"
#include "format/ndjson_fields.h"
#include "gpufl/gpufl.h"
#include "read/json_scan.h"

/* ---- names: keys and types ---------------------------------------------- */

#define KEY_ENUM(k) K_##k,
enum { K_NONE = 0, GFL_NDJSON_KEYS(KEY_ENUM) K_COUNT };
#define KEY_NAME(k) #k,
static const char *const key_names[K_COUNT] = {"", GFL_NDJSON_KEYS(KEY_NAME)};

/* Line types beyond the event types: T_session_start, ... */
#define SESSION_TYPE(name, fields) T_##name,
enum { T_FIRST_SESSION = GFL_EV_TYPE_COUNT - 1, GFL_NDJSON_SESSION_LINES(SESSION_TYPE) T_COUNT };

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
    V_STALLS, /* a PC sample's {"<reason>": samples, ...} */
    V_SKIP,   /* known, derived from other fields: ignored */
    V_DROPS,  /* {"<drop reason>": count, ...} into a meta line's dropped[] */
    /* the table's derived kinds: written, not read */
    V_DUR_UNTIL = V_SKIP,
    V_DUR_SINCE = V_SKIP,
    V_THROTTLE = V_SKIP,
    V_SIGNAL_NAME = V_SKIP,
    V_CODE_NAME = V_SKIP,
} vkind;

typedef struct slot {
    uint8_t key;
    uint8_t kind; /* vkind */
    uint16_t off;
    uint8_t size;
    uint8_t required;
    uint32_t arg; /* V_FLAG bits, V_ENUM table, or a validity bit */
} slot;

/* The name tables of ENUM rows, named as the table's arg. */
enum {
    EN_copy_kind,
    EN_mem_kind,
    EN_sync_kind,
    EN_limiter,
    EN_drop_reason,
    EN_channel,
    EN_log_level,
    EN_crash_action,
    EN_trigger_outcome
};

/* What the reader keeps of a row's arg, by kind: the validity bit of a
 * number, the bit of a flag, the name table of an enum. A kind added to
 * the table without a line here does not compile. */
#define ARG_U(a) (a)
#define ARG_I(a) (a)
#define ARG_FIX2(a) (a)
#define ARG_FIX4(a) (a)
#define ARG_FLAG(a) (a)
#define ARG_ENUM(a) EN_##a
#define ARG_STR(a) 0
#define ARG_BOOL(a) 0
#define ARG_HEX(a) 0
#define ARG_DIMS(a) 0
#define ARG_CC(a) 0
#define ARG_CUDA(a) 0
#define ARG_FRAMES(a) 0
#define ARG_STALLS(a) 0
#define ARG_DROPS(a) 0
#define ARG_DUR_UNTIL(a) 0
#define ARG_DUR_SINCE(a) 0
#define ARG_THROTTLE(a) 0
#define ARG_SIGNAL_NAME(a) 0
#define ARG_CODE_NAME(a) 0

/* 1 for a REQ row, 0 for any other `when`: only REQ_PROBE_REQ expands to
 * two arguments, which moves the 1 into SECOND's place. */
#define REQ_PROBE_REQ ~, 1
#define SECOND(a, b, ...) b
#define IS_REQ_(...) SECOND(__VA_ARGS__, 0, ~)
#define IS_REQ(when) IS_REQ_(REQ_PROBE_##when)

// clang-format off
#define END_SLOTS {0, 0, 0, 0, 0, 0}
// clang-format on
#define OFF(m) offsetof(gfl_event, m)
#define SZ(m) sizeof(((gfl_event *)0)->m)
#define SLOT(key, m, kind, arg, when) {K_##key, V_##kind, OFF(m), SZ(m), IS_REQ(when), ARG_##kind(arg)},
/* session lines fill a gpufl__meta_line instead of an event */
#define MOFF(m) offsetof(gpufl__meta_line, m)
#define MSZ(m) sizeof(((gpufl__meta_line *)0)->m)
#define MSLOT(key, m, kind, arg, when) {K_##key, V_##kind, MOFF(m), MSZ(m), IS_REQ(when), ARG_##kind(arg)},

/* one slot array per line type, in the table's order */
#define EVENT_SLOTS(type, fields, valid) static const slot slots_##type[] = {fields(SLOT) END_SLOTS};
GFL_NDJSON_EVENT_LINES(EVENT_SLOTS)
#define SESSION_SLOTS(name, fields) static const slot slots_##name[] = {fields(MSLOT) END_SLOTS};
GFL_NDJSON_SESSION_LINES(SESSION_SLOTS)

typedef struct line_type {
    const slot *slots;
    uint16_t valid_off; /* where validity bits go; 0 = none */
} line_type;

#define VALID_OFF_none 0
#define VALID_OFF_host OFF(u.host.valid)
#define VALID_OFF_dev OFF(u.dev.valid)
#define EVENT_LINE(type, fields, valid) [type] = {slots_##type, VALID_OFF_##valid},
#define SESSION_LINE(name, fields) [T_##name] = {slots_##name, 0},
static const line_type line_types[T_COUNT] = {GFL_NDJSON_EVENT_LINES(EVENT_LINE)
                                                  GFL_NDJSON_SESSION_LINES(SESSION_LINE)};

/* slot_of[type][key]: index + 1 into the type's slots, 0 = not a field of it */
static uint8_t slot_of[T_COUNT][K_COUNT];

static void build_tables(void)
{
    for (uint8_t k = 1; k < K_COUNT; k++)
        name_add(&keys, key_names[k], k);
    for (uint8_t t = 1; t < GFL_EV_TYPE_COUNT; t++)
        name_add(&types, gpufl__event_type_name(t), t);
#define ADD_SESSION_TYPE(name, fields) name_add(&types, #name, T_##name);
    GFL_NDJSON_SESSION_LINES(ADD_SESSION_TYPE)
    for (unsigned t = 0; t < T_COUNT; t++)
        for (unsigned i = 0; line_types[t].slots && line_types[t].slots[i].key; i++)
            slot_of[t][line_types[t].slots[i].key] = (uint8_t)(i + 1);
}

/* ---- values -------------------------------------------------------------- */

static const char *enum_name(unsigned table, unsigned i)
{
    switch (table) {
    case EN_copy_kind: return gpufl__names_key(GPUFL__NAMES_COPY_KIND, i);
    case EN_mem_kind: return gpufl__names_key(GPUFL__NAMES_MEM_KIND, i);
    case EN_sync_kind: return gpufl__names_key(GPUFL__NAMES_SYNC_KIND, i);
    case EN_limiter: return gpufl__names_key(GPUFL__NAMES_LIMITER, i);
    case EN_drop_reason: return gpufl__names_key(GPUFL__NAMES_DROP_REASON, i);
    case EN_channel: return i < GFL_CHANNEL_COUNT ? gpufl__channel_name((uint8_t)i) : NULL;
    case EN_log_level: return i <= GFL_LOG_ERROR ? gpufl__log_level_name((uint8_t)i) : NULL;
    case EN_crash_action: return i < GFL_CRASH_ACTION_COUNT ? gpufl__crash_action_name((uint8_t)i) : NULL;
    case EN_trigger_outcome: return i < GFL_TRIGGER_OUTCOME_COUNT ? gpufl__trigger_outcome_name((uint8_t)i) : NULL;
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
    gpufl__uint_put((uint8_t *)base + sl->off + index * sl->size, sl->size, v);
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

/* A PC sample's stall reasons (keys: CUPTI's names, short) into its pairs
 * and count. */
static int stall_pairs(gpufl__ndjson_parser *p, gfl_event *ev, const gpufl__jfield *f, const char **why)
{
    gpufl__jfield el[GFL_PC_STALLS_PER_EVENT];
    const char *bad;
    size_t at;
    int n =
        f->kind == GFL_J_OBJECT ? gpufl__json_fields(f->val, f->val_len, el, GFL_PC_STALLS_PER_EVENT, &bad, &at) : -1;
    if (n < 0) {
        *why = "is not an object of at most 8 stall counts";
        return GPUFL_ECORRUPT;
    }
    for (int i = 0; i < n; i++) {
        uint64_t v;
        if (el[i].kind != GFL_J_NUMBER || gpufl__json_u64(el[i].val, el[i].val_len, &v) != 0 || v > UINT32_MAX) {
            *why = "holds a stall count that is not an unsigned 32-bit integer";
            return GPUFL_ECORRUPT;
        }
        /* the key as a string value, to unescape it like one */
        gpufl__jfield key = {.val = el[i].key, .val_len = el[i].key_len, .escaped = el[i].key_escaped};
        const char *text;
        size_t len;
        int rc = string_text(p, &key, &text, &len);
        if (rc == 0 && gpufl__strtab_intern(p->names, text, len, &ev->u.pc.stalls[i].reason) != 0)
            rc = GPUFL_ENOMEM;
        if (rc != 0) {
            *why = rc == GPUFL_ENOMEM ? "could not be stored: out of memory" : "has a bad escape";
            return rc;
        }
        ev->u.pc.stalls[i].samples = (uint32_t)v;
    }
    ev->u.pc.count = (uint8_t)n;
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
    case V_STALLS: return stall_pairs(p, base, f, why);
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
    bool has_depth = false, has_seq = false, has_bytes = false, has_peer = false, has_root = false;
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
        has_seq |= key == K_seq;
        has_bytes |= key == K_bytes;
        has_peer |= key == K_peer;
        has_root |= key == K_root;
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
    if (type == GFL_EV_NVTX_RANGE && has_seq)
        ev->h.flags |= GFL_F_NVTX_SEQ;
    if (type == GFL_EV_NCCL_COLL) { /* root and peer share a field; -1 when the line has neither */
        ev->h.flags |= (has_bytes ? GFL_F_NCCL_BYTES : 0) | (has_peer ? GFL_F_NCCL_P2P : 0);
        if (!has_peer && !has_root)
            ev->u.nccl.root = -1;
    }
    switch (type) {
    case T_session_start: return GFL_LINE_SESSION_START;
    case T_session_end: return GFL_LINE_SESSION_END;
    case T_log_stopped: return GFL_LINE_LOG_STOPPED;
    default: return GFL_LINE_EVENT;
    }
}
