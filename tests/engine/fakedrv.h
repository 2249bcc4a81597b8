/* fakedrv.h - the fake driver of the engine's unit tests (fakedrv.c). */
#ifndef FAKEDRV_H
#define FAKEDRV_H

#include "coord.h"

#define S_BLOCKING ((CUstream)0x1000)    /* a created blocking stream */
#define S_NONBLOCK ((CUstream)0x2000)    /* a created non-blocking stream */
#define S_PRIVATE ((CUstream)0x3000)     /* what cuStreamCreate hands the engine */
#define K(n) ((CUfunction)(uintptr_t)(0x100 + (n)))

extern char log_[8192];      /* what reached the driver, in order */
extern CUcontext current;    /* the current context */
extern int capturing;        /* a capture is open on S_PRIVATE */
extern int captured_ops;     /* ops in the graph being captured */
extern int captured_attrs;   /* launch attributes the captured launches carried */
extern int graph_ops[64];    /* per graph handle (1-based): its op count */
extern int ngraphs;
extern int fail_graph_launch;
extern unsigned char node_off[64][64]; /* per executable, per op: its node disabled */
extern int node_enables;     /* cuGraphNodeSetEnabled calls that succeeded */
extern int fail_node_enable; /* ... or every one fails */
/* The table of fakes, and the core table the engine installs itself into. */
extern struct rp__driver fake, core;

void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *sname(CUstream s);
void build_fake(void);

#endif
