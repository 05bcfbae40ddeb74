/* The extensions' UCX parts as the rest of src/rmax sees them: memory-handle windows,
 * target notification, a child window borrowing its parent's UCX state, the UCX operation
 * variants. Built with UCX they are ucx_access.c, memhandle.c and notify.c; without UCX
 * (CLAMPI_HAVE_UCX=0) no window is on UCX, and each is the inline that finds nothing to do. */
#ifndef CLAMPI_RMAX_UCX_PARTS_H
#define CLAMPI_RMAX_UCX_PARTS_H
#include "rma/window.h"

#if CLAMPI_HAVE_UCX
int clampi_rmax_is_ucx(const clampi_win *w);                             /* 1 if w runs on the UCX backend */
int clampi_rmax_is_memhandle(const clampi_win *w);                       /* 1 if w was made from a memory handle */
void clampi_rmax_memhandle_share(clampi_win *w, const clampi_win *from); /* a duplicate of one */
void clampi_rmax_memhandle_release(clampi_win *w);
void clampi_win_share_backend(clampi_win *w, const clampi_win *parent); /* borrowed, not owned */
void clampi_win_detach_shared(clampi_win *w);   /* before freeing such a w: the release keeps it */
void clampi_rmax_select_variant(clampi_win *w); /* the UCX operations for w's options */
void clampi_mh_gen_cache_destroy(clampi_win *parent);
void clampi_mh_table_destroy(clampi_win *w);
void clampi_rmax_notify_setup(clampi_win *w);
void clampi_rmax_notify_release(clampi_win *w);
#else
static inline int clampi_rmax_is_ucx(const clampi_win *w) { return 0; }
static inline int clampi_rmax_is_memhandle(const clampi_win *w) { return 0; }
static inline void clampi_rmax_memhandle_share(clampi_win *w, const clampi_win *from) {}
static inline void clampi_rmax_memhandle_release(clampi_win *w) {}
static inline void clampi_win_share_backend(clampi_win *w, const clampi_win *parent) {}
static inline void clampi_win_detach_shared(clampi_win *w) {}
static inline void clampi_rmax_select_variant(clampi_win *w) {}
static inline void clampi_mh_gen_cache_destroy(clampi_win *parent) {}
static inline void clampi_mh_table_destroy(clampi_win *w) {}
static inline void clampi_rmax_notify_setup(clampi_win *w) {}
static inline void clampi_rmax_notify_release(clampi_win *w) {}
#endif
#endif
