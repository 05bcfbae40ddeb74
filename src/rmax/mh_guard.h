/* A write guard for pages that move while other threads may write them (mh_share.c).
 *
 * A small block inside malloc's heap shares its first and last pages with other blocks and
 * with malloc's own fields, which any thread may write at any time. Those pages move onto a
 * handle's memory file only under a userfaultfd write protection: a write to them while
 * their bytes are copied and the copy is mapped in their place waits in the kernel, and
 * lands on the new mapping when the guard ends. Without userfaultfd (an old kernel, a
 * seccomp filter) such pages do not move. Unprivileged processes get the user-mode-only
 * kind (vm.unprivileged_userfaultfd=0): a system call writing there from another thread
 * meanwhile fails with EFAULT instead of waiting; the window is the copy of two pages. */
#ifndef CLAMPI_RMAX_MH_GUARD_H
#define CLAMPI_RMAX_MH_GUARD_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define CLAMPI_MH_GUARD_RANGES 2

typedef struct clampi_mh_guard {
    int fd;
    int n;
    uintptr_t lo[CLAMPI_MH_GUARD_RANGES];
    size_t len[CLAMPI_MH_GUARD_RANGES];
    sigset_t saved; /* the caller's signal mask: a handler writing the pages would wait forever */
} clampi_mh_guard;

/* 1 when this process can guard anonymous private memory (and, with shmem, a memory
 * file's mapping); checked once. */
int clampi_mh_guard_available(int shmem);
/* Write-protects the n page-aligned ranges (private anonymous memory, or a memory file's
 * shared mapping when shmem) and blocks the caller's signals. 0, or -1 with nothing
 * changed. Between begin and end the caller must not write the ranges, nor allocate. */
int clampi_mh_guard_begin(clampi_mh_guard *g, int n, const uintptr_t *lo, const size_t *len, int shmem);
/* Ends the guard: protection lifted where the protected pages are still mapped, writers
 * waiting wake and retry on whatever is mapped there now, the caller's signal mask back. */
void clampi_mh_guard_end(clampi_mh_guard *g);
#endif
