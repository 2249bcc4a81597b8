/* The linker version script of libreprise.so, generated from entries.h by the
 * C preprocessor (shim/CMakeLists.txt): the exported names are exactly the
 * interposed entry points and dlsym; everything else is local.  The version
 * node is anonymous so that references bound to versioned glibc symbols
 * (dlsym@GLIBC_2.34) still bind to ours when we are preloaded. */
#include "entries.h"
{
  global:
#define X(name, params, args, role) name;
    RP_ENTRIES(X)
#undef X
    dlsym;
  local:
    *;
};
