/* A program run under real LD_PRELOAD=libreprise.so against the fake driver
 * (fakecuda.c), checking what the routing gives a program that, like the
 * CUDA runtime, dlopens the driver and looks entry points up itself.
 *
 *   preload_probe MODE LIBREPRISE_PATH
 *
 * Each mode checks one rule and exits 0 when it holds; the CMake test named
 * after the rule runs it (and tests/shim/check_stats.sh checks the report the
 * shim writes at exit where the rule is about the report). */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "preload_probe: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                                \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

typedef CUresult (*procaddr_v1)(const char *, void **, int, cuuint64_t);
typedef CUresult (*procaddr_v2)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*init_fn)(unsigned);

/* The file that defines the code at `p` ("" if unknown). */
static const char *owner(const void *p)
{
    Dl_info info;
    if (p == NULL || dladdr(p, &info) == 0 || info.dli_fname == NULL)
        return "";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

static void *self; /* libreprise.so, by the path we were given */

static void *ours(const char *name)
{
    /* dlsym on libreprise's own handle is not a driver handle: untouched. */
    return dlsym(self, name);
}

static int mode_dlsym(void *drv)
{
    void *launch = dlsym(drv, "cuLaunchKernel");
    CHECK(launch != NULL && launch == ours("cuLaunchKernel"));
    CHECK(strcmp(owner(launch), "libreprise.so") == 0);
    CHECK(dlsym(RTLD_DEFAULT, "cuLaunchKernel_ptsz") == ours("cuLaunchKernel_ptsz"));
    /* Not ours: passes through to the real dlsym. */
    CHECK(dlsym(RTLD_DEFAULT, "cudnnCreate") == NULL);
    CHECK(dlsym(RTLD_DEFAULT, "cuLaunchKernelX") == NULL);
    void *pf = dlsym(RTLD_DEFAULT, "printf");
    /* The same printf the program itself binds to (libc's, or a sanitizer's
     * interceptor in a sanitized build). */
    CHECK(pf != NULL && pf == (void *)&printf);
    void *ver = dlsym(drv, "cuDriverGetVersion"); /* a driver symbol we do not list */
    CHECK(ver != NULL && strcmp(owner(ver), "libcuda.so.1") == 0);
    /* Listed, but absent from this driver: stays absent. */
    CHECK(dlsym(drv, "cuMemAlloc_v2") == NULL);
    /* The driver looking itself up gets its own function. */
    void *(*fake_self)(const char *) = (void *(*)(const char *))dlsym(drv, "fakecuda_self_dlsym");
    CHECK(fake_self != NULL);
    if (fake_self) {
        void *real = fake_self("cuLaunchKernel");
        CHECK(real != NULL && real != launch && strcmp(owner(real), "libcuda.so.1") == 0);
    }
    return 0;
}

static int mode_procaddr(void *drv)
{
    procaddr_v2 gpa = (procaddr_v2)dlsym(drv, "cuGetProcAddress_v2");
    CHECK(gpa != NULL && (void *)gpa == ours("cuGetProcAddress_v2"));
    if (!gpa)
        return 1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    void *p = NULL;
    /* The runtime's self-lookups: the wrapper of the matching arity. */
    CHECK(gpa("cuGetProcAddress", &p, 12000, 0, &st) == CUDA_SUCCESS);
    CHECK(p == ours("cuGetProcAddress_v2") && st == CU_GET_PROC_ADDRESS_SUCCESS);
    procaddr_v2 gpa12 = (procaddr_v2)p;
    CHECK(gpa("cuGetProcAddress", &p, 11030, 0, &st) == CUDA_SUCCESS);
    CHECK(p == ours("cuGetProcAddress"));
    procaddr_v1 gpa11 = (procaddr_v1)p;
    /* Per-thread variants, by the driver's choice. */
    CHECK(gpa12("cuLaunchKernel", &p, 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                &st) == CUDA_SUCCESS);
    CHECK(p == ours("cuLaunchKernel_ptsz"));
    launch_fn launch = (launch_fn)p;
    if (launch)
        CHECK(launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS);
    CHECK(gpa11("cuMemcpyHtoD", &p, 3020, 0) == CUDA_SUCCESS);
    CHECK(p == ours("cuMemcpyHtoD_v2"));
    CHECK(gpa12("cuInit", &p, 2000, 0, NULL) == CUDA_SUCCESS && p == ours("cuInit"));
    if (p)
        CHECK(((init_fn)p)(0) == CUDA_SUCCESS);
    /* Not interposed: the driver's own pointer. */
    CHECK(gpa12("cuDriverGetVersion", &p, 2020, 0, &st) == CUDA_SUCCESS);
    CHECK(p != NULL && strcmp(owner(p), "libcuda.so.1") == 0);
    /* Unknown: the driver's result and status, untouched. */
    p = (void *)&st;
    CHECK(gpa12("cuNoSuchThing", &p, 12000, 0, &st) == CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    /* The calls reached the driver, each exactly once. */
    int (*fake_calls)(const char *) = (int (*)(const char *))dlsym(drv, "fakecuda_calls");
    CHECK(fake_calls && fake_calls("cuLaunchKernel_ptsz") == 1 && fake_calls("cuInit") == 1);
    return 0;
}

static int mode_disabled(void *drv)
{
    /* Disabled, the shim stays out of the way of a dlopen user entirely. */
    void *launch = dlsym(drv, "cuLaunchKernel");
    CHECK(launch != NULL && strcmp(owner(launch), "libcuda.so.1") == 0);
    procaddr_v2 gpa = (procaddr_v2)dlsym(drv, "cuGetProcAddress_v2");
    void *p = NULL;
    CHECK(gpa && gpa("cuLaunchKernel", &p, 7000, 2, NULL) == CUDA_SUCCESS);
    CHECK(p != NULL && strcmp(owner(p), "libcuda.so.1") == 0);
    /* A program bound to our exported symbol is forwarded. */
    init_fn init = (init_fn)ours("cuInit");
    CHECK(init && init(0) == CUDA_SUCCESS);
    int (*fake_calls)(const char *) = (int (*)(const char *))dlsym(drv, "fakecuda_calls");
    CHECK(fake_calls && fake_calls("cuInit") == 1);
    return 0;
}

static int mode_missing(void)
{
    /* No driver: the calls fail the way they would with none installed. */
    init_fn init = (init_fn)ours("cuInit");
    launch_fn launch = (launch_fn)ours("cuLaunchKernel");
    CHECK(init && init(0) == CUDA_ERROR_NO_DEVICE);
    CHECK(launch && launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) ==
                        CUDA_ERROR_NOT_INITIALIZED);
    CHECK(init && init(0) == CUDA_ERROR_NO_DEVICE);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: preload_probe MODE LIBREPRISE_PATH\n");
        return 2;
    }
    self = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
    if (self == NULL) {
        fprintf(stderr, "preload_probe: %s is not preloaded\n", argv[2]);
        return 1;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "missing") == 0) {
        mode_missing();
    } else {
        void *drv = dlopen("libcuda.so.1", RTLD_NOW);
        if (drv == NULL) {
            fprintf(stderr, "preload_probe: %s\n", dlerror());
            return 1;
        }
        if (strcmp(mode, "dlsym") == 0)
            mode_dlsym(drv);
        else if (strcmp(mode, "procaddr") == 0)
            mode_procaddr(drv);
        else if (strcmp(mode, "disabled") == 0)
            mode_disabled(drv);
        else {
            fprintf(stderr, "preload_probe: unknown mode %s\n", mode);
            return 2;
        }
    }
    if (failures == 0)
        printf("preload_probe %s: ok\n", mode);
    return failures ? 1 : 0;
}
