/*
 * `gpufl stacks SESSION [--raw]`: every CPU stack the session recorded
 * (enable_stack_trace), with how many device events were launched from it
 * and its frames symbolized (function, file:line) from the module files on
 * this machine. --raw prints module+offset only, as recorded.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "read/stack_table.h"
#include "read/symbolize.h"

static int usage(void)
{
    fprintf(stderr, "usage: gpufl stacks SESSION [--raw]\n");
    return GFL_EXIT_USAGE;
}

static void print_stack(const gpufl__stack_rec *s, gpufl__symbolizer *sym)
{
    printf("stack %u: %u frame%s%s, %llu use%s\n", s->id, s->total, s->total == 1 ? "" : "s",
           s->truncated ? " (truncated: the stack was deeper)" : "", (unsigned long long)s->uses,
           s->uses == 1 ? "" : "s");
    for (uint32_t i = 0; i < s->total; i++) {
        const gpufl__stack_frame_rec *f = &s->frames[i];
        char text[2400];
        if (!f->present)
            snprintf(text, sizeof text, "(not recorded: a piece of the definition is missing)");
        else if (sym)
            gpufl__symbolize_frame(sym, f->module, f->offset, true, text, sizeof text);
        else if (f->module)
            snprintf(text, sizeof text, "%s+0x%llx", f->module, (unsigned long long)f->offset);
        else
            snprintf(text, sizeof text, "?+0x%llx", (unsigned long long)f->offset);
        printf("  #%-2u %s\n", i, text);
    }
}

int gpufl_cmd_stacks(int argc, char **argv)
{
    const char *path = NULL;
    bool raw = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--raw"))
            raw = true;
        else if (argv[i][0] == '-' || path)
            return usage();
        else
            path = argv[i];
    }
    if (!path)
        return usage();
    gpufl__stack_table t;
    char err[4400] = "";
    if (gpufl__stack_table_load(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl stacks: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__symbolizer *sym = NULL;
    if (!raw) {
        if (!gpufl__symbolizer_available())
            fprintf(stderr, "gpufl stacks: this gpufl was built without libdw: frames are shown as "
                            "module+offset (addr2line -f -C -e MODULE OFFSET resolves them)\n");
        else if (!(sym = gpufl__symbolizer_new()))
            fprintf(stderr, "gpufl stacks: out of memory; frames are shown as module+offset\n");
    }
    if (!t.n)
        printf("no stacks recorded (enable_stack_trace is off, or the session made no GPU calls)\n");
    for (size_t i = 0; i < t.n; i++) {
        if (i)
            printf("\n");
        print_stack(&t.stacks[i], sym);
    }
    if (t.unknown_uses)
        printf("\n%llu event%s refer to stacks whose definition was not recorded\n",
               (unsigned long long)t.unknown_uses, t.unknown_uses == 1 ? "" : "s");
    gpufl__symbolizer_free(sym);
    gpufl__stack_table_free(&t);
    return GFL_EXIT_OK;
}
