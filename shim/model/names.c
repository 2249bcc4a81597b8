/* names.c - kernel names demangled and shortened for people (names.h).
 *
 * The demangler is the C++ runtime's __cxa_demangle: the one c++filt and
 * Nsight agree with. It is looked up in the process first (a C++ program
 * such as PyTorch has libstdc++ loaded) and else in libstdc++.so.6 loaded
 * on demand, only when a name looks mangled ("_Z..."): a C program with
 * C names never loads it, and neither the shim nor the tool links it. */
#include "names.h"

#include <dlfcn.h>
#include <stdatomic.h>
/* The dlsym to look the demangler up with. Inside the shim `dlsym` names
 * our own exported override, which routes driver lookups; this lookup has
 * nothing to route, so the shim's is the real one (driver.c). The `reprise`
 * tool's is libc's (tools/report.c). */
typedef void *(*rp__dlsym_fn)(void *, const char *);
rp__dlsym_fn rp__dlsym_real(void);
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

/* The demangler, looked up once (NULL if there is none). Racing first
 * callers look it up twice and store the same pointer. */
static demangle_fn demangler(void)
{
    static _Atomic(demangle_fn) fn;
    static atomic_int tried;
    if (atomic_load_explicit(&tried, memory_order_acquire))
        return atomic_load_explicit(&fn, memory_order_relaxed);
    void *p = rp__dlsym_real()(RTLD_DEFAULT, "__cxa_demangle");
    static const char *const libs[] = {"libstdc++.so.6", "libc++abi.so.1"};
    for (size_t i = 0; !p && i < sizeof libs / sizeof libs[0]; i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h)
            h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL);
        if (h)
            p = rp__dlsym_real()(h, "__cxa_demangle"); /* the handle stays open: p lives in it */
    }
    demangle_fn f;
    memcpy(&f, &p, sizeof f); /* object to function pointer, as POSIX allows */
    atomic_store_explicit(&fn, f, memory_order_relaxed);
    atomic_store_explicit(&tried, 1, memory_order_release);
    return f;
}

static void copy_cut(char *out, size_t n, const char *s, size_t len)
{
    if (len >= n)
        len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
}

int rp__name_demangle(const char *raw, char *out, size_t n)
{
    if (!raw)
        raw = "";
    /* Itanium C++ ABI names start with _Z; a C kernel's name is itself. */
    if (raw[0] == '_' && raw[1] == 'Z') {
        demangle_fn f = demangler();
        int status = -1;
        char *d = f ? f(raw, NULL, NULL, &status) : NULL;
        if (d && status == 0) {
            copy_cut(out, n, d, strlen(d));
            free(d);
            return 1;
        }
        free(d);
    }
    copy_cut(out, n, raw, strlen(raw));
    return 0;
}

/* Where the bracket that closes at s[end] opens (s[end] is ')' or '>'),
 * scanning backwards; SIZE_MAX if it does not. */
static size_t open_of(const char *s, size_t end)
{
    char close = s[end], open = close == ')' ? '(' : '<';
    int depth = 0;
    for (size_t i = end + 1; i-- > 0;) {
        if (s[i] == close)
            depth++;
        else if (s[i] == open && --depth == 0)
            return i;
    }
    return (size_t)-1;
}

/* The qualified name of a demangled function: without its parameter list
 * (and a trailing " const") and without the return type that a template's
 * demangled name begins with. In place. */
static void bare_name(char *s)
{
    size_t len = strlen(s);
    if (len > 6 && !strcmp(s + len - 6, " const"))
        s[len -= 6] = '\0';
    if (len && s[len - 1] == ')') {
        size_t o = open_of(s, len - 1);
        if (o != (size_t)-1 && o > 0)
            s[len = o] = '\0';
    }
    /* The return type ends at the last space outside any bracket. */
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '<' || s[i] == '(' || s[i] == '[' || s[i] == '{')
            depth++;
        else if ((s[i] == '>' || s[i] == ')' || s[i] == ']' || s[i] == '}') && depth > 0)
            depth--;
        else if (s[i] == ' ' && depth == 0)
            start = i + 1;
    }
    memmove(s, s + start, len - start + 1);
}

