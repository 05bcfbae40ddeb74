/* clampi_numa_alloc: parallel first touch by the owning OpenMP thread, plus binding to
 * that thread's NUMA node where there is more than one (see include/clampi/numa.h). */
#define _GNU_SOURCE
#include <clampi/numa.h>

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "numa/first_touch.h"

/* One header page in front of the memory: the mapping's length, to free it. */
#define NUMA_MAGIC 0x636c616d70694e55ull /* "clampiNU" */
typedef struct numa_header {
    uint64_t magic;
    size_t map_len;
} numa_header;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

int clampi_numa_nodes(void) {
    static int nodes;
    if (nodes == 0) nodes = numa_available() < 0 ? 1 : numa_max_node() + 1;
    return nodes;
}

int clampi_numa_owner_static(size_t page, size_t npages, int nthreads) {
    /* libgomp's schedule(static) over n = npages * page bytes: thread t gets q (+1 for
     * the first r threads) consecutive iterations. The page's middle byte decides. */
    size_t ps = page_size(), n = npages * ps, mid = page * ps + ps / 2;
    size_t T = (size_t)nthreads, q = n / T, r = n % T;
    size_t big = r * (q + 1); /* bytes held by the first r threads */
    return (int)(mid < big ? mid / (q + 1) : r + (mid - big) / q);
}

int clampi_numa_owner_block(size_t page, size_t npages, int nthreads) {
    return (int)(page * (size_t)nthreads / npages);
}

/* Binds [p, p+len) to the node of the calling thread's CPU (multi-node machines only). */
static void bind_here(char *p, size_t len) {
    int node = numa_node_of_cpu(sched_getcpu());
    if (node < 0) return;
    unsigned long mask[16] = {0};
    if ((size_t)node >= sizeof mask * 8) return;
    mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
    mbind(p, len, MPOL_PREFERRED, mask, sizeof mask * 8, 0);
}

/* Touches (writes a zero: the memory is fresh, so it stays all-zero) every page of
 * [base, base+npages*ps) that owner() gives to the calling OpenMP thread. Returns the
 * number of pages whose owner was out of range. */
static size_t touch_mine(char *base, size_t npages, int nthreads, clampi_numa_owner_fn owner, int bind) {
    size_t ps = page_size(), bad = 0;
    int me = omp_get_thread_num();
    size_t run = 0; /* start of the current run of my pages, for one mbind per run */
    int in_run = 0;
    for (size_t i = 0; i < npages; i++) {
        int o = owner(i, npages, nthreads);
        if (o < 0 || o >= nthreads) {
            bad++;
            o = 0;
        }
        int mine = o == me;
        if (bind && mine && !in_run) {
            run = i;
            in_run = 1;
        }
        if (bind && !mine && in_run) {
            bind_here(base + run * ps, (i - run) * ps);
            for (size_t k = run; k < i; k++) ((volatile char *)base)[k * ps] = 0;
            in_run = 0;
        }
        if (!bind && mine) ((volatile char *)base)[i * ps] = 0;
    }
    if (bind && in_run) {
        bind_here(base + run * ps, (npages - run) * ps);
        for (size_t k = run; k < npages; k++) ((volatile char *)base)[k * ps] = 0;
    }
    return bad;
}

void *clampi_numa_alloc(size_t size, int nthreads, clampi_numa_owner_fn owner_fn) {
    if (size == 0) {
        errno = EINVAL;
        return NULL;
    }
    size_t ps = page_size();
    size_t npages = (size + ps - 1) / ps;
    if (npages > (SIZE_MAX - ps) / ps) {
        errno = ENOMEM;
        return NULL;
    }
    size_t map_len = (npages + 1) * ps;
    char *m = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    numa_header *h = (numa_header *)m;
    h->magic = NUMA_MAGIC;
    h->map_len = map_len;
    char *base = m + ps;
    if (nthreads <= 0) nthreads = omp_get_max_threads();
    if (owner_fn == NULL) owner_fn = clampi_numa_owner_static;
    int bind = clampi_numa_nodes() > 1;
    size_t bad = 0;
#pragma omp parallel num_threads(nthreads) reduction(+ : bad)
    bad += touch_mine(base, npages, omp_get_num_threads(), owner_fn, bind);
    if (bad) {
        munmap(m, map_len);
        errno = EINVAL;
        return NULL;
    }
    return base;
}

void *clampi_numa_alloc_block(size_t size, int nthreads) {
    return clampi_numa_alloc(size, nthreads, clampi_numa_owner_block);
}

void clampi_numa_free(void *p) {
    if (p == NULL) return;
    numa_header *h = (numa_header *)((char *)p - page_size());
    if (h->magic != NUMA_MAGIC) return; /* not ours: leave it alone rather than unmap something else */
    h->magic = 0;
    munmap(h, h->map_len);
}

void clampi_numa_touch_own(void *base, size_t size) {
    if (base == NULL || size == 0) return;
    /* an atomic OR of 0 into one byte per page of our range: a write that changes nothing
     * and loses no concurrent store (a peer's bytes may share our first/last page) */
    size_t ps = page_size();
    uintptr_t lo = (uintptr_t)base, hi = lo + size;
    uintptr_t first = (lo + ps - 1) & ~(uintptr_t)(ps - 1);
    if (clampi_numa_nodes() > 1 && hi > first) {
        unsigned long mask[16] = {0};
        int node = numa_node_of_cpu(sched_getcpu());
        if (node >= 0 && (size_t)node < sizeof mask * 8) {
            mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
            /* whole pages inside our range only; move what MPI may have touched already */
            size_t whole = ((hi - first) / ps) * ps;
            if (whole) mbind((void *)first, whole, MPOL_PREFERRED, mask, sizeof mask * 8, MPOL_MF_MOVE);
        }
    }
    __atomic_fetch_or((char *)base, 0, __ATOMIC_RELAXED);
    for (uintptr_t p = first; p < hi; p += ps) __atomic_fetch_or((char *)p, 0, __ATOMIC_RELAXED);
}
