/*
 * The Python part of `gpufl run`'s environment: a Python program gets the
 * start-up hook of python/run_hook/ (PYTHONPATH) and GPUFL_TORCH_OPS=1, so
 * that its kernels are named by their PyTorch ops (gpufl.torch) without a
 * change to the program; and GPUFL_LIBRARY names the libgpufl beside the
 * injection library, so that the gpufl package and the injected session
 * share one copy of the library.
 *
 * A program is taken for Python when its name is python, python3,
 * python3.12, ... or it is a script whose #! line runs one (found on PATH
 * as exec would find it): torchrun, accelerate, a ./train.py.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run_python.h"

/* "python", "python3", "python3.12" */
static bool python_name(const char *base)
{
    if (strncmp(base, "python", 6) != 0)
        return false;
    for (const char *p = base + 6; *p; p++)
        if (!(*p >= '0' && *p <= '9') && *p != '.')
            return false;
    return true;
}

/* PROGRAM as exec would run it: a path when it has a '/', else searched on
 * PATH. false when not found. */
static bool locate(const char *program, char *out, size_t len)
{
    if (strchr(program, '/')) {
        snprintf(out, len, "%s", program);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", program);
        if (access(out, X_OK) == 0)
            return true;
        p += n + (end != NULL);
    }
    return false;
}

/* The interpreter's base name of a #! line ("#!/usr/bin/env python3" and
 * "#!/usr/bin/python3 -u" both give "python3"), or "" . */
static void shebang_interpreter(const char *file, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(file, "re");
    if (!f)
        return;
    char line[256];
    if (fgets(line, sizeof line, f) && line[0] == '#' && line[1] == '!') {
        char *tok = strtok(line + 2, " \t\r\n");
        const char *base = tok ? strrchr(tok, '/') : NULL;
        base = base ? base + 1 : tok;
        if (base && !strcmp(base, "env")) { /* #!/usr/bin/env [-S] python3 */
            while ((tok = strtok(NULL, " \t\r\n")) && tok[0] == '-')
                ;
            base = tok;
        }
        if (base)
            snprintf(out, len, "%s", base);
    }
    fclose(f);
}

bool gpufl__run_is_python(const char *program)
{
    const char *base = strrchr(program, '/');
    if (python_name(base ? base + 1 : program))
        return true;
    char path[PATH_MAX], interp[128];
    if (!locate(program, path, sizeof path))
        return false;
    shebang_interpreter(path, interp, sizeof interp);
    return python_name(interp);
}

int gpufl__run_python_env(const char *inject_dir, bool torch_ops)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", inject_dir, GPUFL_RUN_PYTHON_DIR);
    if (access(path, R_OK) != 0)
        return 0; /* a build or install without the hook: nothing to add */
    const char *lib = "libgpufl.so.0";
    char libpath[PATH_MAX + 64];
    snprintf(libpath, sizeof libpath, "%s/%s", inject_dir, lib);
    const char *have = getenv("GPUFL_LIBRARY");
    if ((!have || !have[0]) && access(libpath, R_OK) == 0 && setenv("GPUFL_LIBRARY", libpath, 1) != 0)
        goto fail;
    if (gpufl__cli_env_prepend("PYTHONPATH", path) != 0)
        return -1;
    if (setenv("GPUFL_TORCH_OPS", torch_ops ? "1" : "0", 1) != 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "gpufl run: cannot set the Python environment: %s\n", strerror(errno));
    return -1;
}
