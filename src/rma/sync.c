/* Synchronization: every call forwards to the window's backend (backends/backend.h), then completes clampi's gets in flight
 * (their bytes may enter the cache only now) and applies the mode's invalidation rule.
 * Transparent windows keep no completed data, so each flush and epoch end leaves them
 * empty: that is their invalidation. Flushes with nothing outstanding are elided.
 * The clampi_win_* functions are shared with the preload; they hold the window lock
 * across the MPI call, so a get issued by another thread meanwhile cannot be taken for
 * complete by the bookkeeping that follows it. */
#include "backends/access.h"
#include "rma/window.h"
#include "rma/errors.h"

static void fill_cache(void *ctx, uint32_t target, uint64_t offset, uint64_t length, const void *data) {
    clampi_win *w = ctx;
    clampi_cache_insert(&w->cache, target, offset, length, data);
}

/* Completed gets have entered the cache: the adaptive scheme's observation point. */
static void maybe_adapt(clampi_win *w) {
    if (w->opts.adaptive && w->caches_data) clampi_adapt_step(&w->adapt, &w->cache, 0);
}

/* Gets to target are complete at the origin. */
static void gets_done(clampi_win *w, int target) {
    if (!w->keeps_books) return;
    clampi_inflight_complete(&w->inflight, (uint32_t)target, w->caches_data ? fill_cache : NULL, w);
    maybe_adapt(w);
}

/* Everything to target is complete at the target too. */
static void target_done(clampi_win *w, int target) {
    gets_done(w, target);
    if (!w->keeps_books || w->outstanding[target] == 0) return;
    w->outstanding[target] = 0;
    for (uint32_t i = 0; i < w->ndirty; i++)
        if (w->dirty_targets[i] == (uint32_t)target) {
            w->dirty_targets[i] = w->dirty_targets[--w->ndirty];
            break;
        }
}

static void all_done(clampi_win *w) {
    if (!w->keeps_books) return;
    clampi_inflight_complete_all(&w->inflight, w->caches_data ? fill_cache : NULL, w);
    maybe_adapt(w);
    for (uint32_t i = 0; i < w->ndirty; i++) w->outstanding[w->dirty_targets[i]] = 0;
    w->ndirty = 0;
}

/* A flush with nothing outstanding makes no MPI call, so a rank whose gets all hit
 * would never enter MPI. With software-progressed one-sided transports (Open MPI's
 * osc/pt2pt, e.g. over TCP) other ranks' gets to it would then wait until it does: so
 * every 64th elided flush still pokes MPI's progress engine (a cheap MPI_Iprobe). */
static void elided(clampi_win *w) {
    if ((++w->n.flushes_elided & 63) == 0) {
        int flag;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    }
}

/* Under the preload, transparent windows keep every flush (programs flush to drive progress). */
static inline int may_elide(const clampi_win *w) {
    if (!w->keeps_books) return 0;
    return w->elide_flushes == CLAMPI_ELIDE_ALWAYS ||
           (w->elide_flushes == CLAMPI_ELIDE_WHILE_CACHING && w->caches_data);
}

/* Nothing of this rank's is outstanding to rank: the MPI flush can be skipped. */
static inline int flush_elidable(clampi_win *w, int rank) {
    return may_elide(w) && w->outstanding[rank] == 0 && !clampi_inflight_pending(&w->inflight, (uint32_t)rank);
}

int clampi_win_flush(clampi_win *w, int rank) {
    clampi_win_enter(w);
    CLAMPI_WIN_COUNT(w, flushes, 1);
    int rc = MPI_SUCCESS;
    if (flush_elidable(w, rank)) {
        elided(w);
    } else {
        rc = w->b.ops->flush(&w->b, rank);
        if (rc == MPI_SUCCESS) target_done(w, rank);
    }
    clampi_win_leave(w);
    return rc;
}

