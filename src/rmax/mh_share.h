/* Memory handles to the program's own memory (malloc, new, the stack) reached by load and
 * store from the same node (CMPIX_Memhandle_create, option mh_share).
 *
 * UCX reaches memory it did not allocate through cross-memory attach (a syscall per
 * operation) or active messages run by the owner's progress, so a handle to such memory
 * costs microseconds per operation. At handle creation the owner moves the region's whole
 * pages onto a memory file: it copies them into the file (pages that hold only zeros stay
 * holes) and maps the file over them in place (MAP_FIXED), so the program's pointers do
 * not change. One more page of the file holds the handle's liveness word. A same-node peer
 * opens the file through /proc/<owner>/fd, checks its name, and maps it. Releasing the
 * handle zeroes the word and copies the pages back into private memory (mremap over
 * them), so the program's memory is ordinary again (realloc, fork, calloc's reuse).
 *
 * Which pages move: every page the region touches. When the region starts a block glibc's
 * malloc made with its own mmap, every page of that block (the rest of those pages is the
 * block's header and padding); when it is on the calling thread's stack, its edge pages
 * hold only that thread's frames (copied from another stack: move_frozen); otherwise its
 * first and last pages also hold other memory (neighbouring blocks, malloc's fields, other
 * static data), which other threads may write at any time: those two pages move under a
 * write guard (mh_guard.h), and without one (no userfaultfd), or when they hold part of
 * another live handle's region, only the pages wholly inside the region move, and bytes of
 * the region outside the moved pages go through UCX. Only private anonymous memory moves
 * (not files, not shared). While the pages are copied (at creation and at release), no
 * other thread may write the region itself: a write racing the copy is lost. Stack pages go
 * back only on their own thread; released elsewhere they stay on the file. A forked child
 * gets a private copy of every moved page (pthread_atfork). */
#ifndef CLAMPI_RMAX_MH_SHARE_H
#define CLAMPI_RMAX_MH_SHARE_H
#include <stddef.h>
#include <stdint.h>

/* How a peer finds a region's memory file; node 0: the region has none. */
typedef struct clampi_mh_share_ref {
    uint64_t node;    /* the owner's node (hostname and boot id) */
    uint64_t token;   /* in the file's name: tells this file from any other */
    uint64_t lo;      /* the first moved page, an address at the owner */
    uint64_t len;     /* bytes moved (whole pages); the liveness page follows them in the file */
    uint32_t pid, fd; /* the owner and its descriptor of the file */
} clampi_mh_share_ref;

/* Owner: moves [base, base+size)'s pages onto a file for the handle of `generation` and
 * fills ref; 0, or -1 when nothing moved (too small, not private anonymous memory, pages
 * already moved for another live handle, a failed syscall). *shares is the window's list. */
int clampi_mh_share(void **shares, void *base, size_t size, uint64_t generation, clampi_mh_share_ref *ref);
/* Owner: the handle of `generation` was released: its word is zeroed, its pages go back to
 * private memory (unless the program unmapped them), its file is closed. */
void clampi_mh_unshare(void **shares, uint64_t generation);
/* Owner: every handle's pages back (the window is freed). */
void clampi_mh_shares_free(void **shares);

/* Peer: ref's pages mapped here (this node only), or NULL. A mapping serves every window
 * of the handle in this process and is kept after the last one closes (up to 16 such, the
 * least recently opened go first), unless the owner released the handle. *pages: the moved
 * pages; *live: the handle's liveness word, in the mapping. */
void *clampi_mh_share_open(const clampi_mh_share_ref *ref, unsigned char **pages, const uint64_t **live);
/* Peer: one window fewer uses the mapping. */
void clampi_mh_share_close(void *mapping);
/* This node's id, never 0. */
uint64_t clampi_mh_share_node(void);
#endif
