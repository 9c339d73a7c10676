/*
 * gzip of a request body (docs/UPLOAD.md: uploaders always send
 * Content-Encoding: gzip). zlib, linked when its header was found at
 * configure time (GPUFL_HAVE_ZLIB); without it the uploader reports itself
 * unsupported. Any thread; no state.
 */
#ifndef GPUFL_UPLOAD_UPLOAD_GZIP_H
#define GPUFL_UPLOAD_UPLOAD_GZIP_H

#include <stddef.h>

#include "core/bytebuf.h"

/* Replaces out's bytes with the gzip member of in[0..n). Returns 0;
 * GPUFL_ENOMEM; GPUFL_EUNSUPPORTED in a build without zlib. out keeps its
 * memory for the next call. */
int gpufl__gzip(const void *in, size_t n, gpufl__bytebuf *out) __attribute__((warn_unused_result));

#endif /* GPUFL_UPLOAD_UPLOAD_GZIP_H */
