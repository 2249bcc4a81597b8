/* module.c - modules and libraries of C kernels (cpukernel.h): a module is a
 * shared object exporting cpuk_module_kernels. CUfunction (per module) and
 * CUkernel (per library) are distinct handle kinds; a CUkernel launches
 * through its CUfunction. */
#include "internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t cc__kernel_argsize(const cpuk_kernel *k)
{
    size_t n = 0;
    for (unsigned i = 0; i < k->nparams; i++)
        if (k->params[i].offset + k->params[i].size > n) n = k->params[i].offset + k->params[i].size;
    return n;
}

/* Opens a kernel module. FILE_NOT_FOUND, INVALID_IMAGE (not loadable, no
 * table, or a malformed table); nothing stays open on failure. */
static CUresult open_table(const char *path, void **dl, const cpuk_kernel **table, size_t *n)
{
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    if (access(path, R_OK) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        cc__log("cannot load module %s: %s", path, dlerror());
        return CUDA_ERROR_INVALID_IMAGE;
    }
    const cpuk_kernel *t = dlsym(h, CPUK_MODULE_SYMBOL);
    size_t count = 0;
    bool ok = t != NULL;
    for (; ok && t[count].name; count++)
        if (!t[count].fn || t[count].nparams > CPUK_MAX_PARAMS) ok = false;
    if (!ok) {
        cc__log("module %s has no valid %s table", path, CPUK_MODULE_SYMBOL);
        dlclose(h);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    *dl = h;
    *table = t;
    *n = count;
    return CUDA_SUCCESS;
}

CUresult cc__func_resolve(CUfunction f, cc_func **fn, cc_kern **kern)
{
    if (cc__handle_is(f, CC_K_FUNC)) {
        *fn = (cc_func *)f;
        *kern = NULL;
        return CUDA_SUCCESS;
    }
    if (cc__handle_is(f, CC_K_KERNEL)) {
        *kern = (cc_kern *)f;
        *fn = (*kern)->fn;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_HANDLE;
}

CC_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    CC_ENTER(cuModuleLoad);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    cc__unlock();
    if (r) return r;
    void *dl;
    const cpuk_kernel *t;
    size_t n;
    r = open_table(fname, &dl, &t, &n);
    if (r) return r;
    cc_module *m = calloc(1, sizeof *m);
    cc_func *fs = calloc(n ? n : 1, sizeof *fs);
    if (!m || !fs) {
        free(m);
        free(fs);
        dlclose(dl);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->dl = dl;
    m->table = t;
    m->funcs = fs;
    m->nfuncs = n;
    m->ctx = c;
    cc__lock();
    for (size_t i = 0; i < n; i++) {
        fs[i].mod = m;
        fs[i].k = &t[i];
        cc__handle_add(&fs[i], CC_K_FUNC);
    }
    cc__handle_add(m, CC_K_MODULE);
    cc__unlock();
    *module = (CUmodule)m;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    CC_ENTER(cuModuleLoadData);
    CUresult r = cc__check_init();
    if (r) return r;
    (void)module;
    (void)image;
    return CUDA_ERROR_NOT_SUPPORTED; /* only modules on disk (dlopen) */
}

/* Unloads after the module's context drained: a queued launch must not run
 * code that dlclose unmapped. */
CC_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    CC_ENTER(cuModuleUnload);
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_module *m = (cc_module *)hmod;
    if (!cc__handle_is(m, CC_K_MODULE)) {
        cc__unlock();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (cc__ctx_ok(m->ctx)) cc__ctx_drain(m->ctx);
    for (size_t i = 0; i < m->nfuncs; i++) cc__handle_del(&m->funcs[i]);
    cc__handle_del(m);
    cc__unlock();
    dlclose(m->dl);
    free(m->funcs);
    free(m);
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    CC_ENTER(cuModuleGetFunction);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_module *m = (cc_module *)hmod;
    if (!cc__handle_is(m, CC_K_MODULE)) {
        r = CUDA_ERROR_INVALID_HANDLE;
    } else {
        r = CUDA_ERROR_NOT_FOUND;
        for (size_t i = 0; i < m->nfuncs; i++)
            if (!strcmp(m->funcs[i].k->name, name)) {
                *hfunc = (CUfunction)&m->funcs[i];
                r = CUDA_SUCCESS;
                break;
            }
    }
    cc__unlock();
    return r;
}

/* The kernel description behind a CUfunction or CUkernel handle. */
static CUresult kernel_of(const void *h, enum cc_kind want, const cpuk_kernel **k)
{
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    if (want == CC_K_FUNC && cc__handle_is(h, CC_K_FUNC)) *k = ((const cc_func *)h)->k;
    else if (want == CC_K_KERNEL && cc__handle_is(h, CC_K_KERNEL)) *k = ((const cc_kern *)h)->k;
    else r = CUDA_ERROR_INVALID_HANDLE;
    cc__unlock();
    return r;
}

static CUresult param_info(const void *h, enum cc_kind kind, size_t idx, size_t *off, size_t *size)
{
    const cpuk_kernel *k;
    CUresult r = kernel_of(h, kind, &k);
    if (r) return r;
    if (idx >= k->nparams) return CUDA_ERROR_INVALID_VALUE;
    if (off) *off = k->params[idx].offset;
    if (size) *size = k->params[idx].size;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    CC_ENTER(cuFuncGetParamInfo);
    return param_info(func, CC_K_FUNC, paramIndex, paramOffset, paramSize);
}

CC_EXPORT CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    CC_ENTER(cuKernelGetParamInfo);
    return param_info(kernel, CC_K_KERNEL, paramIndex, paramOffset, paramSize);
}

CC_EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    CC_ENTER(cuFuncGetName);
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    const cpuk_kernel *k;
    CUresult r = kernel_of(hfunc, CC_K_FUNC, &k);
    if (!r) *name = k->name;
    return r;
}

