/*
 * The dump_rules option parsed: "slow_scope=NAME:MS,device_memory_pct=P,
 * temperature_c=C,power_w=W", each key any number of times (a slow_scope per
 * scope name). Parsed once when the options are checked (a bad rule fails
 * gpufl_init with a message naming it) and again by the collector, which
 * checks events against them (collect/triggers.h). Also the dump_signal
 * option's signal name.
 */
#ifndef GPUFL_CORE_DUMP_RULES_H
#define GPUFL_CORE_DUMP_RULES_H

#include <stddef.h>
#include <stdint.h>

#define GFL_DUMP_RULES_MAX 16
#define GFL_DUMP_RULE_NAME_MAX 128

typedef enum gpufl__dump_rule_kind {
    GFL_RULE_SLOW_SCOPE = 0,    /* a scope named `name` longer than `limit` ms */
    GFL_RULE_DEVICE_MEMORY = 1, /* device memory used above `limit` % of the total */
    GFL_RULE_TEMPERATURE = 2,   /* GPU temperature above `limit` °C */
    GFL_RULE_POWER = 3,         /* GPU power above `limit` W */
} gpufl__dump_rule_kind;

typedef struct gpufl__dump_rule {
    gpufl__dump_rule_kind kind;
    uint64_t limit;
    char name[GFL_DUMP_RULE_NAME_MAX]; /* slow_scope only */
} gpufl__dump_rule;

typedef struct gpufl__dump_rules {
    gpufl__dump_rule rule[GFL_DUMP_RULES_MAX];
    size_t n;
} gpufl__dump_rules;

/* Parses text (NULL or "" = no rules). Returns 0, or GPUFL_ECONFIG with
 * why set to what is wrong ("rule 2 (`power_w=`): ..."). */
int gpufl__dump_rules_parse(const char *text, gpufl__dump_rules *out, char *why, size_t why_len);

/* The option key of a rule kind ("slow_scope", ...). */
const char *gpufl__dump_rule_key(gpufl__dump_rule_kind kind);

/* A signal by name ("SIGUSR2", "usr2", "12"; any case): its number, 0 for
 * "none" or "", -1 when text names no signal a program may catch. */
int gpufl__signal_parse(const char *text);

#endif /* GPUFL_CORE_DUMP_RULES_H */
