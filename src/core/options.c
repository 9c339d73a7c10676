/*
 * Option defaults, text parsing and resolution (see options.h).
 */
#include "core/options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/dump_rules.h"
#include "core/log.h"
#include "core/options_table.h"
#include "core/utf8.h"

#define DESC(field, kind, def, def_doc, env, min, max, doc)                                                            \
    {#field,                                                                                                           \
     GFL_OPT_##kind,                                                                                                   \
     offsetof(gpufl_options, field),                                                                                   \
     sizeof(((gpufl_options *)0)->field),                                                                              \
     env,                                                                                                              \
     def_doc,                                                                                                          \
     min,                                                                                                              \
     max,                                                                                                              \
     doc},
const gpufl__option_desc gpufl__options[] = {GPUFL_OPTION_TABLE(DESC)};
#undef DESC
const size_t gpufl__options_count = sizeof gpufl__options / sizeof gpufl__options[0];

GPUFL_API void gpufl_options_init(gpufl_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
#define SET_DEFAULT(field, kind, def, ...) o->field = def;
    GPUFL_OPTION_TABLE(SET_DEFAULT)
#undef SET_DEFAULT
}

static const char *const backend_names[] = {"auto", "nvidia", "amd", "none"};
static const char *const engine_names[] = {"monitor", "trace", "pc_sampling", "sass_metrics", "range_profiler", "deep"};
/* indexed by gpufl_log_format */
static const char *const log_format_names[] = {"ndjson", "gflt", "both", "none", "compact"};
#define N_LOG_FORMATS (sizeof log_format_names / sizeof log_format_names[0])
#define N_BACKENDS (sizeof backend_names / sizeof backend_names[0])
#define N_ENGINES (sizeof engine_names / sizeof engine_names[0])

const char *gpufl__backend_name(gpufl_backend b) { return (unsigned)b < N_BACKENDS ? backend_names[b] : "invalid"; }

const char *gpufl__engine_name(gpufl_engine e) { return (unsigned)e < N_ENGINES ? engine_names[e] : "invalid"; }

const char *gpufl__log_format_name(gpufl_log_format f)
{
    return (unsigned)f < N_LOG_FORMATS ? log_format_names[f] : "invalid";
}

/* Compares ignoring case, '_' and '-', so "PcSampling" matches "pc_sampling". */
static bool loose_equal(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-')
            a++;
        while (*b == '_' || *b == '-')
            b++;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
        if (!*a)
            return true;
        a++;
        b++;
    }
}

static int name_index(const char *text, const char *const *names, size_t n)
{
    for (size_t i = 0; text && i < n; i++)
        if (loose_equal(text, names[i]))
            return (int)i;
    return -1;
}

int gpufl__engine_parse(const char *text, gpufl_engine *out)
{
    int i = name_index(text, engine_names, N_ENGINES);
    if (i < 0)
        return GPUFL_EINVAL;
    *out = (gpufl_engine)i;
    return 0;
}

int gpufl__backend_parse(const char *text, gpufl_backend *out)
{
    int i = name_index(text, backend_names, N_BACKENDS);
    if (i < 0)
        return GPUFL_EINVAL;
    *out = (gpufl_backend)i;
    return 0;
}

int gpufl__log_format_parse(const char *text, gpufl_log_format *out)
{
    int i = name_index(text, log_format_names, N_LOG_FORMATS);
    if (i < 0)
        return GPUFL_EINVAL;
    *out = (gpufl_log_format)i;
    return 0;
}

int gpufl__bool_parse(const char *text, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; text && i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return GPUFL_EINVAL;
}

int gpufl__bytes_parse(const char *text, unsigned long long *out)
{
    if (!text || !isdigit((unsigned char)*text))
        return GPUFL_EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno)
        return GPUFL_EINVAL;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: return GPUFL_EINVAL;
    }
    if (shift) {
        end++;
        if (*end == 'i' || *end == 'I')
            end++;
        if (*end == 'b' || *end == 'B')
            end++;
        if (*end)
            return GPUFL_EINVAL;
        if (v > (ULLONG_MAX >> shift))
            return GPUFL_EINVAL;
        v <<= shift;
    }
    *out = v;
    return 0;
}

const gpufl__option_desc *gpufl__option_find(const char *name)
{
    for (size_t i = 0; name && i < gpufl__options_count; i++)
        if (strcmp(gpufl__options[i].name, name) == 0)
            return &gpufl__options[i];
    return NULL;
}

