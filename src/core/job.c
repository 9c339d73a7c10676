/*
 * Job identity from a launcher's environment (see job.h).
 */
#include "core/job.h"
#include "core/run_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A launcher's variables; NULL where it has none. */
typedef struct launcher {
    const char *name;
    const char *rank, *local_rank, *world_size, *local_world_size;
} launcher;

static const launcher launchers[] = {
    {"torch.distributed", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"mpich", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", NULL},
};

/* Where a job id may come from, in order. */
/* Last, the id `gpufl run` hands the processes it starts (GPUFL_RUN_JOB_ID_ENV): a launcher that names no
 * job (plain torchrun, whose run id is "none") still has its ranks kept together. */
static const char *const id_vars[] = {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid",
                                      GPUFL_RUN_JOB_ID_ENV};

static void warn(gpufl__job *j, const char *fmt, const char *a, const char *b, const char *c)
{
    size_t n = strlen(j->warning);
    if (n + 3 >= sizeof j->warning)
        return;
    if (n)
        n += (size_t)snprintf(j->warning + n, sizeof j->warning - n, "; ");
    snprintf(j->warning + n, sizeof j->warning - n, fmt, a, b, c);
}

/* A rank or size: decimal digits only, below 2^31. */
static bool parse_count(const char *s, uint32_t *out)
{
    if (!s || !*s || strlen(s) > 10)
        return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v > INT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static void take(gpufl__job *j, gpufl__getenv_fn get, void *ctx, const char *var, uint32_t bit, uint32_t *field)
{
    if (!var)
        return;
    const char *v = get(var, ctx);
    if (!v)
        return;
    if (parse_count(v, field))
        j->has |= bit;
    else
        warn(j, "%s=%.40s is not a count (0 to 2^31-1)%s; left out", var, v, "");
}

/* Ranks must lie inside their sizes; a contradiction leaves out both,
 * since which is wrong cannot be told. */
static void check(gpufl__job *j, uint32_t rank_bit, uint32_t size_bit, const char *what)
{
    uint32_t *size = size_bit == GPUFL__JOB_WORLD_SIZE ? &j->world_size : &j->local_world_size;
    if ((j->has & size_bit) && *size == 0) {
        warn(j, "a %s size of 0%s%s; left out", what, "", "");
        j->has &= ~size_bit;
    }
    if ((j->has & rank_bit) && (j->has & size_bit)) {
        uint32_t rank = rank_bit == GPUFL__JOB_RANK ? j->rank : j->local_rank;
        uint32_t size = size_bit == GPUFL__JOB_WORLD_SIZE ? j->world_size : j->local_world_size;
        if (rank >= size || size == 0) {
            char r[16], s[16];
            snprintf(r, sizeof r, "%u", rank);
            snprintf(s, sizeof s, "%u", size);
            warn(j, "%s %s is not below its size %s; both left out", what, r, s);
            j->has &= ~(rank_bit | size_bit);
        }
    }
}

static void copy(char *dst, size_t len, const char *src) { snprintf(dst, len, "%s", src ? src : ""); }

void gpufl__job_from_env(gpufl__getenv_fn get, void *ctx, gpufl__job *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        const launcher *l = &launchers[i];
        if (!get(l->rank, ctx) && !get(l->world_size, ctx))
            continue;
        out->launcher = l->name;
        take(out, get, ctx, l->rank, GPUFL__JOB_RANK, &out->rank);
        take(out, get, ctx, l->local_rank, GPUFL__JOB_LOCAL_RANK, &out->local_rank);
        take(out, get, ctx, l->world_size, GPUFL__JOB_WORLD_SIZE, &out->world_size);
        take(out, get, ctx, l->local_world_size, GPUFL__JOB_LOCAL_WORLD_SIZE, &out->local_world_size);
        break;
    }
    if (out->launcher && !strcmp(out->launcher, "torch.distributed") && get("TORCHELASTIC_RUN_ID", ctx))
        out->launcher = "torchrun";
    check(out, GPUFL__JOB_RANK, GPUFL__JOB_WORLD_SIZE, "rank");
    check(out, GPUFL__JOB_LOCAL_RANK, GPUFL__JOB_LOCAL_WORLD_SIZE, "local rank");
    if ((out->has & GPUFL__JOB_LOCAL_WORLD_SIZE) && (out->has & GPUFL__JOB_WORLD_SIZE) &&
        out->local_world_size > out->world_size) {
        warn(out, "the local world size is more than the world size%s%s%s; the local one left out", "", "", "");
        out->has &= ~(uint32_t)GPUFL__JOB_LOCAL_WORLD_SIZE;
    }
    for (size_t i = 0; i < sizeof id_vars / sizeof id_vars[0]; i++) {
        const char *v = get(id_vars[i], ctx);
        /* torchrun's default rendezvous id is "none", the same for every job */
        if (!v || !*v || (i == 0 && !strcmp(v, "none")))
            continue;
        if (!strcmp(id_vars[i], GPUFL_RUN_JOB_ID_ENV) && !out->launcher) /* a lone program is no job's rank */
            continue;
        if (strlen(v) >= sizeof out->id) {
            warn(out, "%s is %s bytes long, more than a job id may be%s; left out", id_vars[i], "over 127", "");
            continue;
        }
        copy(out->id, sizeof out->id, v);
        out->id_from = id_vars[i];
        break;
    }
    if (out->id[0] && !strcmp(out->id_from, "SLURM_JOB_ID"))
        copy(out->step, sizeof out->step, get("SLURM_STEP_ID", ctx));
    const char *addr = get("MASTER_ADDR", ctx), *port = get("MASTER_PORT", ctx);
    if (addr && *addr && strlen(addr) < 256)
        snprintf(out->master, sizeof out->master, "%s:%.16s", addr, port ? port : "");
    if (!out->launcher && out->id[0]) /* an id alone: its variable says whose */
        out->launcher = out->id_from == id_vars[0] ? "torchrun" : out->id_from == id_vars[1] ? "slurm" : "openmpi";
    if (out->launcher)
        copy(out->cuda_visible_devices, sizeof out->cuda_visible_devices, get("CUDA_VISIBLE_DEVICES", ctx));
}

static const char *process_env(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

void gpufl__job_read(gpufl__job *out) { gpufl__job_from_env(process_env, NULL, out); }

void gpufl__job_dir_name(const char *id, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "job-");
    for (const char *p = id; *p && n + 1 < len && p - id < 64; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
}
