/*
 * String interning: names (scopes, kernels, metrics, messages) become 32-bit
 * ids once, so events carry ids and never strings.
 *
 * Workload: lookups outnumber inserts by millions to one (a training loop
 * re-enters the same few hundred scopes and kernels forever). Lookups are
 * lock-free: hash, probe an open-addressing table, compare. A miss takes a
 * mutex, inserts and, when the table is half full, publishes a table twice
 * the size; old tables are kept (a reader may still be probing one), so
 * memory is at most twice the final table plus the strings.
 *
 * The table is process-wide and survives sessions: ids stay valid and
 * strings stay readable for the life of the process.
 *
 * Ids: 0 is "" (no name), 1 is what every name gets once the table holds
 * GFL_INTERN_MAX_STRINGS strings or GFL_INTERN_MAX_BYTES bytes.
 */
#ifndef GPUFL_CORE_INTERN_H
#define GPUFL_CORE_INTERN_H

#include <stddef.h>
#include <stdint.h>

#define GFL_INTERN_EMPTY 0u
#define GFL_INTERN_OVERFLOW 1u
#define GFL_INTERN_MAX_STRINGS (1u << 20)
#define GFL_INTERN_MAX_BYTES (64u << 20)
#define GFL_INTERN_MAX_LEN 4096u /* longer names are cut (C++ templates can be huge) */

/* The id of s[0..n); any thread. Never fails: see GFL_INTERN_OVERFLOW. */
uint32_t gpufl__intern_n(const char *s, size_t n);

static inline uint32_t gpufl__intern(const char *s)
{
    size_t n = 0;
    if (!s)
        return GFL_INTERN_EMPTY;
    n = __builtin_strlen(s);
    return gpufl__intern_n(s, n);
}

/* The string of an id handed out earlier (NUL-terminated); *len if non-NULL.
 * Unknown ids give "". Any thread. */
const char *gpufl__intern_str(uint32_t id, uint32_t *len);

/* Strings interned so far, including the two reserved ids. */
uint32_t gpufl__intern_count(void);

/* Lookups that fell back to GFL_INTERN_OVERFLOW because the table is full. */
uint64_t gpufl__intern_overflows(void);

/* fork() safety: hold the insert lock across fork so the child never
 * inherits it locked. */
void gpufl__intern_fork_prepare(void);
void gpufl__intern_fork_parent(void);
void gpufl__intern_fork_child(void);

#endif /* GPUFL_CORE_INTERN_H */
