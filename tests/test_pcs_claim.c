/*
 * One PC-sampling process per GPU (src/backend/cupti/pcs_claim.c): a
 * second process is refused and told the first one's pid; a claim is
 * given back at release and with the process; a forked child does not
 * keep its parent's claim alive; a planted link is not followed.
 *
 * Why: on an H100 a second process PC-sampling the same GPU got no
 * samples and then crashed inside CUPTI; this lock is what keeps gpufl
 * processes apart, and processes here stand in for them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cupti/pcs_claim.h"
#include "fs_util.h"

#define GPU "0000:65:00.0"

static char *dir;

static int setup(void **state)
{
    (void)state;
    dir = tu_mkdtemp("pcs_claim");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gpufl__pcs_release_claims();
    tu_rm_rf(dir);
    free(dir);
    return 0;
}

/* In a forked child: claims gpu and exits 0 when claimed, 1 when refused
 * with a reason naming want_pid (0: any), 2 otherwise. */
static int claim_in_child(const char *gpu, pid_t want_pid)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char err[512];
        int rc = gpufl__pcs_claim(dir, gpu, err, sizeof err);
        if (rc == 0)
            _exit(err[0] ? 2 : 0);
        char who[64];
        snprintf(who, sizeof who, "pid %ld", (long)want_pid);
        _exit(strstr(err, "another process") && (!want_pid || strstr(err, who)) ? 1 : 2);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void a_second_process_is_refused_with_the_first_ones_pid(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(gpufl__pcs_claim(dir, GPU, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(gpufl__pcs_claim(dir, GPU, err, sizeof err), 0); /* again: already ours */
    assert_int_equal(claim_in_child(GPU, getpid()), 1);
    assert_int_equal(claim_in_child("0000:66:00.0", 0), 0); /* another GPU is free */
    gpufl__pcs_release_claims();
    assert_int_equal(claim_in_child(GPU, 0), 0);
}

/* A child forked while the parent holds the claim (a DataLoader worker)
 * lives on after the parent's release: the claim is free all the same. */
static void a_forked_child_does_not_keep_the_claim(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(gpufl__pcs_claim(dir, GPU, err, sizeof err), 0);
    pid_t sleeper = fork();
    assert_true(sleeper >= 0);
    if (sleeper == 0) {
        pause();
        _exit(0);
    }
    assert_int_equal(claim_in_child(GPU, getpid()), 1);
    gpufl__pcs_release_claims();
    int free_now = claim_in_child(GPU, 0);
    kill(sleeper, SIGKILL);
    waitpid(sleeper, NULL, 0);
    assert_int_equal(free_now, 0);
}

/* A process that ends without releasing (killed) leaves the GPU free. */
static void the_claim_ends_with_its_process(void **state)
{
    (void)state;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        char err[512];
        char said = gpufl__pcs_claim(dir, GPU, err, sizeof err) == 0 && !err[0] ? 'y' : 'n';
        if (write(ready[1], &said, 1) != 1)
            _exit(3);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char said = 0;
    assert_int_equal(read(ready[0], &said, 1), 1);
    close(ready[0]);
    assert_int_equal(said, 'y');
    int refused = claim_in_child(GPU, holder);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    assert_int_equal(refused, 1);
    assert_int_equal(claim_in_child(GPU, 0), 0);
}

static void a_planted_link_is_not_followed(void **state)
{
    (void)state;
    char target[4200], link[4200];
    snprintf(target, sizeof target, "%s/target", dir);
    tu_write_file(target, "precious\n");
    snprintf(link, sizeof link, "%s/gpufl-pc-sampling-%s.lock", dir, GPU);
    assert_int_equal(symlink(target, link), 0);
    char err[512];
    assert_int_equal(gpufl__pcs_claim(dir, GPU, err, sizeof err), 0); /* unchecked, and said */
    if (!strstr(err, "not checked"))
        fail_msg("no reason given: %s", err);
    char *text = tu_read_file(target, NULL);
    assert_string_equal(text, "precious\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_second_process_is_refused_with_the_first_ones_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(a_forked_child_does_not_keep_the_claim, setup, teardown),
        cmocka_unit_test_setup_teardown(the_claim_ends_with_its_process, setup, teardown),
        cmocka_unit_test_setup_teardown(a_planted_link_is_not_followed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
