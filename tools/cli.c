/* cli.c - what the command checks of the paths it is given, before any
 * long work starts: that an output file can be written, where libreprise.so
 * and the CPU driver are, and whether a program will find a CUDA driver at
 * all (the loader's "libcuda.so.1: cannot open shared object file" says
 * nothing of what to set). */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

bool rp_cli_output_ok(const char *pattern, char *why, size_t n)
{
    if (!pattern[0]) {
        snprintf(why, n, "an empty file name");
        return false;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", pattern);
    /* The folder before the first %p, %h or %r: the rest is known only in
     * the process that writes. */
    bool whole = true;
    char *pct = strchr(dir, '%');
    if (pct) {
        *pct = '\0';
        whole = false;
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir ? 1 : 0] = '\0';
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(why, n, "no folder %s (%s)", dir, strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, n, "%s is not a folder", dir);
        return false;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, n, "cannot write in the folder %s (%s)", dir, strerror(errno));
        return false;
    }
    if (whole && stat(pattern, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(why, n, "%s is a folder", pattern);
        return false;
    }
    return true;
}

/* The folder this command runs from, "" when /proc/self/exe cannot say. */
static const char *exe_dir(void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        dir[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
    }
    return dir;
}

/* `dir`/`rel`/`name`, resolved, into out[PATH_MAX] when it is readable. */
static bool found(const char *dir, const char *rel, const char *name, char *out)
{
    char candidate[PATH_MAX];
    if (snprintf(candidate, sizeof candidate, "%s%s%s/%s", dir, rel[0] ? "/" : "", rel, name) >=
        (int)sizeof candidate)
        return false;
    return access(candidate, R_OK) == 0 && realpath(candidate, out) != NULL;
}

const char *rp_cli_library(void)
{
    static char lib[PATH_MAX];
    const char *rel[] = {"../lib", RP_BIN_TO_LIBDIR};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        if (exe_dir()[0] && found(exe_dir(), rel[i], "libreprise.so", lib))
            return lib;
    if (RP_INSTALL_LIBDIR[0] && found(RP_INSTALL_LIBDIR, "", "libreprise.so", lib))
        return lib;
    return NULL;
}

const char *rp_cli_cpudriver_dir(void)
{
    static char drv[PATH_MAX];
    if (!exe_dir()[0] || !found(exe_dir(), "../cpudriver", "libcuda.so.1", drv))
        return NULL;
    *strrchr(drv, '/') = '\0';
    return drv;
}

/* ---- does the program need a driver the loader cannot find? ---------------- */

/* The file execvp would run for `program`, into out[PATH_MAX]. */
static bool program_file(const char *program, char *out)
{
    if (strchr(program, '/'))
        return snprintf(out, PATH_MAX, "%s", program) < PATH_MAX;
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (snprintf(out, PATH_MAX, "%.*s/%s", (int)len, path, program) < PATH_MAX &&
            access(out, X_OK) == 0)
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

/* Whether the 64-bit ELF file `f` lists libcuda.so.1 in its dynamic
 * section (DT_NEEDED); its run paths, each ':' separated, into rpath[n]. */
static bool needs_libcuda(FILE *f, char *rpath, size_t n)
{
    Elf64_Ehdr eh;
    if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
        return false;
    bool needed = false;
    rpath[0] = '\0';
    for (unsigned i = 0; i < eh.e_shnum && !needed; i++) {
        Elf64_Shdr sh, str;
        if (fseek(f, (long)(eh.e_shoff + i * sizeof sh), SEEK_SET) != 0 ||
            fread(&sh, sizeof sh, 1, f) != 1 || sh.sh_type != SHT_DYNAMIC ||
            sh.sh_link >= eh.e_shnum ||
            fseek(f, (long)(eh.e_shoff + sh.sh_link * sizeof str), SEEK_SET) != 0 ||
            fread(&str, sizeof str, 1, f) != 1 || str.sh_size > (1u << 24))
            continue;
        char *strings = malloc(str.sh_size + 1);
        Elf64_Dyn *dyn = malloc(sh.sh_size ? sh.sh_size : 1);
        if (strings && dyn && fseek(f, (long)str.sh_offset, SEEK_SET) == 0 &&
            fread(strings, 1, str.sh_size, f) == str.sh_size &&
            fseek(f, (long)sh.sh_offset, SEEK_SET) == 0 &&
            fread(dyn, 1, sh.sh_size, f) == sh.sh_size) {
            strings[str.sh_size] = '\0';
            for (size_t k = 0; k < sh.sh_size / sizeof *dyn && dyn[k].d_tag != DT_NULL; k++) {
                if (dyn[k].d_un.d_val >= str.sh_size)
                    continue;
                const char *s = strings + dyn[k].d_un.d_val;
                if (dyn[k].d_tag == DT_NEEDED && !strcmp(s, "libcuda.so.1"))
                    needed = true;
                else if (dyn[k].d_tag == DT_RPATH || dyn[k].d_tag == DT_RUNPATH)
                    snprintf(rpath + strlen(rpath), n - strlen(rpath), "%s%s",
                             rpath[0] ? ":" : "", s);
            }
        }
        free(strings);
        free(dyn);
    }
    return needed;
}

/* Whether a folder of the ':' separated `dirs` holds libcuda.so.1
 * ($ORIGIN: the program's folder). */
static bool in_dirs(const char *dirs, const char *origin)
{
    while (dirs && *dirs) {
        size_t len = strcspn(dirs, ":");
        char dir[PATH_MAX], file[PATH_MAX + 16];
        snprintf(dir, sizeof dir, "%.*s", (int)len, dirs);
        if (!strncmp(dir, "$ORIGIN", 7))
            snprintf(file, sizeof file, "%s%s/libcuda.so.1", origin, dir + 7);
        else
            snprintf(file, sizeof file, "%s/libcuda.so.1", dir);
        if (access(file, R_OK) == 0)
            return true;
        dirs += len + (dirs[len] == ':');
    }
    return false;
}

void rp_cli_driver_hint(const char *program)
{
    char file[PATH_MAX], rpath[2048];
    if (!program_file(program, file))
        return;
    FILE *f = fopen(file, "rb");
    if (!f)
        return;
    bool needed = needs_libcuda(f, rpath, sizeof rpath);
    fclose(f);
    if (!needed)
        return;
    char origin[PATH_MAX];
    snprintf(origin, sizeof origin, "%s", file);
    char *slash = strrchr(origin, '/');
    if (slash)
        *slash = '\0';
    if (in_dirs(rpath, origin) || in_dirs(getenv("LD_LIBRARY_PATH"), origin))
        return;
    /* Where the loader looks besides (its cache, the system folders): ask
     * it.  What this loads is gone at the exec that follows. */
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        return;
    }
    const char *cpu = rp_cli_cpudriver_dir();
    if (cpu)
        fprintf(stderr, "reprise: %s needs libcuda.so.1 and the loader finds none (no NVIDIA "
                        "driver here): to run it on the CPU driver built with reprise, set "
                        "LD_LIBRARY_PATH=%s\n", program, cpu);
    else
        fprintf(stderr, "reprise: %s needs libcuda.so.1 and the loader finds none: install "
                        "the NVIDIA driver, or put the folder of a libcuda.so.1 on "
                        "LD_LIBRARY_PATH\n", program);
}