CC_EXPORT CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    CC_ENTER(cuKernelGetName);
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    const cpuk_kernel *k;
    CUresult r = kernel_of(hfunc, CC_K_KERNEL, &k);
    if (!r) *name = k->name;
    return r;
}

CC_EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    CC_ENTER(cuFuncGetAttribute);
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    const cpuk_kernel *k;
    CUresult r = kernel_of(hfunc, CC_K_FUNC, &k);
    if (r) return r;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 49152; break;
    default:
        if ((int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
        *pi = 0;
        break;
    }
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    CC_ENTER(cuFuncGetModule);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!hmod) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    if (!cc__handle_is(hfunc, CC_K_FUNC)) r = CUDA_ERROR_INVALID_HANDLE;
    else if (!((cc_func *)hfunc)->mod) r = CUDA_ERROR_NOT_FOUND;
    else *hmod = (CUmodule)((cc_func *)hfunc)->mod;
    cc__unlock();
    return r;
}

/* ---- libraries (context-independent) ------------------------------------ */

CC_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                         void **jitOptionsValues, unsigned int numJitOptions,
                                         CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                         unsigned int numLibraryOptions)
{
    CC_ENTER(cuLibraryLoadFromFile);
    (void)jitOptions;
    (void)jitOptionsValues;
    (void)libraryOptions;
    (void)libraryOptionValues;
    CUresult r = cc__check_init();
    if (r) return r;
    if (!library || !fileName) return CUDA_ERROR_INVALID_VALUE;
    if (numJitOptions || numLibraryOptions) return CUDA_ERROR_NOT_SUPPORTED;
    void *dl;
    const cpuk_kernel *t;
    size_t n;
    r = open_table(fileName, &dl, &t, &n);
    if (r) return r;
    cc_lib *l = calloc(1, sizeof *l);
    cc_kern *ks = calloc(n ? n : 1, sizeof *ks);
    cc_func *fs = calloc(n ? n : 1, sizeof *fs);
    if (!l || !ks || !fs) {
        free(l);
        free(ks);
        free(fs);
        dlclose(dl);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    l->dl = dl;
    l->table = t;
    l->kerns = ks;
    l->nkerns = n;
    cc__lock();
    for (size_t i = 0; i < n; i++) {
        ks[i].lib = l;
        ks[i].k = &t[i];
        ks[i].fn = &fs[i];
        fs[i].k = &t[i];
        cc__handle_add(&ks[i], CC_K_KERNEL);
        cc__handle_add(&fs[i], CC_K_FUNC);
    }
    cc__handle_add(l, CC_K_LIB);
    cc__unlock();
    *library = (CUlibrary)l;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
    CC_ENTER(cuLibraryUnload);
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_lib *l = (cc_lib *)library;
    if (!cc__handle_is(l, CC_K_LIB)) {
        cc__unlock();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    cc__device_drain();
    cc_func *fs = l->nkerns ? l->kerns[0].fn : NULL;
    for (size_t i = 0; i < l->nkerns; i++) {
        cc__handle_del(&l->kerns[i]);
        cc__handle_del(l->kerns[i].fn);
    }
    cc__handle_del(l);
    cc__unlock();
    dlclose(l->dl);
    free(fs);
    free(l->kerns);
    free(l);
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    CC_ENTER(cuLibraryGetKernel);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_lib *l = (cc_lib *)library;
    if (!cc__handle_is(l, CC_K_LIB)) {
        r = CUDA_ERROR_INVALID_HANDLE;
    } else {
        r = CUDA_ERROR_NOT_FOUND;
        for (size_t i = 0; i < l->nkerns; i++)
            if (!strcmp(l->kerns[i].k->name, name)) {
                *pKernel = (CUkernel)&l->kerns[i];
                r = CUDA_SUCCESS;
                break;
            }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    CC_ENTER(cuKernelGetFunction);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r && !cc__handle_is(kernel, CC_K_KERNEL)) r = CUDA_ERROR_INVALID_HANDLE;
    if (!r) *pFunc = (CUfunction)((cc_kern *)kernel)->fn;
    cc__unlock();
    return r;
}
