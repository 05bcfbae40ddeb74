/* clampi_numa_alloc / _block / _free: values, argument errors, the static-schedule owner
 * matches what libgomp's schedule(static) really does, every page is present after the
 * call (mincore), and - run under the sampler by check_sample.py numa - each page was
 * first touched by its owner thread. Prints "OWN <name> <address> <owner of each page>". */
#define _GNU_SOURCE
#include <clampi/numa.h>
#include <errno.h>
#include <stdint.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

#define NT 3

static int every_third(size_t page, size_t npages, int nthreads) { return (int)(page % (size_t)nthreads); }
static int bad_owner(size_t page, size_t npages, int nthreads) { return page == 3 ? nthreads : 0; }

static void print_owners(const char *name, const void *p, size_t npages, clampi_numa_owner_fn fn) {
    printf("OWN %s %p", name, p);
    for (size_t i = 0; i < npages; i++) printf(" %d", fn(i, npages, NT));
    printf("\n");
}

static void check_resident(const void *p, size_t bytes) {
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + ps - 1) / ps;
    unsigned char *v = malloc(n);
    CHECK(mincore((void *)p, n * ps, v) == 0);
    for (size_t i = 0; i < n; i++) CHECK(v[i] & 1); /* touched: present */
    free(v);
}

/* The page's owner under schedule(static) as libgomp runs it, found by running it. */
static void check_static_owner(size_t npages, int nthreads) {
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), n = npages * ps;
    unsigned char *who = malloc(n);
#pragma omp parallel for schedule(static) num_threads(nthreads)
    for (size_t i = 0; i < n; i++) who[i] = (unsigned char)omp_get_thread_num();
    for (size_t p = 0; p < npages; p++)
        CHECK_EQ_INT(clampi_numa_owner_static(p, npages, nthreads), who[p * ps + ps / 2]);
    free(who);
}

int main(void) {
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    printf("numa nodes: %d%s\n", clampi_numa_nodes(),
           clampi_numa_nodes() == 1 ? " (one node: first touch only, no binding)" : "");
    /* argument errors */
    errno = 0;
    CHECK(clampi_numa_alloc(0, NT, NULL) == NULL && errno == EINVAL);
    errno = 0;
    CHECK(clampi_numa_alloc(16 * ps, NT, bad_owner) == NULL && errno == EINVAL);
    clampi_numa_free(NULL);

    size_t n = 24 * ps / sizeof(double) - 100; /* not a whole number of pages */
    double *a = clampi_numa_alloc(n * sizeof(double), NT, NULL);
    double *b = clampi_numa_alloc_block(n * sizeof(double), NT);
    double *c = clampi_numa_alloc(n * sizeof(double), NT, every_third);
    CHECK(a && b && c);
    CHECK(((uintptr_t)a % ps) == 0);
    size_t npages = (n * sizeof(double) + ps - 1) / ps;
    check_resident(a, n * sizeof(double));
    check_resident(b, n * sizeof(double));
    check_resident(c, n * sizeof(double));
    for (size_t i = 0; i < n; i++) CHECK(a[i] == 0.0 && b[i] == 0.0 && c[i] == 0.0); /* zero-filled */
    double sum = 0;
#pragma omp parallel for schedule(static) num_threads(NT) reduction(+ : sum)
    for (size_t i = 0; i < n; i++) {
        a[i] = (double)i;
        b[i] = 2.0 * i;
        c[i] = a[i] + b[i];
        sum += c[i];
    }
    CHECK(sum == 3.0 * (double)n * (double)(n - 1) / 2.0);
    for (size_t p = 0; p < npages; p++) CHECK_EQ_INT(clampi_numa_owner_block(p, npages, NT), (int)(p * NT / npages));
    print_owners("a", a, npages, clampi_numa_owner_static);
    print_owners("b", b, npages, clampi_numa_owner_block);
    print_owners("c", c, npages, every_third);
    clampi_numa_free(a);
    clampi_numa_free(b);
    clampi_numa_free(c);
    /* last: other team sizes make libgomp start new threads (the sampler numbers threads
     * in creation order; the allocations above ran with the first team, ids 1..NT-1) */
    for (size_t np = 1; np <= 37; np += 4)
        for (int t = 1; t <= 5; t++) check_static_owner(np, t);

    printf("numa_alloc_test: ok\n");
    return 0;
}
