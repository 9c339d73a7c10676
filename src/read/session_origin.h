/*
 * Whether a recorded session was recorded on the machine reading it, from
 * host_info.machine_id in its session.json (core/machine_id.h).
 *
 * Why: CPU stacks are recorded as (module path, offset) and symbolized when
 * read. A module at the same path here (libc.so.6, a venv's libtorch) is
 * usually a different build on another machine, and symbolizing from it
 * gives names that look right and are wrong. So local module files are
 * trusted only for a session known to come from this machine.
 *
 * One call per command; reads one small file.
 */
#ifndef GPUFL_READ_SESSION_ORIGIN_H
#define GPUFL_READ_SESSION_ORIGIN_H

#include <stddef.h>

typedef enum gpufl__session_origin {
    GFL_ORIGIN_HERE,      /* session.json carries this machine's id */
    GFL_ORIGIN_ELSEWHERE, /* it carries another id */
    GFL_ORIGIN_UNKNOWN,   /* no session.json, no id in it, or no id here */
} gpufl__session_origin;

/* Where the session at path (its directory, its session.json, or a file in
 * its directory: a log or trace.gflt) was recorded, read from the
 * session.json of that directory. Never fails: what cannot be read is
 * GFL_ORIGIN_UNKNOWN. why gets the reason in words for a note, e.g.
 * "recorded on another machine (machine id differs)". */
gpufl__session_origin gpufl__session_origin_of(const char *path, char *why, size_t why_len);

#endif /* GPUFL_READ_SESSION_ORIGIN_H */