int clampi_win_flush_all(clampi_win *w) {
    clampi_win_enter(w);
    CLAMPI_WIN_COUNT(w, flushes, 1);
    int rc = MPI_SUCCESS;
    if (may_elide(w) && w->ndirty == 0 && w->inflight.live == 0) {
        elided(w);
    } else {
        rc = w->b.ops->flush_all(&w->b);
        if (rc == MPI_SUCCESS) all_done(w);
    }
    clampi_win_leave(w);
    return rc;
}

/* Local completion finishes gets (their data is at the origin) but not puts at their
 * target, so the target stays outstanding for a later flush. */
int clampi_win_flush_local(clampi_win *w, int rank) {
    clampi_win_enter(w);
    CLAMPI_WIN_COUNT(w, flushes, 1);
    int rc = MPI_SUCCESS;
    if (may_elide(w) && w->outstanding[rank] == 0) {
        elided(w);
    } else {
        rc = w->b.ops->flush_local(&w->b, rank);
        if (rc == MPI_SUCCESS) gets_done(w, rank);
    }
    clampi_win_leave(w);
    return rc;
}

int clampi_win_flush_local_all(clampi_win *w) {
    clampi_win_enter(w);
    CLAMPI_WIN_COUNT(w, flushes, 1);
    int rc = MPI_SUCCESS;
    if (may_elide(w) && w->ndirty == 0) {
        elided(w);
    } else {
        rc = w->b.ops->flush_local_all(&w->b);
        if (rc == MPI_SUCCESS && w->keeps_books)
            clampi_inflight_complete_all(&w->inflight, w->caches_data ? fill_cache : NULL, w);
    }
    clampi_win_leave(w);
    return rc;
}

int clampi_win_unlock(clampi_win *w, int rank) {
    clampi_win_enter(w);
    int rc = w->b.ops->unlock(&w->b, rank);
    if (rc == MPI_SUCCESS) target_done(w, rank);
    clampi_win_leave(w);
    return rc;
}

/* Epoch ends (unlock_all, fence, complete): everything is complete. */
#define EPOCH_END(w, call)              \
    clampi_win_enter(w);                \
    int rc = call;                      \
    if (rc == MPI_SUCCESS) all_done(w); \
    clampi_win_leave(w);                \
    return rc

int clampi_win_unlock_all(clampi_win *w) { EPOCH_END(w, w->b.ops->unlock_all(&w->b)); }
int clampi_win_fence(clampi_win *w, int assert) { EPOCH_END(w, w->b.ops->fence(&w->b, assert)); }
int clampi_win_complete(clampi_win *w) { EPOCH_END(w, w->b.ops->complete(&w->b)); }

/* MPI_Win_sync orders memory accesses (unified model, shared windows): in transparent
 * mode a get issued before it no longer serves duplicates issued after it. */
int clampi_win_sync(clampi_win *w) {
    clampi_win_enter(w);
    int rc = w->b.ops->sync(&w->b);
    if (rc == MPI_SUCCESS && w->opts.mode == CLAMPI_MODE_TRANSPARENT) clampi_inflight_forget_all(&w->inflight);
    clampi_win_leave(w);
    return rc;
}

int clampi_win_test(clampi_win *w, int *flag) {
    if (!flag) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (!w->b.ops->test) return clampi_raise_win(w, CLAMPI_E_RMA_SYNC);
    return w->b.ops->test(&w->b, flag);
}

void clampi_win_invalidate(clampi_win *w) {
    if (!w->keeps_books) return;
    clampi_win_enter(w);
    if (w->opts.adaptive && w->caches_data) clampi_adapt_step(&w->adapt, &w->cache, 1); /* free: all is dropped */
    clampi_cache_invalidate(&w->cache);
    clampi_inflight_forget_all(&w->inflight);
    clampi_win_leave(w);
}

/* ---- CMPI_ API -------------------------------------------------------------------- */
#define FIND_WIN(w, win)                       \
    clampi_win *w = clampi_registry_find(win); \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN)
