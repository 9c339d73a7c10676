/* `gpufl mem analyze`: being built (issue 14); refuses until then. */
#include <stdio.h>

#include "cli/mem.h"

static int run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gpufl mem analyze: not built yet\n");
    return GFL_MEM_ERROR;
}

const gpufl__mem_command gpufl__mem_analyze_command = {"analyze", run, "", "", ""};

int gpufl__mem_analyze_session(const char *path, int json, FILE *out, int *leak_found, char *err, size_t err_len)
{
    (void)path;
    (void)json;
    (void)out;
    *leak_found = 0;
    snprintf(err, err_len, "gpufl mem analyze: not built yet");
    return -1;
}
