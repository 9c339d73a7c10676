/*
 * `gpufl summary SESSION [--json]`: the summary a session keeps in its
 * session.json (rewritten every two seconds while it records and at its end).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "collect/summary_json.h"
#include "present/summary_text.h"

int gpufl_cmd_summary(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (argv[i][0] == '-')
            return gpufl__cli_usage_error("summary", "unknown option '%s'", argv[i]);
        else if (path)
            return gpufl__cli_usage_error("summary", "one SESSION only ('%s' is a second)", argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return gpufl__cli_usage_error("summary", "which SESSION?");
    gpufl__summary s;
    char err[1024];
    if (gpufl__summary_load(path, &s, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl summary: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    if (json) {
        json_t *j = gpufl__summary_to_json(&s);
        if (j)
            json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("\n");
        json_decref(j);
    } else {
        gpufl__summary_render_text(&s, stdout);
    }
    gpufl__summary_free(&s);
    return GFL_EXIT_OK;
}
