/*
 * Room for one more element in a growable array: the pattern every
 * builder of a table repeats, written once. GPUFL__GROW(v, n, cap, first)
 * makes v (a pointer to the elements, cap of them allocated) hold at least
 * n + 1, doubling from `first`; it evaluates to 0, or GPUFL_ENOMEM with v
 * and cap unchanged. v and cap are evaluated more than once.
 */
#ifndef GPUFL_CORE_GROW_H
#define GPUFL_CORE_GROW_H

#include <stdlib.h>

#include "gpufl/gpufl.h"

#define GPUFL__GROW(v, n, cap, first)                                                                                  \
    __extension__({                                                                                                    \
        int grow_rc_ = 0;                                                                                              \
        if ((n) >= (cap)) {                                                                                            \
            size_t grow_cap_ = (cap) ? (cap)*2 : (first);                                                              \
            __typeof__(v) grow_p_ = realloc((v), grow_cap_ * sizeof *(v));                                             \
            if (grow_p_) {                                                                                             \
                (v) = grow_p_;                                                                                         \
                (cap) = grow_cap_;                                                                                     \
            } else {                                                                                                   \
                grow_rc_ = GPUFL_ENOMEM;                                                                               \
            }                                                                                                          \
        }                                                                                                              \
        grow_rc_;                                                                                                      \
    })

#endif /* GPUFL_CORE_GROW_H */
