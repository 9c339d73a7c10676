/*
 * The Python part of `gpufl run`'s environment (run_python.c).
 */
#ifndef GPUFL_CLI_RUN_PYTHON_H
#define GPUFL_CLI_RUN_PYTHON_H

#include <stdbool.h>

/* The folder, beside the injection library, that holds the start-up hook
 * (python/run_hook/sitecustomize.py) and a copy of the gpufl package. */
#define GPUFL_RUN_PYTHON_DIR "gpufl-python"

/* Whether PROGRAM (argv[0] of the program to run) is a Python program. */
bool gpufl__run_is_python(const char *program);

/* Sets PYTHONPATH, GPUFL_TORCH_OPS (torch_ops: name kernels by their
 * PyTorch ops) and GPUFL_LIBRARY for a Python program; inject_dir is the
 * injection library's folder. Returns 0, or -1 after saying why. */
int gpufl__run_python_env(const char *inject_dir, bool torch_ops);

#endif /* GPUFL_CLI_RUN_PYTHON_H */
