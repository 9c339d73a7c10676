/*
 * PyTorch's NVTX range texts (src/backend/cupti/torch_nvtx.c): the name is
 * kept and the sequence number read; other texts are left whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "backend/cupti/torch_nvtx.h"

static void split(const char *text, const char *name, int has_seq, uint64_t seq)
{
    bool has;
    uint64_t v;
    size_t n = gpufl__torch_nvtx_split(text, strlen(text), &has, &v);
    if (n != strlen(name) || memcmp(text, name, n) != 0)
        fail_msg("'%s': name '%.*s', want '%s'", text, (int)n, text, name);
    assert_int_equal(has, has_seq);
    assert_int_equal(v, has_seq ? seq : 0);
}

static void torch_texts(void **state)
{
    (void)state;
    split("aten::addmm, seq = 22, op_id = 6", "aten::addmm", 1, 22);
    split("AddmmBackward0, seq = 22, op_id = 35", "AddmmBackward0", 1, 22);
    split("aten::mm, op_id = 39", "aten::mm", 0, 0);
    split("aten::mm, seq = 0, op_id = 7, sizes = [[64, 256], [256, 10]]", "aten::mm", 1, 0);
    split("autograd::engine::evaluate_function: NllLossBackward0, op_id = 26",
          "autograd::engine::evaluate_function: NllLossBackward0", 0, 0);
    split("Optimizer.zero_grad#SGD.zero_grad, op_id = 1", "Optimizer.zero_grad#SGD.zero_grad", 0, 0);
    split("aten::add, seq = 18446744073709551615", "aten::add", 1, UINT64_MAX);
}

static void other_texts_stay_whole(void **state)
{
    (void)state;
    split("step", "step", 0, 0);
    split("", "", 0, 0);
    split("load, batch 5", "load, batch 5", 0, 0);
    split("x, seq = ", "x, seq = ", 0, 0);                                         /* no number */
    split("x, seq = 5 items", "x, seq = 5 items", 0, 0);                           /* more after it */
    split("x, seq = 99999999999999999999", "x, seq = 99999999999999999999", 0, 0); /* > 64 bits */
    split("x,seq = 5", "x,seq = 5", 0, 0);
    split("a, b, op_id = 3", "a, b", 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torch_texts),
        cmocka_unit_test(other_texts_stay_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
