/* The MPI library's matching-queue lengths through MPI_T (match_mpit.c). */
#ifndef CLAMPI_PMPI_MATCH_MPIT_H
#define CLAMPI_PMPI_MATCH_MPIT_H
#include <stdint.h>

typedef struct clampi_mpit_sample {
    uint64_t samples;
    uint64_t posted_sum, posted_max;         /* posted-receive queue length, over the peers */
    uint64_t unexpected_sum, unexpected_max; /* unexpected-message queue length */
} clampi_mpit_sample;

/* After MPI_Init: finds the variables and opens a session (nothing if there are none). */
void clampi_mpit_queues_start(void);
/* Whether the MPI publishes at least one of the queue lengths. */
int clampi_mpit_queues_available(void);
/* Adds the current lengths to s (caller serializes). */
void clampi_mpit_queues_sample(clampi_mpit_sample *s);
/* Before MPI_Finalize. */
void clampi_mpit_queues_stop(void);
#endif
