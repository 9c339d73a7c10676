/*
 * Job identity (core/job.h): where a session stands in a job of many
 * processes, as its launcher set it, in session.json, and `gpufl run`'s
 * directory per job.
 *
 * Why: a later merge orders and groups sessions by these facts, so a
 * wrong rank is worse than none. Each launcher's variables are read, the
 * launcher nearest the program wins, malformed or contradictory values are
 * left out with a warning in the session's log (never a failed init), and
 * a hostile job id cannot put a session outside log_path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/job.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "report_schema.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(tmp, "job")

/* An environment as NAME=value strings, NULL-terminated. */
static const char *env_of(const char *name, void *ctx)
{
    size_t n = strlen(name);
    for (const char *const *e = ctx; *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static void job_of(const char *const *env, gpufl__job *j) { gpufl__job_from_env(env_of, (void *)env, j); }

static void test_torchrun(void **state)
{
    (void)state;
    const char *env[] = {"RANK=3",
                         "LOCAL_RANK=1",
                         "WORLD_SIZE=8",
                         "LOCAL_WORLD_SIZE=2",
                         "TORCHELASTIC_RUN_ID=r42",
                         "MASTER_ADDR=10.0.0.1",
                         "MASTER_PORT=29500",
                         "SLURM_PROCID=0",
                         "SLURM_JOB_ID=77",
                         NULL};
    gpufl__job j;
    job_of(env, &j);
    assert_string_equal(j.launcher, "torchrun"); /* nearer the program than SLURM */
    assert_int_equal(j.has,
                     GPUFL__JOB_RANK | GPUFL__JOB_LOCAL_RANK | GPUFL__JOB_WORLD_SIZE | GPUFL__JOB_LOCAL_WORLD_SIZE);
    assert_int_equal(j.rank, 3);
    assert_int_equal(j.local_rank, 1);
    assert_int_equal(j.world_size, 8);
    assert_int_equal(j.local_world_size, 2);
    assert_string_equal(j.id, "r42");
    assert_string_equal(j.id_from, "TORCHELASTIC_RUN_ID");
    assert_string_equal(j.master, "10.0.0.1:29500");
    assert_string_equal(j.warning, "");
    /* torchrun's default run id "none" names no job: SLURM's does */
    const char *none[] = {"RANK=0",          "WORLD_SIZE=2",    "TORCHELASTIC_RUN_ID=none",
                          "SLURM_JOB_ID=77", "SLURM_STEP_ID=3", NULL};
    job_of(none, &j);
    assert_string_equal(j.launcher, "torchrun");
    assert_string_equal(j.id, "77");
    assert_string_equal(j.id_from, "SLURM_JOB_ID");
    assert_string_equal(j.step, "3");
    const char *plain[] = {"RANK=1", "WORLD_SIZE=2", NULL};
    job_of(plain, &j);
    assert_string_equal(j.launcher, "torch.distributed");
    assert_string_equal(j.id, "");
    assert_null(j.id_from);
    /* under `gpufl run`, plain torchrun's ranks get the run's id; a lone program none */
    const char *run[] = {"RANK=1", "WORLD_SIZE=2", "TORCHELASTIC_RUN_ID=none", "GPUFL_RUN_JOB_ID=run-7", NULL};
    job_of(run, &j);
    assert_string_equal(j.launcher, "torchrun");
    assert_string_equal(j.id, "run-7");
    assert_string_equal(j.id_from, "GPUFL_RUN_JOB_ID");
    const char *lone[] = {"GPUFL_RUN_JOB_ID=run-7", NULL};
    job_of(lone, &j);
    assert_null(j.launcher);
    assert_string_equal(j.id, "");
}

static void test_other_launchers(void **state)
{
    (void)state;
    gpufl__job j;
    const char *slurm[] = {"SLURM_PROCID=5",
                           "SLURM_LOCALID=1",
                           "SLURM_NTASKS=6",
                           "SLURM_JOB_ID=123",
                           "SLURM_STEP_ID=0",
                           "CUDA_VISIBLE_DEVICES=1",
                           NULL};
    job_of(slurm, &j);
    assert_string_equal(j.launcher, "slurm");
    assert_int_equal(j.has, GPUFL__JOB_RANK | GPUFL__JOB_LOCAL_RANK | GPUFL__JOB_WORLD_SIZE);
    assert_int_equal(j.rank, 5);
    assert_int_equal(j.world_size, 6);
    assert_string_equal(j.id, "123");
    assert_string_equal(j.step, "0");
    assert_string_equal(j.cuda_visible_devices, "1");
    const char *ompi[] = {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_SIZE=4",
                          "SLURM_PROCID=0", NULL};
    job_of(ompi, &j);
    assert_string_equal(j.launcher, "openmpi");
    assert_int_equal(j.rank, 2);
    assert_int_equal(j.world_size, 4);
    const char *mpich[] = {"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", NULL};
    job_of(mpich, &j);
    assert_string_equal(j.launcher, "mpich");
    assert_int_equal(j.local_rank, 1);
    assert_true(j.has & GPUFL__JOB_LOCAL_RANK);
    const char *nothing[] = {"HOME=/root", NULL};
    job_of(nothing, &j);
    assert_null(j.launcher);
    assert_int_equal(j.has, 0);
}

static void test_bad_values_left_out(void **state)
{
    (void)state;
    gpufl__job j;
    const char *abc[] = {"RANK=abc", "WORLD_SIZE=4", "LOCAL_RANK=-1", NULL};
    job_of(abc, &j);
    assert_string_equal(j.launcher, "torch.distributed");
    assert_int_equal(j.has, GPUFL__JOB_WORLD_SIZE);
    assert_non_null(strstr(j.warning, "RANK=abc"));
    assert_non_null(strstr(j.warning, "LOCAL_RANK=-1"));
    const char *past[] = {"RANK=4", "WORLD_SIZE=4", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=8", NULL};
    job_of(past, &j);
    assert_int_equal(j.has & (GPUFL__JOB_RANK | GPUFL__JOB_WORLD_SIZE), 0);
    assert_non_null(strstr(j.warning, "rank 4 is not below its size 4"));
    const char *huge[] = {"RANK=99999999999", "WORLD_SIZE=0", NULL};
    job_of(huge, &j);
    assert_int_equal(j.has, 0);
}

static void test_dir_name(void **state)
{
    (void)state;
    char name[80];
    gpufl__job_dir_name("../../etc", name, sizeof name);
    assert_string_equal(name, "job-.._.._etc");
    gpufl__job_dir_name("", name, sizeof name);
    assert_string_equal(name, "job-");
    char longid[200];
    memset(longid, '/', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    gpufl__job_dir_name(longid, name, sizeof name);
    assert_int_equal(strlen(name), 4 + 64);
    assert_null(strchr(name, '/'));
}

static const char *const launcher_vars[] = {"RANK",
                                            "LOCAL_RANK",
                                            "WORLD_SIZE",
                                            "LOCAL_WORLD_SIZE",
                                            "TORCHELASTIC_RUN_ID",
                                            "MASTER_ADDR",
                                            "MASTER_PORT",
                                            "SLURM_PROCID",
                                            "SLURM_LOCALID",
                                            "SLURM_NTASKS",
                                            "SLURM_JOB_ID",
                                            "SLURM_STEP_ID",
                                            "OMPI_COMM_WORLD_RANK",
                                            "OMPI_COMM_WORLD_LOCAL_RANK",
                                            "OMPI_COMM_WORLD_SIZE",
                                            "OMPI_MCA_ess_base_jobid",
                                            "PMI_RANK",
                                            "PMI_SIZE",
                                            "MPI_LOCALRANKID",
                                            "GPUFL_RUN_REPORT",
                                            NULL};

/* The reader gives the same facts, for the directory and for a file in it,
 * and `gpufl report` shows them in its header, as text and JSON. */
static void check_reader(const char *dir)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/system.log", dir);
    const char *opened[] = {dir, path};
    for (int k = 0; k < 2; k++) {
        gpufl_trace *t;
        char err[512];
        if (gpufl_trace_open(opened[k], &t, err, sizeof err) != 0)
            fail_msg("%s", err);
        const gpufl_trace_job *j = gpufl_trace_get_job(t);
        assert_int_equal(j->struct_size, sizeof *j);
        assert_int_equal(j->present, 1);
        assert_string_equal(gpufl_trace_string(t, j->launcher), "torchrun");
        assert_int_equal(j->has, GPUFL_TRACE_JOB_RANK | GPUFL_TRACE_JOB_LOCAL_RANK | GPUFL_TRACE_JOB_WORLD_SIZE);
        assert_int_equal(j->rank, 1);
        assert_int_equal(j->world_size, 2);
        assert_string_equal(gpufl_trace_string(t, j->id), "../../escape");
        assert_string_equal(gpufl_trace_string(t, j->host), gpufl_trace_string(t, gpufl_trace_get_info(t)->host));
        gpufl_trace_close(t);
    }
#ifdef GFL_CLI
    char *out = NULL;
    const char *text[] = {dir, NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", text, &out, NULL), 0);
    assert_non_null(strstr(out, "\n  job       rank 1 of 2 (local rank 1), torchrun job ../../escape\n"));
    free(out);
    const char *json[] = {dir, "--format", "json", NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", json, &out, NULL), 0);
    json_t *r = json_loads(out, 0, NULL);
    assert_non_null(r);
    char why[512];
    if (report_schema_check(r, why, sizeof why) != 0) /* job's members are in the schema */
        fail_msg("%s", why);
    json_t *job = json_object_get(json_object_get(r, "session"), "job");
    assert_int_equal(tu_int(job, "rank"), 1);
    assert_int_equal(tu_int(job, "world_size"), 2);
    assert_string_equal(tu_str(job, "launcher"), "torchrun");
    assert_true(json_is_null(json_object_get(job, "local_world_size")));
    json_decref(r);
    free(out);
    char page[4300];
    snprintf(page, sizeof page, "%s/report.html", tmp);
    const char *html[] = {dir, "--format", "html", "-o", page, NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", html, NULL, NULL), 0);
    out = tu_read_file(page, NULL);
    assert_non_null(strstr(out, "<tr><th>job</th><td>rank 1 of 2 (local rank 1), torchrun job ../../escape</td></tr>"));
    free(out);
#endif
}

static char *record(const char *sub)
{
    char *log_path = malloc(4200);
    snprintf(log_path, 4200, "%s/%s", tmp, sub);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "rank";
    o.log_path = log_path;
    o.backend = GPUFL_BACKEND_NONE;
    o.log_format = GPUFL_LOG_NDJSON;
    assert_true(gpufl_init(&o));
    gpufl_shutdown();
    return log_path;
}

/* session.json's job object, through the real library; and `gpufl run`'s
 * directory per job, which a hostile id cannot leave. */
static void test_session_json_and_dir(void **state)
{
    (void)state;
    for (const char *const *v = launcher_vars; *v; v++)
        tu_unsetenv(*v);
    char *plain = record("plain");
    char *dir = tu_session_dir(plain);
    json_t *js = tu_session_json(dir);
    assert_null(json_object_get(js, "job")); /* no launcher: no job */
    json_decref(js);
    gpufl_trace *t;
    char err[512];
    assert_int_equal(gpufl_trace_open(dir, &t, err, sizeof err), 0);
    assert_int_equal(gpufl_trace_get_job(t)->present, 0);
    gpufl_trace_close(t);
    free(dir);

    tu_setenv("RANK", "1");
    tu_setenv("LOCAL_RANK", "1");
    tu_setenv("WORLD_SIZE", "2");
    tu_setenv("TORCHELASTIC_RUN_ID", "../../escape");
    char report[4300];
    snprintf(report, sizeof report, "%s/run-report", tmp);
    tu_write_file(report, "");
    tu_setenv("GPUFL_RUN_REPORT", report);
    char *ranked = record("ranked");
    char jobdir[4300];
    snprintf(jobdir, sizeof jobdir, "%s/job-.._.._escape", ranked);
    dir = tu_session_dir(jobdir);
    assert_non_null(dir);
    js = tu_session_json(dir);
    json_t *job = json_object_get(js, "job");
    assert_non_null(job);
    assert_string_equal(tu_str(job, "launcher"), "torchrun");
    assert_int_equal(tu_int(job, "rank"), 1);
    assert_int_equal(tu_int(job, "local_rank"), 1);
    assert_int_equal(tu_int(job, "world_size"), 2);
    assert_null(json_object_get(job, "local_world_size"));
    assert_string_equal(tu_str(job, "id"), "../../escape");
    assert_string_equal(tu_str(job, "id_from"), "TORCHELASTIC_RUN_ID");
    assert_string_equal(tu_str(job, "host"), tu_str(js, "host"));
    assert_true(json_is_array(json_object_get(job, "gpu_uuids")));
    json_decref(js);
    check_reader(dir);
    free(dir);

    /* malformed: recorded without it, and said in the session's log */
    tu_unsetenv("GPUFL_RUN_REPORT");
    tu_setenv("RANK", "abc");
    char *bad = record("bad");
    dir = tu_session_dir(bad);
    js = tu_session_json(dir);
    job = json_object_get(js, "job");
    assert_non_null(job);
    assert_null(json_object_get(job, "rank"));
    assert_int_equal(tu_int(job, "world_size"), 2);
    json_decref(js);
    char syslog[4300];
    snprintf(syslog, sizeof syslog, "%s/system.log", dir);
    tu_ndjson f;
    assert_int_equal(tu_ndjson_load(syslog, &f), 0);
    bool warned = false;
    for (size_t i = 0; i < f.n; i++) {
        const char *type = json_string_value(json_object_get(f.lines[i], "type"));
        const char *msg = json_string_value(json_object_get(f.lines[i], "message"));
        warned |= type && !strcmp(type, "log") && msg && strstr(msg, "RANK=abc");
    }
    assert_true(warned);
    tu_ndjson_free(&f);
    free(dir);
    for (const char *const *v = launcher_vars; *v; v++)
        tu_unsetenv(*v);
    free(plain);
    free(ranked);
    free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torchrun),
        cmocka_unit_test(test_other_launchers),
        cmocka_unit_test(test_bad_values_left_out),
        cmocka_unit_test(test_dir_name),
        cmocka_unit_test(test_session_json_and_dir),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
