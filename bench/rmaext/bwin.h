/* One window interface for every variant the RMA-extension benchmarks compare: plain MPI
 * windows (allocated, dynamic) and clampi UCX windows (allocated, dynamic, memory handle).
 * The timed loops call these, so every variant runs exactly the same loop. */
#ifndef RMAEXT_BWIN_H
#define RMAEXT_BWIN_H
#include <clampi.h>
#include <mpi.h>
#include <stddef.h>

typedef enum {
    BW_MPI_ALLOC, /* MPI_Win_allocate */
    BW_MPI_DYN,   /* MPI_Win_create_dynamic + attach, address exchanged */
    BW_CL_ALLOC,  /* CMPI_Win_allocate, clampi_backend=ucx */
    BW_CL_DYN,    /* CMPI_Win_create_dynamic (ucx) + attach */
    BW_CL_MH,     /* window from a memory handle of a dynamic UCX window (lock on parent) */
    BW_CL_MH_HEAP /* the same over memory from CMPI_Alloc_mem (created as BW_CL_MH, heap_mem set) */
} bw_kind;

typedef struct bwin {
    bw_kind kind;
    MPI_Win mw;      /* MPI variants */
    CMPI_Win cw;     /* clampi variants: the window operations go to */
    CMPI_Win parent; /* BW_CL_MH: the dynamic window (locks) */
    void *mem;       /* this rank's exposed memory */
    int heap_mem;    /* mem came from CMPI_Alloc_mem */
    MPI_Aint size;
    MPI_Aint *remote;                           /* dynamic: per rank, the base address to use as displacement */
    unsigned char mh[CMPIX_MAX_MEMHANDLE_SIZE]; /* BW_CL_MH: the target's handle (at rank != owner) */
    int mh_size, mh_owner;
    MPI_Request sentinel; /* clampi: a pending notify request whose polling progresses UCX */
} bwin;

/* Collective over comm. keys: NULL-terminated list of "key", "value" pairs for the info
 * (the clampi variants always get clampi_backend=ucx and clampi_mode=off). For BW_CL_MH
 * the memory handle of rank mh_owner is broadcast and every other rank makes a window. */
int bw_create(bwin *w, bw_kind kind, MPI_Aint size, MPI_Comm comm, const char *const *keys, int mh_owner);
void bw_free(bwin *w);
const char *bw_kind_name(bw_kind k);
int bw_is_clampi(bw_kind k);

/* Memory-handle windows only: make / free the window from the handle (per exchange). */
int bw_mh_open(bwin *w, const char *const *keys);
void bw_mh_close(bwin *w);

/* A barrier during which this rank keeps serving one-sided operations: MPI's own for MPI
 * windows; for clampi UCX windows MPI_Ibarrier + MPI_Test of it and of a pending notify
 * request (clampi's progress hook drives the window's UCX worker; on shared memory UCX
 * emulates small puts/atomics to memory it did not allocate through the target's worker). */
void bw_barrier(bwin *w);
void bw_lock_all(bwin *w);
void bw_unlock_all(bwin *w);
void bw_put(bwin *w, const void *buf, int n, int target, MPI_Aint off);
void bw_get(bwin *w, void *buf, int n, int target, MPI_Aint off);
void bw_flush(bwin *w, int target);
void bw_fetch_add(bwin *w, const long *v, long *res, int target, MPI_Aint off);
void bw_cas(bwin *w, const long *v, const long *cmp, long *res, int target, MPI_Aint off);

/* MPI flavour and transport (for the JSON). */
const char *bw_mpi_name(void);
const char *bw_transport(void);
double bw_now(void);
/* Prints one JSON object line (rank 0 only): fmt is the inside of the braces. */
void bw_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
