/* module.c - modules and libraries of C kernels (cpukernel.h): a module is a
 * shared object exporting cpuk_module_kernels. CUfunction (per module) and
 * CUkernel (per library) are distinct handle kinds; a CUkernel launches
 * through its CUfunction. A module or library may also be PTX text
 * (cuModuleLoadData[Ex], cuLibraryLoadData): its .entry declarations become
 * kernels with the parameter layout PTX gives them and no C version; they run
 * as empty kernels (what `reprise replay` loads). */
#include "internal.h"

#include <ctype.h>
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

static CUresult module_new(cc_ctx *c, void *dl, const cpuk_kernel *t, size_t n, CUmodule *module);

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
    r = module_new(c, dl, t, n, module);
    if (r) dlclose(dl);
    return r;
}

/* ---- PTX text: kernels with no C version ----------------------------------- */

/* What a PTX kernel runs: nothing. On a GPU the same empty .entry costs a
 * launch and no work; here it is called once per block like any kernel. */
static void ptx_empty_kernel(const cpuk_block *b, void *const *params)
{
    (void)b;
    (void)params;
}

/* A cursor over PTX text that skips white space and comments. */
typedef struct { const char *p; const char *err; } ptx_cur;

static void ptx_skip(ptx_cur *c)
{
    for (;;) {
        while (*c->p && isspace((unsigned char)*c->p)) c->p++;
        if (c->p[0] == '/' && c->p[1] == '/') {
            while (*c->p && *c->p != '\n') c->p++;
        } else if (c->p[0] == '/' && c->p[1] == '*') {
            const char *e = strstr(c->p + 2, "*/");
            if (!e) { c->err = "an unterminated comment"; c->p += strlen(c->p); return; }
            c->p = e + 2;
        } else {
            return;
        }
    }
}

static bool ptx_ident_char(char ch, bool first)
{
    return isalpha((unsigned char)ch) || ch == '_' || ch == '$' || (first && ch == '%') ||
           (!first && isdigit((unsigned char)ch));
}

/* The next token: an identifier or directive (".entry", "name"), a number,
 * or one punctuation character. Returns its length (0 at the end). */
static size_t ptx_token(ptx_cur *c, const char **tok)
{
    ptx_skip(c);
    const char *s = c->p;
    *tok = s;
    if (!*s) return 0;
    size_t n = 0;
    if (*s == '.' || ptx_ident_char(*s, true)) {
        n = 1;
        while (ptx_ident_char(s[n], false)) n++;
    } else if (isdigit((unsigned char)*s)) {
        while (isalnum((unsigned char)s[n])) n++;
    } else {
        n = 1;
    }
    c->p += n;
    return n;
}

static bool ptx_is(const char *tok, size_t n, const char *word)
{
    return strlen(word) == n && !memcmp(tok, word, n);
}

/* The size of a PTX fundamental type (".u32" -> 4), 0 if tok is none. */
static size_t ptx_type_size(const char *tok, size_t n)
{
    static const struct { const char *t; size_t sz; } types[] = {
        {".b8", 1}, {".u8", 1}, {".s8", 1}, {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2},
        {".bf16", 2}, {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".f16x2", 4},
        {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b128", 16}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (ptx_is(tok, n, types[i].t)) return types[i].sz;
    return 0;
}

static bool ptx_number(const char *tok, size_t n, size_t *out)
{
    if (!n || n > 9) return false;
    size_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)tok[i])) return false;
        v = v * 10 + (size_t)(tok[i] - '0');
    }
    *out = v;
    return true;
}

/* One parameter: ".param [.align A] .type [.ptr .space [.align N]] name[[count]]".
 * Its offset is the end of the previous one rounded up to its alignment (the
 * explicit .align, else the type's size), as PTX lays out a kernel's
 * parameter buffer; the alignment after .ptr is the pointee's and does not
 * move the parameter. */
