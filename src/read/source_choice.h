/*
 * Which copy of a session to read when its directory holds two: with
 * log_format both the recorder writes every event to the NDJSON logs and to
 * trace.gflt, and the two need not hold the same (with compact the logs
 * hold only the scope and system channels). A killed program leaves
 * the logs up to ~0.1 s behind (written every 100 ms) and trace.gflt up to
 * ~1 s (a chunk is written when full or a second old); a stopped writer
 * loses what each had buffered. Readers read the copy that holds more.
 *
 * "Holds more", decided from the ends of the files only, never by reading
 * either whole:
 *   1. Both copies ended (every log ends with session_end, trace.gflt has
 *      its end chunk): each says exactly how many accepted events it could
 *      not write; fewer lost is more complete.
 *   2. Otherwise the copy whose newest events go further in time: the sinks
 *      write events in the order they arrive, so the copy that got further
 *      holds events recorded later. The newest events are those of the last
 *      events chunk of trace.gflt (found by the chunk scan, which skips the
 *      events chunks' payloads, then decoded: one chunk) and the lines of
 *      the last 64 KiB of each channel's newest log part (read backwards
 *      until one holds an event); each side's latest event start counts.
 *   Ties, and a copy with nothing to compare, go to trace.gflt (faster to
 *   read, and what a clean session reads today). A trace.gflt that cannot
 *   be read (damaged header, damage the scan finds) loses to the logs.
 *   Logs that lack a channel's file altogether (log_format compact writes
 *   no device.log: its device work is only in trace.gflt) never win over a
 *   readable trace.gflt, whatever either lost or reached: they cannot hold
 *   the session.
 *
 * One thread; reads with pread only, like the readers (read/input.h).
 */
#ifndef GPUFL_READ_SOURCE_CHOICE_H
#define GPUFL_READ_SOURCE_CHOICE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gpufl__source_choice {
    bool gflt;         /* read trace.gflt; false: the NDJSON logs */
    bool logs_partial; /* the logs lack a channel's file (log_format compact): not a second copy */
    char why[512];     /* one sentence, for people: what each copy showed */
} gpufl__source_choice;

/* Chooses between gflt_path and the NDJSON logs paths[0..npaths) (each
 * channel's parts oldest first, channels in any order). Never fails: what
 * cannot be read counts as holding nothing, and the sentence says so. */
void gpufl__source_choose(const char *gflt_path, const char *const *paths, size_t npaths, gpufl__source_choice *out);

#endif /* GPUFL_READ_SOURCE_CHOICE_H */
