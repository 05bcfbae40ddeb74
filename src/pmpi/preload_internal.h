/* Between the preload's entry points (preload.c) and the MPIX_ functions on MPI_Win
 * (mpix.c). */
#ifndef CLAMPI_PMPI_PRELOAD_INTERNAL_H
#define CLAMPI_PMPI_PRELOAD_INTERNAL_H
#include <mpi.h>

#include "rma/window.h"

/* The clampi state of a program's MPI_Win (NULL: not clampi's, or the preload is off). */
clampi_win *clampi_pmpi_find(MPI_Win win);
/* From now on every MPI_ call on w's window is served through the CMPI_ layer. */
void clampi_pmpi_route(clampi_win *w);
/* own (an MPI window of the program's) now stands for the family window child: MPI_
 * calls on own are served by child, MPI_Win_free(own) frees it. Returns an MPI code. */
int clampi_pmpi_family_adopt(MPI_Win own, CMPI_Win child);
/* After the MPI is initialised (MPI_Init, MPI_Init_thread, their Fortran entries); runs
 * once however many of them lead here. */
void clampi_pmpi_after_init(void);
/* The flavor the program asked for where the preload made its window another way
 * (MPI_WIN_FLAVOR_ALLOCATE), else 0. */
int clampi_pmpi_flavor_asked(MPI_Win win);
#endif
