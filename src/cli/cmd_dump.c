/*
 * `gpufl dump PID [--wait SECONDS]`: has a running program write out its
 * flight window, for a job nobody can restart. The session leaves a note
 * (session/dumps.h) with its directory and dump signal while it keeps a
 * window; the command reads it, sends that signal and waits for the new
 * dump under <session dir>/dumps/ to appear, then prints its path.
 *
 * Without the note nothing is sent: the default action of SIGUSR2 is to
 * end a process, and a program that is not recording with a flight window
 * (or has its own handler) must not be killed by asking it for a dump.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <stdbool.h>

#include "cli/cli.h"
#include "session/dumps.h"

#define DEFAULT_WAIT_S 30

/* The newest dump's name (names begin with a sequence number), "" if none. */
static void newest_dump(const char *session_dir, char *out, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/dumps", session_dir);
    out[0] = '\0';
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, out) > 0)
            snprintf(out, len, "%s", e->d_name);
    closedir(d);
}

static int parse_args(int argc, char **argv, long *pid, double *wait_s)
{
    *pid = 0;
    *wait_s = DEFAULT_WAIT_S;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
            *wait_s = strtod(argv[++i], &end);
            if (*end || *wait_s < 0 || *wait_s > 3600)
                return gpufl__cli_usage_error("dump", "--wait takes seconds, 0 to 3600, not `%s`", argv[i]);
        } else if (argv[i][0] != '-' && *pid == 0) {
            *pid = strtol(argv[i], &end, 10);
            if (*end || *pid <= 0)
                return gpufl__cli_usage_error("dump", "`%s` is not a process id", argv[i]);
        } else {
            return gpufl__cli_usage_error("dump", "unexpected argument `%s`", argv[i]);
        }
    }
    if (*pid == 0)
        return gpufl__cli_usage_error("dump", "which process? give its PID");
    return 0;
}

int gpufl_cmd_dump(int argc, char **argv)
{
    long pid;
    double wait_s;
    int rc = parse_args(argc, argv, &pid, &wait_s);
    if (rc)
        return rc;
    char note[512];
    if (gpufl__dump_note_path((int)pid, note, sizeof note) != 0)
        return GFL_EXIT_FAIL;
    FILE *f = fopen(note, "r");
    if (!f) {
        fprintf(stderr,
                "gpufl dump: process %ld keeps no flight window this user can reach (no %s): it is not "
                "recording with flight_window_s, runs as another user, or handles its dump signal itself; "
                "nothing sent\n",
                pid, note);
        return GFL_EXIT_FAIL;
    }
    char sig_line[32] = "", dir[4200] = "";
    bool ok = fgets(sig_line, sizeof sig_line, f) && fgets(dir, sizeof dir, f);
    fclose(f);
    dir[strcspn(dir, "\n")] = '\0';
    int sig = atoi(sig_line);
    if (!ok || sig <= 0 || dir[0] != '/') {
        fprintf(stderr, "gpufl dump: %s is not a gpufl note (signal and session directory); nothing sent\n", note);
        return GFL_EXIT_FAIL;
    }
    if (kill((pid_t)pid, 0) != 0) {
        fprintf(stderr, "gpufl dump: process %ld: %s (a note of a session that did not end: %s)\n", pid,
                strerror(errno), note);
        return GFL_EXIT_FAIL;
    }
    char before[256];
    newest_dump(dir, before, sizeof before);
    if (kill((pid_t)pid, sig) != 0) {
        fprintf(stderr, "gpufl dump: cannot signal process %ld: %s\n", pid, strerror(errno));
        return GFL_EXIT_FAIL;
    }
    struct timespec nap = {0, 20000000};
    for (double waited = 0; waited <= wait_s; waited += 0.02) {
        char now[256];
        newest_dump(dir, now, sizeof now);
        if (strcmp(now, before) > 0) {
            printf("%s/dumps/%s\n", dir, now);
            return GFL_EXIT_OK;
        }
        nanosleep(&nap, NULL);
    }
    if (wait_s == 0) {
        fprintf(stderr, "gpufl dump: signal %d sent to process %ld; its dumps go to %s/dumps\n", sig, pid, dir);
        return GFL_EXIT_OK;
    }
    fprintf(stderr,
            "gpufl dump: signal %d sent to process %ld, but no dump appeared in %s/dumps within %.0f s (a dump "
            "younger than dump_min_interval_s, or the program is stopped); its log says why\n",
            sig, pid, dir, wait_s);
    return GFL_EXIT_FAIL;
}
