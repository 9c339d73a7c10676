/* `gpufl mem diagnose`: being built (issue 14); refuses until then. */
#include <stdio.h>

#include "cli/mem.h"

static int run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gpufl mem diagnose: not built yet\n");
    return GFL_MEM_ERROR;
}

const gpufl__mem_command gpufl__mem_diagnose_command = {"diagnose", run, "", "", ""};
