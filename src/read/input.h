/*
 * What a reader reads from: a file, or bytes in memory (the fuzzers, and
 * tests of damaged input). Both readers fetch through this, so the same
 * code runs on both.
 *
 * Files are read with pread(), never mapped: a file that a live session is
 * still writing (or cutting back after a failed write) can change under the
 * reader, and a mapping would turn that into SIGBUS.
 *
 * One owner thread.
 */
#ifndef GPUFL_READ_INPUT_H
#define GPUFL_READ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct gpufl__input {
    int fd; /* -1 for memory */
    const uint8_t *mem;
    uint64_t size;   /* at open */
    char name[4096]; /* for messages: the path, or what the memory is */
} gpufl__input;

/* Opens path for reading; only a regular file (core/regular_file.h: a FIFO
 * would block the reader). Returns 0, or GPUFL_ENOTFOUND / GPUFL_EIO with a
 * message naming path in err. */
int gpufl__input_open_file(gpufl__input *in, const char *path, char *err, size_t err_len)
    __attribute__((warn_unused_result));
void gpufl__input_memory(gpufl__input *in, const void *data, size_t n, const char *name);

/* Reads up to n bytes at off into buf. Returns the bytes read (fewer only
 * at the end of the input), or -1 with errno set. */
ssize_t gpufl__input_read(gpufl__input *in, uint64_t off, void *buf, size_t n);

void gpufl__input_close(gpufl__input *in);

#endif /* GPUFL_READ_INPUT_H */
