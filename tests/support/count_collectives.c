/* Preloaded after libclampi_pmpi in tests: counts the collective calls clampi makes (and
 * the program's own, which reach MPI through clampi's wrappers the same way), forwarding
 * each to the real function. Read through clampi_test_collective_counts (found with
 * dlsym): calls that make a communicator (dup, split, create), and every other collective
 * (reductions, barriers, gathers, broadcasts, blocking or not). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdatomic.h>

static _Atomic unsigned long makes, others;

void clampi_test_collective_counts(unsigned long *comm_makes, unsigned long *collectives) {
    *comm_makes = atomic_load(&makes);
    *collectives = atomic_load(&others);
}

/* NAME(ARGS) counted in COUNTER, forwarded with CALL_ARGS */
#define COUNTED(counter, name, params, call_args)             \
    int name params {                                         \
        static int(*real) params;                             \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, #name); \
        atomic_fetch_add(&counter, 1);                        \
        return real call_args;                                \
    }

COUNTED(makes, PMPI_Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n))
COUNTED(makes, PMPI_Comm_dup_with_info, (MPI_Comm c, MPI_Info i, MPI_Comm *n), (c, i, n))
COUNTED(makes, PMPI_Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *n), (c, color, key, n))
COUNTED(makes, PMPI_Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm *n), (c, g, n))
COUNTED(others, PMPI_Barrier, (MPI_Comm c), (c))
COUNTED(others, PMPI_Ibarrier, (MPI_Comm c, MPI_Request *r), (c, r))
COUNTED(others, PMPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),
        (s, r, n, t, o, c))
COUNTED(others, PMPI_Iallreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request *q),
        (s, r, n, t, o, c, q))
COUNTED(others, PMPI_Allgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c),
        (s, sn, st, r, rn, rt, c))
COUNTED(others, PMPI_Allgatherv,
        (const void *s, int sn, MPI_Datatype st, void *r, const int *rn, const int *d, MPI_Datatype rt, MPI_Comm c),
        (s, sn, st, r, rn, d, rt, c))
COUNTED(others, PMPI_Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c))
