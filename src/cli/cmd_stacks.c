/*
 * `gpufl stacks SESSION [--raw] [--symbolize-here]`: every CPU stack the
 * session recorded (enable_stack_trace), with how many device events were
 * launched from it and its frames symbolized (function, file:line) from the
 * module files on this machine. --raw prints module+offset only, as
 * recorded. Sessions are read in either format (NDJSON logs or trace.gflt).
 *
 * Frames are symbolized only for a session known to have been recorded on
 * this machine (read/session_origin.h): elsewhere, a module at the same
 * path (libc.so.6) is likely another build, whose names would look right
 * and be wrong. Other sessions print module+offset with a note saying why;
 * --symbolize-here uses this machine's files anyway (a copied venv, an
 * identical image). Modules that are not here at all stay module+offset,
 * and a note lists them, since that is what the user needs to know to get
 * symbols (run it where the modules are, or copy them to the same paths).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "read/session_origin.h"
#include "read/stack_table.h"
#include "read/symbolize.h"

/* Which of the table's modules could not be read on this machine. */
typedef struct missing_modules {
    const gpufl__stack_table *t;
    bool *missing; /* per t->modules entry */
    size_t n;
} missing_modules;

static void note_missing(missing_modules *m, const char *module)
{
    for (size_t i = 0; m->missing && i < m->t->nmodules; i++) {
        if (m->t->modules[i] == module) {
            m->n += !m->missing[i];
            m->missing[i] = true;
            return;
        }
    }
}

static void print_stack(const gpufl__stack_rec *s, gpufl__symbolizer *sym, missing_modules *m)
{
    printf("stack %u: %u frame%s%s, %llu use%s\n", s->id, s->total, s->total == 1 ? "" : "s",
           s->truncated ? " (truncated: the stack was deeper)" : "", (unsigned long long)s->uses,
           s->uses == 1 ? "" : "s");
    for (uint32_t i = 0; i < s->total; i++) {
        const gpufl__stack_frame_rec *f = &s->frames[i];
        char text[2400];
        if (!f->present) {
            snprintf(text, sizeof text, "(not recorded: a piece of the definition is missing)");
        } else if (f->source) {
            snprintf(text, sizeof text, "%s", f->module ? f->module : "?");
        } else if (sym) {
            if (gpufl__symbolize_frame(sym, f->module, f->offset, true, text, sizeof text) == GFL_SYM_NO_MODULE)
                note_missing(m, f->module); /* the text is module+offset */
        } else if (f->module) {
            snprintf(text, sizeof text, "%s+0x%llx", f->module, (unsigned long long)f->offset);
        } else {
            snprintf(text, sizeof text, "?+0x%llx", (unsigned long long)f->offset);
        }
        printf("  #%-2u %s\n", i, text);
    }
}

int gpufl_cmd_stacks(int argc, char **argv)
{
    const char *path = NULL;
    bool raw = false, here = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--raw"))
            raw = true;
        else if (!strcmp(argv[i], "--symbolize-here"))
            here = true;
        else if (argv[i][0] == '-')
            return gpufl__cli_usage_error("stacks", "unknown option '%s'", argv[i]);
        else if (path)
            return gpufl__cli_usage_error("stacks", "one SESSION only ('%s' is a second)", argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return gpufl__cli_usage_error("stacks", "which SESSION?");
    gpufl__stack_table t;
    char err[4400] = "";
    if (gpufl__stack_table_load(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl stacks: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__cli_note_read("stacks", t.read_files, t.read_why, t.copies);
    gpufl__symbolizer *sym = NULL;
    char why[1024];
    if (!raw && t.n && !here && gpufl__symbolizer_available() &&
        gpufl__session_origin_of(path, why, sizeof why) != GFL_ORIGIN_HERE) {
        fprintf(stderr,
                "gpufl stacks: %s: frames are shown as module+offset, since this machine's copies "
                "of the modules may differ; --symbolize-here uses them anyway\n",
                why);
    } else if (!raw) {
        if (!gpufl__symbolizer_available())
            fprintf(stderr, "gpufl stacks: this gpufl was built without libdw: frames are shown as "
                            "module+offset (addr2line -f -C -e MODULE OFFSET resolves them)\n");
        else if (!(sym = gpufl__symbolizer_new()))
            fprintf(stderr, "gpufl stacks: out of memory; frames are shown as module+offset\n");
    }
    if (!t.n)
        printf("no stacks recorded (enable_stack_trace is off, or the session made no GPU calls)\n");
    missing_modules m = {.t = &t, .missing = sym && t.nmodules ? calloc(t.nmodules, sizeof(bool)) : NULL};
    for (size_t i = 0; i < t.n; i++) {
        if (i)
            printf("\n");
        print_stack(&t.stacks[i], sym, &m);
    }
    if (t.unknown_uses)
        printf("\n%llu event%s refer to stacks whose definition was not recorded\n", (unsigned long long)t.unknown_uses,
               t.unknown_uses == 1 ? "" : "s");
    if (m.n) {
        printf("\n%zu of %zu module%s not found on this machine (the session was recorded elsewhere?): "
               "their frames are shown as module+offset; run gpufl stacks where they are, or copy them "
               "to the same paths, for function names:\n",
               m.n, t.nmodules, t.nmodules == 1 ? " was" : "s were");
        for (size_t i = 0; i < t.nmodules; i++)
            if (m.missing[i])
                printf("  %s\n", t.modules[i]);
    }
    free(m.missing);
    gpufl__symbolizer_free(sym);
    gpufl__stack_table_free(&t);
    return GFL_EXIT_OK;
}
