/* The one way MPI's own waits reach clampi's progress. MPI-2 generalized requests have no
 * progress hook, so clampi's requests (common/greq.c, the message layer's msg/request.c)
 * are driven per MPI:
 *  - Open MPI: callbacks registered with its progress engine (opal_progress_register,
 *    looked up at run time), run by every wait and test loop. This module keeps the one
 *    registration and runs every clampi callback from it;
 *  - MPICH: MPIX_Grequest_start's poll and wait functions (no registration here);
 *  - otherwise: the caller's fallback (a polling thread, or the UCX progress service). */
#ifndef CLAMPI_COMMON_PROGRESS_HOOK_H
#define CLAMPI_COMMON_PROGRESS_HOOK_H

typedef void (*clampi_progress_fn)(void);

/* Adds fn to the callbacks MPI's progress engine runs (once per fn). Returns 1 when the MPI
 * runs them (Open MPI), 0 when it has no such hook (the caller needs another way). */
int clampi_progress_hook_add(clampi_progress_fn fn);
/* Removes fn (at finalize); the MPI registration stays while any callback remains. */
void clampi_progress_hook_remove(clampi_progress_fn fn);

/* clampi's own waits that spin outside MPI (the shared-memory collectives) call clampi_idle
 * between polls once they yield, so that the message layer can take messages meanwhile: on
 * the MPI carrier a peer's large send to a receive in clampi's queue completes only when
 * this process takes it (src/msg/carrier_mpi.c). One callback (NULL: none). */
extern clampi_progress_fn clampi_idle_hook;
static inline void clampi_idle(void) {
    clampi_progress_fn f = __atomic_load_n(&clampi_idle_hook, __ATOMIC_ACQUIRE);
    if (f) f();
}
/* ... and clampi_before_blocking before they make a blocking MPI call (set-up collectives):
 * the message layer hands what only it could progress to MPI. One callback (NULL: none). */
extern clampi_progress_fn clampi_before_blocking_hook;
static inline void clampi_before_blocking(void) {
    clampi_progress_fn f = __atomic_load_n(&clampi_before_blocking_hook, __ATOMIC_ACQUIRE);
    if (f) f();
}
#endif
