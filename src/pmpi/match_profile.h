/* CLAMPI_MATCH_PROFILE (src/pmpi/match_profile.c): the matching depth profile. */
#ifndef CLAMPI_PMPI_MATCH_PROFILE_H
#define CLAMPI_PMPI_MATCH_PROFILE_H
/* Collective over MPI_COMM_WORLD when the profile is on (every rank calls it from
 * MPI_Finalize): prints the per-rank lines on rank 0 and writes the JSON file. */
void clampi_match_profile_finalize(void);
/* Whether CLAMPI_MATCH_PROFILE is on. */
int clampi_match_profile_on(void);
#endif
