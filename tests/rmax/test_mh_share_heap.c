/* Moving a small block inside malloc's heap (rmax/mh_share.h, rmax/mh_guard.h), without
 * MPI: its first and last pages also hold two neighbouring blocks, which another thread
 * keeps incrementing (one counter in each) while the block is shared and put back 2,000
 * times. Every page of the block moves, the block's contents survive each way, and no
 * increment is lost: a write that lands between the copy of an edge page and its mapping
 * waits under the write guard instead. A second handle to a block sharing an edge page
 * with a live one does not move that page. A child forked while the block is shared gets
 * its own copy of the moved pages: its writes to the block and to a neighbour stay its own.
 * When the guard is refused (the page is registered with another userfaultfd), only the
 * block's whole pages move. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rmax/mh_guard.h"
#include "rmax/mh_share.h"

#define PAGE ((uintptr_t)4096)

static void *shares;
static volatile uint64_t *c1, *c2;
static int stop;
static uint64_t done1, done2;

static void *writer(void *arg) {
    (void)arg;
    uint64_t n1 = 0, n2 = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        *c1 = *c1 + 1, n1++;
        *c2 = *c2 + 1, n2++;
    }
    done1 = n1, done2 = n2;
    return NULL;
}

/* A block of n bytes whose first and last pages hold other blocks: the one before it and
 * the one after it. */
static unsigned char *block_between(size_t n, unsigned char **before, unsigned char **after) {
    for (int tries = 0; tries < 64; tries++) {
        unsigned char *b = malloc(64), *m = malloc(n), *a = malloc(64);
        const uintptr_t s = (uintptr_t)m, e = s + n;
        if ((uintptr_t)b / PAGE == s / PAGE && (uintptr_t)a / PAGE == (e - 1) / PAGE && s % PAGE && e % PAGE) {
            *before = b, *after = a;
            return m;
        }
    }
    /* No such neighbours (AddressSanitizer's allocator keeps sizes apart): parts of one block. */
    unsigned char *big = malloc(n + 4 * PAGE);
    if (!big) return NULL;
    unsigned char *p = (unsigned char *)(((uintptr_t)big + PAGE) & ~(PAGE - 1));
    *before = p + 64, *after = p + 200 + n + 64;
    return p + 200;
}

