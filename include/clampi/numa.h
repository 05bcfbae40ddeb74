/* clampi NUMA first-touch allocation (the hybrid-MPI locality paper, section 4): memory whose pages are first
 * touched - and so placed by Linux's first-touch policy - by the thread that will use
 * them, instead of by the thread that allocates (the "serial resize" problem).
 *
 * Pages are touched inside an OpenMP parallel region of `nthreads` threads (the
 * program's own OpenMP thread pool, so the threads that later run the program's
 * `#pragma omp parallel for schedule(static)` loops are the ones that placed the pages;
 * bind them with OMP_PROC_BIND=true / OMP_PLACES=cores so they stay there). On a machine
 * with several NUMA nodes each page is also bound (mbind, MPOL_PREFERRED) to the node
 * of the thread that touched it; on a one-node machine only the first touch happens
 * (clampi_numa_nodes() returns 1). Memory comes from mmap (page aligned, zero-filled)
 * and must be released with clampi_numa_free. C++: <clampi/numa_allocator.hpp>. */
#ifndef CLAMPI_NUMA_H
#define CLAMPI_NUMA_H
#include <stddef.h>

#include "clampi/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which thread (0 .. nthreads-1) uses page `page_index` of `npages`. */
typedef int (*clampi_numa_owner_fn)(size_t page_index, size_t npages, int nthreads);

/* `size` bytes, each page first-touched by owner_fn(page, npages, nthreads). owner_fn
 * NULL: the OpenMP static schedule over the bytes (a page belongs to the thread that
 * `#pragma omp for schedule(static)` gives its middle byte), i.e. what a
 * `parallel for schedule(static)` over the array's elements will use. nthreads <= 0:
 * omp_get_max_threads(). Returns NULL (errno EINVAL for size 0 or an owner outside
 * 0..nthreads-1, ENOMEM) on failure. */
CLAMPI_API void *clampi_numa_alloc(size_t size, int nthreads, clampi_numa_owner_fn owner_fn);

/* Static-block variant: the pages split into nthreads contiguous blocks of equal page
 * counts (page i belongs to thread i * nthreads / npages). */
CLAMPI_API void *clampi_numa_alloc_block(size_t size, int nthreads);

/* Frees memory from clampi_numa_alloc / clampi_numa_alloc_block (NULL is ignored). */
CLAMPI_API void clampi_numa_free(void *p);

/* The two built-in owner functions (the NULL default and the block variant). */
CLAMPI_API int clampi_numa_owner_static(size_t page_index, size_t npages, int nthreads);
CLAMPI_API int clampi_numa_owner_block(size_t page_index, size_t npages, int nthreads);

/* NUMA nodes pages are bound to: 1 on a one-node machine (first touch only, no binding). */
CLAMPI_API int clampi_numa_nodes(void);

#ifdef __cplusplus
}
#endif
#endif
