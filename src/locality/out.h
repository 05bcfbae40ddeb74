/* CSV + JSON output of the locality sampler, in the format of docs/locality-format.md
 * (MPI-free engine). Async-signal-safe: no malloc, no stdio, only open/write/rename, so a
 * fatal-signal handler can write partial output. One writer at a time (a second
 * concurrent call returns -1). */
#ifndef CLAMPI_LOCALITY_OUT_H
#define CLAMPI_LOCALITY_OUT_H
#include <stddef.h>
#include <stdint.h>

#include "locality/allocs.h"
#include "locality/pages.h"

/* Buffered writer on a file descriptor. */
typedef struct clampi_lw {
    int fd;
    int err;
    size_t n;
    char buf[16384];
} clampi_lw;

void clampi_lw_str(clampi_lw *w, const char *s);
void clampi_lw_json_str(clampi_lw *w, const char *s); /* quoted, escaped */
void clampi_lw_u64(clampi_lw *w, uint64_t v);
void clampi_lw_i64(clampi_lw *w, int64_t v);
void clampi_lw_hex(clampi_lw *w, uint64_t v); /* 0x... */
/* Formats into buf (size n >= 24) without stdio; returns buf. */
char *clampi_lfmt_hex(char *buf, size_t n, uint64_t v);

/* Location of an instruction (alloc site, first touch) as "file.c:123", written into buf;
 * return NULL to get the hex address instead. */
typedef const char *(*clampi_lout_loc_fn)(uintptr_t ip, void *arg, char *buf, size_t n);
/* firsttouch.location of a page record (NULL: through the loc function, else hex). */
typedef const char *(*clampi_lout_ft_fn)(const clampi_lpage *p, void *arg, char *buf, size_t n);
/* struct.name of an allocation (called only for allocations without an explicit name). */
typedef const char *(*clampi_lout_name_fn)(const clampi_lalloc *a, void *arg, char *buf, size_t n);
/* alloc.location of an allocation (NULL: its innermost frame through the loc function). */
typedef const char *(*clampi_lout_aloc_fn)(const clampi_lalloc *a, void *arg, char *buf, size_t n);
/* Extra JSON members written before the closing brace (each starting with ",\n"). */
typedef void (*clampi_lout_extra_fn)(clampi_lw *w, void *arg);

typedef struct clampi_lout {
    const char *dir;
    int rank;
    int pid;
    int argc;
    char *const *argv;
    const char *mode;   /* "sample" */
    const char *counts; /* "sampled" */
    size_t page_size;   /* reported page size (>= system page) */
    size_t sys_page;
    size_t min_size;
    int complete;
    int has_exit_status;
    int exit_status;
    const char *signal; /* "SIGSEGV" or NULL */
    int nthreads;
    const uint64_t *thread_work;
    const char *work_unit;             /* "cpu_ns" */
    const char *const *thread_creator; /* per thread: the module that created it, "" unknown; NULL: none */
    const clampi_ltab *tab;
    double count_scale;                                         /* reported count = round(samples * factor), factor = */
    double (*count_factor)(const clampi_lpage *rec, void *arg); /* this, or count_scale */
    const clampi_lalloc *allocs;
    size_t nallocs;
    uint32_t *scratch;        /* nallocs entries, for sorting */
    clampi_lout_loc_fn loc;   /* NULL: hex addresses */
    clampi_lout_name_fn name; /* NULL: alloc@<location> */
    clampi_lout_aloc_fn aloc;
    clampi_lout_ft_fn ftloc;
    void *arg;
    clampi_lout_extra_fn extra;
} clampi_lout;

/* Writes DIR/rank<R>.csv and DIR/rank<R>.json (each via .tmp + rename); DIR is created
 * if missing. Returns 0, or -1 (errno set). */
int clampi_lout_write(const clampi_lout *o);
#endif
