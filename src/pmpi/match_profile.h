/* CLAMPI_MATCH_PROFILE (src/pmpi/match_profile.c): the matching depth profile. */
#ifndef CLAMPI_PMPI_MATCH_PROFILE_H
#define CLAMPI_PMPI_MATCH_PROFILE_H
#include <mpi.h>
#include <stdatomic.h>
/* Collective over MPI_COMM_WORLD when the profile is on (every rank calls it from
 * MPI_Finalize): prints the per-rank lines on rank 0 and writes the JSON file. */
void clampi_match_profile_finalize(void);
/* Whether CLAMPI_MATCH_PROFILE is on: read once (_read; it then sets the profile's
 * completion hook), after that one load. */
extern _Atomic int clampi_match_profile_state; /* -1 not read yet, 0 off, 1 on */
int clampi_match_profile_read(void);
int clampi_match_profile_on(void);
static inline int clampi_match_profiling(void) {
    int s = atomic_load_explicit(&clampi_match_profile_state, memory_order_relaxed);
    return __builtin_expect(s >= 0, 1) ? s : clampi_match_profile_read();
}
/* Known to be off (no call inside: for an entry point's fast path). */
static inline int clampi_match_profile_off(void) {
    return atomic_load_explicit(&clampi_match_profile_state, memory_order_relaxed) == 0;
}
/* The hooks on a post (MPI_Irecv's request r, posted; a blocking MPI_Recv about to wait),
 * called only while profiling. */
void clampi_match_profile_posted(MPI_Request r);
void clampi_match_profile_blocking(void);
#endif
