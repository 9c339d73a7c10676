/*
 * PyTorch's NVTX range texts. Under torch.autograd.profiler.emit_nvtx (what
 * gpufl.torch.attach() switches on) PyTorch pushes one range per op whose
 * text carries the op's name and numbers that are unique per call:
 *
 *   "aten::addmm, seq = 22, op_id = 6"           a forward op
 *   "AddmmBackward0, seq = 22, op_id = 35"       its backward (same seq)
 *   "aten::mm, op_id = 39"                       an op without autograd
 *   "aten::mm, seq = 3, op_id = 7, sizes = [[64, 256], [256, 10]]"
 *
 * Interning these texts whole would put a new string in the session's table
 * for every op call, without bound. The plugin keeps the name ("aten::addmm")
 * and the sequence number, which links a backward op to the forward op it
 * differentiates; op_id and sizes are dropped.
 *
 * Pure: no CUDA, no state; any thread.
 */
#ifndef GPUFL_BACKEND_CUPTI_TORCH_NVTX_H
#define GPUFL_BACKEND_CUPTI_TORCH_NVTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Splits text (len bytes): returns the length of the name, which is len when
 * the text does not end in PyTorch's ", seq = N" or ", op_id = N" fields;
 * *has_seq and *seq say whether a ", seq = N" was among them and N. */
size_t gpufl__torch_nvtx_split(const char *text, size_t len, bool *has_seq, uint64_t *seq);

#endif /* GPUFL_BACKEND_CUPTI_TORCH_NVTX_H */
