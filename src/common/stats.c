#include "common/stats.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "common/options.h"

int clampi_stats_enabled(void) { return (int)clampi_opt_process(CLAMPI_OPT_STATS).u; }

static void append(clampi_stats_line *l, const char *fmt_key, const char *key, const char *value, int sanitize) {
    if (l->n < 0 || (size_t)l->n >= sizeof l->buf) return;
    int start = l->n;
    int k = snprintf(l->buf + l->n, sizeof l->buf - (size_t)l->n, fmt_key, key, value);
    if (k < 0) return;
    l->n += k;
    if ((size_t)l->n >= sizeof l->buf) l->n = (int)sizeof l->buf - 1;
    if (!sanitize) return;
    /* the value starts after "key=" */
    for (int i = start + 2 + (int)__builtin_strlen(key); i < l->n; i++)
        if (l->buf[i] == ' ' || l->buf[i] == '=' || l->buf[i] == '\t' || l->buf[i] == '\n') l->buf[i] = '_';
}

void clampi_stats_begin(clampi_stats_line *l, const char *kind, int rank) {
    l->n = snprintf(l->buf, sizeof l->buf, "clampi:%s%s rank=%d", kind && *kind ? " " : "", kind ? kind : "", rank);
}

void clampi_stats_str(clampi_stats_line *l, const char *key, const char *value) {
    append(l, " %s=%s", key, value ? value : "", 1);
}

void clampi_stats_raw(clampi_stats_line *l, const char *key, const char *text) { clampi_stats_str(l, key, text); }

void clampi_stats_u64(clampi_stats_line *l, const char *key, uint64_t value) {
    char v[24];
    snprintf(v, sizeof v, "%llu", (unsigned long long)value);
    append(l, " %s=%s", key, v, 0);
}

void clampi_stats_f64(clampi_stats_line *l, const char *key, double value) {
    char v[32];
    snprintf(v, sizeof v, "%.2f", value);
    append(l, " %s=%s", key, v, 0);
}

void clampi_stats_emit(clampi_stats_line *l) {
    if (l->n < 0) return;
    if ((size_t)l->n > sizeof l->buf - 2) l->n = (int)sizeof l->buf - 2;
    l->buf[l->n] = '\n';
    l->buf[l->n + 1] = '\0';
    /* One write(2) of the whole line (below PIPE_BUF), after the program's pending output:
     * through stdio an unbuffered stdout (MPICH's rank 0 under Hydra) sends the first byte
     * on its own, and the launcher then interleaves another rank's line after it. */
    fflush(stdout);
    const char *p = l->buf;
    size_t left = (size_t)l->n + 1;
    while (left > 0) {
        ssize_t k = write(STDOUT_FILENO, p, left);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        p += k, left -= (size_t)k;
    }
}
