/* reprise.h: the public face of libreprise.so.
 *
 * reprise is used by preloading it (LD_PRELOAD or the `reprise` command), so a
 * program never needs this header.  It exists for tools that read the stats
 * report or check which reprise they run against: the version of the library
 * and the version of the stats schema it writes (docs/stats.md). */
#ifndef REPRISE_H
#define REPRISE_H

#define REPRISE_VERSION_MAJOR 0
#define REPRISE_VERSION_MINOR 1
#define REPRISE_VERSION_PATCH 0
#define REPRISE_VERSION "0.1.0"

/* The "version" key of the stats report.  It changes only when a key is
 * removed or changes meaning; new keys may appear without a bump. */
#define REPRISE_STATS_VERSION 1

#endif /* REPRISE_H */
