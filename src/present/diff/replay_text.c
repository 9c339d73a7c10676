/*
 * `gpufl replay-check` as text (replay_text.h).
 */
#include "present/diff/replay_text.h"

#include <inttypes.h>
#include <string.h>

#include "present/diff/replay_op.h"
#include "present/report/summary_text.h"

#define NAME_WIDTH 80

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

void gpufl__replay_lane_title(const gpufl__rp_lane *l, char *buf, size_t len)
{
    if (l->kind != GPUFL__RP_LANE_STREAM) {
        snprintf(buf, len, "device %u, %s", l->device, gpufl__replay_lane_words(l->kind));
        return;
    }
    char sa[32] = "none", sb[32] = "none";
    if (l->has_a)
        snprintf(sa, sizeof sa, "%u", l->stream_a);
    if (l->has_b)
        snprintf(sb, sizeof sb, "%u", l->stream_b);
    if (l->has_a && l->has_b && l->device_b != l->device)
        snprintf(buf, len, "device %u, stream %s in A; device %u, stream %s in B%s", l->device, sa, l->device_b, sb,
                 l->mapped ? " (--stream-map)" : "");
    else
        snprintf(buf, len, "device %u, stream %s in A, %s in B%s", l->device, sa, sb,
                 l->mapped ? " (--stream-map)" : "");
}

/* What a divergence is, in words; kind: its lane's (for only_a/only_b). */
static void change_words(const gpufl__rp_div *l, uint8_t kind, uint32_t window, char *buf, size_t len)
{
    switch (l->change) {
    case GPUFL__RP_CH_NAME: snprintf(buf, len, "another kernel ran"); break;
    case GPUFL__RP_CH_CONFIG: {
        int n = snprintf(buf, len, "the launch configuration changed (");
        bool first = true;
        for (unsigned bit = 1; bit <= GPUFL__RP_F_GRAPH && n > 0 && (size_t)n < len; bit <<= 1)
            if (l->fields & bit) {
                n += snprintf(buf + n, len - (size_t)n, "%s%s", first ? "" : ", ", gpufl__replay_field_key(bit));
                first = false;
            }
        if (n > 0 && (size_t)n < len)
            snprintf(buf + n, len - (size_t)n, ")");
        break;
    }
    case GPUFL__RP_CH_SIZE: snprintf(buf, len, "the size changed"); break;
    case GPUFL__RP_CH_OTHER: snprintf(buf, len, "another kind of op"); break;
    case GPUFL__RP_CH_EXTRA: snprintf(buf, len, "%" PRIu64 " op%s extra in B", l->span_b, plural(l->span_b)); break;
    case GPUFL__RP_CH_MISSING: snprintf(buf, len, "%" PRIu64 " op%s missing in B", l->span_a, plural(l->span_a)); break;
    case GPUFL__RP_CH_REPLACED:
        snprintf(buf, len, "%" PRIu64 " op%s of A replaced by %" PRIu64 " of B", l->span_a, plural(l->span_a),
                 l->span_b);
        break;
    case GPUFL__RP_CH_DIVERGED:
        snprintf(buf, len, "the runs differ from here on (no %d equal ops within %u ops of each side)", GPUFL__RP_RUN,
                 window);
        break;
    case GPUFL__RP_CH_ONLY_A:
        snprintf(buf, len, "B has no such %s", kind == GPUFL__RP_LANE_STREAM ? "stream" : "device");
        break;
    case GPUFL__RP_CH_ONLY_B:
        snprintf(buf, len, "A has no such %s", kind == GPUFL__RP_LANE_STREAM ? "stream" : "device");
        break;
    default: snprintf(buf, len, "same"); break;
    }
}

static void index_text(uint64_t i, char *buf, size_t len)
{
    if (i == GPUFL__RP_NONE)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%" PRIu64, i);
}

static void where_text(uint64_t a, uint64_t b, char *buf, size_t len)
{
    if (a != GPUFL__RP_NONE && b != GPUFL__RP_NONE)
        snprintf(buf, len, "A op %" PRIu64 ", B op %" PRIu64, a, b);
    else if (a != GPUFL__RP_NONE)
        snprintf(buf, len, "A op %" PRIu64 " (B had ended)", a);
    else if (b != GPUFL__RP_NONE)
        snprintf(buf, len, "B op %" PRIu64 " (A had ended)", b);
    else
        snprintf(buf, len, "the end of both");
}