bool gpufl__option_is_url(const gpufl__option_desc *d) { return d->offset == offsetof(gpufl_options, backend_url); }

bool gpufl__env_disabled(void)
{
    bool disabled = false;
    const char *v = getenv("GPUFL_DISABLED");
    if (!v || !v[0])
        return false;
    if (gpufl__bool_parse(v, &disabled) == 0)
        return disabled;
    /* Someone meant to say something (GPUFL_DISABLED=2, =maybe) and would
     * otherwise never learn that gpufl records anyway: say so, once per
     * process (several calls read the variable). Relaxed: the flag guards
     * nothing but the message. */
    static atomic_bool warned;
    if (!atomic_exchange_explicit(&warned, true, memory_order_relaxed))
        gpufl__log(GFL_LOG_WARN,
                   "GPUFL_DISABLED='%.64s' is not a value gpufl knows (1/true/yes/on disable it; "
                   "0/false/no/off or empty leave it on): gpufl stays enabled",
                   v);
    return false;
}

static void *field(gpufl_options *o, const gpufl__option_desc *d) { return (char *)o + d->offset; }
static const void *cfield(const gpufl_options *o, const gpufl__option_desc *d) { return (const char *)o + d->offset; }

int gpufl__option_set_string(gpufl__config *c, const gpufl__option_desc *d, const char *value)
{
    char *copy = strdup(value ? value : "");
    if (!copy)
        return GPUFL_ENOMEM;
    const char **slot = field(&c->o, d);
    free((char *)*slot);
    *slot = copy;
    return 0;
}

static unsigned long long int_value(const gpufl_options *o, const gpufl__option_desc *d)
{
    if (d->kind == GFL_OPT_U32) {
        uint32_t v;
        memcpy(&v, cfield(o, d), sizeof v);
        return v;
    }
    uint64_t v;
    memcpy(&v, cfield(o, d), sizeof v);
    return v;
}

/* The string options whose text has a syntax of its own. */
static int check_string(const gpufl_options *o, const gpufl__option_desc *d, char *why, size_t why_len)
{
    if (d->offset == offsetof(gpufl_options, app_name) && !o->app_name[0]) {
        snprintf(why, why_len, "must not be empty");
        return GPUFL_ECONFIG;
    }
    if (d->offset == offsetof(gpufl_options, dump_signal) && gpufl__signal_parse(o->dump_signal) < 0) {
        snprintf(why, why_len, "is `%s`: not SIGUSR1, SIGUSR2, SIGRTMIN+N or none", o->dump_signal);
        return GPUFL_ECONFIG;
    }
    if (d->offset == offsetof(gpufl_options, dump_rules)) {
        gpufl__dump_rules rules;
        return gpufl__dump_rules_parse(o->dump_rules, &rules, why, why_len);
    }
    if (d->offset == offsetof(gpufl_options, trace_step_scope) && !o->trace_step_scope[0]) {
        snprintf(why, why_len, "must not be empty");
        return GPUFL_ECONFIG;
    }
    return 0;
}

int gpufl__option_check(const gpufl__config *c, const gpufl__option_desc *d, char *why, size_t why_len)
{
    switch (d->kind) {
    case GFL_OPT_U32:
    case GFL_OPT_BYTES: {
        unsigned long long v = int_value(&c->o, d);
        if (v < d->min || v > d->max) {
            snprintf(why, why_len, "is %llu, outside %llu..%llu", v, d->min, d->max);
            return GPUFL_ECONFIG;
        }
        /* CUPTI takes the exponent 5..31 (32 cycles and up) */
        if (d->offset == offsetof(gpufl_options, pc_sampling_period) && v && v < 5) {
            snprintf(why, why_len, "is %llu: 0 (CUPTI's choice) or 5..31 (2^N cycles)", v);
            return GPUFL_ECONFIG;
        }
        return 0;
    }
    case GFL_OPT_BACKEND:
        if ((unsigned)c->o.backend >= N_BACKENDS) {
            snprintf(why, why_len, "is %d, not a gpufl_backend value", (int)c->o.backend);
            return GPUFL_ECONFIG;
        }
        return 0;
    case GFL_OPT_ENGINE:
        if ((unsigned)c->o.profiling_engine >= N_ENGINES) {
            snprintf(why, why_len, "is %d, not a gpufl_engine value", (int)c->o.profiling_engine);
            return GPUFL_ECONFIG;
        }
        return 0;
    case GFL_OPT_LOG_FORMAT:
        if ((unsigned)c->o.log_format >= N_LOG_FORMATS) {
            snprintf(why, why_len, "is %d, not a gpufl_log_format value", (int)c->o.log_format);
            return GPUFL_ECONFIG;
        }
        return 0;
    case GFL_OPT_STRING: return check_string(&c->o, d, why, why_len);
    case GFL_OPT_BOOL: return 0;
    }
    return 0;
}

