/* The one way MPI's own waits reach clampi's progress. MPI-2 generalized requests have no
 * progress hook, so clampi's requests (common/greq.c, the message layer's msg/request.c)
 * are driven per MPI:
 *  - Open MPI: callbacks registered with its progress engine (opal_progress_register,
 *    looked up at run time), run by every wait and test loop. This module keeps the one
 *    registration and runs every clampi callback from it;
 *  - MPICH: MPIX_Grequest_start's poll and wait functions (no registration here; the UCX
 *    service's pass runs after MPICH's polls of its UCX worker: services/ucx/mpi_polls.h);
 *  - otherwise: the caller's fallback (a polling thread, or the UCX progress service). */
#ifndef CLAMPI_COMMON_PROGRESS_HOOK_H
#define CLAMPI_COMMON_PROGRESS_HOOK_H

typedef void (*clampi_progress_fn)(void);

/* Adds fn to the callbacks MPI's progress engine runs (once per fn). Returns 1 when the MPI
 * runs them (Open MPI), 0 when it has no such hook (the caller needs another way). */
int clampi_progress_hook_add(clampi_progress_fn fn);
/* Removes fn. Callers may add and remove a callback while the program runs (the UCX
 * service does, as work comes and goes); the MPI registration itself stays (progress_hook.c
 * says why), so MPI's polls then cost one call that finds nothing to run. */
void clampi_progress_hook_remove(clampi_progress_fn fn);
/* 1 when the MPI runs such callbacks (Open MPI), without adding one. */
int clampi_progress_hook_available(void);

/* clampi's own waits that spin outside MPI (the shared-memory collectives) call clampi_idle
 * between polls once they yield, so that the parts that need this process's progress get
 * it meanwhile: the message layer (on the MPI carrier a peer's large send to a receive in
 * clampi's queue completes only when this process takes it, src/msg/carrier_mpi.c) and the
 * UCX progress service (an origin's emulated puts to this process's UCX windows). One
 * callback per part (NULL: none). */
enum { CLAMPI_IDLE_MSG, CLAMPI_IDLE_UCX, CLAMPI_IDLE_PARTS };
extern clampi_progress_fn clampi_idle_hooks[CLAMPI_IDLE_PARTS];
static inline void clampi_idle(void) {
    for (int i = 0; i < CLAMPI_IDLE_PARTS; i++) {
        clampi_progress_fn f = __atomic_load_n(&clampi_idle_hooks[i], __ATOMIC_ACQUIRE);
        if (f) f();
    }
}
/* ... and clampi_before_blocking before they make a blocking MPI call (set-up collectives):
 * the message layer hands what only it could progress to MPI. One callback (NULL: none). */
extern clampi_progress_fn clampi_before_blocking_hook;
static inline void clampi_before_blocking(void) {
    clampi_progress_fn f = __atomic_load_n(&clampi_before_blocking_hook, __ATOMIC_ACQUIRE);
    if (f) f();
}
#endif
