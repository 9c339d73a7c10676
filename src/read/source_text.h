/*
 * The text of a source line that line info names (a PC sample's or a SASS
 * record's file:line), for the reports: from the session's own copy
 * (<session>/sources/, written at the session's end when
 * enable_source_collection was on: docs/FORMAT.md), else from the file
 * itself when the index says it was not copied but its size and mtime
 * still match what was recorded, else, for a session without sources/
 * (older, or recorded with the option off), from the file as it is now.
 *
 * Not thread-safe per cache; no global state.
 */
#ifndef GPUFL_READ_SOURCE_TEXT_H
#define GPUFL_READ_SOURCE_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef enum gpufl__source_from {
    GPUFL__SOURCE_NONE = 0,      /* no text: no copy, the file changed or is gone, no such line */
    GPUFL__SOURCE_COPY = 1,      /* the session's copy */
    GPUFL__SOURCE_UNCHANGED = 2, /* the file itself, its size and mtime as recorded */
    GPUFL__SOURCE_NOW = 3,       /* the file as it is now (the session has no sources/) */
} gpufl__source_from;

/* The files of one session, each read once (a report asks for many lines
 * of few files): from index.json and the copies, or the files themselves.
 * session: its directory, or a file in it such as trace.gflt. NULL when
 * out of memory. */
typedef struct gpufl__source_cache gpufl__source_cache;
gpufl__source_cache *gpufl__source_cache_new(const char *session);
void gpufl__source_cache_free(gpufl__source_cache *c);

/* Line `line` (from 1) of `file` as the session recorded it: the line
 * without its end, cut to len - 1 bytes, into buf. Returns where it came
 * from; GPUFL__SOURCE_NONE leaves buf "". A relative file is taken
 * relative to the working directory, as the program that recorded it did.
 * Files over GPUFL__SOURCE_READ_MAX bytes are not read. */
#define GPUFL__SOURCE_READ_MAX (16u << 20)
gpufl__source_from gpufl__source_cache_line(gpufl__source_cache *c, const char *file, uint32_t line, char *buf,
                                            size_t len);

/* One line, without a cache. */
gpufl__source_from gpufl__source_line_text(const char *session, const char *file, uint32_t line, char *buf, size_t len);

#endif /* GPUFL_READ_SOURCE_TEXT_H */
