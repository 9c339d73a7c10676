/*
 * A request body's gzip undone, with a cap on what it may grow to (the
 * contract's 64 MiB: a small body must not become gigabytes in memory).
 * Any thread; no state.
 */
#ifndef GPUFL_SERVE_SERVE_GUNZIP_H
#define GPUFL_SERVE_SERVE_GUNZIP_H

#include <stddef.h>

#include "core/bytebuf.h"

/* Inflates the gzip stream in[0..n) (one member or several, as gzip(1)
 * concatenates them) into out (emptied first). Returns 0; GPUFL_ECORRUPT
 * when it is not gzip or is cut short; GPUFL_EUNSUPPORTED when it would
 * grow past cap bytes; GPUFL_ENOMEM. */
int gpufl__serve_gunzip(const void *in, size_t n, size_t cap, gpufl__bytebuf *out) __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_SERVE_GUNZIP_H */
