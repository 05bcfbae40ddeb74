#include "common/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* ---- where the lines go (CLAMPI_STATS_DEST) ---- */
static pthread_once_t dest_once = PTHREAD_ONCE_INIT;
static int dest_fd = STDOUT_FILENO;
static FILE *dest_stdio = NULL; /* flushed first, so the line comes after the program's output */

/* This process's rank in MPI_COMM_WORLD: MPI's answer while it runs, else the launcher's. */
static long world_rank(void) {
    int init = 0, fin = 0, r = -1;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin && PMPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS) return r;
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i])) return atol(getenv(vars[i]));
    return -1;
}

/* PATH with %r, %p, %h, %% replaced; 0, or -1 when it does not fit. */
static int expand(const char *path, char *out, size_t cap) {
    size_t n = 0;
    for (const char *c = path; *c; c++) {
        char piece[256];
        if (c[0] == '%' && c[1] == 'r') {
            long r = world_rank();
            if (r >= 0)
                snprintf(piece, sizeof piece, "%ld", r);
            else
                snprintf(piece, sizeof piece, "pid%ld", (long)getpid());
            c++;
        } else if (c[0] == '%' && c[1] == 'p') {
            snprintf(piece, sizeof piece, "%ld", (long)getpid());
            c++;
        } else if (c[0] == '%' && c[1] == 'h') {
            if (gethostname(piece, sizeof piece) != 0) snprintf(piece, sizeof piece, "host");
            piece[sizeof piece - 1] = '\0';
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            snprintf(piece, sizeof piece, "%%");
            c++;
        } else {
            piece[0] = *c, piece[1] = '\0';
        }
        size_t k = strlen(piece);
        if (n + k >= cap) return -1;
        memcpy(out + n, piece, k);
        n += k;
    }
    out[n] = '\0';
    return 0;
}

static void dest_open(void) {
    const char *v = clampi_opt_process(CLAMPI_OPT_STATS_DEST).text;
    dest_stdio = stdout;
    if (!v || !*v || !strcmp(v, "stdout")) return;
    if (!strcmp(v, "stderr")) {
        dest_fd = STDERR_FILENO, dest_stdio = stderr;
        return;
    }
    char path[4096];
    const char *why = "not stdout, stderr or file:PATH";
    if (!strncmp(v, "file:", 5) && v[5]) {
        why = "the path is too long";
        if (expand(v + 5, path, sizeof path) == 0) {
            int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd >= 0) {
                dest_fd = fd, dest_stdio = NULL;
                return;
            }
            why = strerror(errno);
        }
    }
    fprintf(stderr, "clampi: CLAMPI_STATS_DEST=%s: %s; the statistics lines go to stdout\n", v, why);
}

void clampi_stats_emit(clampi_stats_line *l) {
    if (l->n < 0) return;
    if ((size_t)l->n > sizeof l->buf - 2) l->n = (int)sizeof l->buf - 2;
    l->buf[l->n] = '\n';
    l->buf[l->n + 1] = '\0';
    /* One write(2) of the whole line (below PIPE_BUF), after the program's pending output:
     * through stdio an unbuffered stdout (MPICH's rank 0 under Hydra) sends the first byte
     * on its own, and the launcher then interleaves another rank's line after it. */
    pthread_once(&dest_once, dest_open);
    if (dest_stdio) fflush(dest_stdio);
    const char *p = l->buf;
    size_t left = (size_t)l->n + 1;
    while (left > 0) {
        ssize_t k = write(dest_fd, p, left);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        p += k, left -= (size_t)k;
    }
}
