/*
 * `gpufl summary SESSION [--json]`: the summary a session keeps in its
 * session.json (rewritten every two seconds while it records and at its
 * end). A session that did not end cleanly (killed, crashed, still
 * running) is summarized from its recorded events instead, which reach
 * further than its last checkpoint (summary_recorded.h).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/summary_recorded.h"
#include "collect/summary_json.h"
#include "gpufl/trace.h"
#include "present/report/crash_text.h"
#include "present/report/summary_text.h"

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
    if (strcmp(s.status, "ended") != 0 && gpufl__summary_from_recorded(path, &s, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl summary: %s\n", err);
        gpufl__summary_free(&s);
        return GFL_EXIT_FAIL;
    }
    /* a crash: what session.json has (signal, thread), and its stack and
     * open scopes from the recorded events */
    gpufl_trace *t = NULL;
    if (s.crashed && gpufl_trace_open(path, &t, err, sizeof err) != 0)
        t = NULL;
    if (json) {
        json_t *j = gpufl__summary_to_json(&s);
        if (j && s.crashed)
            json_object_set_new(j, "crash", t ? gpufl__crash_json(t) : gpufl__crash_to_json(&s));
        if (j) {
            /* whether the figures are final, and where they come from */
            json_object_set_new(j, "ended", json_boolean(strcmp(s.status, "ended") == 0));
            json_object_set_new(j, "figures_from", json_string(s.from_events ? "recorded events" : "session.json"));
        }
        if (j)
            json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("\n");
        json_decref(j);
    } else {
        gpufl__summary_render_text(&s, stdout);
        if (t)
            gpufl__crash_render_text(t, stdout, "crashed    ", 11);
    }
    gpufl_trace_close(t);
    gpufl__summary_free(&s);
    return GFL_EXIT_OK;
}
