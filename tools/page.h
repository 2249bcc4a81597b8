/* page.h - the report as a page (page.c). */
#ifndef REPRISE_PAGE_H
#define REPRISE_PAGE_H

#include "statsfile.h"

/* Write the page for files[0..n) (their facts summed in `all`) to `out`.
 * Returns 0, or 1 after a line on stderr when it cannot be written. */
int rp_page_write(const char *out, const rp_stats_file *files, int n,
                  const struct rp__run_fact *all);

#endif
