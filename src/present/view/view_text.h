/*
 * The timeline view's text (see view.h): the lines made of a layout
 * (view_layout.h). Every line is at most `width` display columns, with no
 * trailing blanks; colours are ANSI SGR sequences, only when asked for.
 * Names from the trace are drawn with control characters replaced by '?'.
 */
#ifndef GPUFL_PRESENT_VIEW_VIEW_TEXT_H
#define GPUFL_PRESENT_VIEW_VIEW_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "present/view/view_layout.h"

/* A growing text buffer; `failed` once an allocation failed (the text is
 * then incomplete). */
typedef struct gpufl__vbuf {
    char *s;
    size_t len, cap;
    bool failed;
} gpufl__vbuf;

void gpufl__vbuf_add(gpufl__vbuf *b, const char *s, size_t n);

/* The label column's width for a line width. */
unsigned gpufl__view_label_width(unsigned width);

/* Appends the view of lo (ncols = width - label width - 1) to out. */
void gpufl__view_text(const gpufl__view_layout *lo, unsigned width, bool color, gpufl__vbuf *out);

#endif /* GPUFL_PRESENT_VIEW_VIEW_TEXT_H */
