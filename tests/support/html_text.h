/*
 * The text a browser shows of one of gpufl's own HTML pages, cut into the
 * pieces the report tests compare with other outputs: each heading,
 * paragraph, table cell, link, button and fact is one item, with the
 * section, table, row and column it sits in. Script and style contents are
 * not text; entities are decoded; inline elements (span, b) belong to the
 * item around them. Text outside any such element is an item of its own, so
 * that nothing on the page escapes a test that looks at every item.
 *
 * Not a general HTML parser: it reads the subset the report writes
 * (src/present/report_html*.c). Tests only; failures fail the test.
 */
#ifndef GPUFL_TEST_HTML_TEXT_H
#define GPUFL_TEST_HTML_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ht_kind {
    HT_TITLE,   /* <title> */
    HT_HEADING, /* <h1>..<h3> */
    HT_PARA,    /* <p> */
    HT_HEAD,    /* <th> in a table's <thead> */
    HT_KEY,     /* <th> in a table's body (the facts table's keys) */
    HT_CELL,    /* <td> */
    HT_OTHER,   /* links, buttons, loose text */
} ht_kind;

typedef struct ht_item {
    ht_kind kind;
    char tag[12];         /* the element that holds it ("h2", "td", ...) */
    char *text;           /* decoded, leading and trailing white space removed */
    char section[32];     /* id of the enclosing <section>, "" outside any */
    char table_class[32]; /* class of the enclosing table, "" for none */
    int table;            /* index of the table in its section, -1 outside tables */
    int row;              /* in the table, counting the header row as 0; -1 outside */
    int col;              /* in the row; -1 outside */
    bool checked;         /* set by the test that compared it */
} ht_item;

typedef struct ht_page {
    ht_item *items;
    size_t n, cap;
} ht_page;

/* Reads the page's text items; fails the test on markup it cannot follow
 * (an element closed that is not open, an unterminated tag or comment). */
void ht_parse(const char *html, ht_page *out);
void ht_free(ht_page *p);

/* Whether s holds a decimal digit. */
bool ht_has_digit(const char *s);

#endif /* GPUFL_TEST_HTML_TEXT_H */
