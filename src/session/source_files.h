/*
 * The session's copy of the source files that line info names
 * (enable_source_collection): the device plugin hands each path it
 * resolves to note() (the host's source_file callback), and copy() writes
 * <session>/sources/ once the plugin has stopped: index.json and the files'
 * bytes (docs/FORMAT.md, "sources/").
 *
 * Why a copy: a report read later, on another machine or after a rebuild,
 * should show the code that ran, not what the file holds by then.
 *
 * Only the paths named are opened, read-only and as regular files (a FIFO
 * or a device is listed with the reason, never read); a relative path is
 * the build's, resolved against the program's working directory at the
 * session's end. Bounded: GPUFL__SOURCES_MAX_FILE bytes a file,
 * GPUFL__SOURCES_MAX_TOTAL in all, GPUFL__SOURCES_MAX_PATHS paths; a file
 * over a bound is listed with the reason and not copied.
 */
#ifndef GPUFL_SESSION_SOURCE_FILES_H
#define GPUFL_SESSION_SOURCE_FILES_H

#include <stddef.h>

#define GPUFL__SOURCES_MAX_FILE (1u << 20)
#define GPUFL__SOURCES_MAX_TOTAL (32u << 20)
#define GPUFL__SOURCES_MAX_PATHS 4096

/* Remembers path once (any thread; a mutex and a hash lookup, no I/O). */
void gpufl__source_files_note(const char *path);

/* Writes <session_dir>/sources/ when any path was noted, and forgets the
 * paths. Blocks on the files' I/O: call it at the session's end, after the
 * plugin stopped. Failures are logged; nothing here fails the session. */
void gpufl__source_files_copy(const char *session_dir);

#endif /* GPUFL_SESSION_SOURCE_FILES_H */
