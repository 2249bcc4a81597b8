/* highbytes.c - a program whose trace holds records of high bytes: one
 * host-to-device copy of BYTES bytes of 0xff from pageable memory (recorded
 * with its contents under REPRISE_TRACE_DATA=1: a record of BYTES bytes of
 * 0xff), read back and checked. A record's check byte is a sum of its bytes
 * that the recorder adds up in 16-bit lanes, folded every 128 words: a lane
 * fed 0xff overflows at the 129th word, so a record over 1 KiB of high bytes
 * is what tells a right fold from a wrong one (recording.sh; issue 34,
 * class c). Prints the checksum of what it read back.
 * Usage: highbytes MODULE BYTES */
#include <stdlib.h>
#include <string.h>

#include "appcommon.h"

int main(int argc, char **argv)
{
    app_usage(argc, argv, "BYTES");
    long bytes = app_arg(argc, argv, 2, 65536, 8, 1 << 24);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    unsigned char *h = malloc((size_t)bytes);
    if (!h)
        app_die("out of host memory");
    memset(h, 0xff, (size_t)bytes);
    CUdeviceptr d;
    CK(cuMemAlloc, (&d, (size_t)bytes));
    CK(cuMemcpyHtoD, (d, h, (size_t)bytes));
    memset(h, 0, (size_t)bytes);
    CK(cuMemcpyDtoH, (h, d, (size_t)bytes));
    for (long i = 0; i < bytes; i++)
        if (h[i] != 0xff)
            app_die("the bytes read back are not the bytes copied");
    app_checksum("highbytes", app_hash(0x6869ull, h, (size_t)bytes));
    CK(cuMemFree, (d));
    free(h);
    app_close(dev, mod);
    return 0;
}
