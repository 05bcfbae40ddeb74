/* The preload's straight path: which targets of a window get their MPI calls passed to
 * MPI with no clampi bookkeeping at all.
 *
 * A window whose mode is off: every target. A transparent window keeps nothing past a
 * flush, so its only possible gain is in-flight sharing (a get of bytes already in flight
 * is served by copying them at the flush): that pays off over a network, never against a
 * same-node target, where MPI's get is a copy already and the bookkeeping only costs. So
 * in transparent mode same-node targets (MPI_COMM_TYPE_SHARED, or CLAMPI_NODE_SIZE) go
 * straight, and the others share gets in flight only while sharing pays off on that
 * window: at least 1 get in 64 served from flight; after two synchronizations without,
 * every target goes straight for 64, then 256, 1024, 4096 synchronizations (reset when
 * sharing pays again), then sharing is tried again. Caching modes: no target goes
 * straight. CLAMPI_INFLIGHT_SHARING=auto (that, the default) | always (every target of a
 * transparent window shares gets in flight, as before: e.g. one node over TCP, or Open
 * MPI's emulated one-sided transport) | never (no target does).
 *
 * Values of w->straight[t]: 0 clampi's path; 1 straight, its synchronizations too;
 * 2 straight, but its synchronizations go through clampi (gets of an earlier sharing
 * period still to complete). Written under the window lock, read without it (relaxed
 * atomics). A pause is counted down by synchronizations that go through clampi, and in
 * single-threaded processes by the fast path (clampi_last.budget). */
#ifndef CLAMPI_PMPI_STRAIGHT_H
#define CLAMPI_PMPI_STRAIGHT_H
#include <mpi.h>
#include <stdint.h>

#include "rma/window.h"

/* Processes without MPI_THREAD_MULTIPLE: the window the last call went to, and whether
 * all its operations / synchronizations go straight, in the form the preload's entry
 * points test with one compare: ops_win (syncs_win) is that window's handle if they do,
 * else a zero handle (never a valid window). Kept current by this file whenever a
 * window's straight[] changes; cleared at every window creation and free. */
typedef struct clampi_straight_last {
    MPI_Win ops_win, syncs_win;
    uint64_t budget; /* synchronizations left before the policy must see one (a pause) */
    MPI_Win win;
    clampi_win *w;
} clampi_straight_last;
extern clampi_straight_last clampi_last;
/* Makes (win, w) the last window (w may be NULL: a window clampi does not manage). */
void clampi_straight_remember(MPI_Win win, clampi_win *w);
static inline void clampi_straight_forget_last(void) { __builtin_memset(&clampi_last, 0, sizeof clampi_last); }

/* At creation (collective over comm): which targets share the caller's node. 0, or -1
 * if memory ran out (the window is then left unmanaged). */
int clampi_straight_setup(clampi_win *w, MPI_Comm comm);
/* After a mode change (clampi_win_reconfigure). */
void clampi_straight_refresh(clampi_win *w);
enum clampi_sharing { SHARING_AUTO, SHARING_ALWAYS, SHARING_NEVER };

/* A window's policy state (straight.c). */
struct clampi_straight_policy {
    enum clampi_sharing sharing;
    int paused; /* sharing paused: every target goes straight for a while */
    uint32_t quiet, pause_left, next_pause;
    uint64_t seen_misses, seen_hits;
    int nops, nsyncs;          /* targets whose straight[] is nonzero / 1 */
    unsigned char same_node[]; /* per target */
};

/* After a synchronization that went through clampi: target (or -1: all targets) has
 * completed; advances the sharing policy. */
void clampi_straight_after_sync(clampi_win *w, int target);

/* Whether an operation to target goes straight to MPI (target need not be valid). */
static inline int clampi_straight_op(const clampi_win *w, int target) {
    return (unsigned)target < (unsigned)w->b.nranks && __atomic_load_n(&w->straight[target], __ATOMIC_RELAXED);
}
/* Whether a synchronization of target (flush, flush_local, unlock) goes straight. */
static inline int clampi_straight_sync(const clampi_win *w, int target) {
    return (unsigned)target < (unsigned)w->b.nranks && __atomic_load_n(&w->straight[target], __ATOMIC_RELAXED) == 1;
}
/* Whether a synchronization of the whole window goes straight. */
static inline int clampi_straight_sync_all(const clampi_win *w) {
    return __atomic_load_n(&w->all_straight, __ATOMIC_RELAXED);
}
#endif
