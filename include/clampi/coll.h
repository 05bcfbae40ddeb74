/* clampi cache-oblivious collectives (the cache-oblivious all-to-all paper): a node-wide shared heap and
 * Alltoall / Allgather that copy blocks directly between the processes' buffers in
 * Morton (Z) order over the P x P block matrix.
 *
 * Every function has the signature of its MPI counterpart and returns MPI_SUCCESS or
 * an MPI error code, raised through the communicator's error handler (MPI_COMM_WORLD's
 * for the memory functions).
 *
 * Shared heap. CMPI_Alloc_mem returns memory from node-shared memory
 * (MPI_Win_allocate_shared over the node communicator of MPI_COMM_WORLD). The heap is
 * created by the first CMPI_Alloc_mem, CMPIX_Heap_init or CMPIX_Heap_info_get call, which is
 * therefore COLLECTIVE over MPI_COMM_WORLD (every process must make it); later calls
 * are local. When the heap is exhausted (or disabled with CLAMPI_SHMEM_ALLOC=off)
 * CMPI_Alloc_mem falls back to MPI_Alloc_mem; CMPI_Free_mem frees either kind.
 *
 * Collectives. When the communicator lies within one node and every rank's buffers are
 * in the shared heap, blocks are copied directly between the processes' buffers (the
 * Morton schedule). Buffers outside the heap are staged through a per-communicator
 * shared scratch area when the block is small enough, otherwise - and for
 * communicators spanning nodes, non-contiguous datatypes, or CLAMPI_COLL=off - the
 * MPI library's collective is called. The result is always that of MPI_Alltoall /
 * MPI_Allgather. Environment knobs are listed in docs/coll.md.
 */
#ifndef CLAMPI_COLL_H
#define CLAMPI_COLL_H

#include <mpi.h>
#include <stddef.h>

#include "clampi/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shared heap ---------------------------------------------------------------- */
/* Like MPI_Alloc_mem: 64-byte aligned memory from the node's shared heap (first call is
 * collective over MPI_COMM_WORLD, see above); falls back to MPI_Alloc_mem. */
CLAMPI_API int CMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
/* Like MPI_Free_mem, for memory from CMPI_Alloc_mem (heap or fallback). */
CLAMPI_API int CMPI_Free_mem(void *base);

/* ---- collectives ---------------------------------------------------------------- */
/* Like MPI_Alltoall / MPI_Allgather (MPI_IN_PLACE accepted as sendbuf). */
CLAMPI_API int CMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm);
CLAMPI_API int CMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm);

/* ---- extensions: algorithm selection (benchmarks), heap control ------------------ */
typedef enum CMPIX_Coll_algo {
    CMPIX_COLL_AUTO = 0, /* what CMPI_Alltoall/CMPI_Allgather do: Morton where possible */
    CMPIX_COLL_MORTON,   /* shared heap, Morton schedule (staged if buffers are outside) */
    CMPIX_COLL_NAIVE,    /* shared heap, each process copies one column (the paper's baseline) */
    CMPIX_COLL_MPI       /* the MPI library's collective */
} CMPIX_Coll_algo;

/* Alltoall / Allgather with a forced algorithm. MORTON and NAIVE still delegate to
 * MPI when the shared path cannot be used (spanning comm, non-contiguous type); all
 * ranks must pass the same algo. */
CLAMPI_API int CMPIX_Alltoall_algo(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo);
CLAMPI_API int CMPIX_Allgather_algo(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo);

/* Creates the shared heap now (collective over MPI_COMM_WORLD; no-op if it exists).
 * bytes_per_process = 0 uses CLAMPI_HEAP_SIZE or the default (256 MiB). */
CLAMPI_API int CMPIX_Heap_init(MPI_Aint bytes_per_process);

typedef struct CMPIX_Heap_info {
    int enabled;             /* 1 if CMPI_Alloc_mem serves from the shared heap */
    size_t capacity;         /* bytes of this process's heap segment */
    size_t in_use;           /* bytes allocated from it now (incl. headers) */
    size_t largest_free;     /* largest free block */
    unsigned long fallbacks; /* CMPI_Alloc_mem calls served by MPI_Alloc_mem */
} CMPIX_Heap_info;
/* This process's heap statistics (creates the heap if needed: collective then). */
CLAMPI_API int CMPIX_Heap_info_get(CMPIX_Heap_info *info);

/* Per-process collective counters: which path the calls took. */
typedef struct CMPIX_Coll_stats {
    unsigned long direct;       /* shared path, all buffers in the heap */
    unsigned long staged;       /* shared path, some buffers staged through scratch */
    unsigned long delegated;    /* handed to the MPI library */
    unsigned long eager;        /* small blocks: one synchronization, through the mailboxes */
    unsigned long hierarchical; /* communicator spanning nodes: on-node copies + leaders' exchange */
    unsigned long abandoned;    /* shared path left mid-call: the communicator was revoked or a process failed (ULFM) */
} CMPIX_Coll_stats;
CLAMPI_API int CMPIX_Coll_get_stats(CMPIX_Coll_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
