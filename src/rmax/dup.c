/* CMPIX_Win_dup_with_info (the Quo Vadis RMA paper, §3): a second handle on the same window, with other info.
 * The duplicate is a clampi_win of its own (options, cache, counters, type memo) over the
 * parent's MPI window (and, on the UCX backend, the parent's backend state: workers,
 * endpoints, rkeys, lock words), so synchronization is shared: a lock taken through one
 * is held for the other, a flush through one completes the other's operations at MPI's
 * level. Local: no communication. */
#include "clampi/rmax.h"
#include "rma/errors.h"
#include "rmax/family.h"

int CMPIX_Win_dup_with_info(CMPI_Win win, MPI_Info info, CMPI_Win *newwin) {
    clampi_win *parent = clampi_registry_find(win);
    if (!parent) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!newwin) return clampi_raise_win(parent, CLAMPI_E_ARG);
    /* A duplicate of a duplicate (or of a memory-handle window) duplicates its origin's
     * resources: it hangs off the same root, keeps the copied window's keys. */
    clampi_win *root = clampi_rmax_root(parent);
    clampi_win_options opts = parent->opts;
    const char *bad = NULL;
    if (clampi_options_update(info, &opts, &bad) != MPI_SUCCESS) return clampi_raise_win(parent, CLAMPI_E_INFO);
    /* Fixed by the shared resources: the backend and its progress. The Quo Vadis RMA paper's keys can
     * differ per duplicate on a UCX window (a thread-scope duplicate uses per-thread lanes
     * of the same window state); an MPI window has none of them. */
    opts.backend = parent->opts.backend;
    opts.progress = parent->opts.progress;
    const clampi_backend_ext *e = clampi_rmax_ext(parent);
    const int memhandle = e && e->mh_is(&parent->b);
    if (!e) opts.thread_scope = opts.ordered = opts.acc_intrinsic = 0;
    if (opts.thread_scope) opts.mode = CLAMPI_MODE_OFF; /* no process-wide cache under per-thread flushes */
    clampi_win *w = clampi_rmax_clone(parent);
    if (!w) return clampi_raise_win(parent, CLAMPI_E_NOMEM);
    CMPI_Win h;
    if (!clampi_rmax_of(root) || !clampi_rmax_of(w) || clampi_registry_add(w, &h) != MPI_SUCCESS) {
        clampi_rmax_discard(w);
        return clampi_raise_win(parent, CLAMPI_E_NOMEM);
    }
    if (memhandle) e->mh_share(&w->b, &parent->b);
    /* The mode and sizes of the new keys: a cache of its own when the mode caches. */
    clampi_win_reconfigure(w, &opts);
    clampi_win_set_thread_scope(w, opts.thread_scope);
    clampi_rmax_link(root, w, memhandle ? CLAMPI_RMAX_MEMHANDLE : CLAMPI_RMAX_DUP, h);
    clampi_rmax_select_ops(w);
    *newwin = h;
    return MPI_SUCCESS;
}