static bool ptx_param(ptx_cur *c, size_t *end, cpuk_param *out)
{
    const char *t;
    size_t n = ptx_token(c, &t);
    if (!ptx_is(t, n, ".param")) return c->err = "a parameter that does not begin with .param", false;
    size_t align = 0, elem = 0, count = 1;
    bool after_ptr = false;
    for (;;) {
        n = ptx_token(c, &t);
        if (!n) return c->err = "a parameter list that never ends", false;
        if (ptx_is(t, n, ".align")) {
            size_t a;
            n = ptx_token(c, &t);
            if (!ptx_number(t, n, &a) || !a || (a & (a - 1)) || a > 4096)
                return c->err = "an .align that is not a power of two", false;
            if (!after_ptr) align = a;
        } else if (ptx_is(t, n, ".ptr")) {
            after_ptr = true;
        } else if (t[0] == '.') {
            size_t sz = ptx_type_size(t, n);
            if (sz) elem = sz; /* other directives (.global, .const...) are spaces of .ptr */
        } else {
            break; /* the name */
        }
    }
    if (!elem) return c->err = "a parameter with no type", false;
    if (!ptx_ident_char(t[0], true)) return c->err = "a parameter with no name", false;
    const char *save = c->p;
    const char *b;
    size_t bn = ptx_token(c, &b);
    if (bn == 1 && *b == '[') {
        n = ptx_token(c, &t);
        if (!ptx_number(t, n, &count) || !count) return c->err = "an array parameter with no size", false;
        n = ptx_token(c, &t);
        if (!(n == 1 && *t == ']')) return c->err = "an array parameter with no ]", false;
    } else {
        c->p = save;
    }
    if (!align) align = elem;
    size_t off = (*end + align - 1) & ~(align - 1);
    out->offset = off;
    out->size = elem * count;
    *end = off + out->size;
    if (*end > 32764) return c->err = "parameters larger than 32764 bytes", false;
    return true;
}

static void ptx_table_free(cpuk_kernel *t)
{
    if (!t) return;
    for (size_t i = 0; t[i].name; i++) free((char *)t[i].name);
    free(t);
}

/* Parses PTX text into a table of kernels ended by a NULL name (owned by the
 * caller, freed with ptx_table_free). Every .entry (declared .visible, .weak
 * or without linkage; .extern declarations have no body and are skipped)
 * becomes one kernel. INVALID_PTX, with one log line saying what was wrong
 * and where, for text that is not PTX this parser understands (nothing
 * allocated then); OUT_OF_MEMORY. */
static CUresult ptx_parse(const char *text, cpuk_kernel **out, size_t *count)
{
    ptx_cur c = {text, NULL};
    cpuk_kernel *t = NULL;
    size_t n = 0, cap = 0;
    bool version = false;
    const char *tok;
    size_t len;
    while (!c.err && (len = ptx_token(&c, &tok)) != 0) {
        if (ptx_is(tok, len, ".version")) version = true;
        if (!ptx_is(tok, len, ".entry")) continue;
        if (!version) { c.err = "an .entry before .version"; break; }
        const char *name;
        size_t nlen = ptx_token(&c, &name);
        if (!nlen || !ptx_ident_char(name[0], true)) { c.err = "an .entry with no name"; break; }
        if (n + 2 > cap) {
            size_t nc = cap ? cap * 2 : 8;
            cpuk_kernel *nt = realloc(t, nc * sizeof *nt);
            if (!nt) { c.err = "out of memory"; break; }
            t = nt;
            cap = nc;
        }
        cpuk_kernel *k = &t[n];
        memset(k, 0, sizeof *k);
        t[n + 1].name = NULL;
        char *nm = malloc(nlen + 1);
        if (!nm) { c.err = "out of memory"; break; }
        memcpy(nm, name, nlen);
        nm[nlen] = 0;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(t[i].name, nm)) c.err = "two .entry declarations of one name";
        k->name = nm;
        k->fn = ptx_empty_kernel;
        n++;
        if (c.err) break;
        len = ptx_token(&c, &tok);
        if (!(len == 1 && *tok == '(')) { c.err = "an .entry with no parameter list"; break; }
        const char *save = c.p;
        len = ptx_token(&c, &tok);
        size_t end = 0;
        if (!(len == 1 && *tok == ')')) {
            c.p = save;
            for (;;) {
                if (k->nparams == CPUK_MAX_PARAMS) { c.err = "more parameters than CPUK_MAX_PARAMS"; break; }
                if (!ptx_param(&c, &end, &k->params[k->nparams])) break;
                k->nparams++;
                len = ptx_token(&c, &tok);
                if (len == 1 && *tok == ')') break;
                if (!(len == 1 && *tok == ',')) { c.err = "parameters not separated by ','"; break; }
            }
        }
        if (c.err) break;
        /* Performance directives (.maxntid 256, 1, 1 ...), then the body
         * (skipped, braces balanced) or ';' for a declaration. */
        int depth = 0;
        while (!c.err) {
            len = ptx_token(&c, &tok);
            if (!len) { c.err = "an .entry with no body"; break; }
            if (*tok == '{' && len == 1) depth++;
            else if (*tok == '}' && len == 1 && --depth == 0) break;
            else if (*tok == ';' && len == 1 && depth == 0) {
                /* A declaration (.extern): no kernel of this module. */
                n--;
                free((char *)t[n].name);
                t[n].name = NULL;
                break;
            }
        }
    }
    if (!c.err && !version) c.err = "no .version directive (not PTX text)";
    if (c.err) {
        bool oom = !strcmp(c.err, "out of memory");
        cc__log("PTX rejected: %s (at byte %zu)", c.err, (size_t)(c.p - text));
        ptx_table_free(t);
        return oom ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_PTX;
    }
    if (!t) { /* PTX with no kernel: an empty table */
        t = calloc(1, sizeof *t);
        if (!t) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = t;
    *count = n;
    return CUDA_SUCCESS;
}

