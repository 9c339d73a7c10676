/*
 * One op of `gpufl replay-check` (analyze/ana_replay.h) in words, the same
 * for the text and the JSON output: "kernel gemm grid(64,1,1)
 * block(256,1,1) regs 32 smem 0+16384", "memcpy HtoD pinned->device
 * 4194304 B", "alloc device 1048576 B". Bytes are exact: a determinism
 * check is about the number, not its rounding.
 *
 * Threads: any; nothing shared.
 */
#ifndef GPUFL_PRESENT_DIFF_REPLAY_OP_H
#define GPUFL_PRESENT_DIFF_REPLAY_OP_H

#include <stddef.h>

#include "analyze/ana_replay.h"

/* k in words into buf (cut to len); name_width: the longest kernel name
 * written before it is cut with "..." (0: never cut). */
void gpufl__replay_op_text(const gpufl__rp_key *k, size_t name_width, char *buf, size_t len);

/* "kernel", "memcpy", "memset", "alloc", "free", "allocator". */
const char *gpufl__replay_op_word(unsigned what);

/* "stream", "allocations", "framework_blocks", "allocator" (JSON); and in
 * words ("driver allocations", "framework blocks", "allocator records"). */
const char *gpufl__replay_lane_key(unsigned kind);
const char *gpufl__replay_lane_words(unsigned kind);

/* The change's JSON word ("extra", "launch_config", ...) and the config
 * fields' words ("grid", "block", ...; bit: GPUFL__RP_F_*). */
const char *gpufl__replay_change_key(unsigned change);
const char *gpufl__replay_field_key(unsigned bit);

#endif /* GPUFL_PRESENT_DIFF_REPLAY_OP_H */
