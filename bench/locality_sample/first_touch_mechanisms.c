/* What one exact first touch costs, by mechanism, without the sampler around it: N pages
 * first-written one after the other, each caught by a signal handler that opens the page
 *   mprotect     PROT_NONE pages, SIGSEGV, mprotect(PROT_READ|PROT_WRITE) (the sampler's way)
 *   uffd_zero    userfaultfd (missing pages, UFFD_FEATURE_SIGBUS), SIGBUS, UFFDIO_ZEROPAGE
 *   uffd_copy    the same with UFFDIO_COPY of a zero page
 * against a plain first write of an anonymous page. Needs userfaultfd (root, or
 * vm.unprivileged_userfaultfd=1) for the uffd lines.
 *   first_touch_mechanisms [PAGES (24576)] [ROUNDS (5)]
 * Prints per round: mechanism us_per_page plain_us_per_page */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int uffd = -1, mode;
static const long PS = 4096;
static char zero[4096] __attribute__((aligned(4096)));

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void handler(int sig, siginfo_t *si, void *uc) {
    (void)sig, (void)uc;
    const unsigned long p = (unsigned long)si->si_addr & ~(unsigned long)(PS - 1);
    if (mode == 0) {
        mprotect((void *)p, (size_t)PS, PROT_READ | PROT_WRITE);
    } else if (mode == 1) {
        struct uffdio_zeropage z = {.range = {p, (unsigned long)PS}, .mode = 0};
        if (ioctl(uffd, UFFDIO_ZEROPAGE, &z)) _exit(3);
    } else {
        struct uffdio_copy c = {.dst = p, .src = (unsigned long)zero, .len = (unsigned long)PS, .mode = 0};
        if (ioctl(uffd, UFFDIO_COPY, &c)) _exit(4);
    }
}

static double touch(char *a, long n) {
    const double t0 = now();
    for (long i = 0; i < n; i++) a[i * PS] = 1;
    return (now() - t0) * 1e6 / (double)n;
}

int main(int argc, char **argv) {
    const long n = argc > 1 ? atol(argv[1]) : 24576;
    const int rounds = argc > 2 ? atoi(argv[2]) : 5;
    const size_t len = (size_t)n * (size_t)PS;
    const char *name[] = {"mprotect", "uffd_zero", "uffd_copy"};
    struct sigaction sa = {0};
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    for (int r = 0; r < rounds; r++)
        for (mode = 0; mode < 3; mode++) {
            char *a = mmap(NULL, len, mode == 0 ? PROT_NONE : PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (a == MAP_FAILED) return 1;
            if (mode > 0) {
                if (uffd < 0) {
                    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
                    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_SIGBUS};
                    if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
                        perror("userfaultfd");
                        return 2;
                    }
                }
                struct uffdio_register reg = {.range = {(unsigned long)a, len}, .mode = UFFDIO_REGISTER_MODE_MISSING};
                if (ioctl(uffd, UFFDIO_REGISTER, &reg)) return 2;
            }
            const double caught = touch(a, n);
            char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            const double plain = touch(b, n);
            printf("%-10s us_per_page=%.3f plain_us_per_page=%.3f\n", name[mode], caught, plain);
            munmap(a, len);
            munmap(b, len);
        }
    return 0;
}