static void lines(const gpufl__replay *r, const gpufl__rp_lane *l, FILE *out)
{
    fprintf(out, "        %10s %10s  %10s  %s\n", "A", "B", "at", "op");
    size_t minus = 0, plus = 0;
    for (size_t k = 0; k < l->nlines; k++) {
        const gpufl__rp_line *x = &l->lines[k];
        char ia[32], ib[32], at[32], op[1024];
        index_text(x->index_a, ia, sizeof ia);
        index_text(x->index_b, ib, sizeof ib);
        gpufl__format_duration(x->at_ns, at, sizeof at);
        gpufl__replay_op_text(&r->keys[x->key], NAME_WIDTH, op, sizeof op);
        fprintf(out, "      %c %10s %10s  %10s  %s\n", x->tag, ia, ib, at, op);
        minus += x->tag == '-';
        plus += x->tag == '+';
        /* after the last line of a side, what it did not show */
        bool last_minus = x->tag == '-' && (k + 1 == l->nlines || l->lines[k + 1].tag != '-');
        bool last_plus = x->tag == '+' && (k + 1 == l->nlines || l->lines[k + 1].tag != '+');
        uint64_t more_a = l->resynced ? l->span_a - minus : 0, more_b = l->resynced ? l->span_b - plus : 0;
        if (last_minus && more_a)
            fprintf(out, "      - %10s %10s  %10s  ... %" PRIu64 " more op%s of A\n", "", "", "", more_a,
                    plural(more_a));
        if (last_plus && more_b)
            fprintf(out, "      + %10s %10s  %10s  ... %" PRIu64 " more op%s of B\n", "", "", "", more_b,
                    plural(more_b));
    }
}

static void lane_detail(const gpufl__replay *r, const gpufl__rp_lane *l, const gpufl__replay_text_opts *o, FILE *out)
{
    char what[256], where[96];
    gpufl__rp_div first = {.change = l->change, .fields = l->fields, .span_a = l->span_a, .span_b = l->span_b};
    change_words(&first, l->kind, o->window, what, sizeof what);
    where_text(l->at_a, l->at_b, where, sizeof where);
    fprintf(out, "    first divergence at %s: %s\n", where, what);
    if (l->change == GPUFL__RP_CH_NAME) { /* names are cut below; the full ones say what changed */
        const gpufl__rp_line *x = NULL, *y = NULL;
        for (size_t k = 0; k < l->nlines; k++) {
            if (!x && l->lines[k].tag == '-')
                x = &l->lines[k];
            if (!y && l->lines[k].tag == '+')
                y = &l->lines[k];
        }
        if (x && y)
            fprintf(out, "      A ran  %s\n      B ran  %s\n", r->keys[x->key].name, r->keys[y->key].name);
    }
    if (l->nlines)
        lines(r, l, out);
    if (l->looks_like)
        fprintf(out,
                "    B's stream %u starts with these ops of A: did the streams start in another order? try "
                "--stream-map %u:%u\n",
                l->looks_like_b, l->stream_a, l->looks_like_b);
    if (l->change != GPUFL__RP_CH_ONLY_A && l->change != GPUFL__RP_CH_ONLY_B) {
        fprintf(out, "    along the lane: %" PRIu64 " divergence%s", l->divergences, plural(l->divergences));
        if (l->changed)
            fprintf(out, "; %" PRIu64 " op%s changed", l->changed, plural(l->changed));
        if (l->only_a)
            fprintf(out, "; %" PRIu64 " op%s only in A", l->only_a, plural(l->only_a));
        if (l->only_b)
            fprintf(out, "; %" PRIu64 " op%s only in B", l->only_b, plural(l->only_b));
        if (l->unaligned_a || l->unaligned_b)
            fprintf(out, "; %" PRIu64 " op%s of A and %" PRIu64 " of B not aligned%s", l->unaligned_a,
                    plural(l->unaligned_a), l->unaligned_b,
                    l->capped ? " (alignment stopped after 10000 divergences)" : "");
        fputc('\n', out);
    }
    if (l->ndivs > 1) {
        fprintf(out, "    divergences%s:\n", l->divergences > l->ndivs ? " (the first ones)" : "");
        for (size_t k = 0; k < l->ndivs; k++) {
            const gpufl__rp_div *d = &l->divs[k];
            char w[256], at[96], oa[1024] = "", ob[1024] = "";
            change_words(d, l->kind, o->window, w, sizeof w);
            where_text(d->at_a, d->at_b, at, sizeof at);
            if (d->key_a != GPUFL__RP_NOKEY)
                gpufl__replay_op_text(&r->keys[d->key_a], 48, oa, sizeof oa);
            if (d->key_b != GPUFL__RP_NOKEY)
                gpufl__replay_op_text(&r->keys[d->key_b], 48, ob, sizeof ob);
            if (oa[0] || ob[0])
                fprintf(out, "      %s: %s: %s -> %s\n", at, w, oa[0] ? oa : "(none)", ob[0] ? ob : "(none)");
            else
                fprintf(out, "      %s: %s\n", at, w);
        }
    }
    if (l->ncounts) {
        fprintf(out, "    counts that differ (%zu op%s):\n", l->counts_total, plural(l->counts_total));
        for (size_t k = 0; k < l->ncounts; k++) {
            const gpufl__rp_count *c = &l->counts[k];
            char op[1024];
            gpufl__replay_op_text(&r->keys[c->key], NAME_WIDTH, op, sizeof op);
            fprintf(out, "      A %8" PRIu64 "  B %8" PRIu64 "  (%+" PRId64 ")  %s\n", c->n_a, c->n_b,
                    (int64_t)(c->n_b - c->n_a), op);
        }
        if (l->counts_total > l->ncounts)
            fprintf(out, "      ... %zu more\n", l->counts_total - l->ncounts);
    }
}

