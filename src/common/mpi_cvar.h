/* Setting one of the MPI library's control variables (MPI_T) around a call clampi makes, and
 * putting it back afterwards: clampi's own set-up then avoids a costly default of the MPI
 * without changing what the program's own calls get. */
#ifndef CLAMPI_COMMON_MPI_CVAR_H
#define CLAMPI_COMMON_MPI_CVAR_H

typedef struct {
    int active; /* 1 while the variable holds clampi's value */
    int index;
    int old;
} clampi_cvar_override;

/* Sets the integer control variable `name` (if the MPI has it and lets it be written) to
 * value; no effect and active = 0 otherwise. Collective where the variable's scope says so:
 * every process of the group must make the same call. */
void clampi_cvar_override_int(clampi_cvar_override *o, const char *name, int value);
/* Puts the old value back (nothing when the override did not take). */
void clampi_cvar_restore(clampi_cvar_override *o);
/* 1 once MPI's tool interface is initialised for clampi (first call; it stays initialised,
 * at the thread level MPI was initialised with): every MPI_T use of clampi's goes here. */
int clampi_mpi_t_ready(void);
#endif
