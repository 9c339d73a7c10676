/*
 * The seam inside src/read: an event source yields the events of a
 * recorded session one at a time, whatever the format, as the same
 * gfl_event records the recorder wrote (names as ids into the source's own
 * string table). Two implementations: NDJSON logs (ndjson_source.c) and
 * .gflt traces (gflt_source.c). The trace builder (trace_build.c) turns any
 * source into a gpufl_trace; `gpufl convert` feeds one to a writer.
 *
 * Sessions are read as one stream: for a directory, trace.gflt when it has
 * one, else every NDJSON channel (device, scope, system; rotated parts
 * oldest first). A torn last line or chunk (the writer was killed) ends a
 * file quietly and is counted in skipped_bytes; damage anywhere else is an
 * error that names the file and the line or byte offset.
 *
 * One owner thread per source.
 */
#ifndef GPUFL_READ_EVENT_SOURCE_H
#define GPUFL_READ_EVENT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/session_meta.h"
#include "core/string_lookup.h"

typedef enum gpufl__source_format {
    GFL_SOURCE_NDJSON = 0,
    GFL_SOURCE_GFLT = 1,
} gpufl__source_format;

typedef struct gpufl__event_source gpufl__event_source;

struct gpufl__event_source {
    /* The next event: 1 with *ev set (valid until the next call), 0 at the
     * end, or a negative gpufl_err with the message in err. After an error
     * the source stays at the error. */
    int (*next)(gpufl__event_source *s, const gfl_event **ev);
    void (*close)(gpufl__event_source *s);

    gpufl__string_lookup strings; /* ids of the events so far; valid until close */
    /* Identity is known once the source is open; end and stop as far as
     * read (complete at the end). */
    gpufl__session_meta meta;
    uint32_t format;          /* gpufl__source_format */
    uint32_t format_version;  /* .gflt: file version; NDJSON: session_start's format_version */
    uint64_t skipped_bytes;   /* torn last lines or chunks */
    uint64_t skipped_records; /* lines or events of a type this reader does not know */
    uint64_t skipped_chunks;  /* .gflt chunks of a type this reader does not know */
    char path[4096];          /* what was opened */
    char err[1024];
    /* Appended: which files were read and why those (see
     * gpufl__session_files). */
    char read_files[1024];
    char read_why[512];
    uint32_t copies; /* 2: the directory held the session twice */
};

/* Opens a session directory, an NDJSON log or a .gflt file (told apart by
 * its first bytes). Returns 0 with *out set, or a negative gpufl_err with a
 * message in err and *out NULL. */
int gpufl__source_open(const char *path, gpufl__event_source **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* The same over bytes in memory (one NDJSON log or one .gflt file); data
 * must outlive the source. name is used in messages. */
int gpufl__source_open_memory(const void *data, size_t n, const char *name, gpufl__event_source **out, char *err,
                              size_t err_len) __attribute__((warn_unused_result));

static inline int gpufl__source_next(gpufl__event_source *s, const gfl_event **ev) { return s->next(s, ev); }

static inline void gpufl__source_close(gpufl__event_source *s)
{
    if (s)
        s->close(s);
}

/* ---- what a session is made of ---------------------------------------------- */

#include "read/input.h"

/* The files of a session, as gpufl__source_open() finds them: a .gflt file
 * (gflt, in open), NDJSON logs in reading order (paths), or one NDJSON log
 * in memory (in, with no paths). */
typedef struct gpufl__session_files {
    bool gflt;
    bool has_input; /* in is open */
    gpufl__input in;
    char **paths;
    size_t npaths;
    char what[4096]; /* what was opened, for messages */
    /* For people: the files read (names within the session directory),
     * and why those: a directory written with log_format both holds the
     * session twice, and the copy that holds more is read
     * (read/source_choice.h). */
    char read_files[1024];
    char read_why[512];
    uint32_t copies; /* 2: a directory with both trace.gflt and NDJSON logs */
} gpufl__session_files;

/* Finds the files of path (a directory, a log, a .gflt file). Returns 0,
 * or a negative gpufl_err with a message in err (f then holds nothing). */
int gpufl__session_files_open(const char *path, gpufl__session_files *f, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* The same for bytes in memory (which must outlive f). */
int gpufl__session_files_memory(const void *data, size_t n, const char *name, gpufl__session_files *f, char *err,
                                size_t err_len) __attribute__((warn_unused_result));

/* Frees the paths and closes the input if still open (f->has_input). */
void gpufl__session_files_free(gpufl__session_files *f);

/* ---- the implementations (event_source.c picks one) ---------------------- */

/* NDJSON: the files in order (taking paths' strings as copies), or, with
 * npaths 0, the one input `mem`. */
int gpufl__ndjson_source_open(const char *const *paths, size_t npaths, struct gpufl__input *mem, const char *what,
                              gpufl__event_source **out, char *err, size_t err_len) __attribute__((warn_unused_result));

/* .gflt: takes over `in` (closed on failure too). */
int gpufl__gflt_source_open(struct gpufl__input *in, gpufl__event_source **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_READ_EVENT_SOURCE_H */
