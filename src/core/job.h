/*
 * Job identity: where this process stands in a job of many processes (a
 * distributed training run, an MPI program), as its launcher says in the
 * environment: torchrun and torch.distributed (RANK, LOCAL_RANK,
 * WORLD_SIZE, LOCAL_WORLD_SIZE, TORCHELASTIC_RUN_ID, MASTER_ADDR and
 * MASTER_PORT), Open MPI (OMPI_COMM_WORLD_*), MPICH and other PMI
 * launchers (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID) and SLURM (SLURM_PROCID,
 * SLURM_LOCALID, SLURM_NTASKS, SLURM_JOB_ID, SLURM_STEP_ID). The first
 * launcher in that order whose variables are set gives the ranks, because
 * it is the one nearest the program (torchrun started by srun sets RANK;
 * SLURM_PROCID is then the node's task, not the rank). The job id is the
 * first of TORCHELASTIC_RUN_ID (unless torchrun's "none"), SLURM_JOB_ID
 * and Open MPI's job id that is set, so that every rank of one job agrees.
 *
 * A value that is not a number, or ranks that contradict their sizes
 * (RANK=4 with WORLD_SIZE=4), are left out and the reason kept for the
 * session log: a bad environment costs the fact, never the recording.
 *
 * Read once per session, at gpufl_init, under its lock.
 */
#ifndef GPUFL_CORE_JOB_H
#define GPUFL_CORE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Validity bits of gpufl__job.has. */
enum {
    GPUFL__JOB_RANK = 1u << 0,
    GPUFL__JOB_LOCAL_RANK = 1u << 1,
    GPUFL__JOB_WORLD_SIZE = 1u << 2,
    GPUFL__JOB_LOCAL_WORLD_SIZE = 1u << 3,
};

typedef struct gpufl__job {
    const char *launcher; /* "torchrun", "torch.distributed", "openmpi", "mpich", "slurm"; NULL: none */
    uint32_t has;         /* GPUFL__JOB_* */
    uint32_t rank, local_rank, world_size, local_world_size;
    char id[128];                   /* the job's id, "" unknown */
    const char *id_from;            /* the variable id came from; NULL when "" */
    char step[64];                  /* SLURM_STEP_ID, "" none */
    char master[320];               /* MASTER_ADDR:MASTER_PORT (torch.distributed's rendezvous), "" none */
    char cuda_visible_devices[256]; /* as the launcher set it, "" unset */
    char warning[512];              /* values left out and why, "" none */
} gpufl__job;

/* The environment as a function, so tests can hand one in: the value of
 * name, or NULL when it is not set. */
typedef const char *(*gpufl__getenv_fn)(const char *name, void *ctx);

/* Fills *out from the environment get gives. Never fails: what cannot be
 * read is left out and said in out->warning. */
void gpufl__job_from_env(gpufl__getenv_fn get, void *ctx, gpufl__job *out);

/* gpufl__job_from_env() of this process's environment. */
void gpufl__job_read(gpufl__job *out);

/* The directory name of a job id, "job-<id>" with every character but
 * letters, digits, '.', '_' and '-' made '_', at most 64 of the id's, never
 * "." or ".." (a hostile id cannot leave log_path). len >= 72. */
void gpufl__job_dir_name(const char *id, char *out, size_t len);

#endif /* GPUFL_CORE_JOB_H */
