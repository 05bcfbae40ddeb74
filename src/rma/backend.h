/* How a window's bytes move: a small table of operations per backend.
 *
 * The window layer (get.c, write.c, sync.c, atomics.c, window.c) does the argument checks,
 * the cache bookkeeping and the error reporting, and calls w->be->op for the data movement
 * and the synchronization itself. Two backends:
 *   clampi_backend_mpi  today's PMPI_ calls on w->win (the default; also every preload window)
 *   clampi_backend_ucx  UCX workers/endpoints/rkeys (src/backends/ucx/), chosen with the
 *                       info key clampi_backend=ucx (or CLAMPI_BACKEND=ucx)
 * Every op returns an MPI error code. A backend reports its own errors through the window's
 * error handler (the MPI backend: MPI does it on w->win). */
#ifndef CLAMPI_RMA_BACKEND_H
#define CLAMPI_RMA_BACKEND_H
#include <mpi.h>

struct clampi_win;
struct CMPIX_Win_thread_stats;
typedef struct clampi_win clampi_win_t;

typedef struct clampi_backend_ops {
    const char *name; /* "mpi", "ucx": the clampi_backend info value */
    /* communication (arguments already checked by the window layer) */
    int (*get)(clampi_win_t *w, void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
               MPI_Datatype ttype);
    int (*rget)(clampi_win_t *w, void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                MPI_Datatype ttype, MPI_Request *req);
    int (*put)(clampi_win_t *w, const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
               int tcount, MPI_Datatype ttype);
    int (*rput)(clampi_win_t *w, const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                int tcount, MPI_Datatype ttype, MPI_Request *req);
    int (*accumulate)(clampi_win_t *w, const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype ttype, MPI_Op op);
    int (*get_accumulate)(clampi_win_t *w, const void *origin, int ocount, MPI_Datatype otype, void *result, int rcount,
                          MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op);
    int (*fetch_and_op)(clampi_win_t *w, const void *origin, void *result, MPI_Datatype type, int target, MPI_Aint disp,
                        MPI_Op op);
    int (*compare_and_swap)(clampi_win_t *w, const void *origin, const void *compare, void *result, MPI_Datatype type,
                            int target, MPI_Aint disp);
    /* passive target */
    int (*flush)(clampi_win_t *w, int rank);
    int (*flush_all)(clampi_win_t *w);
    int (*flush_local)(clampi_win_t *w, int rank);
    int (*flush_local_all)(clampi_win_t *w);
    int (*lock)(clampi_win_t *w, int lock_type, int rank, int assert);
    int (*unlock)(clampi_win_t *w, int rank);
    int (*lock_all)(clampi_win_t *w, int assert);
    int (*unlock_all)(clampi_win_t *w);
    int (*sync)(clampi_win_t *w);
    /* active target */
    int (*fence)(clampi_win_t *w, int assert);
    int (*start)(clampi_win_t *w, MPI_Group group, int assert);
    int (*complete)(clampi_win_t *w);
    int (*post)(clampi_win_t *w, MPI_Group group, int assert);
    int (*wait)(clampi_win_t *w);
    /* MPI_Win_test: *flag = 1 and the exposure epoch ends when every origin completed.
     * NULL: not supported (MPI_ERR_RMA_SYNC). */
    int (*test)(clampi_win_t *w, int *flag);
    /* dynamic windows */
    int (*attach)(clampi_win_t *w, void *base, MPI_Aint size);
    int (*detach)(clampi_win_t *w, const void *base);
    /* Per-thread flush counters (mpi_win_scope=thread); NULL: the backend has none (zeros). */
    void (*thread_stats)(clampi_win_t *w, struct CMPIX_Win_thread_stats *stats);
    /* Frees the backend's resources and w->win (collective). On failure the window stays usable. */
    int (*free)(clampi_win_t *w);
} clampi_backend_ops;

extern const clampi_backend_ops clampi_backend_mpi;
#endif
