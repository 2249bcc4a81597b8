/* layout_check - requires that the C kernel module declares, for every
 * kernel, the parameter offsets and sizes nvcc gave the same kernel in the
 * cubin (EIATTR_KPARAM_INFO entries of its .nv.info.<kernel> section), and
 * that both hold the same kernels. If they differed, a program's arguments
 * would land in different places on the CPU driver and on a GPU.
 * Usage: layout_check libtestkernels.so testkernels.cubin */
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpukernel.h"

#define EIATTR_KPARAM_INFO 0x17
#define EIFMT_SVAL 0x04

typedef struct { size_t offset, size; int seen; } param;

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = n > 0 ? malloc((size_t)n) : NULL;
    if (d != NULL && fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        d = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return d;
}

/* Fills ps[] from the .nv.info.<name> section; returns the parameter count,
 * or -1 when the cubin has no such section. */
static int cubin_params(const unsigned char *d, size_t len, const char *name, param *ps)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)d;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(d + eh->e_shoff);
    const char *strs = (const char *)d + sh[eh->e_shstrndx].sh_offset;
    char want[256];
    snprintf(want, sizeof want, ".nv.info.%s", name);
    for (unsigned int s = 0; s < eh->e_shnum; s++) {
        if (strcmp(strs + sh[s].sh_name, want) != 0)
            continue;
        int count = 0;
        size_t p = sh[s].sh_offset, end = p + sh[s].sh_size;
        if (end > len)
            return -1;
        while (p + 4 <= end) {
            unsigned char fmt = d[p], attr = d[p + 1];
            if (fmt != EIFMT_SVAL) {            /* EIFMT_NVAL 1: 2 bytes; HVAL/BVAL: 4 */
                p += fmt == 1 ? 2 : 4;
                continue;
            }
            unsigned int vlen = (unsigned int)d[p + 2] | (unsigned int)d[p + 3] << 8;
            if (attr == EIATTR_KPARAM_INFO && vlen >= 12) {
                unsigned int ordinal = (unsigned int)d[p + 8] | (unsigned int)d[p + 9] << 8;
                unsigned int offset = (unsigned int)d[p + 10] | (unsigned int)d[p + 11] << 8;
                unsigned int w;
                memcpy(&w, d + p + 12, sizeof w);
                if (ordinal < CPUK_MAX_PARAMS) {
                    ps[ordinal].offset = offset;
                    ps[ordinal].size = w >> 18;
                    ps[ordinal].seen = 1;
                    if ((int)ordinal + 1 > count)
                        count = (int)ordinal + 1;
                }
            }
            p += 4 + vlen;
        }
        return count;
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODULE.so MODULE.cubin\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        printf("FAIL: dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    const cpuk_kernel *ks = dlsym(h, CPUK_MODULE_SYMBOL);
    size_t len = 0;
    unsigned char *d = read_file(argv[2], &len);
    if (ks == NULL || d == NULL || len < sizeof(Elf64_Ehdr) || memcmp(d, ELFMAG, SELFMAG) != 0) {
        printf("FAIL: cannot read the module table or the cubin\n");
        return 1;
    }
    int bad = 0, nk = 0;
    for (const cpuk_kernel *k = ks; k->name != NULL; k++, nk++) {
        param ps[CPUK_MAX_PARAMS];
        memset(ps, 0, sizeof ps);
        int n = cubin_params(d, len, k->name, ps);
        if (n < 0) {
            printf("FAIL: %s is in the C module but not in the cubin\n", k->name);
            bad = 1;
            continue;
        }
        int kbad = 0;
        if ((unsigned int)n != k->nparams) {
            printf("FAIL: %s has %u parameters in the C module, %d in the cubin\n",
                   k->name, k->nparams, n);
            bad = 1;
            continue;
        }
        for (int i = 0; i < n; i++) {
            if (!ps[i].seen || ps[i].offset != k->params[i].offset ||
                ps[i].size != k->params[i].size) {
                printf("FAIL: %s parameter %d: C module %zu+%zu, cubin %zu+%zu\n", k->name,
                       i, k->params[i].offset, k->params[i].size, ps[i].offset, ps[i].size);
                kbad = bad = 1;
            }
        }
        if (!kbad)
            printf("ok: %s (%d parameters)\n", k->name, n);
    }
    /* Every kernel of the cubin must be in the C module too. */
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)d;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(d + eh->e_shoff);
    const char *strs = (const char *)d + sh[eh->e_shstrndx].sh_offset;
    for (unsigned int s = 0; s < eh->e_shnum; s++) {
        const char *sn = strs + sh[s].sh_name;
        if (strncmp(sn, ".nv.info.", 9) != 0)
            continue;
        int found = 0;
        for (const cpuk_kernel *k = ks; k->name != NULL; k++)
            found |= strcmp(k->name, sn + 9) == 0;
        if (!found) {
            printf("FAIL: %s is in the cubin but not in the C module\n", sn + 9);
            bad = 1;
        }
    }
    free(d);
    printf("%s: %d kernels compared\n", bad ? "FAIL" : "ok", nk);
    return bad;
}
