/* The stats line: one machine-readable format and one printer for every part.
 *
 *   clampi: [KIND ]rank=R key=value key=value ...
 *
 * KIND is empty for windows ("clampi: rank=0 win=graph mode=always_cache gets=..."), "coll"
 * for the collectives, "match" for a matching communicator, "match profile" for the preload's
 * receive-depth profile, "msg" for the UCX message carrier's endpoints. Values never contain spaces or '=' (they are replaced by '_'). The
 * line is written with one call, newline included; a launcher that forwards the ranks' output
 * in pieces may still cut it among the program's lines, which a file per process
 * (CLAMPI_STATS_DEST=file:PATH) avoids.
 * Printed only when CLAMPI_STATS is set (clampi_stats_enabled), except where a part's own
 * switch asks for it (CLAMPI_MATCH_PROFILE). */
#ifndef CLAMPI_COMMON_STATS_H
#define CLAMPI_COMMON_STATS_H
#include <stdint.h>

typedef struct clampi_stats_line {
    char buf[2048];
    int n;
} clampi_stats_line;

/* Whether CLAMPI_STATS is set to a true value (options table). */
int clampi_stats_enabled(void);
void clampi_stats_begin(clampi_stats_line *l, const char *kind, int rank);
void clampi_stats_str(clampi_stats_line *l, const char *key, const char *value);
void clampi_stats_u64(clampi_stats_line *l, const char *key, uint64_t value);
void clampi_stats_f64(clampi_stats_line *l, const char *key, double value);
/* Appends raw text (e.g. a histogram "1:3,2:5"); spaces are replaced by '_'. */
void clampi_stats_raw(clampi_stats_line *l, const char *key, const char *text);
/* Writes the line (one write) where CLAMPI_STATS_DEST says: stdout (the default, after
 * flushing the program's pending output), stderr, or a file per process (file:PATH). */
void clampi_stats_emit(clampi_stats_line *l);
#endif
