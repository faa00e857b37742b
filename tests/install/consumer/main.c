/* Uses an installed clrt: a tensor on the first GPU (or the CPU), a
 * broadcast add, a print. Exits 1 with clrt's message on any failure. */
#include <clrt/clrt.h>

#include <stdio.h>

int main(void)
{
    clrt_device *d = clrt_try_gpu(0);
    const int64_t shape[2] = {2, 3}, row_shape[1] = {3};
    const float row[3] = {1, 2, 3};
    clrt_tensor *ones = d ? clrt_ones(d, CLRT_F32, 2, shape) : NULL;
    clrt_tensor *r = d ? clrt_from_host(d, CLRT_F32, 1, row_shape, row) : NULL;
    clrt_tensor *sum = ones && r ? clrt_add(ones, r) : NULL;
    int ok = sum && clrt_tensor_print(stdout, sum) == CLRT_OK;
    if (!ok)
        fprintf(stderr, "consumer: %s\n", clrt_last_error());
    clrt_tensor_release(sum);
    clrt_tensor_release(r);
    clrt_tensor_release(ones);
    return ok ? 0 : 1;
}