int gpufl__option_parse(gpufl_options *o, const gpufl__option_desc *d, const char *text, char *why, size_t why_len)
{
    switch (d->kind) {
    case GFL_OPT_STRING: break; /* strings are stored, not parsed: the callers own them differently */
    case GFL_OPT_BOOL: {
        bool b;
        if (gpufl__bool_parse(text, &b) != 0) {
            snprintf(why, why_len, "is not a boolean (1/0, true/false, yes/no, on/off)");
            return GPUFL_ECONFIG;
        }
        memcpy(field(o, d), &b, sizeof b);
        return 0;
    }
    case GFL_OPT_U32:
    case GFL_OPT_BYTES: {
        unsigned long long v;
        int rc = d->kind == GFL_OPT_BYTES ? gpufl__bytes_parse(text, &v) : GPUFL_EINVAL;
        if (d->kind == GFL_OPT_U32 && text && isdigit((unsigned char)text[0])) {
            char *end;
            errno = 0;
            v = strtoull(text, &end, 10);
            rc = (errno || *end) ? GPUFL_EINVAL : 0;
        }
        if (rc != 0) {
            snprintf(why, why_len, "is not %s",
                     d->kind == GFL_OPT_BYTES ? "a size (e.g. 1048576, 64MiB, 4GiB)" : "a non-negative integer");
            return GPUFL_ECONFIG;
        }
        if (v < d->min || v > d->max) {
            snprintf(why, why_len, "is %llu, outside %llu..%llu", v, d->min, d->max);
            return GPUFL_ECONFIG;
        }
        if (d->kind == GFL_OPT_U32) {
            uint32_t v32 = (uint32_t)v;
            memcpy(field(o, d), &v32, sizeof v32);
        } else {
            uint64_t v64 = v;
            memcpy(field(o, d), &v64, sizeof v64);
        }
        return 0;
    }
    case GFL_OPT_BACKEND:
        if (gpufl__backend_parse(text, &o->backend) != 0) {
            snprintf(why, why_len, "is not a backend (auto, nvidia, amd, none)");
            return GPUFL_ECONFIG;
        }
        return 0;
    case GFL_OPT_ENGINE:
        if (gpufl__engine_parse(text, &o->profiling_engine) != 0) {
            snprintf(why, why_len,
                     "is not an engine (monitor, trace, pc_sampling, sass_metrics, "
                     "range_profiler, deep)");
            return GPUFL_ECONFIG;
        }
        return 0;
    case GFL_OPT_LOG_FORMAT:
        if (gpufl__log_format_parse(text, &o->log_format) != 0) {
            snprintf(why, why_len, "is not a log format (compact, ndjson, gflt, both, none)");
            return GPUFL_ECONFIG;
        }
        return 0;
    }
    snprintf(why, why_len, "is not an option that takes a parsed value");
    return GPUFL_EINVAL;
}

int gpufl__option_set_text(gpufl__config *c, const gpufl__option_desc *d, const char *text, char *why, size_t why_len)
{
    if (d->kind != GFL_OPT_STRING)
        return gpufl__option_parse(&c->o, d, text, why, why_len);
    if (gpufl__option_set_string(c, d, text) != 0) {
        snprintf(why, why_len, "could not be stored: out of memory");
        return GPUFL_ENOMEM;
    }
    return 0;
}

void gpufl__config_warn_not_utf8(const gpufl__config *c)
{
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        if (d->kind != GFL_OPT_STRING)
            continue;
        const char *v = *(const char *const *)cfield(&c->o, d);
        size_t n = v ? strlen(v) : 0, bad = v ? gpufl__utf8_invalid_at(v, n) : 0;
        /* the offset only: the value may be a secret (api_key) */
        if (bad < n)
            gpufl__log(GFL_LOG_WARN,
                       "option %s is not valid UTF-8 (first bad byte at offset %zu): session.json "
                       "and the logs record it with U+FFFD in place of each bad byte",
                       d->name, bad);
    }
}

void gpufl__config_free(gpufl__config *c)
{
    for (size_t i = 0; i < gpufl__options_count; i++)
        if (gpufl__options[i].kind == GFL_OPT_STRING) {
            const char **slot = field(&c->o, &gpufl__options[i]);
            free((char *)*slot);
            *slot = NULL;
        }
    memset(c, 0, sizeof *c);
}

