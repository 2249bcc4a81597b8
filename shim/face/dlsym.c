/* The dlsym routing decision: which dlsym lookups get our wrappers.
 *
 * A program or library that dlopens the driver and asks dlsym for an entry
 * point would get the driver's function directly: a dlopen handle's lookup
 * scope does not include preloaded objects.  So dlsym is overridden
 * (dlsym_export.c) and asks this function first.  A lookup is routed when all
 * of these hold, and otherwise goes to the real dlsym untouched:
 *   - the name is exactly an exported name of entries.h (never a prefix
 *     match: "cudnnCreate" and "cuLaunchKernelX" are not ours);
 *   - reprise is enabled (disabled, the shim stays out of the runtime's way);
 *   - the caller is not the driver itself (its own dlsym(handle, "cuInit")
 *     must get its own function, or it would call itself through us);
 *   - the handle is RTLD_DEFAULT or RTLD_NEXT, or resolves to the driver:
 *     the handle we loaded or any object named libcuda.so*; for such a
 *     handle the driver must have the symbol, so a missing one stays missing.
 * No allocation, no logging: dlsym runs inside other libraries' init code. */
#include "core.h"
#include "init.h"

#include <dlfcn.h>

RP_NO_SANITIZE void *rp__dlsym_route(void *handle, const char *name, const void *caller)
{
    rp__dlsym_fn real = rp__dlsym_real(); /* also what the caller forwards to */
    int id = rp__entry_by_name(name);
    if (id < 0)
        return NULL;
    rp__ensure_init();
    if (atomic_load_explicit(&rp__state, memory_order_acquire) != RP_INIT_READY)
        return NULL; /* called from inside our own init (the driver's constructors) */
    if (!rp__enabled || rp__driver_contains(caller))
        return NULL;
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
        return rp__wrappers[id];
    if (!rp__is_driver_handle(handle) || real(handle, name) == NULL)
        return NULL;
    return rp__wrappers[id];
}