int main(void) {
    if (!clampi_mh_guard_available(0) || !clampi_mh_guard_available(1)) {
        printf("test_mh_share_heap: skipped (no userfaultfd write protection here)\n");
        return 77;
    }
    const size_t n = 6000;
    unsigned char *before, *after, *m = block_between(n, &before, &after);
    CHECK(m != NULL);
    c1 = (volatile uint64_t *)before, c2 = (volatile uint64_t *)after;
    *c1 = 0, *c2 = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
    const uintptr_t lo = (uintptr_t)m & ~(PAGE - 1), hi = ((uintptr_t)m + n + PAGE - 1) & ~(PAGE - 1);
    int moved = 0;
    for (int i = 0; i < 2000; i++) {
        for (size_t k = 0; k < n; k++) m[k] = (unsigned char)(k * 3 + (size_t)i);
        clampi_mh_share_ref r;
        CHECK(clampi_mh_share(&shares, m, n, (uint64_t)i + 1, &r) == 0);
        moved += r.lo == lo && r.lo + r.len == hi;
        int bad = 0;
        for (size_t k = 0; k < n; k++) bad += m[k] != (unsigned char)(k * 3 + (size_t)i);
        CHECK(bad == 0);
        m[0] ^= 0xff; /* a write through the file mapping, kept after the release */
        clampi_mh_unshare(&shares, (uint64_t)i + 1);
        bad = m[0] != (unsigned char)((size_t)i ^ 0xff);
        for (size_t k = 1; k < n; k++) bad += m[k] != (unsigned char)(k * 3 + (size_t)i);
        CHECK(bad == 0);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    CHECK(moved == 2000); /* every page of the block, edges included */
    printf("increments: %llu and %llu made, %llu and %llu kept\n", (unsigned long long)done1, (unsigned long long)done2,
           (unsigned long long)*c1, (unsigned long long)*c2);
    CHECK(*c1 == done1 && *c2 == done2);

    /* Two live handles whose blocks share a page: the second does not move that page (a
     * 64-byte block: nothing at all). */
    unsigned char *b2, *a2, *x = block_between(3 * PAGE, &b2, &a2);
    CHECK(x != NULL);
    clampi_mh_share_ref rx, ry;
    CHECK(clampi_mh_share(&shares, x, 3 * PAGE, 9001, &rx) == 0);
    CHECK(rx.lo == ((uintptr_t)x & ~(PAGE - 1)) && rx.len == 4 * PAGE);
    CHECK(clampi_mh_share(&shares, a2, 64, 9002, &ry) == -1);
    clampi_mh_unshare(&shares, 9001);
    CHECK(clampi_mh_share(&shares, a2, 64, 9003, &ry) == 0); /* alone now: its page moves */
    CHECK(ry.lo == ((uintptr_t)a2 & ~(PAGE - 1)) && ry.len == PAGE);
    clampi_mh_unshare(&shares, 9003);
    /* Someone else's userfaultfd on the first page: no guard there, the whole pages alone. */
    int ufd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (ufd < 0) ufd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | 1 /* UFFD_USER_MODE_ONLY */);
    CHECK(ufd >= 0);
    struct uffdio_api api = {.api = UFFD_API};
    CHECK(ioctl(ufd, UFFDIO_API, &api) == 0);
    struct uffdio_register reg = {.range = {.start = (uintptr_t)x & ~(PAGE - 1), .len = PAGE},
                                  .mode = UFFDIO_REGISTER_MODE_MISSING};
    CHECK(ioctl(ufd, UFFDIO_REGISTER, &reg) == 0);
    for (size_t k = 0; k < 3 * PAGE; k++) x[k] = (unsigned char)(k * 5);
    CHECK(clampi_mh_share(&shares, x, 3 * PAGE, 9004, &rx) == 0);
    CHECK(rx.lo == (((uintptr_t)x + PAGE - 1) & ~(PAGE - 1)) && rx.len == 2 * PAGE);
    clampi_mh_unshare(&shares, 9004);
    close(ufd);
    for (size_t k = 0; k < 3 * PAGE; k++) CHECK(x[k] == (unsigned char)(k * 5));

    /* fork while shared: the child's writes do not reach the parent, nor the parent's the child */
    for (size_t k = 0; k < n; k++) m[k] = (unsigned char)(k + 11);
    *c1 = 5;
    clampi_mh_share_ref rf;
    CHECK(clampi_mh_share(&shares, m, n, 7001, &rf) == 0 && rf.lo == lo);
    int go[2], done[2];
    CHECK(pipe(go) == 0 && pipe(done) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        char c;
        int bad = 0;
        for (size_t k = 0; k < n; k++) bad += m[k] != (unsigned char)(k + 11);
        bad += *c1 != 5;
        m[0] = 0x77, m[n - 1] = 0x77, *c1 = 77;
        if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) != 1) _exit(3);
        bad += m[0] != 0x77 || m[n / 2] != (unsigned char)(n / 2 + 11) || *c1 != 77; /* the parent's writes: not here */
        _exit(bad ? 1 : 0);
    }
    char c;
    CHECK(read(done[0], &c, 1) == 1);
    CHECK(m[0] == 11 && m[n - 1] == (unsigned char)(n - 1 + 11) && *c1 == 5);
    m[n / 2] = 0x55, *c1 = 6;
    CHECK(write(go[1], "x", 1) == 1);
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    clampi_mh_unshare(&shares, 7001);
    CHECK(m[0] == 11 && m[n / 2] == 0x55 && *c1 == 6);
    printf("test_mh_share_heap: ok\n");
    return 0;
}
