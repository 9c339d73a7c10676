/*
 * What the core reads and writes in the environment for `gpufl run` and the
 * injection library (libgpufl_inject.so). Called by gpufl_init only, under
 * its lifecycle lock, once per session: nothing here is on a hot path.
 *
 * One process may hold two copies of gpufl: the libgpufl.so that the
 * injection library brings in, and a static libgpufl.a linked into the
 * program. Each has its own statics, so they cannot see each other's
 * session; the environment is the one thing they share. The first copy to
 * start a session in a process where an injection library may appear
 * (CUDA_INJECTION64_PATH is set) claims it:
 *
 *     GPUFL_INJECTED_PID=<pid>:<exec id>
 *
 * and every other copy's gpufl_init then stands aside. The exec id (from
 * the kernel's per-exec AT_RANDOM bytes) makes the claim name one process
 * image: a forked child (another pid) and a process that exec'd itself (the
 * same pid, new bytes) are both free to record. The marker is inherited by
 * children, where it names another process and so means nothing.
 *
 * GPUFL_RUN_REPORT=<file>: set by `gpufl run`; each process that starts a
 * session appends one line "<pid> <session dir>\n" to it.
 */
#ifndef GPUFL_CORE_RUN_ENV_H
#define GPUFL_CORE_RUN_ENV_H

#include <stdbool.h>

#define GPUFL_INJECTED_PID_ENV "GPUFL_INJECTED_PID"
#define GPUFL_RUN_REPORT_ENV "GPUFL_RUN_REPORT"
/* GPUFL_RUN_JOB_ID=<id>: set by `gpufl run` (unless already set) for the
 * processes it starts; the job id of ranks whose launcher names none. */
#define GPUFL_RUN_JOB_ID_ENV "GPUFL_RUN_JOB_ID"

/* Claims this process for this copy of gpufl before it starts a session.
 * Returns false when another copy of gpufl in this process image has
 * claimed it (this copy must not record); true otherwise, with *claimed_now
 * true when this call set the marker (undo it with gpufl__run_release() if
 * the session then fails to start). Without CUDA_INJECTION64_PATH there is
 * nothing to claim and the environment is left alone. */
bool gpufl__run_claim(bool *claimed_now);

/* Withdraws a claim made by this copy (the session it was for did not
 * start). Harmless when there is none. */
void gpufl__run_release(void);

/* Appends "<pid> <dir>\n" to the file GPUFL_RUN_REPORT names, when set. One
 * O_APPEND write, so processes that record at the same time never interleave
 * their lines. The file is never created: a stale variable leaves no litter.
 * Failures are logged at debug level and otherwise ignored. */
void gpufl__run_report(int pid, const char *dir);

#endif /* GPUFL_CORE_RUN_ENV_H */
