/* The node-shared heap: shared segments (services/shared_segments.h) over MPI_COMM_WORLD's
 * node communicator, one per process, each managed by an arena (coll/engine/arena.h)
 * that only its owner allocates from. A shared service (src/services/): the collectives
 * read and write through it, the RMA extensions name its memory in memory handles, the
 * preload serves MPI_Alloc_mem from it. CMPI_Alloc_mem, CMPI_Free_mem and CMPIX_Heap_*
 * (include/clampi/coll.h) are defined here. Options: CLAMPI_SHMEM_ALLOC, CLAMPI_HEAP_SIZE. */
#ifndef CLAMPI_SERVICES_HEAP_H
#define CLAMPI_SERVICES_HEAP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* CLAMPI_SHMEM_ALLOC: 1 when MPI_Alloc_mem / CMPI_Alloc_mem are served from the heap. */
int clampi_heap_alloc_enabled(void);
/* Creates the world-node heap if needed: collective over MPI_COMM_WORLD. */
int clampi_heap_ensure(size_t bytes_per_process);
/* 1 once the heap exists in this process. */
int clampi_heap_ready(void);
/* The heap's identity, the same on every process of its node (0: no heap). */
uint64_t clampi_heap_id(void);
/* If [p, p+n) lies in one segment of the heap: *seg, *off and 1; else 0. */
int clampi_heap_locate(const void *p, size_t n, int32_t *seg, uint64_t *off);
/* Address in this process of offset off in segment seg. */
char *clampi_heap_addr(int32_t seg, uint64_t off);
/* CMPI_Alloc_mem calls served by MPI_Alloc_mem so far (heap off, full or not created). */
unsigned long clampi_heap_fallbacks(void);
/* Allocation entry points used by CMPI_Alloc_mem and the preload's MPI_Alloc_mem:
 * *handled = 0 means "not served; call PMPI_Alloc_mem / PMPI_Free_mem". */
int clampi_heap_alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr, int *handled);
int clampi_heap_free_mem(void *base, int *handled);
/* Frees the heap (called at MPI_Finalize through an MPI_COMM_SELF attribute). */
void clampi_heap_teardown(void);

#endif
