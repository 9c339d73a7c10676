/*
 * SASS metrics per kernel and per source line, with the uncoalesced and
 * divergent findings (analysis.h, docs/REPORT.md). One pass over the rows,
 * grouping through two hash maps (kernel name; kernel, file, line or pc),
 * then sorts of the groups: memory per distinct line, not per row.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "core/event.h"

static void add(gpufl__ana_sass_row *r, const gpufl_trace_sass_metrics *s, size_t i)
{
    r->inst += s->inst_executed[i];
    r->thread_inst += s->thread_inst_executed[i];
    r->sectors += s->sectors[i];
    r->sectors_ideal += s->sectors_ideal[i];
    r->branch_targets += s->branch_targets[i];
    r->divergent_targets += s->divergent_targets[i];
    r->valid &= s->valid[i];
}

static void ratios(gpufl__ana_sass_row *r)
{
    r->coalescing = (r->valid & GFL_SASS_V_SECTORS) && r->sectors
                        ? (r->sectors_ideal >= r->sectors ? 1.0 : (double)r->sectors_ideal / (double)r->sectors)
                        : -1.0;
    r->active =
        (r->valid & GFL_SASS_V_THREAD_INST) && r->inst ? (double)r->thread_inst / (32.0 * (double)r->inst) : -1.0;
}

/* qsort has no context argument: the trace whose names break ties. The
 * report runs this analysis on one thread; two traces analyzed at once on
 * two threads could only mix up the order of equal rows. */
static _Thread_local const gpufl_trace *sort_trace;

