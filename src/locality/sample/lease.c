/* Pages opened ahead of a thread's sequential first touches ("leases"), kept exact with
 * memory protection keys.
 *
 * A first touch costs a fault (about 5 us), so a program that first-touches large arrays
 * in short runs spends most of its time in the handler. When a thread first-touches
 * pages in order, the handler opens the next pages of the same allocation for that
 * thread alone: they get the thread's own protection key, which every other thread's
 * PKRU register denies. The owner runs through them without faulting; any other thread
 * that touches one faults (SEGV_PKUERR) and settles the lease first. Settling takes the
 * pages back (PROT_NONE, key 0) and asks the kernel which of them are present
 * (mincore): on private anonymous memory a page is present only when it was touched, and
 * only the owner could touch it, so those pages were first-touched by the owner. The
 * others are untouched again (unless a fault or a system call wrapper opened them meanwhile). First-touch threads stay exact; a settled page's location
 * and time are those of the fault that opened the lease (a streaming loop's one
 * instruction). A lease is settled when its owner's streak passes its end, when another
 * thread touches it, when its allocation is freed, and before the output is written.
 *
 * Only the tracked heap arena takes leases (private anonymous memory; a shared mapping's
 * page can be present because another process touched it). Without protection keys
 * (CPU, kernel) or with CLAMPI_LOCALITY_SAMPLE_AHEAD=0 every first touch faults.
 * Async-signal-safe: atomics, pkey_mprotect, mprotect, mincore. */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/wait.h"

#define MAX_KEYS 15 /* x86 has 16 keys; key 0 is everyone's */
#define MAX_LEASES 256
#define START_PAGES 4 /* a streak's first lease; doubled per lease up to ls.ahead_pages */
#define CHUNK 256     /* pages settled per mincore call (its vector is on the signal stack) */

enum { LEASE_FREE, LEASE_CLAIMED, LEASE_ACTIVE, LEASE_SETTLING };

typedef struct lease {
    _Atomic int state;
    int owner; /* thread id */
    int32_t alloc;
    uintptr_t lo, hi; /* pages [lo, hi) */
    uintptr_t ip;     /* the fault that opened it: the settled pages' first-touch location */
    uintptr_t frames[CLAMPI_LP_FRAMES];
    uint32_t stack;
    uint64_t ns;      /* CLOCK_REALTIME of that fault */
    uint64_t born_ns; /* CLOCK_MONOTONIC when it was opened (ls_lease_settle_older) */
} lease;

static lease leases[MAX_LEASES];
static int keys[MAX_KEYS];
static int nkeys;
static void child_after_fork(void);
static _Atomic int nactive; /* leases not FREE: lets every other path skip the table */
static atomic_flag create_lock = ATOMIC_FLAG_INIT;

/* A thread's streaks: the next page it would first-touch in each allocation it runs
 * through (one loop may initialize several arrays in turn), and the lease ahead. */
enum { STREAKS = 8 };
typedef struct streak {
    int32_t alloc; /* 1 + allocation index; 0 = empty */
    uintptr_t next;
    uint32_t pages;
    int lease; /* 1 + index into leases, 0 = none */
} streak;
static __thread streak streaks[STREAKS] __attribute__((tls_model("initial-exec")));
static __thread unsigned streak_next __attribute__((tls_model("initial-exec")));

/* The calling thread's key, once its rights are set (a thread that did not start
 * through pthread_create has its creator's rights, not its own: no leases for it). */
static __thread int my_key __attribute__((tls_model("initial-exec"))) = -1;

/* The calling thread's rights: its own key, none of the others'. */
static void set_rights(int tid) {
    for (int i = 0; i < nkeys; i++) pkey_set(keys[i], i == tid ? 0 : PKEY_DISABLE_ACCESS);
    my_key = tid >= 0 && tid < nkeys ? keys[tid] : -1;
}

