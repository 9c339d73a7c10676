/*
 * `gpufl options [--markdown]`: the option table, printed from the same
 * table the library uses (README.md's table is this command's output).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/options.h"

int gpufl_cmd_options(int argc, char **argv)
{
    int markdown = argc > 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--markdown") != 0)
            return gpufl__cli_usage_error("options", "unknown argument '%s'", argv[i]);
    if (markdown) {
        printf("| option | default | environment | meaning |\n|---|---|---|---|\n");
        for (size_t i = 0; i < gpufl__options_count; i++) {
            const gpufl__option_desc *d = &gpufl__options[i];
            printf("| `%s` | %s | `%s` | %s |\n", d->name, d->default_doc, d->env, d->doc);
        }
        return GFL_EXIT_OK;
    }
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        printf("%-28s %-20s %s\n    %s\n", d->name, d->default_doc, d->env, d->doc);
    }
    return GFL_EXIT_OK;
}
