/*
 * session.json: who, what, where and, once there is one, the summary. Written
 * atomically (temporary file + rename) at init, at every collector
 * checkpoint and at shutdown, so a reader always finds a whole document and
 * a crashed session still has its latest checkpoint.
 */
#ifndef GPUFL_COLLECT_SESSION_JSON_H
#define GPUFL_COLLECT_SESSION_JSON_H

#include "collect/summary.h"
#include "core/session_info.h"

/* summary and end may be NULL (at init). Returns 0, or GPUFL_EIO /
 * GPUFL_ENOMEM with errno set; the previous session.json stays. */
int gpufl__session_json_write(const gpufl__session_info *info, const gpufl__summary *summary,
                              const gpufl__session_end *end) __attribute__((warn_unused_result));

/* What a dump of the flight window says of itself in its session.json:
 * the trigger that wrote it and the span it holds. */
typedef struct gpufl__dump_note {
    const char *name;        /* the dump's directory name under dumps/ */
    const char *kind;        /* the trigger: "dump", "signal", "crash", "oom", a rule */
    const char *detail;      /* "" when none */
    uint64_t at_ns;          /* when it fired */
    uint64_t from_ns, to_ns; /* the window's events */
    uint64_t events, bytes;
    /* Appended. */
    const char *oom; /* the dump's diagnosis of an out-of-memory ("oom.json"), NULL none */
} gpufl__dump_note;

/* session.json of a dump, in dir: the session's identity, options and
 * devices (status "dump"), and a "dump" object from note. 0 or as above. */
int gpufl__session_json_write_dump(const gpufl__session_info *info, const char *dir, const gpufl__dump_note *note)
    __attribute__((warn_unused_result));

/* Wall-clock ns as session.json writes times: "2026-11-21T03:04:05.123Z"
 * (UTC, milliseconds); len >= 32. */
void gpufl__iso_time(uint64_t wall_ns, char *buf, size_t len);

#endif /* GPUFL_COLLECT_SESSION_JSON_H */