void ls_lease_init(void) {
    if (ls.ahead_pages == 0) return;
    while (nkeys < MAX_KEYS) {
        int k = pkey_alloc(0, PKEY_DISABLE_ACCESS);
        if (k < 0) break;
        keys[nkeys++] = k;
    }
    set_rights(ls_thread_id());
    if (nkeys) pthread_atfork(NULL, NULL, child_after_fork);
}

int ls_lease_enabled(void) { return nkeys > 0; }

void ls_lease_handler_rights(void) {
    if (my_key >= 0) set_rights(ls_thread_id());
}

void ls_lease_thread_start(int tid) {
    if (nkeys) set_rights(tid);
}

/* Takes the lease's pages back and records the present ones as the owner's first
 * touches. Returns when the lease is settled (by this call or a concurrent one). */
static void settle_locked(lease *l);

/* A signal handler that touches the lease being settled would wait for this very settle:
 * no signal is delivered during one (the fault handler blocks them all already). */
static void settle(lease *l) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    settle_locked(l);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void settle_locked(lease *l) {
    int st;
    for (unsigned polls = 0; (st = atomic_load(&l->state)) == LEASE_CLAIMED;) /* being opened: its keys are set */
        if (!clampi_wait_pause(&polls, 1024)) clampi_cpu_relax();
    if (st != LEASE_ACTIVE || !atomic_compare_exchange_strong(&l->state, &st, LEASE_SETTLING)) {
        for (unsigned polls = 0; atomic_load(&l->state) == LEASE_SETTLING;)
            if (!clampi_wait_pause(&polls, 1024)) clampi_cpu_relax();
        return;
    }
    const clampi_lalloc *a = &ls.allocs[l->alloc];
    const int prot = a->prot;
    /* revoke first: from here on nobody can touch the pages, so "present" is final */
    pkey_mprotect((void *)l->lo, l->hi - l->lo, PROT_NONE, 0);
    atomic_fetch_add_explicit(&ls.cost.lease_settles, 1, memory_order_relaxed);
    for (uintptr_t c = l->lo; c < l->hi; c += CHUNK * ls.sys_page) {
        uintptr_t end = c + CHUNK * ls.sys_page < l->hi ? c + CHUNK * ls.sys_page : l->hi;
        unsigned char vec[CHUNK];
        size_t n = (end - c) / ls.sys_page;
        if (mincore((void *)c, end - c, vec) != 0) memset(vec, 0, n);
        clampi_lpage *recs[CHUNK];
        for (size_t i = 0; i < n; i++) {
            recs[i] = NULL;
            const uintptr_t pg = c + i * ls.sys_page;
            clampi_lpage *p = (vec[i] & 1) ? clampi_ltab_get(&ls.tab, pg) : clampi_ltab_find(&ls.tab, pg);
            if (!p) continue;
            /* a handler opening the page right now (BUSY) sets it OPEN after its mprotect,
             * which the revoke may have undone: wait for it, then treat it as OPEN */
            uint32_t ps = ls_page_wait_busy(p, pg, prot);
            if (ps == CLAMPI_LP_UNTOUCHED && (vec[i] & 1) &&
                atomic_compare_exchange_strong(&p->state, &ps, CLAMPI_LP_BUSY)) {
                p->alloc = l->alloc;
                p->prot = prot;
                if (clampi_ltab_first_touch(&ls.tab, p, l->owner, l->ip, l->frames, l->ns)) {
                    p->ft_stack = l->stack;
                    atomic_fetch_add_explicit(&ls.cost.lease_touched, 1, memory_order_relaxed);
                }
                recs[i] = p;
            } else if (ps == CLAMPI_LP_OPEN && atomic_compare_exchange_strong(&p->state, &ps, CLAMPI_LP_BUSY)) {
                /* opened meanwhile by another thread's fault or a system call wrapper,
                 * touched or not: open it stays */
                recs[i] = p;
            }
        }
        for (size_t i = 0; i < n;) { /* the present pages get the program's protection back, run by run */
            if (!recs[i]) {
                i++;
                continue;
            }
            size_t j = i;
            while (j < n && recs[j]) j++;
            mprotect((void *)(c + i * ls.sys_page), (j - i) * ls.sys_page, prot);
            atomic_fetch_add_explicit(&ls.cost.open_mprotects, 1, memory_order_relaxed);
            for (; i < j; i++) atomic_store(&recs[i]->state, CLAMPI_LP_OPEN);
        }
    }
    atomic_store(&l->state, LEASE_FREE);
    atomic_fetch_sub(&nactive, 1);
}

