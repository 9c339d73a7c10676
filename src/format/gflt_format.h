/*
 * The .gflt binary trace on disk: the constants and fixed-width headers that
 * the writer (src/sink/gflt_writer.c) and the reader (src/read/gflt_source.c)
 * share. docs/FORMAT.md describes every byte; this is its code.
 *
 *   file    = file header, chunk*
 *   chunk   = 20-byte chunk header, payload (zstd-compressed when flagged)
 *
 * Every chunk stands alone (a reader needs only the strings chunks before
 * it), so a file cut anywhere reads back to its last whole chunk. Integers
 * in headers are little-endian; inside payloads they are LEB128 varints
 * (core/varint.h).
 */
#ifndef GPUFL_FORMAT_GFLT_FORMAT_H
#define GPUFL_FORMAT_GFLT_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "core/crc32c.h"

/* Version of the .gflt container and its chunk payloads. */
#define GFLT_VERSION 1

/* 0x89 "GFLT" CR LF 0x1A: not text, and damaged by text-mode transfers in a
 * way that shows. */
#define GFLT_MAGIC "\x89GFLT\r\n\x1a"
#define GFLT_MAGIC_LEN 8

#define GFLT_FILE_HEADER_SIZE 16  /* magic, u16 version, u16 header size, u32 crc32c */
#define GFLT_CHUNK_HEADER_SIZE 20 /* u8 type, u8 flags, u16 0, u32 stored, u32 raw, u32 crc, u32 crc */

/* Limits a reader enforces, so damaged lengths cannot ask for absurd
 * allocations; the writer stays far below them. */
#define GFLT_MAX_CHUNK_BYTES (64u << 20)
#define GFLT_MAX_STRING_BYTES (1u << 20)
#define GFLT_MAX_CHUNK_EVENTS (1u << 20) /* decoded, 128 MiB: the writer's default is 16384 */
#define GFLT_MAX_STRINGS (1u << 26)      /* string ids of one file */

typedef enum gpufl__gflt_chunk_type {
    GFLT_CHUNK_META = 1,    /* session identity; the first chunk */
    GFLT_CHUNK_STRINGS = 2, /* new strings, before the chunks that use them */
    GFLT_CHUNK_EVENTS = 3,  /* events, column by column */
    GFLT_CHUNK_STOP = 4,    /* writing stopped (disk cap, free space, I/O error) */
    GFLT_CHUNK_END = 5,     /* the session ended; absent after a crash */
    GFLT_CHUNK_INDEX = 6,   /* where each events chunk is and its time range */
    GFLT_CHUNK_TRAILER = 7, /* the last chunk: offset of the index */
} gpufl__gflt_chunk_type;

#define GFLT_FLAG_ZSTD 0x01u /* payload is one zstd frame of raw_len bytes */
#define GFLT_FLAGS_KNOWN 0x01u

#define GFLT_TRAILER_PAYLOAD 8 /* u64: file offset of the index chunk */

typedef struct gpufl__gflt_chunk_header {
    uint8_t type;
    uint8_t flags;
    uint32_t stored_len;  /* payload bytes in the file */
    uint32_t raw_len;     /* payload bytes once decompressed */
    uint32_t payload_crc; /* crc32c of the stored payload */
} gpufl__gflt_chunk_header;

static inline void gpufl__le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void gpufl__le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void gpufl__le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t gpufl__rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t gpufl__rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t gpufl__rd64(const uint8_t *p)
{
    return (uint64_t)gpufl__rd32(p) | (uint64_t)gpufl__rd32(p + 4) << 32;
}

static inline void gpufl__gflt_file_header_put(uint8_t out[GFLT_FILE_HEADER_SIZE])
{
    memcpy(out, GFLT_MAGIC, GFLT_MAGIC_LEN);
    gpufl__le16(out + 8, GFLT_VERSION);
    gpufl__le16(out + 10, GFLT_FILE_HEADER_SIZE);
    gpufl__le32(out + 12, gpufl__crc32c(0, out, 12));
}

static inline void gpufl__gflt_chunk_header_put(uint8_t out[GFLT_CHUNK_HEADER_SIZE], const gpufl__gflt_chunk_header *h)
{
    out[0] = h->type;
    out[1] = h->flags;
    gpufl__le16(out + 2, 0);
    gpufl__le32(out + 4, h->stored_len);
    gpufl__le32(out + 8, h->raw_len);
    gpufl__le32(out + 12, h->payload_crc);
    gpufl__le32(out + 16, gpufl__crc32c(0, out, 16));
}

/* Reads a chunk header. Returns 0, or -1 when its checksum does not match
 * (the fields are then not to be trusted). */
static inline int gpufl__gflt_chunk_header_get(const uint8_t in[GFLT_CHUNK_HEADER_SIZE], gpufl__gflt_chunk_header *h)
{
    if (gpufl__rd32(in + 16) != gpufl__crc32c(0, in, 16))
        return -1;
    h->type = in[0];
    h->flags = in[1];
    h->stored_len = gpufl__rd32(in + 4);
    h->raw_len = gpufl__rd32(in + 8);
    h->payload_crc = gpufl__rd32(in + 12);
    return 0;
}

#endif /* GPUFL_FORMAT_GFLT_FORMAT_H */
