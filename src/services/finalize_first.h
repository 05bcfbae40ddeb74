/* What must run first in MPI_Finalize, whichever of clampi's MPI_COMM_SELF delete callbacks
 * MPI calls first. Those callbacks run collectives (freeing windows, the node's shared
 * heap), and each rank armed them at its own first use, so their order may differ between
 * ranks; what is registered here (freeing the windows the program left) runs before any of
 * them on every rank. */
#ifndef CLAMPI_SERVICES_FINALIZE_FIRST_H
#define CLAMPI_SERVICES_FINALIZE_FIRST_H

/* Registers fn (once; at most 4 functions). */
void clampi_finalize_first_add(void (*fn)(void));
/* Runs every registered function once, in the order registered; later calls do nothing.
 * Call at the start of every clampi MPI_COMM_SELF delete callback that runs collectives. */
void clampi_finalize_first_run(void);

#endif