/* Opens up to `want` untouched pages after `page` in allocation a for thread tid.
 * Returns 1 + the lease's index, 0 if none was opened. */
static int open_ahead(clampi_lalloc *a, uintptr_t page, int tid, uint32_t want, const clampi_lpage *first) {
    const uintptr_t end = a->map_start + a->map_size;
    uintptr_t hi = page + ls.sys_page;
    for (uint32_t k = 0; k < want && hi < end; k++, hi += ls.sys_page) {
        const clampi_lpage *q = clampi_ltab_find(&ls.tab, hi);
        if (q && (atomic_load(&q->state) != CLAMPI_LP_UNTOUCHED || q->ft_seq)) break;
    }
    /* Leases never overlap (a settle revokes its whole range): the range ends where
     * another one begins. Creation is serialized for that; settling is not. */
    while (atomic_flag_test_and_set_explicit(&create_lock, memory_order_acquire)) clampi_cpu_relax();
    int free_at = -1;
    for (int i = 0; i < MAX_LEASES; i++) {
        const lease *o = &leases[i];
        int st = atomic_load(&o->state);
        if (st == LEASE_FREE) {
            if (free_at < 0) free_at = i;
        } else if (o->lo > page && o->lo < hi) {
            hi = o->lo;
        } else if (o->lo <= page + ls.sys_page && o->hi > page + ls.sys_page) {
            hi = page + ls.sys_page;
        }
    }
    if (hi == page + ls.sys_page || free_at < 0) {
        atomic_flag_clear_explicit(&create_lock, memory_order_release);
        return 0;
    }
    lease *l = &leases[free_at];
    l->owner = tid;
    l->alloc = (int32_t)(a - ls.allocs);
    l->lo = page + ls.sys_page;
    l->hi = hi;
    l->ip = first->ft_ip;
    memcpy(l->frames, first->ft_frames, sizeof l->frames);
    l->stack = first->ft_stack;
    l->ns = first->ft_ns;
    l->born_ns = ls_mono_ns();
    atomic_fetch_add(&nactive, 1);
    atomic_store(&l->state, LEASE_CLAIMED); /* published: faults and system call wrappers see it */
    if (pkey_mprotect((void *)l->lo, l->hi - l->lo, a->prot, my_key) != 0) {
        /* a partial change may have keyed some pages: take them back as a settle does */
        atomic_store(&l->state, LEASE_ACTIVE);
        atomic_flag_clear_explicit(&create_lock, memory_order_release);
        settle(l);
        return 0;
    }
    atomic_store(&l->state, LEASE_ACTIVE);
    atomic_flag_clear_explicit(&create_lock, memory_order_release);
    atomic_fetch_add_explicit(&ls.cost.leases, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ls.cost.lease_pages, (l->hi - l->lo) / ls.sys_page, memory_order_relaxed);
    /* A page another thread started to open after the scan above (a fault, a system call
     * wrapper) is not untouched: it must not stay under this thread's key. The other side
     * looks for a published lease after marking its page (ls_lease_holds), so one of the
     * two sees the other. */
    for (uintptr_t pg = l->lo; pg < l->hi; pg += ls.sys_page) {
        const clampi_lpage *q = clampi_ltab_find(&ls.tab, pg);
        if (q && (atomic_load(&q->state) != CLAMPI_LP_UNTOUCHED || q->ft_seq)) {
            settle(l);
            return 0;
        }
    }
    return free_at + 1;
}

static void settle_own(int idx, int tid) {
    if (idx == 0) return;
    lease *l = &leases[idx - 1];
    if (atomic_load(&l->state) == LEASE_ACTIVE && l->owner == tid) settle(l);
}

