/*
 * The report of a job (`gpufl report JOB`, analyze/ana_job.h) as text and
 * as JSON (docs/REPORT.md, "Job reports"), and as one HTML page: the ranks
 * side by side, how they were aligned, NCCL time per collective and its
 * overlap with computation per rank, the stragglers, and the kernels whose
 * time differs most across ranks. Any thread.
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_JOB_H
#define GPUFL_PRESENT_REPORT_REPORT_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/ana_job.h"

/* top: straggler events and kernels listed (at least 1). 0, or -1 on a
 * write error (errno set). */
int gpufl__report_job_text(const gpufl__job_report *r, uint32_t top, FILE *out);
/* 0, GPUFL_ENOMEM, or -1 on a write error. */
int gpufl__report_job_json(const gpufl__job_report *r, uint32_t top, FILE *out);
/* One self-contained page (report_job_html.c; in gpufl_report_html, not
 * libgpufl) written to path through a temporary renamed when complete.
 * Returns 0, or a negative gpufl_err with a message naming the file in
 * err and nothing left under path. */
int gpufl__report_job_html(const gpufl__job_report *r, uint32_t top, const char *path, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Rank i's name in tables: its rank number, or "#i" for a session without
 * one (for every renderer). */
void gpufl__job_rank_name(const gpufl__job_rank *r, size_t i, char *buf, size_t len);

/* Per rank, time by collective kind (for every renderer). */
typedef struct gpufl__job_coll_time {
    uint8_t coll, algo, proto;
    uint64_t count, total_ns;
    uint64_t bytes, bytes_known; /* summed over the collectives whose bytes are known; how many they are */
    uint64_t bw_ns;              /* time of those gpufl__nccl_bw_bytes could size */
    double alg_bytes, bus_bytes; /* their S and S x bus factor (ana_nccl.h): / bw_ns for GB/s */
} gpufl__job_coll_time;
/* Rows of rank r, largest total first; returns the count (0 none, or out
 * of memory: *out NULL). */
size_t gpufl__job_coll_times(const gpufl__job_rank *r, gpufl__job_coll_time **out);

#endif /* GPUFL_PRESENT_REPORT_REPORT_JOB_H */