int gpufl__config_defaults(gpufl__config *c)
{
    memset(c, 0, sizeof *c);
    gpufl_options_init(&c->o);
    /* Replace the static default strings with owned copies. */
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        if (d->kind != GFL_OPT_STRING)
            continue;
        const char **slot = field(&c->o, d);
        char *copy = strdup(*slot ? *slot : "");
        if (!copy) {
            for (size_t j = 0; j < i; j++)
                if (gpufl__options[j].kind == GFL_OPT_STRING)
                    free(*(char **)field(&c->o, &gpufl__options[j]));
            memset(c, 0, sizeof *c);
            return GPUFL_ENOMEM;
        }
        *slot = copy;
    }
    return 0;
}

/* True when the caller set field d in code: it exists in their struct and
 * differs from the default. */
static bool set_in_code(const gpufl_options *user, const gpufl_options *def, const gpufl__option_desc *d)
{
    if (!user || d->offset + d->size > user->struct_size)
        return false;
    if (d->kind == GFL_OPT_STRING) {
        const char *u = *(const char *const *)cfield(user, d);
        const char *x = *(const char *const *)cfield(def, d);
        return u && u[0] && strcmp(u, x ? x : "") != 0;
    }
    if (d->kind == GFL_OPT_BOOL)
        return *(const bool *)cfield(user, d) != *(const bool *)cfield(def, d);
    return memcmp(cfield(user, d), cfield(def, d), d->size) != 0;
}

static int apply_environment(gpufl__config *c, char *err, size_t err_len)
{
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        /* GPUFL_DISABLED is the inverse of `enabled`, handled before anything else. */
        if (d->offset == offsetof(gpufl_options, enabled) || d->offset == offsetof(gpufl_options, config_file))
            continue;
        const char *v = getenv(d->env);
        if (!v)
            continue;
        char why[256];
        int rc = gpufl__option_set_text(c, d, v, why, sizeof why);
        if (rc != 0) {
            snprintf(err, err_len, "environment variable %s='%.64s' %s", d->env, v, why);
            return rc;
        }
    }
    return 0;
}

static int apply_code(gpufl__config *c, const gpufl_options *user, char *err, size_t err_len)
{
    gpufl_options def;
    gpufl_options_init(&def);
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        if (!set_in_code(user, &def, d))
            continue;
        if (d->kind == GFL_OPT_STRING) {
            if (gpufl__option_set_string(c, d, *(const char *const *)cfield(user, d)) != 0) {
                snprintf(err, err_len, "out of memory while copying options");
                return GPUFL_ENOMEM;
            }
        } else {
            memcpy(field(&c->o, d), cfield(user, d), d->size);
        }
    }
    return 0;
}

int gpufl__config_resolve(const gpufl_options *user, gpufl__config *out, char *err, size_t err_len)
{
    err[0] = '\0';
    memset(out, 0, sizeof *out); /* "empty" on every failure, this early one included */
    if (user && user->struct_size == 0) {
        snprintf(err, err_len, "options were not set up with gpufl_options_init() (struct_size is 0)");
        return GPUFL_EINVAL;
    }
    int rc = gpufl__config_defaults(out);
    if (rc != 0) {
        snprintf(err, err_len, "out of memory while resolving options");
        return rc;
    }
    /* The config file named in code wins over GPUFL_CONFIG_FILE. */
    const gpufl__option_desc *cf = gpufl__option_find("config_file");
    gpufl_options def;
    gpufl_options_init(&def);
    const char *path = set_in_code(user, &def, cf) ? user->config_file : getenv("GPUFL_CONFIG_FILE");
    if (path && path[0]) {
        if ((rc = gpufl__option_set_string(out, cf, path)) != 0 ||
            (rc = gpufl__config_apply_file(out, path, err, err_len)) != 0)
            goto fail;
    }
    if ((rc = apply_environment(out, err, err_len)) != 0 || (rc = apply_code(out, user, err, err_len)) != 0)
        goto fail;
    for (size_t i = 0; i < gpufl__options_count; i++) {
        char why[256];
        if ((rc = gpufl__option_check(out, &gpufl__options[i], why, sizeof why)) != 0) {
            snprintf(err, err_len, "option %s %s", gpufl__options[i].name, why);
            goto fail;
        }
    }
    if (gpufl__env_disabled())
        out->o.enabled = false;
    return 0;
fail:
    gpufl__config_free(out);
    return rc;
}
