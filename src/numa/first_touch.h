/* Not installed (used inside libclampi): first touch of a process's own part of node-shared memory. */
#ifndef CLAMPI_NUMA_FIRST_TOUCH_H
#define CLAMPI_NUMA_FIRST_TOUCH_H
#include <stddef.h>

/* Touches every page of [base, base+size) from the calling thread (reading and writing
 * back one byte per page: contents unchanged), after binding the range's whole pages to
 * this thread's NUMA node on a multi-node machine (moving pages already placed). Used on
 * CMPI_Alloc_mem's heap segment and CMPI_Win_allocate's node-shared segment by their
 * owning rank. */
__attribute__((visibility("hidden"))) void clampi_numa_touch_own(void *base, size_t size);
#endif
