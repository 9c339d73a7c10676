/*
 * Parsing dump_rules and dump_signal (see dump_rules.h).
 */
#include "core/dump_rules.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpufl/gpufl.h"

static const char *const rule_keys[] = {"slow_scope", "device_memory_pct", "temperature_c", "power_w"};
#define N_RULE_KEYS (sizeof rule_keys / sizeof rule_keys[0])

const char *gpufl__dump_rule_key(gpufl__dump_rule_kind kind)
{
    return (unsigned)kind < N_RULE_KEYS ? rule_keys[kind] : "?";
}

/* A whole decimal number in [1, max]. */
static int parse_limit(const char *s, size_t n, uint64_t max, uint64_t *out)
{
    if (n == 0 || n > 20)
        return -1;
    char buf[24];
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)buf[i]))
            return -1;
    errno = 0;
    unsigned long long v = strtoull(buf, NULL, 10);
    if (errno || v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_one(const char *s, size_t n, gpufl__dump_rule *r, char *why, size_t why_len)
{
    const char *eq = memchr(s, '=', n);
    if (!eq) {
        snprintf(why, why_len, "`%.*s` is not KEY=VALUE", (int)n, s);
        return GPUFL_ECONFIG;
    }
    size_t klen = (size_t)(eq - s), vlen = n - klen - 1;
    const char *v = eq + 1;
    unsigned k = 0;
    while (k < N_RULE_KEYS && !(strlen(rule_keys[k]) == klen && !strncmp(rule_keys[k], s, klen)))
        k++;
    if (k == N_RULE_KEYS) {
        snprintf(why, why_len, "`%.*s`: no such rule (slow_scope, device_memory_pct, temperature_c, power_w)",
                 (int)klen, s);
        return GPUFL_ECONFIG;
    }
    memset(r, 0, sizeof *r);
    r->kind = (gpufl__dump_rule_kind)k;
    static const uint64_t max[] = {86400000, 100, 200, 100000};
    static const char *const unit[] = {"milliseconds", "percent", "degrees C", "watts"};
    if (r->kind == GFL_RULE_SLOW_SCOPE) {
        const char *colon = NULL;
        for (const char *p = v; p < v + vlen; p++)
            if (*p == ':')
                colon = p; /* the last one: a scope name may hold ':' */
        if (!colon || colon == v) {
            snprintf(why, why_len, "`%.*s`: slow_scope takes NAME:MS", (int)n, s);
            return GPUFL_ECONFIG;
        }
        size_t name_len = (size_t)(colon - v);
        if (name_len >= sizeof r->name) {
            snprintf(why, why_len, "`%.*s`: the scope name is longer than %zu bytes", (int)n, s, sizeof r->name - 1);
            return GPUFL_ECONFIG;
        }
        memcpy(r->name, v, name_len);
        v = colon + 1;
        vlen = (size_t)(s + n - v);
    }
    if (parse_limit(v, vlen, max[k], &r->limit) != 0) {
        snprintf(why, why_len, "`%.*s`: the limit must be a whole number of %s, 1..%llu", (int)n, s, unit[k],
                 (unsigned long long)max[k]);
        return GPUFL_ECONFIG;
    }
    return 0;
}

int gpufl__dump_rules_parse(const char *text, gpufl__dump_rules *out, char *why, size_t why_len)
{
    out->n = 0;
    if (!text)
        return 0;
    const char *s = text;
    while (*s) {
        while (*s == ' ' || *s == ',')
            s++;
        if (!*s)
            break;
        const char *end = strchr(s, ',');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        while (n && s[n - 1] == ' ')
            n--;
        if (out->n == GFL_DUMP_RULES_MAX) {
            snprintf(why, why_len, "more than %d rules", GFL_DUMP_RULES_MAX);
            return GPUFL_ECONFIG;
        }
        int rc = parse_one(s, n, &out->rule[out->n], why, why_len);
        if (rc)
            return rc;
        out->n++;
        s += n;
    }
    return 0;
}

int gpufl__signal_parse(const char *text)
{
    if (!text || !*text || !strcasecmp(text, "none"))
        return 0;
    static const struct {
        const char *name;
        int sig;
    } names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2},   {"HUP", SIGHUP},   {"URG", SIGURG},
                 {"PWR", SIGPWR},   {"WINCH", SIGWINCH}, {"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}};
    const char *name = !strncasecmp(text, "SIG", 3) ? text + 3 : text;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(name, names[i].name))
            return names[i].sig;
    if (!strncasecmp(name, "RTMIN+", 6) || isdigit((unsigned char)*name)) {
        char *end;
        long v = strtol(!strncasecmp(name, "RTMIN+", 6) ? name + 6 : name, &end, 10);
        if (*end == '\0') {
            long sig = !strncasecmp(name, "RTMIN+", 6) ? SIGRTMIN + v : v;
            /* signals that kill or stop by default for a reason are not ours to take */
            if (sig == SIGUSR1 || sig == SIGUSR2 || (sig >= SIGRTMIN && sig <= SIGRTMAX))
                return (int)sig;
        }
    }
    return -1;
}
