/*
 * Session files for the reader, analysis, export and report tests: a .gflt
 * file made with the library's own writer, the same events as both .gflt
 * and NDJSON (for tests that check the two readers agree), and a session
 * opened as a gpufl_trace. Tests only; failures fail the test.
 */
#ifndef GPUFL_TEST_SESSION_FILE_H
#define GPUFL_TEST_SESSION_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/session_meta.h"
#include "core/string_lookup.h"
#include "gpufl/trace.h"
#include "sink/gflt_writer.h"

/* A .gflt file being written. */
typedef struct tu_gflt_file {
    int fd;
    gpufl__gflt_writer w;
} tu_gflt_file;

/* Creates path and starts the file with meta's header; chunk_events and
 * level as for gpufl__gflt_writer_open(). */
void tu_gflt_open(tu_gflt_file *f, const char *path, const gpufl__session_meta *meta, size_t chunk_events, int level);
void tu_gflt_add(tu_gflt_file *f, const gfl_event *ev);
/* Writes the end chunk with meta and closes the file. */
void tu_gflt_close(tu_gflt_file *f, const gpufl__session_meta *meta);

/* Writes evs as the .gflt file gflt_path (chunk_events, level) and as the
 * NDJSON session directory ndjson_dir, both with meta. */
void tu_write_gflt_and_ndjson(const char *gflt_path, const char *ndjson_dir, const gfl_event *evs, size_t n,
                              const gpufl__session_meta *meta, size_t chunk_events, int level);

/* Copies the session at in (a directory, log or .gflt file) event for
 * event into the .gflt file out, each event first given to edit (when not
 * NULL) with the text of its string ids in strings: edit may change the
 * event (not its string ids) and returns false to leave it out. Tests build
 * edited copies of a recorded session this way (a kernel made slower, some
 * of its launches removed). */
typedef bool (*tu_event_edit)(void *ctx, gfl_event *ev, const gpufl__string_lookup *strings);
void tu_copy_session(const char *in, const char *out, tu_event_edit edit, void *ctx);

/* gpufl_trace_open(path); fails the test, naming path and the reader's
 * message, unless it succeeds. */
gpufl_trace *tu_trace_open(const char *path);

#endif /* GPUFL_TEST_SESSION_FILE_H */