static int by_inst(const void *a, const void *b)
{
    const gpufl__ana_sass_row *x = a, *y = b;
    if (x->inst != y->inst)
        return x->inst > y->inst ? -1 : 1;
    int c = gpufl__ana_strcmp(sort_trace, x->name, y->name);
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int by_finding(const void *a, const void *b)
{
    const gpufl__ana_sass_finding *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

int gpufl__analyze_sass(const gpufl_trace *t, gpufl__ana_sass *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    if (!s || !s->n)
        return 0;
    out->rows = s->n;
    ana_map kmap = {0}, lmap = {0};
    size_t kcap = 0, lcap = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        uint32_t k, l;
        int found = gpufl__ana_map_put(&kmap, s->function[i], 0, out->n_kernels, &k);
        if (found < 0 || (!found && gpufl__ana_grow(&out->kernels, &kcap, out->n_kernels + 1, sizeof *out->kernels))) {
            rc = GPUFL_ENOMEM;
            break;
        }
        if (!found) {
            out->kernels[k] = (gpufl__ana_sass_row){.name = s->function[i], .pc = UINT32_MAX, .valid = 0xffff};
            out->n_kernels++;
        }
        gpufl__ana_sass_row *kr = &out->kernels[k];
        add(kr, s, i);
        uint32_t pc = s->line[i] ? UINT32_MAX : s->pc_offset[i];
        uint64_t k2 = s->line[i] ? ((uint64_t)s->file[i] << 32 | s->line[i]) : (1ull << 63 | pc);
        found = gpufl__ana_map_put(&lmap, s->function[i], k2, out->n_lines, &l);
        if (found < 0 || (!found && gpufl__ana_grow(&out->lines, &lcap, out->n_lines + 1, sizeof *out->lines))) {
            rc = GPUFL_ENOMEM;
            break;
        }
        if (!found) {
            out->lines[l] = (gpufl__ana_sass_row){.name = s->function[i],
                                                  .file = s->line[i] ? s->file[i] : 0,
                                                  .line = s->line[i],
                                                  .pc = pc,
                                                  .kernel = k,
                                                  .valid = 0xffff};
            out->n_lines++;
        }
        add(&out->lines[l], s, i);
    }
    /* the counts are of every launch together (one reading per context at
     * the end): the launches are the kernel rows of the same name */
    const gpufl_trace_kernels *kt = gpufl_trace_get_kernels(t);
    for (size_t i = 0; rc == 0 && kt && kt->configs && i < kt->n; i++) {
        uint32_t k;
        if (gpufl__ana_map_get(&kmap, kt->configs->name[kt->config_row[i]], 0, &k))
            out->kernels[k].launches++;
    }
    gpufl__ana_map_free(&kmap);
    gpufl__ana_map_free(&lmap);
    if (rc) {
        gpufl__ana_sass_free(out);
        return rc;
    }
    for (uint32_t i = 0; i < out->n_kernels; i++)
        ratios(&out->kernels[i]);
    for (uint32_t i = 0; i < out->n_lines; i++)
        ratios(&out->lines[i]);
    /* findings, judged against the line's kernel before the rows move */
    size_t fcap = 0;
    for (uint32_t i = 0; i < out->n_lines; i++) {
        const gpufl__ana_sass_row *l = &out->lines[i], *k = &out->kernels[l->kernel];
        gpufl__ana_sass_finding f[2];
        unsigned nf = 0;
        if (l->coalescing >= 0 && l->coalescing < GPUFL__ANA_SASS_COALESCING_BELOW &&
            l->sectors >= GPUFL__ANA_SASS_MIN_SECTORS && l->sectors * 100 >= k->sectors)
            f[nf++] = (gpufl__ana_sass_finding){GPUFL__ANA_SASS_UNCOALESCED, i, l->sectors - l->sectors_ideal};
        if (l->active >= 0 && l->active < GPUFL__ANA_SASS_ACTIVE_BELOW && l->inst >= GPUFL__ANA_SASS_MIN_INST &&
            l->inst * 100 >= k->inst)
            f[nf++] = (gpufl__ana_sass_finding){GPUFL__ANA_SASS_DIVERGENT, i, l->inst * 32 - l->thread_inst};
        for (unsigned j = 0; j < nf; j++) {
            if (gpufl__ana_grow(&out->findings, &fcap, out->n_findings + 1, sizeof *out->findings)) {
                gpufl__ana_sass_free(out);
                return GPUFL_ENOMEM;
            }
            out->findings[out->n_findings++] = f[j];
        }
    }
    /* kernels by instructions; lines too, their kernel index and the
     * findings' line index renumbered through the old positions */
    uint32_t *kpos = malloc((size_t)out->n_kernels * sizeof *kpos);
    uint32_t *lpos = malloc((size_t)out->n_lines * sizeof *lpos);
    if (!kpos || !lpos) {
        free(kpos);
        free(lpos);
        gpufl__ana_sass_free(out);
        return GPUFL_ENOMEM;
    }
    sort_trace = t;
    for (uint32_t i = 0; i < out->n_kernels; i++)
        out->kernels[i].kernel = i; /* the old index, kept through the sort */
    if (out->n_kernels)             /* qsort takes no NULL base, even for 0 rows */
        qsort(out->kernels, out->n_kernels, sizeof *out->kernels, by_inst);
    for (uint32_t i = 0; i < out->n_kernels; i++) {
        kpos[out->kernels[i].kernel] = i;
        out->kernels[i].kernel = i;
    }
    for (uint32_t i = 0; i < out->n_lines; i++) {
        out->lines[i].kernel = kpos[out->lines[i].kernel];
        lpos[i] = i;
    }
    for (uint32_t i = 0; i < out->n_lines; i++)
        out->lines[i].launches = i; /* line rows have no launches: the old index rides here */
    if (out->n_lines)
        qsort(out->lines, out->n_lines, sizeof *out->lines, by_inst);
    for (uint32_t i = 0; i < out->n_lines; i++) {
        lpos[out->lines[i].launches] = i;
        out->lines[i].launches = 0;
    }
    for (uint32_t i = 0; i < out->n_findings; i++)
        out->findings[i].line = lpos[out->findings[i].line];
    if (out->n_findings)
        qsort(out->findings, out->n_findings, sizeof *out->findings, by_finding);
    free(kpos);
    free(lpos);
    return 0;
}

void gpufl__ana_sass_free(gpufl__ana_sass *s)
{
    if (!s)
        return;
    free(s->kernels);
    free(s->lines);
    free(s->findings);
    memset(s, 0, sizeof *s);
}
