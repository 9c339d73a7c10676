/*
 * What the parts of the text report share (report_text*.c): the rendering
 * context and the formatting of numbers, names and tables. Internal to
 * src/present.
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_TEXT_UTIL_H
#define GPUFL_PRESENT_REPORT_REPORT_TEXT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "present/report/report_text.h"

typedef struct rt {
    FILE *out;
    const gpufl_trace *t;
    const gpufl__ana_report *r;
    gpufl__report_text_opts o; /* defaults filled in */
} rt;

/* Short text for a number, into caller-sized buffers (32 bytes are enough):
 * a duration ("1.234 s", "12.30 ms", "4.50 us", "12 ns"), a size ("1.5
 * MiB"), a percentage with one decimal ("12.5 %"), a count with thousands
 * separated ("18 529"). */
typedef struct rt_num {
    char s[32];
} rt_num;
rt_num gpufl__rt_dur(uint64_t ns);
rt_num gpufl__rt_sdur(int64_t ns); /* signed duration: "-1.20 us" */
rt_num gpufl__rt_bytes(uint64_t bytes);
rt_num gpufl__rt_pct(double pct);
rt_num gpufl__rt_count(uint64_t n);
/* part / whole * 100, 0 when whole is 0 */
double gpufl__rt_share(uint64_t part, uint64_t whole);

/* The text of a string id, "" for 0. */
const char *gpufl__rt_str(const rt *c, uint32_t id);
/* name cut to width bytes, ending in "..." when cut (never inside a UTF-8
 * sequence). buf holds width + 1 bytes. */
void gpufl__rt_fit(const char *name, size_t width, char *buf);
/* A section title and its underline. */
void gpufl__rt_title(const rt *c, const char *title);
/* "s" when n is not 1 */
const char *gpufl__rt_plural(uint64_t n);

/* The sections, each in its own file by theme. */
void gpufl__rt_section_scopes(const rt *c);    /* report_text_scopes.c */
void gpufl__rt_section_ops(const rt *c);       /* report_text_ops.c: only with op ranges */
void gpufl__rt_section_hotspots(const rt *c);  /* report_text_kernels.c */
void gpufl__rt_section_occupancy(const rt *c); /* report_text_kernels.c */
void gpufl__rt_section_copies(const rt *c);    /* report_text_device.c */
void gpufl__rt_section_idle(const rt *c);      /* report_text_device.c */
void gpufl__rt_section_launches(const rt *c);  /* report_text_device.c */
void gpufl__rt_section_memory(const rt *c);    /* report_text_memory.c */
void gpufl__rt_section_stalls(const rt *c);    /* report_text_stalls.c: only with PC samples */
void gpufl__rt_section_pm(const rt *c);        /* report_text_device.c: only with PM samples */
void gpufl__rt_section_hw(const rt *c);        /* report_text_hw.c: only with range metrics */
void gpufl__rt_section_sass(const rt *c);      /* report_text_sass.c */
void gpufl__rt_section_nccl(const rt *c);      /* report_text_nccl.c: only with NCCL kernels */
void gpufl__rt_section_critpath(const rt *c);  /* report_text_critpath.c: only with a repeated step */
/* report_text_flight.c: each only when the session has what it shows */
void gpufl__rt_section_incident(const rt *c); /* what came before a crash or an OOM */
void gpufl__rt_section_flight(const rt *c);   /* triggers and trace windows */
/* The frames of stack `id` (report_text_kernels.c), one line each, up to
 * o.max_frames; needs o.stacks. */
void gpufl__rt_stack_frames(const rt *c, uint32_t id);
/* A hot kernel's line of PyTorch ops (report_text_ops.c): nothing without op ranges. */
void gpufl__rt_hot_ops(const rt *c, const gpufl__ana_hotspot *h);

#endif /* GPUFL_PRESENT_REPORT_REPORT_TEXT_UTIL_H */
