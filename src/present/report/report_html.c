/*
 * The HTML report (report_html.h): the page around its parts. The data
 * goes after the tables, so the tables show while a big page loads, and
 * the script comes last, when every element it fills exists. What came
 * before a crash or an out-of-memory comes first, above the timeline, as
 * in the text report: it is what the reader of such a session came for.
 *
 * A Content-Security-Policy meta tag forbids every fetch (default-src
 * 'none'; only inline style and script run), so a report opened from
 * anywhere makes no network request, whatever a trace's strings hold.
 */
#include "present/report/report_html.h"

#include <stdio.h>

#include "gpufl/gpufl.h"
#include "present/report/html_out.h"
#include "present/report/report_html_parts.h"

static void page_head(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    const char *app = gpufl_trace_string(t, info->app_name);
    gpufl__hout_raw(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>gpufl report: ");
    gpufl__hout_text(o, *app ? app : "session");
    gpufl__hout_raw(o, "</title>\n<style>\n");
    gpufl__hout_raw(o, gpufl__html_css);
    gpufl__hout_raw(o, "</style></head>\n<body>\n<header><h1>gpufl report: ");
    gpufl__hout_text(o, *app ? app : "session");
    gpufl__hout_raw(o, "</h1>\n<nav>");
    if (r->flight.incident != GPUFL__ANA_INCIDENT_NONE)
        gpufl__hout_printf(o, "<a href=\"#incident\">%s</a>",
                           r->flight.incident == GPUFL__ANA_INCIDENT_CRASH ? "crash" : "OOM");
    gpufl__hout_raw(o, "<a href=\"#timeline\">timeline</a><a href=\"#summary\">summary</a>"
                       "<a href=\"#hotspots\">hotspots</a><a href=\"#scopes\">scopes</a>");
    if (r->ops.op_ranges)
        gpufl__hout_raw(o, "<a href=\"#ops\">ops</a>");
    gpufl__hout_raw(o, "<a href=\"#idle\">idle time</a><a href=\"#copies\">copies</a>"
                       "<a href=\"#launches\">launches</a>");
    if (r->nccl)
        gpufl__hout_raw(o, "<a href=\"#nccl\">NCCL</a>");
    if (gpufl_trace_get_triggers(t)->n)
        gpufl__hout_raw(o, "<a href=\"#triggers\">triggers</a>");
    if (gpufl_trace_get_trace_windows(t)->n)
        gpufl__hout_raw(o, "<a href=\"#windows\">trace windows</a>");
    if (gpufl_trace_get_pm_samples(t)->n)
        gpufl__hout_raw(o, "<a href=\"#pm\">PM sampling</a>");
    gpufl__hout_raw(o, "</nav></header>\n<main>\n");
}

static void timeline_section(gpufl__hout *o)
{
    gpufl__hout_raw(o, "<section id=\"timeline\"><h2>Timeline</h2>\n"
                       "<noscript><p class=\"warn\">The timeline and the charts are drawn by the page's "
                       "script, which is off; the tables below need none.</p></noscript>\n"
                       "<div class=\"tlbar\"><button id=\"zin\" type=\"button\">zoom in</button>"
                       "<button id=\"zout\" type=\"button\">zoom out</button>"
                       "<button id=\"zreset\" type=\"button\">whole session</button>"
                       "<span id=\"tl-range\" class=\"note\"></span></div>\n"
                       "<div id=\"tl-note\" class=\"note\"></div>\n"
                       "<div id=\"tl\"></div>\n<div id=\"charts\"></div>\n</section>\n");
}

int gpufl__report_html(const gpufl_trace *t, const gpufl__ana_report *r, const char *path, char *err, size_t err_len)
{
    if (!t || !r || !path) {
        snprintf(err, err_len, "HTML report: no trace, analyses or output path");
        return GPUFL_EINVAL;
    }
    gpufl__hout o;
    int rc = gpufl__hout_open(&o, path, err, err_len);
    if (rc != 0)
        return rc;
    page_head(&o, t, r);
    gpufl__html_incident(&o, t, r);
    timeline_section(&o);
    gpufl__html_tables(&o, t, r);
    gpufl__html_stalls(&o, t, r);
    gpufl__html_hw(&o, t, r);
    gpufl__html_sass(&o, t, r);
    gpufl__html_nccl(&o, t, r);
    gpufl__html_critpath(&o, t, r);
    gpufl__html_flight(&o, t, r);
    gpufl__html_pm(&o, t);
    gpufl__hout_raw(&o, "</main>\n<div id=\"tip\"></div>\n<pre id=\"gfl-selfcheck\" hidden></pre>\n"
                        "<script type=\"application/json\" id=\"gfl-data\">");
    rc = gpufl__html_data(&o, t, r);
    if (rc != 0) {
        snprintf(err, err_len, "cannot write %s: out of memory laying out the timeline", path);
        gpufl__hout_abort(&o);
        return rc;
    }
    gpufl__hout_raw(&o, "</script>\n<script>\n");
    gpufl__hout_raw(&o, gpufl__html_script);
    gpufl__hout_raw(&o, "</script>\n</body></html>\n");
    return gpufl__hout_commit(&o, err, err_len);
}
