/* handles.c - the registry of live driver objects. Every handle the driver
 * hands out is registered with its kind, so a stale or foreign handle is
 * answered with an error code instead of being dereferenced. */
#include "internal.h"

#include <stdlib.h>

/* Open addressing with tombstones; guarded by the global lock. */
typedef struct { const void *p; int kind; } slot;
#define TOMB ((const void *)1)
static slot *tab;
static size_t cap, used, live;

static size_t hash(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return (size_t)x;
}

static void grow(void)
{
    size_t ncap = cap ? cap * 2 : 1024;
    slot *nt = calloc(ncap, sizeof *nt);
    if (!nt) abort(); /* the registry cannot fail soft: out of memory here is fatal */
    for (size_t i = 0; i < cap; i++) {
        if (!tab[i].p || tab[i].p == TOMB) continue;
        size_t j = hash(tab[i].p) & (ncap - 1);
        while (nt[j].p) j = (j + 1) & (ncap - 1);
        nt[j] = tab[i];
    }
    free(tab);
    tab = nt; cap = ncap; used = live;
}

static slot *find(const void *p);

/* A live object never shares its address with another live object, so an
 * entry already there for p is stale (its object was freed without leaving
 * the registry): take it over, or it would shadow the new entry in find(). */
void cc__handle_add(const void *p, enum cc_kind k)
{
    slot *old = find(p);
    if (old) {
        old->kind = (int)k;
        return;
    }
    if ((used + 1) * 2 > cap) grow();
    size_t j = hash(p) & (cap - 1);
    while (tab[j].p && tab[j].p != TOMB) j = (j + 1) & (cap - 1);
    if (!tab[j].p) used++;
    tab[j].p = p; tab[j].kind = (int)k;
    live++;
}

static slot *find(const void *p)
{
    if (!cap || !p || p == TOMB) return NULL;
    size_t j = hash(p) & (cap - 1);
    while (tab[j].p) {
        if (tab[j].p == p) return &tab[j];
        j = (j + 1) & (cap - 1);
    }
    return NULL;
}

void cc__handle_del(const void *p)
{
    slot *s = find(p);
    if (s) { s->p = TOMB; s->kind = 0; live--; }
}

bool cc__handle_is(const void *p, enum cc_kind k)
{
    slot *s = find(p);
    return s && s->kind == (int)k;
}
