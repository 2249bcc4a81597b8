/* The real driver: finding it, resolving the real-entry table, and knowing
 * where it lives in memory.
 *
 * Everything above this file calls the driver only through a struct
 * rp__driver, so the capture engine and the unit tests can be handed another
 * table.  The driver is REPRISE_DRIVER (default libcuda.so.1); one the
 * process already loaded is reused (RTLD_NOLOAD first), otherwise it is
 * loaded RTLD_LOCAL: only we use it, through dlsym on our handle, and making
 * its symbols global would change how libraries loaded later bind. */
#include "core.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static const size_t entry_offset[RP_DRIVER_COUNT] = {
#define X(name, params, args, role) [RP_E_##name] = offsetof(struct rp__driver, name),
    RP_ENTRIES(X)
    RP_HELPERS(X)
#undef X
};

void *rp__driver_get(const struct rp__driver *d, enum rp__entry id)
{
    void *p;
    memcpy(&p, (const char *)d + entry_offset[id], sizeof p);
    return p;
}

void rp__driver_set(struct rp__driver *d, enum rp__entry id, void *fn)
{
    memcpy((char *)d + entry_offset[id], &fn, sizeof fn);
}

/* ---- the real dlsym ------------------------------------------------------ */

RP_NO_SANITIZE static void *no_dlsym(void *handle, const char *name)
{
    (void)handle;
    (void)name;
    return NULL;
}

_Atomic(rp__dlsym_fn) rp__dlsym_next;

RP_NO_SANITIZE rp__dlsym_fn rp__dlsym_real(void)
{
    rp__dlsym_fn f = atomic_load_explicit(&rp__dlsym_next, memory_order_acquire);
    if (RP_LIKELY(f != NULL))
        return f;
    /* dlvsym, not dlsym: our own dlsym is the one the name binds to.  On
     * glibc 2.34+ both versions are the same function; 2.17 is aarch64's
     * first version.  Racing threads store the same value. */
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && f == NULL; i++)
        f = (rp__dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (NEVER(f == NULL)) /* every glibc has one of them */
        f = no_dlsym;
    atomic_store_explicit(&rp__dlsym_next, f, memory_order_release);
    return f;
}

/* ---- loading and resolving ----------------------------------------------- */

void *rp__driver_handle;

/* The driver's PT_LOAD segments, for telling its own dlsym calls apart. */
#define RP_MAX_RANGES 16
static struct {
    uintptr_t lo, hi;
} ranges[RP_MAX_RANGES];
static size_t n_ranges;

struct find_segments {
    ElfW(Addr) base;
    const char *name;
};

static int collect_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const struct find_segments *want = data;
    if (info->dlpi_addr != want->base || strcmp(info->dlpi_name, want->name) != 0)
        return 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum && n_ranges < RP_MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        ranges[n_ranges].lo = info->dlpi_addr + ph->p_vaddr;
        ranges[n_ranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        n_ranges++;
    }
    return 1;
}

/* Why the driver could not be loaded, for the summary at exit. */
static char load_error[512];

const char *rp__driver_load_error(void)
{
    return load_error;
}

bool rp__driver_load(struct rp__driver *out)
{
    memset(out, 0, sizeof *out);
    const char *path = rp__option(RP_OPTION_DRIVER).path;
    bool reused = true;
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL) {
        reused = false;
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (h == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "%s", why ? why : "unknown error");
        rp__error("cannot load the CUDA driver %s (%s): driver calls fail as if there "
                  "were none (cuInit: CUDA_ERROR_NO_DEVICE, others: "
                  "CUDA_ERROR_NOT_INITIALIZED)",
                  path, why ? why : "unknown error");
        return false;
    }
    rp__driver_handle = h;

    rp__dlsym_fn real = rp__dlsym_real();
    int found = 0;
    for (int id = 0; id < RP_DRIVER_COUNT; id++) {
        void *fn = real(h, rp__entry_names[id]);
        rp__driver_set(out, (enum rp__entry)id, fn);
        found += fn != NULL;
    }

    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL) {
        struct find_segments want = {lm->l_addr, lm->l_name};
        n_ranges = 0;
        dl_iterate_phdr(collect_segments, &want);
    }
    rp__info("driver %s (%s): %d of %d entry points, %zu segments",
             lm && lm->l_name[0] ? lm->l_name : path, reused ? "already loaded" : "loaded",
             found, (int)RP_DRIVER_COUNT, n_ranges);
    return true;
}

bool rp__driver_contains(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    for (size_t i = 0; i < n_ranges; i++)
        if (a >= ranges[i].lo && a < ranges[i].hi)
            return true;
    return false;
}

bool rp__is_driver_handle(void *handle)
{
    if (handle == NULL)
        return false;
    if (handle == rp__driver_handle)
        return true;
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_name == NULL)
        return false;
    const char *base = strrchr(lm->l_name, '/');
    base = base ? base + 1 : lm->l_name;
    return strncmp(base, "libcuda.so", 10) == 0;
}