void ls_lease_after_first_touch(clampi_lalloc *a, uintptr_t page, int tid, const clampi_lpage *first) {
    if (my_key < 0 || a->unwatched || a->kind == CLAMPI_LA_MMAP || a->kind == CLAMPI_LA_STATIC) return;
    const int32_t ai = (int32_t)(a - ls.allocs) + 1;
    streak *s = NULL;
    for (int i = 0; i < STREAKS && !s; i++)
        if (streaks[i].alloc == ai && streaks[i].next == page) s = &streaks[i];
    uint32_t want = START_PAGES;
    if (s) { /* the streak goes on past its lease: settle it, open a longer one */
        settle_own(s->lease, tid);
        want = s->pages * 2 < ls.ahead_pages ? s->pages * 2 : ls.ahead_pages;
    } else {
        s = &streaks[streak_next++ % STREAKS];
        settle_own(s->lease, tid); /* the streak this slot held has ended */
        if (want > ls.ahead_pages) want = ls.ahead_pages;
    }
    s->alloc = ai;
    s->pages = want;
    s->lease = open_ahead(a, page, tid, want, first);
    s->next = s->lease ? leases[s->lease - 1].hi : page + ls.sys_page;
}

static lease *holding(uintptr_t addr) {
    for (int i = 0; i < MAX_LEASES; i++) {
        lease *l = &leases[i];
        int st = atomic_load(&l->state);
        if (st != LEASE_FREE && addr >= l->lo && addr < l->hi) return l;
    }
    return NULL;
}

int ls_lease_fault(uintptr_t addr) {
    if (atomic_load(&nactive) == 0) return 0;
    lease *l = holding(addr);
    if (!l) return 0;
    atomic_fetch_add_explicit(&ls.cost.lease_faults, 1, memory_order_relaxed);
    settle(l);
    return 1;
}

static void wait_settled(lease *l) {
    for (unsigned polls = 0; atomic_load(&l->state) == LEASE_SETTLING;)
        if (!clampi_wait_pause(&polls, 1024)) clampi_cpu_relax();
}

int ls_lease_wait(uintptr_t addr) {
    if (atomic_load(&nactive) == 0) return 0;
    lease *l = holding(addr);
    if (!l || atomic_load(&l->state) == LEASE_ACTIVE) return 0;
    settle(l); /* CLAIMED: settles it once open; SETTLING: waits for the other settle */
    return 1;
}

void ls_lease_settle_range(uintptr_t lo, uintptr_t hi, int except_tid) {
    if (atomic_load(&nactive) == 0) return;
    for (int i = 0; i < MAX_LEASES; i++) {
        lease *l = &leases[i];
        int st = atomic_load(&l->state);
        if (st == LEASE_FREE || l->hi <= lo || hi <= l->lo) continue;
        if (l->owner != except_tid)
            settle(l);
        else
            wait_settled(l); /* its own pages: only a settle in progress matters */
    }
}

void ls_lease_settle_all(void) { ls_lease_settle_range(0, UINTPTR_MAX, -1); }

int ls_lease_holds(uintptr_t addr) { return atomic_load(&nactive) != 0 && holding(addr) != NULL; }

void ls_lease_settle_older(uint64_t age_ns) {
    if (atomic_load(&nactive) == 0) return;
    const uint64_t now = ls_mono_ns();
    for (int i = 0; i < MAX_LEASES; i++) {
        lease *l = &leases[i];
        if (atomic_load(&l->state) == LEASE_ACTIVE && now - l->born_ns > age_ns) settle(l);
    }
}

/* A forked child has only the forking thread: a lease another thread was opening or
 * settling at the fork is finished here, as a settle would. */
static void child_after_fork(void) {
    atomic_flag_clear(&create_lock);
    for (int i = 0; i < MAX_LEASES; i++) {
        lease *l = &leases[i];
        int st = atomic_load(&l->state);
        if (st == LEASE_CLAIMED || st == LEASE_SETTLING) {
            atomic_store(&l->state, LEASE_ACTIVE);
            settle(l);
        }
    }
}
