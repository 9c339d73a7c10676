/*
 * A stand-in for libcupti's NVTX injection entry point, for test_inject:
 * InitializeInjectionNvtx2 answers 42 when it was handed an export-table
 * function that knows table 1, 41 otherwise, so the test can tell that the
 * injection library forwarded the call and its argument.
 */
#include <stddef.h>
#include <stdint.h>

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id))
{
    return get_export_table && get_export_table(1) != NULL ? 42 : 41;
}
