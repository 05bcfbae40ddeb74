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

struct clampi_mh_win;
struct clampi_mh_table;

typedef struct clampi_rmax {
    int kind;
    clampi_win *parent;      /* child: the window it was made from */
    clampi_win *children;    /* parent: first child */
    clampi_win *next, *prev; /* child: siblings */
    CMPI_Win handle;         /* child: its registry handle */
    int parent_elide;        /* parent: elide_flushes before its first child */
    int nchildren;
    uint64_t win_id;                       /* agreed at creation (UCX windows), see clampi_rmax_on_create */
    struct clampi_notify *notify;          /* notification state (notify.c), root windows */
    struct clampi_mh_gen_cache *gen_cache; /* parent: owners' generation-table rkeys (memhandle.c) */
    int atomic_lanes;                      /* every endpoint has a UCX atomic lane: 1 yes, -1 no, 0 not asked yet */
    struct clampi_mh_table *mht;           /* dynamic parent: handles created on it */
} clampi_rmax;

/* Chooses w's operation table from its options: the UCX backend's, the memory-handle
 * one, or either with UCX atomics for accumulates (mpi_assert_accumulate_intrinsic). */
void clampi_rmax_select_ops(clampi_win *w);
/* The window's extension state, created on first need (NULL if out of memory). */
clampi_rmax *clampi_rmax_of(clampi_win *w);
/* A new window state over parent's MPI window and backend state: own per-target arrays,
 * empty cache, counters and gets in flight; not registered, no rmax. NULL if out of memory. */
clampi_win *clampi_rmax_clone(const clampi_win *parent);
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
#endif
