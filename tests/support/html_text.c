/*
 * Reading the text items of a gpufl HTML page (html_text.h).
 */
#include "html_text.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct state {
    ht_page *page;
    char stack[MAX_DEPTH][12];
    int depth;
    int item;       /* index of the open item, -1 none */
    int item_depth; /* depth of the element that opened it */
    char section[32];
    char table_class[32];
    int table, row, col;
    int in_table, in_thead;
} state;

static bool is_item_tag(const char *t)
{
    static const char *const tags[] = {"title", "h1",     "h2",  "h3", "h4",      "p",     "th", "td",
                                       "a",     "button", "pre", "li", "caption", "label", NULL};
    for (int i = 0; tags[i]; i++)
        if (!strcmp(t, tags[i]))
            return true;
    return false;
}

static bool is_void_tag(const char *t)
{
    return !strcmp(t, "meta") || !strcmp(t, "br") || !strcmp(t, "img") || !strcmp(t, "input") || !strcmp(t, "link") ||
           !strcmp(t, "hr");
}

static ht_kind kind_of(const state *s, const char *tag)
{
    if (!strcmp(tag, "title"))
        return HT_TITLE;
    if (tag[0] == 'h' && isdigit((unsigned char)tag[1]))
        return HT_HEADING;
    if (!strcmp(tag, "p"))
        return HT_PARA;
    if (!strcmp(tag, "th"))
        return s->in_thead ? HT_HEAD : HT_KEY;
    if (!strcmp(tag, "td"))
        return HT_CELL;
    return HT_OTHER;
}

static int new_item(state *s, const char *tag)
{
    ht_page *p = s->page;
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->items = realloc(p->items, p->cap * sizeof *p->items);
        assert_non_null(p->items);
    }
    ht_item *it = &p->items[p->n];
    memset(it, 0, sizeof *it);
    it->kind = kind_of(s, tag);
    snprintf(it->tag, sizeof it->tag, "%s", tag);
    it->text = calloc(1, 1);
    assert_non_null(it->text);
    snprintf(it->section, sizeof it->section, "%s", s->section);
    if (s->in_table) {
        snprintf(it->table_class, sizeof it->table_class, "%s", s->table_class);
        it->table = s->table;
        it->row = s->row;
        it->col = s->col;
    } else {
        it->table = it->row = it->col = -1;
    }
    return (int)p->n++;
}

static void append(state *s, int item, const char *text, size_t n)
{
    ht_item *it = &s->page->items[item];
    size_t have = strlen(it->text);
    it->text = realloc(it->text, have + n + 1);
    assert_non_null(it->text);
    memcpy(it->text + have, text, n);
    it->text[have + n] = 0;
}

static void trim(char *t)
{
    size_t n = strlen(t), a = 0;
    while (n && isspace((unsigned char)t[n - 1]))
        t[--n] = 0;
    while (isspace((unsigned char)t[a]))
        a++;
    memmove(t, t + a, n - a + 1);
}

