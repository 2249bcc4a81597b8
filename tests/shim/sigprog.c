/* sigprog.c - a CUDA program with a SIGTERM handler of its own, for the
 * rule that a signal the program claims stays its own (signal_check.sh):
 *   sigprog before|after   installs the handler before or after its first
 *                          driver call (where the shim installs its own)
 * then says "ready" and works until the signal: the handler prints "own
 * handler" and exits 7. */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void own(int sig)
{
    (void)sig;
    static const char msg[] = "own handler\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(7);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "before") && strcmp(argv[1], "after"))) {
        fprintf(stderr, "usage: sigprog before|after\n");
        return 2;
    }
    if (!strcmp(argv[1], "before"))
        signal(SIGTERM, own);
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "sigprog: no CUDA device\n");
        return 1;
    }
    if (!strcmp(argv[1], "after"))
        signal(SIGTERM, own);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        CUdeviceptr p;
        if (cuMemAlloc(&p, 256) == CUDA_SUCCESS) {
            cuMemsetD8(p, 1, 256);
            cuCtxSynchronize();
            cuMemFree(p);
        }
        usleep(1000);
    }
}
