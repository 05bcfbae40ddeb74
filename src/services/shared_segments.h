/* Node-shared memory of clampi's own: every process of a communicator on one node gets a
 * segment (POSIX shared memory, /dev/shm), mapped in every process of the communicator.
 * What the node-shared heap and the collectives' control blocks, mailboxes and scratch are
 * made of. Not MPI_Win_allocate_shared: on MPICH 4.0 (ch4:ucx) a window alive for the whole
 * run made every small point-to-point message of the program about a third slower (osu_bibw
 * 1 B; bench/results/preload_small_messages_mpich.txt), and a window clampi makes for itself
 * would be alive for the whole run. The names leave /dev/shm as soon as every process has
 * mapped them, so a job that dies leaves nothing behind. */
#ifndef CLAMPI_SERVICES_SHARED_SEGMENTS_H
#define CLAMPI_SERVICES_SHARED_SEGMENTS_H

#include <mpi.h>
#include <stddef.h>

typedef struct clampi_shared_segments {
    int n;        /* processes of the communicator */
    char **base;  /* [n]: each process's segment in this process (NULL: it asked for 0 bytes) */
    size_t *size; /* [n]: its bytes (rounded up to whole pages) */
} clampi_shared_segments;

/* Collective over comm, whose processes share one node: this process's segment of `bytes`
 * (0: none; zero-filled), every segment mapped in every process. MPI_SUCCESS, or
 * MPI_ERR_NO_MEM on every process if any could not create or map one (then nothing is
 * mapped and nothing is left in /dev/shm). */
int clampi_shared_segments_allocate(MPI_Comm comm, size_t bytes, clampi_shared_segments *s);
/* Unmaps (local: every process holds its own mapping; the memory lives until the last one
 * unmaps). An empty s (never allocated, or freed) is fine. */
void clampi_shared_segments_free(clampi_shared_segments *s);

#endif