/* Template arguments at the outer level become "<...>". In place (never
 * longer: an argument list is at least "<x>"; "<>" is kept). */
static void fold_templates(char *s)
{
    size_t w = 0;
    for (size_t r = 0; s[r];) {
        if (s[r] != '<') {
            s[w++] = s[r++];
            continue;
        }
        int depth = 0;
        size_t e = r;
        for (; s[e]; e++) {
            if (s[e] == '<')
                depth++;
            else if (s[e] == '>' && --depth == 0)
                break;
        }
        if (!s[e] || e - r < 4) { /* unbalanced, or short enough to keep */
            s[w++] = s[r++];
            continue;
        }
        memcpy(s + w, "<...>", 5);
        w += 5;
        r = e + 1;
    }
    s[w] = '\0';
}

/* Drop the namespaces and classes before the last "::" outside brackets. */
static void last_component(char *s)
{
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '<' || s[i] == '(')
            depth++;
        else if ((s[i] == '>' || s[i] == ')') && depth > 0)
            depth--;
        else if (depth == 0 && s[i] == ':' && s[i + 1] == ':')
            start = i + 2;
    }
    memmove(s, s + start, strlen(s + start) + 1);
}

void rp__name_short(const char *raw, char *out, size_t n, size_t width)
{
    char buf[4096];
    if (width < 8)
        width = 8;
    if (width >= n)
        width = n - 1;
    if (rp__name_demangle(raw, buf, sizeof buf) && strlen(buf) > width) {
        bare_name(buf);
        if (strlen(buf) > width)
            fold_templates(buf);
        if (strlen(buf) > width)
            last_component(buf);
    }
    size_t len = strlen(buf);
    if (len > width) {
        copy_cut(out, n, buf, width - 3);
        strcat(out, "...");
        return;
    }
    copy_cut(out, n, buf, len);
}

/* The name of `raw` for a pair: demangled, without return type and
 * parameters. */
static void pair_name(const char *raw, char *out, size_t n)
{
    if (rp__name_demangle(raw, out, n))
        bare_name(out);
}

/* `s` (a bare name) as a table shows it: whole when it fits in `width`,
 * else as rp__name_short makes `raw`. */
static void pair_side(const char *raw, const char *s, char *out, size_t n, size_t width)
{
    if (strlen(s) <= width)
        copy_cut(out, n, s, strlen(s));
    else
        rp__name_short(raw, out, n, width);
}

void rp__name_pair(const char *a, const char *b, char *out, size_t n, size_t width)
{
    char sa[4096], sb[4096], ta[512], tb[512];
    pair_name(a, sa, sizeof sa);
    pair_name(b, sb, sizeof sb);
    size_t p = 0;
    while (sa[p] && sa[p] == sb[p])
        p++;
    /* Where the second name's own part starts: after the last argument
     * separator (or at the opening bracket) of the template arguments the
     * two share. */
    size_t cut = (size_t)-1;
    int comma = 0;
    for (size_t i = 0; i < p; i++) {
        if (sa[i] == '<')
            cut = i, comma = 0;
        else if (sa[i] == ',')
            cut = i, comma = 1;
    }
    pair_side(a, sa, ta, sizeof ta, width);
    if (cut == (size_t)-1) { /* nothing shared but a prefix of a name: both whole */
        pair_side(b, sb, tb, sizeof tb, width);
        snprintf(out, n, "%s -> %s", ta, tb);
        return;
    }
    const char *rest = sb + cut + (comma ? 1 : 0);
    while (comma && *rest == ' ')
        rest++;
    if (comma)
        snprintf(tb, sizeof tb, "<..., %s", rest);
    else
        snprintf(tb, sizeof tb, "%s", rest);
    if (strlen(tb) > width) {
        tb[width > 3 ? width - 3 : 0] = '\0';
        strcat(tb, "...");
    }
    snprintf(out, n, "%s -> %s", ta, tb);
}
