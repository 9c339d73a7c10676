/*
 * One PC-sampling process per GPU. The GPU's PC sampler serves one process
 * at a time: on an H100 (CUPTI 13.0.1, driver 580, 2026-11-27), of 8 gpufl
 * processes PC-sampling one GPU at once, those that did not get it had
 * CUPTI_ERROR_UNKNOWN from cuptiPCSamplingGetData, recorded no sample, and
 * most then died of a segfault inside cuptiActivityDisable as their
 * session ended (75 of 96 runs of one GPU test). So a gpufl process claims
 * the GPU before it enables PC sampling there, and a second one is refused
 * and told which process samples it (its session steps down).
 *
 * The claim is an advisory lock (flock) on a file named after the GPU in a
 * directory all processes share, so the kernel drops it with the process
 * however that ends. Only gpufl takes it: another tool sampling the GPU
 * (ncu) is not seen. A file that cannot be opened or is not a regular file
 * (another user's, a planted link) leaves the claim unchecked, and says so.
 *
 * Needs no CUDA: built into gpufl_cupti_pure and unit-tested everywhere.
 */
#ifndef GPUFL_BACKEND_CUPTI_PCS_CLAIM_H
#define GPUFL_BACKEND_CUPTI_PCS_CLAIM_H

#include <stddef.h>

/* Where the claims are kept: every process on the machine looks there. */
#define GFL_PCS_CLAIM_DIR "/tmp"

/* Claims the GPU named gpu (its PCI bus id: the same in every process,
 * whatever CUDA_VISIBLE_DEVICES says) for this process, in dir. Returns 0
 * when claimed, now or before (err empty), or when the claim cannot be
 * checked (err says why); -1 when another process holds it, err naming
 * its pid. Any thread. */
int gpufl__pcs_claim(const char *dir, const char *gpu, char *err, size_t err_len);

/* Gives back every claim of this process (the files stay, unlocked). */
void gpufl__pcs_release_claims(void);

#endif /* GPUFL_BACKEND_CUPTI_PCS_CLAIM_H */
