/* Windows made from other windows: duplicates (CMPIX_Win_dup_with_info) and memory-handle
 * windows (CMPIX_Win_from_memhandle). Each is a clampi_win of its own (own handle, options,
 * cache, counters) over the parent's MPI window and backend state; the parent keeps a list
 * of them. Freeing a child is local and never touches the parent's memory; freeing the
 * parent (collective) first frees every child still alive, whose handles then become
 * invalid (MPI_ERR_WIN if used). */
#ifndef CLAMPI_RMAX_FAMILY_H
#define CLAMPI_RMAX_FAMILY_H
#include "rma/window.h"

enum { CLAMPI_RMAX_PARENT, CLAMPI_RMAX_DUP, CLAMPI_RMAX_MEMHANDLE };

typedef struct clampi_rmax {
    int kind;
    clampi_win *parent;      /* child: the window it was made from */
    clampi_win *children;    /* parent: first child */
    clampi_win *next, *prev; /* child: siblings */
    CMPI_Win handle;         /* child: its registry handle */
    int parent_elide;        /* parent: elide_flushes before its first child */
    int nchildren;
    uint64_t win_id;                  /* agreed at creation (UCX windows), see clampi_rmax_on_create */
    struct clampi_notify *notify;     /* notification state (notify.c), root windows */
    void *mh_cache;                   /* parent: the backend's cache of owners' generation tables (mh_open) */
    int atomic_lanes;                 /* op_intrinsic's transport answer: 1 yes, -1 no, 0 not asked yet */
    void *mh_table;                   /* dynamic parent: the backend's table of handles created on it */
    const clampi_backend_ext *mh_ext; /* the rows that made mh_table (they free it) */
    void *mh_shares;                  /* dynamic parent: its handles' pages moved onto files (mh_share.h) */
} clampi_rmax;

/* The backend's extension rows of w (backend.h), NULL on a window without them (MPI). */
static inline const clampi_backend_ext *clampi_rmax_ext(const clampi_win *w) { return w->b.ops ? w->b.ops->ext : NULL; }
/* The window's id, agreed at creation (clampi_rmax_on_create); 0 if none. */
static inline uint64_t clampi_rmax_win_id(const clampi_win *w) { return w->rmax ? w->rmax->win_id : 0; }
/* The window notifications of w's family go to: its root. */
static inline clampi_win *clampi_rmax_root(clampi_win *w) {
    return w->rmax && w->rmax->kind != CLAMPI_RMAX_PARENT ? w->rmax->parent : w;
}

/* Chooses w's operation table from its options: the UCX backend's, the memory-handle
 * one, or either with UCX atomics for accumulates (mpi_assert_accumulate_intrinsic). */
void clampi_rmax_select_ops(clampi_win *w);
/* The window's extension state, created on first need (NULL if out of memory). */
clampi_rmax *clampi_rmax_of(clampi_win *w);
/* A new window state over parent's MPI window and backend state: own per-target arrays,
 * empty cache, counters and gets in flight; not registered, no rmax. NULL if out of memory. */
clampi_win *clampi_rmax_clone(const clampi_win *parent);
/* Releases a clone that never became a window (not registered, no handle shared). */
void clampi_rmax_discard(clampi_win *w);
/* Links child under parent (both under no lock; creation and free are not concurrent
 * with other calls on the same window, as for MPI windows). */
void clampi_rmax_link(clampi_win *parent, clampi_win *child, int kind, CMPI_Win handle);
/* CMPI_Win_free hook: frees a child locally (returns its MPI code), or frees a parent's
 * children and returns -1 so the caller frees the parent itself. */
int clampi_rmax_on_free(clampi_win *w, CMPI_Win *handle);
/* Collective over comm, at the end of a UCX window's creation: agrees on the window id
 * memory handles are checked against. Returns an MPI code. */
int clampi_rmax_on_create(clampi_win *w, MPI_Comm comm);
/* clampi_win_release hook: frees the extension state. */
void clampi_rmax_release(clampi_win *w);
/* Notification (notify.c): setup installs w's listener (every window with the rows, at
 * creation, so all are ready before a peer sends); release removes it (the parent's free). */
void clampi_rmax_notify_setup(clampi_win *w);
void clampi_rmax_notify_release(clampi_win *w);
#endif
