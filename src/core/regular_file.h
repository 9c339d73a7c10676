/*
 * Opening the files gpufl reads (session logs, trace.gflt, session.json,
 * config files) only when they are regular files.
 *
 * open() of a FIFO waits for a writer, so a FIFO named scope.log (or a
 * config file) would hang a reader command, or the program in gpufl_init(),
 * for ever; a device or a socket is no more a log than a FIFO is. The file
 * is opened without blocking and checked with fstat() on the descriptor
 * that will be read, so nothing can be swapped in between the check and
 * the read. Any thread; no state.
 */
#ifndef GPUFL_CORE_REGULAR_FILE_H
#define GPUFL_CORE_REGULAR_FILE_H

#include <jansson.h>
#include <stddef.h>

/* Opens path read-only (close-on-exec, blocking reads). Returns the
 * descriptor, or -1 with errno set and the reason in why ("No such file or
 * directory", "not a regular file (a FIFO)"); errno is EINVAL for a file
 * that is not a regular one. Nothing stays open on failure. */
int gpufl__open_regular(const char *path, char *why, size_t why_len);

/* Reads fd to its end, but never more than max + 1 bytes (so that a file
 * past max shows as *len > max), into a malloc'd buffer that grows as it
 * fills and is NUL-terminated past *len. 0, or -1 with errno set (a read
 * error, ENOMEM) and *out NULL. EINTR is retried. */
int gpufl__read_fd_all(int fd, size_t max, char **out, size_t *len);

/* json_load_file() for regular files only: on any failure to open (this
 * one included) NULL with jerr->line -1 and the reason in jerr->text. */
json_t *gpufl__json_load_regular(const char *path, size_t flags, json_error_t *jerr);

#endif /* GPUFL_CORE_REGULAR_FILE_H */
