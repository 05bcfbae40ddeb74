/* clampi's part of MPI_Finalize: one MPI_COMM_SELF attribute whose delete callback runs
 * clampi's teardown steps in one fixed order, whatever order the parts were first used in
 * on each rank (several steps are collective: the ranks that registered a step run it at
 * the same point). MPI deletes MPI_COMM_SELF's attributes at the start of MPI_Finalize,
 * newest first, while MPI still works: the attribute is set at the first registration
 * (the preload sets it at MPI_Init), so the program's own MPI_COMM_SELF attributes set
 * later are deleted before clampi's teardown. A step registered once its turn has passed
 * (by a program's MPI_COMM_SELF delete callback that runs after clampi's) does not run. */
#ifndef CLAMPI_SERVICES_FINALIZE_H
#define CLAMPI_SERVICES_FINALIZE_H

/* The steps, in the order they run. */
typedef enum {
    CLAMPI_FINALIZE_WINDOWS, /* windows the program left on the UCX backend (rma/unfreed.c) */
    CLAMPI_FINALIZE_COLL,    /* MPI_COMM_WORLD's collective state (coll/comm.c) */
    CLAMPI_FINALIZE_MSG,     /* matched point-to-point: its UCX carrier's worker (msg/progress.c) */
    CLAMPI_FINALIZE_UCX,     /* UCX workers and context (services/ucx/context.c) */
    CLAMPI_FINALIZE_HEAP,    /* the node-shared heap (services/heap.c) */
    CLAMPI_FINALIZE_STEPS
} clampi_finalize_step;

/* Registers fn as the step (the first registration of a step wins; later ones are ignored)
 * and arms the attribute. Call after MPI is initialised, from any thread. */
void clampi_finalize_at(clampi_finalize_step step, void (*fn)(void));
/* Arms the attribute with no step yet (the preload, at MPI_Init). */
void clampi_finalize_arm(void);

#endif
