/*
 * The launch table's storage (see launch_table.h).
 */
#include "backend/cupti/launch_table.h"

#include <stdlib.h>

int gfl_launch_table_init(gfl_launch_table *t, unsigned bits)
{
    size_t n = (size_t)1 << bits;
    /* calloc of this size is a fresh anonymous mapping: zero pages cost no
     * memory until a correlation id lands on them */
    t->slots = calloc(n, sizeof *t->slots);
    t->mask = (uint32_t)(n - 1);
    return t->slots ? 0 : -1;
}

void gfl_launch_table_free(gfl_launch_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = 0;
}
