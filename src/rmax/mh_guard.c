/* Write guard for moving pages other threads may write (see mh_guard.h). */
#include "rmax/mh_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif

static int open_uffd(void) {
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == EPERM) fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    return fd;
}

static uint64_t features(int shmem) {
    return UFFD_FEATURE_PAGEFAULT_FLAG_WP | (shmem ? UFFD_FEATURE_WP_HUGETLBFS_SHMEM : 0);
}

/* The kernel's features, asked once (a descriptor takes one UFFDIO_API: the query gets its own). */
static uint64_t kernel_features(void) {
    static int64_t known = -1;
    int64_t k = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    if (k >= 0) return (uint64_t)k;
    k = 0;
    int fd = open_uffd();
    if (fd >= 0) {
        struct uffdio_api api = {.api = UFFD_API, .features = 0};
        if (ioctl(fd, UFFDIO_API, &api) == 0) k = (int64_t)(api.features & 0x7fffffffffffffffull);
        close(fd);
    }
    __atomic_store_n(&known, k, __ATOMIC_RELEASE);
    return (uint64_t)k;
}

int clampi_mh_guard_available(int shmem) {
    const uint64_t want = features(shmem);
    return (kernel_features() & want) == want;
}

static int protect(int fd, uintptr_t lo, size_t len, int on) {
    struct uffdio_writeprotect wp = {.range = {.start = lo, .len = len}, .mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0};
    return ioctl(fd, UFFDIO_WRITEPROTECT, &wp);
}

/* A page never touched has no page table entry to protect: reading it maps one (the zero
 * page, or the file's page) first. */
__attribute__((no_sanitize_address)) static void map_entries(uintptr_t lo, size_t len) {
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    for (uintptr_t a = lo; a < lo + len; a += pg) (void)*(volatile const unsigned char *)a;
}

int clampi_mh_guard_begin(clampi_mh_guard *g, int n, const uintptr_t *lo, const size_t *len, int shmem) {
    if (n < 1 || n > CLAMPI_MH_GUARD_RANGES || !clampi_mh_guard_available(shmem)) return -1;
    int fd = open_uffd();
    if (fd < 0) return -1;
    struct uffdio_api api = {.api = UFFD_API, .features = features(shmem)};
    int i = 0, armed = 0;
    if (ioctl(fd, UFFDIO_API, &api) != 0) goto fail;
    for (; i < n; i++) {
        struct uffdio_register reg = {.range = {.start = lo[i], .len = len[i]}, .mode = UFFDIO_REGISTER_MODE_WP};
        if (ioctl(fd, UFFDIO_REGISTER, &reg) != 0) goto fail;
    }
    for (; armed < n; armed++) {
        map_entries(lo[armed], len[armed]);
        if (protect(fd, lo[armed], len[armed], 1) != 0) goto fail;
    }
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &g->saved);
    g->fd = fd, g->n = n;
    for (int j = 0; j < n; j++) g->lo[j] = lo[j], g->len[j] = len[j];
    return 0;
fail:
    while (armed-- > 0) protect(fd, lo[armed], len[armed], 0);
    close(fd); /* unregisters what was registered */
    return -1;
}

void clampi_mh_guard_end(clampi_mh_guard *g) {
    for (int i = 0; i < g->n; i++) {
        protect(g->fd, g->lo[i], g->len[i], 0); /* fails harmlessly where the pages were replaced */
        struct uffdio_range r = {.start = g->lo[i], .len = g->len[i]};
        ioctl(g->fd, UFFDIO_WAKE, &r);
    }
    close(g->fd); /* wakes every writer still waiting on this descriptor */
    pthread_sigmask(SIG_SETMASK, &g->saved, NULL);
}