/* UTF-8 of code point cp into out (room for 4). */
static size_t utf8(unsigned long cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Text from a to b, entities decoded, into the open item (or a loose one). */
static void text(state *s, const char *a, const char *b)
{
    size_t cap = (size_t)(b - a) + 1, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    for (const char *p = a; p < b;) {
        if (*p != '&') {
            out[n++] = *p++;
            continue;
        }
        const char *semi = memchr(p, ';', (size_t)(b - p));
        if (!semi || semi - p > 10)
            fail_msg("an unterminated entity in the page's text: '%.20s'", p);
        static const struct {
            const char *name;
            unsigned long cp;
        } named[] = {{"amp", '&'},   {"lt", '<'},     {"gt", '>'},    {"quot", '"'},
                     {"apos", '\''}, {"times", 0xd7}, {"nbsp", 0xa0}, {"middot", 0xb7}};
        unsigned long cp = 0;
        size_t len = (size_t)(semi - p - 1);
        if (p[1] == '#') {
            cp = p[2] == 'x' || p[2] == 'X' ? strtoul(p + 3, NULL, 16) : strtoul(p + 2, NULL, 10);
        } else {
            size_t k = 0;
            for (; k < sizeof named / sizeof named[0]; k++)
                if (strlen(named[k].name) == len && !strncmp(named[k].name, p + 1, len))
                    break;
            if (k == sizeof named / sizeof named[0])
                fail_msg("an entity this test does not know: '%.*s'", (int)(semi - p + 1), p);
            cp = named[k].cp;
        }
        n += utf8(cp, out + n); /* an entity is at least 4 bytes, its UTF-8 at most 4 */
        p = semi + 1;
    }
    if (s->item >= 0) {
        append(s, s->item, out, n);
    } else {
        out[n] = 0;
        bool blank = true;
        for (size_t i = 0; i < n; i++)
            blank = blank && isspace((unsigned char)out[i]);
        if (!blank) {
            int it = new_item(s, s->depth ? s->stack[s->depth - 1] : "");
            append(s, it, out, n);
            trim(s->page->items[it].text);
        }
    }
    free(out);
}

/* The value of attribute name in a tag's attribute text, or "" (out: len bytes). */
static void attr(const char *attrs, const char *end, const char *name, char *out, size_t len)
{
    out[0] = 0;
    size_t nl = strlen(name);
    for (const char *p = attrs; p < end; p++) {
        if (strncmp(p, name, nl) || p[nl] != '=' || (p > attrs && !isspace((unsigned char)p[-1])))
            continue;
        const char *v = p + nl + 1, *ve;
        if (*v == '"' || *v == '\'') {
            ve = memchr(v + 1, *v, (size_t)(end - v - 1));
            v++;
        } else {
            for (ve = v; ve < end && !isspace((unsigned char)*ve) && *ve != '>'; ve++)
                ;
        }
        if (!ve)
            return;
        snprintf(out, len, "%.*s", (int)(ve - v), v);
        return;
    }
}

static void open_tag(state *s, const char *name, const char *attrs, const char *end)
{
    if (is_void_tag(name))
        return;
    if (s->depth == MAX_DEPTH)
        fail_msg("the page nests elements deeper than %d", MAX_DEPTH);
    snprintf(s->stack[s->depth++], sizeof s->stack[0], "%s", name);
    if (!strcmp(name, "section")) {
        attr(attrs, end, "id", s->section, sizeof s->section);
        s->table = -1;
    } else if (!strcmp(name, "table")) {
        s->in_table = 1;
        s->table++;
        s->row = -1;
        attr(attrs, end, "class", s->table_class, sizeof s->table_class);
    } else if (!strcmp(name, "thead")) {
        s->in_thead = 1;
    } else if (!strcmp(name, "tr")) {
        s->row++;
        s->col = -1;
    } else if (!strcmp(name, "td") || !strcmp(name, "th")) {
        s->col++;
    }
    if (s->item < 0 && is_item_tag(name)) {
        s->item = new_item(s, name);
        s->item_depth = s->depth;
    }
}

static void close_tag(state *s, const char *name)
{
    if (!s->depth || strcmp(s->stack[s->depth - 1], name))
        fail_msg("the page closes <%s> where <%s> is open", name, s->depth ? s->stack[s->depth - 1] : "nothing");
    if (s->item >= 0 && s->depth == s->item_depth) {
        trim(s->page->items[s->item].text);
        s->item = -1;
    }
    s->depth--;
    if (!strcmp(name, "section")) {
        s->section[0] = 0;
        s->table = -1;
    } else if (!strcmp(name, "table")) {
        s->in_table = 0;
        s->table_class[0] = 0;
    } else if (!strcmp(name, "thead")) {
        s->in_thead = 0;
    }
}

void ht_parse(const char *html, ht_page *out)
{
    memset(out, 0, sizeof *out);
    state s = {.page = out, .item = -1, .table = -1};
    const char *p = html;
    while (*p) {
        const char *lt = strchr(p, '<');
        if (!lt) {
            text(&s, p, p + strlen(p));
            break;
        }
        if (lt > p)
            text(&s, p, lt);
        if (!strncmp(lt, "<!--", 4)) {
            const char *e = strstr(lt + 4, "-->");
            if (!e)
                fail_msg("an unterminated comment in the page");
            p = e + 3;
            continue;
        }
        const char *gt = strchr(lt, '>');
        if (!gt)
            fail_msg("an unterminated tag in the page: '%.40s'", lt);
        if (lt[1] == '!') { /* <!DOCTYPE html> */
            p = gt + 1;
            continue;
        }
        bool closing = lt[1] == '/';
        const char *n = lt + 1 + closing;
        char name[12];
        size_t k = 0;
        while (isalnum((unsigned char)n[k]) && k + 1 < sizeof name) {
            name[k] = (char)tolower((unsigned char)n[k]);
            k++;
        }
        name[k] = 0;
        if (!k)
            fail_msg("a tag with no name in the page: '%.40s'", lt);
        /* attribute values may hold '>': find the tag's real end */
        const char *end = n + k;
        char quote = 0;
        for (; *end && (quote || *end != '>'); end++)
            if (quote && *end == quote)
                quote = 0;
            else if (!quote && (*end == '"' || *end == '\''))
                quote = *end;
        if (!*end)
            fail_msg("an unterminated tag in the page: '%.40s'", lt);
        p = end + 1;
        if (closing) {
            close_tag(&s, name);
            continue;
        }
        open_tag(&s, name, n + k, end);
        if (!strcmp(name, "script") || !strcmp(name, "style")) { /* not text */
            char close[16];
            snprintf(close, sizeof close, "</%s>", name);
            const char *e = strstr(p, close);
            if (!e)
                fail_msg("<%s> is not closed", name);
            p = e + strlen(close);
            close_tag(&s, name);
        }
    }
    if (s.depth)
        fail_msg("the page ends with <%s> open", s.stack[s.depth - 1]);
}

void ht_free(ht_page *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->items[i].text);
    free(p->items);
    memset(p, 0, sizeof *p);
}

bool ht_has_digit(const char *s)
{
    for (; *s; s++)
        if (isdigit((unsigned char)*s))
            return true;
    return false;
}
