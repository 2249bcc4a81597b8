/* The constructor-order test program: see early.c. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdio.h>

int early_result(void);

int main(void)
{
    int r = early_result();
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "early_main: cuInit from a constructor gave %d\n", r);
        return 1;
    }
    /* And a call after main started, through the same wrapper. */
    if (cuInit(0) != CUDA_SUCCESS) {
        fprintf(stderr, "early_main: cuInit from main failed\n");
        return 1;
    }
    printf("early_main: ok\n");
    return 0;
}