int gpufl__replay_text(const gpufl__replay *r, const gpufl__replay_text_opts *o, FILE *out)
{
    fprintf(out, "gpufl replay-check\n");
    fprintf(out, "  A  %s\n  B  %s\n", o->a ? o->a : "", o->b ? o->b : "");
    fprintf(out, "  compared: %s\n", o->selection ? o->selection : "whole sessions");
    fprintf(out, "  streams are paired per device by order of first use (ids differ between runs)\n\n");
    const gpufl__rp_lane *first = NULL;
    for (size_t i = 0; i < r->nlanes; i++) {
        const gpufl__rp_lane *l = &r->lanes[i];
        if (l->same && o->only_differences)
            continue;
        char title[160];
        gpufl__replay_lane_title(l, title, sizeof title);
        if (l->same) {
            fprintf(out, "  same       %s: %" PRIu64 " op%s\n", title, l->n_a, plural(l->n_a));
            continue;
        }
        if (!first)
            first = l;
        fprintf(out, "  DIFFERENT  %s: %" PRIu64 " op%s in A, %" PRIu64 " in B\n", title, l->n_a, plural(l->n_a),
                l->n_b);
        lane_detail(r, l, o, out);
    }
    if (r->nlanes == 0)
        fprintf(out, "  nothing to compare: neither session has GPU work or allocations in the selection\n");
    if (r->graphs_compared && !(o->only_differences && r->graphs_a == r->graphs_b))
        fprintf(out, "  %s  CUDA graph launches: %" PRIu64 " in A, %" PRIu64 " in B\n",
                r->graphs_a == r->graphs_b ? "same     " : "DIFFERENT", r->graphs_a, r->graphs_b);
    fputc('\n', out);
    if (r->same) {
        fprintf(out, "SAME: %zu lane%s, %" PRIu64 " op%s in each run\n", r->nlanes, plural(r->nlanes), r->ops_a,
                plural(r->ops_a));
    } else if (first) {
        char title[160], where[96];
        gpufl__replay_lane_title(first, title, sizeof title);
        where_text(first->at_a, first->at_b, where, sizeof where);
        fprintf(out, "DIFFERENT: %zu of %zu lane%s differ%s; the first: %s at %s\n", r->ndiffer, r->nlanes,
                plural(r->nlanes), r->ndiffer == 1 ? "s" : "", title, where);
    } else {
        fprintf(out, "DIFFERENT: CUDA graph launches %" PRIu64 " in A, %" PRIu64 " in B\n", r->graphs_a, r->graphs_b);
    }
    return ferror(out) ? -1 : 0;
}
