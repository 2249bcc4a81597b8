/* crasher.c - a program that dies without exiting: it allocates, launches
 * ITERS kernels with a synchronize after each, then kills itself with
 * SIGKILL (no destructor, no atexit, nothing flushed). Its trace must still
 * be readable up to its last complete record (crash.sh).
 * Usage: crasher MODULE ITERS */
#include <signal.h>
#include <unistd.h>

#include "appcommon.h"

int main(int argc, char **argv)
{
    app_usage(argc, argv, "");
    long iters = app_arg(argc, argv, 2, 10, 1, 1000000);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    CUfunction f = app_function(mod, "iota_f32");
    CUdeviceptr x;
    int32_t n = 256;
    CK(cuMemAlloc, (&x, (size_t)n * sizeof(float)));
    float s = 1.0f, b = 0.0f;
    void *p[] = {&x, &n, &s, &b};
    for (long i = 0; i < iters; i++) {
        b = (float)i;
        CK(cuLaunchKernel, (f, 1, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
        CK(cuCtxSynchronize, ());
    }
    printf("killing myself after %ld launches\n", iters);
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
