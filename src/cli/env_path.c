/*
 * Putting a path first in a list variable of the environment (PATH-like,
 * ':'-separated): what `gpufl run` does to LD_PRELOAD and PYTHONPATH of the
 * program it starts (cli.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int gpufl__cli_env_prepend(const char *name, const char *path)
{
    const char *old = getenv(name);
    size_t len = strlen(path) + (old ? strlen(old) : 0) + 2;
    char *v = malloc(len);
    int rc = v ? 0 : -1;
    if (v) {
        snprintf(v, len, "%s%s%s", path, old && old[0] ? ":" : "", old && old[0] ? old : "");
        rc = setenv(name, v, 1);
    }
    if (rc != 0)
        fprintf(stderr, "gpufl run: cannot set %s: %s\n", name, v ? strerror(errno) : "out of memory");
    free(v);
    return rc;
}