/* An image cuModuleLoadData or cuLibraryLoadData was given: PTX text is
 * parsed; a cubin (ELF) or a fatbin has no C version here, so it is
 * NOT_SUPPORTED, as is anything else that does not look like text. */
static CUresult image_table(const void *image, cpuk_kernel **table, size_t *n)
{
    if (!image) return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *b = image;
    if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') return CUDA_ERROR_NOT_SUPPORTED;
    uint32_t magic;
    memcpy(&magic, b, sizeof magic);
    if (magic == 0x466243b1u || magic == 0xBA55ED50u) return CUDA_ERROR_NOT_SUPPORTED;
    return ptx_parse(image, table, n);
}

/* A module of the current context over table (n kernels): dl is its
 * dlopen handle, or NULL for a PTX table the module owns. OUT_OF_MEMORY
 * leaves table and dl to the caller. */
static CUresult module_new(cc_ctx *c, void *dl, const cpuk_kernel *t, size_t n, CUmodule *module)
{
    cc_module *m = calloc(1, sizeof *m);
    cc_func *fs = calloc(n ? n : 1, sizeof *fs);
    if (!m || !fs) {
        free(m);
        free(fs);
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

/* A module's or library's table goes with it: dlclose for a C module, the
 * parsed table for PTX. */
static void table_close(void *dl, const cpuk_kernel *t)
{
    if (dl) dlclose(dl);
    else ptx_table_free((cpuk_kernel *)t);
}

static CUresult load_data(CUmodule *module, const void *image)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    cc__unlock();
    if (r) return r;
    cpuk_kernel *t;
    size_t n;
    r = image_table(image, &t, &n);
    if (r) return r;
    r = module_new(c, NULL, t, n, module);
    if (r) ptx_table_free(t);
    return r;
}

/* PTX text only (see image_table); JIT options change nothing here and are
 * accepted as they are. */
CC_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    CC_ENTER(cuModuleLoadData);
    return load_data(module, image);
}

CC_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                      CUjit_option *options, void **optionValues)
{
    CC_ENTER(cuModuleLoadDataEx);
    if (numOptions && (!options || !optionValues)) return CUDA_ERROR_INVALID_VALUE;
    return load_data(module, image);
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
    table_close(m->dl, m->table);
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

/* A library over table (n kernels), dl as for module_new. OUT_OF_MEMORY
 * leaves table and dl to the caller. */
static CUresult library_new(void *dl, const cpuk_kernel *t, size_t n, CUlibrary *library)
{
    cc_lib *l = calloc(1, sizeof *l);
    cc_kern *ks = calloc(n ? n : 1, sizeof *ks);
    cc_func *fs = calloc(n ? n : 1, sizeof *fs);
    if (!l || !ks || !fs) {
        free(l);
        free(ks);
        free(fs);
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
    r = library_new(dl, t, n, library);
    if (r) dlclose(dl);
    return r;
}

/* PTX text only (see image_table); JIT and library options change nothing
 * here and are accepted as they are. */
CC_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                     void **jitOptionsValues, unsigned int numJitOptions,
                                     CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                     unsigned int numLibraryOptions)
{
    CC_ENTER(cuLibraryLoadData);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!library || !code) return CUDA_ERROR_INVALID_VALUE;
    if ((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
        (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    cpuk_kernel *t;
    size_t n;
    r = image_table(code, &t, &n);
    if (r) return r;
    r = library_new(NULL, t, n, library);
    if (r) ptx_table_free(t);
    return r;
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
    table_close(l->dl, l->table);
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
