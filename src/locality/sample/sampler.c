/* Access sampling, AutoNUMA style: every period a helper thread re-protects randomly
 * chosen touched pages; the next access to such a page faults and is a sample for the
 * faulting thread (fault.c). Which thread faults first estimates how the page's accesses
 * split among threads; how soon it faults after re-protection (delay d) estimates how
 * often the page is accessed. A page is re-protected about every I = period / q (q =
 * pages per round / touched pages), so one sample stands for I / d accesses: the
 * estimate the CSV reports. It counts access bursts (a loop's visits to the page), not
 * single loads and stores: pages are weighted by how often they are used. */
#define _GNU_SOURCE
#include "common/xorshift.h"
#include "locality/sample/sample.h"

#include <sys/mman.h>
#include <time.h>

#define MAX_OUTSTANDING 8192 /* bounds the extra VMAs (vm.max_map_count is 65530) */

/* Arms (re-protects) up to `run` OPEN pages of one allocation starting at p, with one
 * mprotect: removing access costs a TLB shootdown on every CPU running the program, so
 * it is paid once per run, not per page. The pages are BUSY meanwhile (a fault on one
 * waits). Returns the pages armed. */
static size_t arm_run(clampi_lpage *p, size_t run, uint64_t now) {
    const clampi_lalloc *a = &ls.allocs[p->alloc];
    if (a->freed || a->unwatched || p->prot == PROT_NONE) return 0;
    uintptr_t start = atomic_load(&p->key), end = start;
    clampi_lpage *pages[64];
    size_t k = 0;
    if (run > 64) run = 64;
    while (k < run && end < a->map_start + a->map_size) {
        clampi_lpage *q = k == 0 ? p : clampi_ltab_find(&ls.tab, end);
        uint32_t st = CLAMPI_LP_OPEN;
        if (!q || q->prot != p->prot || !atomic_compare_exchange_strong(&q->state, &st, CLAMPI_LP_BUSY)) break;
        atomic_store(&q->arm_ns, now);
        pages[k++] = q;
        end += ls.sys_page;
    }
    if (k == 0) return 0;
    uint64_t t0 = ls_mono_ns();
    int rc = mprotect((void *)start, end - start, PROT_NONE);
    atomic_fetch_add_explicit(&ls.cost.arm_mprotects, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ls.cost.arm_ns, ls_mono_ns() - t0, memory_order_relaxed);
    /* SAMPLED only once closed: a system call wrapper that opened a SAMPLED page between
     * the state change and this mprotect would have left it closed but marked OPEN, and
     * nobody opens an OPEN page again (the kernel's copy then fails for good) */
    if (rc == 0) atomic_fetch_add(&ls.outstanding, (int)k);
    for (size_t i = 0; i < k; i++) atomic_store(&pages[i]->state, rc == 0 ? CLAMPI_LP_SAMPLED : CLAMPI_LP_OPEN);
    return rc == 0 ? k : 0;
}

static void round_once(uint64_t *rng, uint64_t round_ns) {
    size_t n = atomic_load(&ls.tab.ntouched);
    if (n > ls.tab.page_cap) n = ls.tab.page_cap;
    if (n == 0) return;
    size_t budget = ls.pages_per_round < n ? ls.pages_per_round : n;
    size_t run = ls.run_pages ? ls.run_pages : 1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    atomic_store(&ls.arm_interval_ns, (uint64_t)((double)round_ns * (double)n / (double)budget));
    size_t armed = 0;
    for (size_t tries = 0; armed < budget && tries < 2 * budget && atomic_load(&ls.outstanding) < MAX_OUTSTANDING;
         tries += run) {
        clampi_lpage *p = clampi_ltab_slot(&ls.tab, ls.tab.touched[clampi_xorshift64(rng) % n]);
        armed += arm_run(p, budget - armed < run ? budget - armed : run, now);
    }
    atomic_fetch_add(&ls.rounds, 1);
    atomic_fetch_add(&ls.protected_pages, armed);
}

static uint64_t clock_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A round every period of wall time in which the program also used at least a period of
 * CPU time: on a loaded machine (or a program that waits) the sampler slows down with
 * the program instead of taking more samples per unit of its work. */
static void *sampler_main(void *arg) {
    (void)arg;
    ls_lease_thread_start(-1); /* not a program thread: no rights to any thread's key */
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)ls.pid;
    uint64_t period = (uint64_t)ls.period_ms * 1000000ull;
    struct timespec ts = {.tv_sec = ls.period_ms / 1000, .tv_nsec = (long)(ls.period_ms % 1000) * 1000000L};
    uint64_t last_wall = clock_ns(CLOCK_MONOTONIC), last_cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    while (!atomic_load(&ls.sampler_stop)) {
        nanosleep(&ts, NULL);
        /* a streak's last run of pages opened ahead is settled by nobody else until
         * another thread touches it: its pages are then neither sampled nor readable by
         * other threads' system calls (lease.c) */
        ls_lease_settle_older(2 * period);
        uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        if (atomic_load(&ls.sampler_stop) || cpu - last_cpu < period) continue;
        uint64_t wall = clock_ns(CLOCK_MONOTONIC);
        round_once(&rng, wall - last_wall);
        last_wall = wall;
        last_cpu = cpu;
    }
    return NULL;
}

void ls_sampler_start(void) {
    if (ls.period_ms == 0 || ls.pages_per_round == 0) return;
    ls.sampler_running = ls_spawn_helper(&ls.sampler, sampler_main, NULL) == 0;
}

void ls_sampler_stop(void) {
    atomic_store(&ls.sampler_stop, 1);
    if (ls.sampler_running) {
        pthread_join(ls.sampler, NULL);
        ls.sampler_running = 0;
    }
}

/* The page's mean delay is shrunk toward the mean over all pages (SHRINK pseudo-samples):
 * a page with one or two samples has a very noisy delay, and weighting it by that alone
 * lets a few pages dominate a structure's totals. */
#define SHRINK 8.0
double ls_count_factor(const clampi_lpage *rec, void *arg) {
    (void)arg;
    uint64_t n = atomic_load(&rec->delay_n), sum = atomic_load(&rec->delay_sum_ns);
    uint64_t gn = atomic_load(&ls.delay_n), gsum = atomic_load(&ls.delay_sum_ns);
    double gmean = gn ? (double)gsum / (double)gn : 0;
    double mean = (double)sum + SHRINK * gmean;
    mean /= (double)n + SHRINK;
    if (mean < 1000.0) mean = 1000.0; /* signal delivery: about a microsecond */
    double f = (double)atomic_load(&ls.arm_interval_ns) / mean;
    return f < 1.0 ? 1.0 : f;
}