#define CHECK_RANK(w, rank) \
    if ((rank) < 0 || (rank) >= (w)->b.nranks) return clampi_raise_win(w, CLAMPI_E_RANK)

/* CMPI_NAME(win) -> fn(w);  CMPI_NAME(rank, win) -> fn(w, rank) */
#define CMPI_WIN(NAME, fn)          \
    int CMPI_##NAME(CMPI_Win win) { \
        FIND_WIN(w, win);           \
        return fn(w);               \
    }
#define CMPI_RANK(NAME, fn)                   \
    int CMPI_##NAME(int rank, CMPI_Win win) { \
        FIND_WIN(w, win);                     \
        CHECK_RANK(w, rank);                  \
        return fn(w, rank);                   \
    }
/* A window that keeps no books (mpi_win_scope=thread): a flush completes the calling
 * thread's operations only, straight in the backend, without the window lock. */
#define CMPI_FLUSH_RANK(NAME, fn, op)                                               \
    int CMPI_##NAME(int rank, CMPI_Win win) {                                       \
        FIND_WIN(w, win);                                                           \
        CHECK_RANK(w, rank);                                                        \
        if (__builtin_expect(!w->keeps_books, 0)) return w->b.ops->op(&w->b, rank); \
        return fn(w, rank);                                                         \
    }
#define CMPI_FLUSH_WIN(NAME, fn, op)                                          \
    int CMPI_##NAME(CMPI_Win win) {                                           \
        FIND_WIN(w, win);                                                     \
        if (__builtin_expect(!w->keeps_books, 0)) return w->b.ops->op(&w->b); \
        return fn(w);                                                         \
    }
CMPI_FLUSH_RANK(Win_flush, clampi_win_flush, flush)
CMPI_FLUSH_RANK(Win_flush_local, clampi_win_flush_local, flush_local)
CMPI_RANK(Win_unlock, clampi_win_unlock)
CMPI_FLUSH_WIN(Win_flush_all, clampi_win_flush_all, flush_all)
CMPI_FLUSH_WIN(Win_flush_local_all, clampi_win_flush_local_all, flush_local_all)
CMPI_WIN(Win_unlock_all, clampi_win_unlock_all)
CMPI_WIN(Win_complete, clampi_win_complete)
CMPI_WIN(Win_sync, clampi_win_sync)

int CMPI_Win_lock(int lock_type, int rank, int assert, CMPI_Win win) {
    FIND_WIN(w, win);
    CHECK_RANK(w, rank);
    return w->b.ops->lock(&w->b, lock_type, rank, assert);
}

int CMPI_Win_lock_all(int assert, CMPI_Win win) {
    FIND_WIN(w, win);
    return w->b.ops->lock_all(&w->b, assert);
}

int CMPI_Win_fence(int assert, CMPI_Win win) {
    FIND_WIN(w, win);
    return clampi_win_fence(w, assert);
}

int CMPI_Win_start(MPI_Group group, int assert, CMPI_Win win) {
    FIND_WIN(w, win);
    return w->b.ops->start(&w->b, group, assert);
}

int CMPI_Win_post(MPI_Group group, int assert, CMPI_Win win) {
    FIND_WIN(w, win);
    return w->b.ops->post(&w->b, group, assert);
}

int CMPI_Win_wait(CMPI_Win win) {
    FIND_WIN(w, win);
    return w->b.ops->wait(&w->b);
}

int CMPI_Win_invalidate(CMPI_Win win) {
    FIND_WIN(w, win);
    clampi_win_invalidate(w);
    return MPI_SUCCESS;
}

/* For programs run under the preload (plain MPI_Win handles). A window clampi does not
 * manage has nothing cached: success, so the program also runs without the preload. */
int CMPI_Invalidate(MPI_Win win) {
    clampi_win *w = win == MPI_WIN_NULL ? NULL : clampi_registry_lookup_mpi(win);
    if (w) clampi_win_invalidate(w);
    return MPI_SUCCESS;
}
