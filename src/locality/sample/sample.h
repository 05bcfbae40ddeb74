/* libclampi_locality_sample: the `clampi-locality run --sample` preload library.
 *
 * How it works (docs/locality-sampler.md has the user's view):
 * - Tracked allocations (malloc family, C++ new, mmap of at least CLAMPI_LOCALITY_MIN_SIZE
 *   bytes) are served from a reserved PROT_NONE arena (mmap: the program's own mapping,
 *   protected), page-aligned and never reused, so each page belongs to one allocation.
 * - The first access to a page faults: the SIGSEGV handler records thread and faulting
 *   instruction (exact first touch) and opens the page.
 * - A sampler thread re-protects random touched pages every period (AutoNUMA style); the
 *   next access faults again and counts one sample for that thread and page.
 * - At exit (on_exit) or on a fatal signal the CSV/JSON of docs/locality-format.md is
 *   written; at a normal exit instruction addresses are resolved to file:line with
 *   addr2line (binutils).
 * This header is the library's internal interface between its files. */
#ifndef CLAMPI_LOCALITY_SAMPLE_H
#define CLAMPI_LOCALITY_SAMPLE_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "clampi/export.h"
#include "locality/allocs.h"
#include "locality/pages.h"

#define LS_MAX_THREADS 1024
#define LS_STACK_DEPTH 24
#define LS_MAX_STACKS (1u << 16)

typedef struct ls_thread {
    _Atomic int used;
    _Atomic int alive;
    clockid_t clock;         /* CLOCK_THREAD_CPUTIME_ID of the thread, while alive */
    _Atomic uint64_t cpu_ns; /* final CPU time, recorded when the thread ends */
    char creator[48];        /* file name of the module whose code created it ("": main, not seen starting) */
} ls_thread;

/* Where the sampler's time goes: counted in the handler, the sampler
 * thread and the allocator, written to the JSON as "sampler_cost". Times are
 * CLOCK_MONOTONIC ns (vDSO: about 20 ns a reading). */
typedef struct ls_cost {
    _Atomic uint64_t ft_faults, ft_ns;            /* first-touch faults, time in the handler for them */
    _Atomic uint64_t sample_faults, sample_ns;    /* sample faults, time in the handler for them */
    _Atomic uint64_t busy_faults;                 /* faults on a page another thread was opening */
    _Atomic uint64_t retry_faults;                /* faults on an open page (opened meanwhile) */
    _Atomic uint64_t unwinds, unwind_ns;          /* backtrace() of a first touch (cache misses) */
    _Atomic uint64_t unwinds_cached;              /* first touches whose stack came from the cache */
    _Atomic uint64_t open_mprotects, open_ns;     /* mprotect opening a page in the handler */
    _Atomic uint64_t arm_mprotects, arm_ns;       /* sampler thread: re-protection calls, time */
    _Atomic uint64_t alloc_unwinds, alloc_ns;     /* tracked allocations: backtrace + bookkeeping */
    _Atomic uint64_t frees, free_ns;              /* tracked frees: madvise + mprotect (or parking) */
    _Atomic uint64_t reused, reused_bytes;        /* allocations served from a parked block of the same site */
    _Atomic uint64_t parked_bytes, parked_peak;   /* bytes parked now, at most */
    _Atomic uint64_t released_parked;             /* parked blocks given back (park table or byte cap full) */
    _Atomic uint64_t leases, lease_pages;         /* pages opened ahead of a streak (lease.c): leases, pages */
    _Atomic uint64_t lease_touched;               /* of those, first-touched by their owner */
    _Atomic uint64_t lease_settles, lease_faults; /* leases settled; of them, by another thread's fault */
    uint64_t resolve_ns;                          /* addr2line at exit */
    uint64_t out_start_ns;                        /* output: when the writer started (CSV before JSON) */
} ls_cost;

static inline uint64_t ls_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct ls_state {
    _Atomic int ready; /* constructor done: wrappers may track */
    int pid;
    int rank;
    size_t sys_page;
    size_t page_size;         /* CLAMPI_LOCALITY_PAGE_SIZE */
    size_t min_size;          /* CLAMPI_LOCALITY_MIN_SIZE */
    char out_dir[384];        /* CLAMPI_LOCALITY_OUT */
    unsigned period_ms;       /* CLAMPI_LOCALITY_SAMPLE_PERIOD_MS (0: no access sampling) */
    unsigned pages_per_round; /* CLAMPI_LOCALITY_SAMPLE_PAGES */
    unsigned run_pages;       /* CLAMPI_LOCALITY_SAMPLE_RUN: contiguous pages armed together */
    unsigned ahead_pages;     /* CLAMPI_LOCALITY_SAMPLE_AHEAD: most pages of one lease (lease.c) */

    clampi_ltab tab;

    /* the arena of tracked heap allocations */
    uintptr_t arena_lo, arena_hi;
    uintptr_t arena_next; /* under alloc_lock */

    /* allocations: records, then two index lists (arena ones in address order, mmaps) */
    clampi_lalloc *allocs;
    size_t alloc_cap;
    _Atomic size_t nallocs;
    uint32_t *arena_idx;
    _Atomic size_t narena;
    uint32_t *mmap_idx;
    _Atomic size_t nmmap;
    uint32_t *scratch; /* for the writer's sort */
    pthread_mutex_t alloc_lock;

    ls_thread threads[LS_MAX_THREADS];
    _Atomic int nthreads;

    /* sampler */
    pthread_t sampler;
    _Atomic int sampler_stop;
    int sampler_running;
    _Atomic uint64_t rounds, samples, protected_pages;
    _Atomic uint64_t delay_sum_ns, delay_n; /* over all samples */
    _Atomic uint64_t arm_interval_ns;       /* expected time between two re-protections of a page */
    _Atomic int outstanding;                /* pages re-protected and not yet faulted */

    /* first-touch call stacks: one per distinct (ip, sp, [sp]) unwind,
     * LS_STACK_DEPTH program frames each (libstdc++ templates at -O0 are 8 deep) */
    uintptr_t (*stacks)[LS_STACK_DEPTH];
    _Atomic uint32_t nstacks;
    uint32_t stack_cap;
    _Atomic uint64_t stacks_dropped; /* pool full: those pages keep ft_frames only */

    size_t max_pages;     /* CLAMPI_LOCALITY_MAX_PAGES (page table size, power of two) */
    size_t page_capacity; /* page records usable (3/4 of the table) */
    size_t memory_bound;  /* bytes of all the sampler's tables (virtual, touched as used) */
    _Atomic uint64_t allocs_untracked, bytes_untracked; /* allocation table or arena full */
    _Atomic uint32_t static_objects;                    /* the executable's static objects tracked (statics.c) */

    ls_cost cost;

    int pagemap_fd; /* /proc/self/pagemap, -1 if not readable */
    int argc;
    char **argv;
    _Atomic int finished;
} ls_state;

extern ls_state ls;
extern __thread int ls_in_lib;
int ls_is_system_code(uintptr_t ip); /* in a /lib, /usr/lib or libclampi library; signal-safe */
int ls_is_library_code(uintptr_t ip);
/* the same: where a first touch is attributed to the caller */ /* the library allocates for itself: do not track */

/* threads.c */
int ls_thread_id(void); /* caller's id (0 main, 1.. creation order); async-signal-safe */
void ls_thread_main_init(void);
void ls_thread_work(uint64_t *work, int n); /* CPU ns per thread */
/* The module that created each thread ("": main thread, not seen starting): the report
 * leaves MPI's, UCX's and other runtimes' threads out of the load imbalance by it. */
void ls_thread_creators(const char **module, int n);
int ls_spawn_helper(pthread_t *th, void *(*fn)(void *), void *arg);

/* alloc.c: tracked allocation table */
clampi_lalloc *ls_alloc_find(uintptr_t addr); /* live or freed allocation holding addr; signal-safe */
int ls_alloc_init(void);
uint32_t ls_alloc_add(const clampi_lalloc *a, int in_arena); /* caller holds alloc_lock */
void ls_frames(clampi_lalloc *a, void *ret0);                /* allocation call stack */

/* fault.c */
int ls_fault_init(void);
void ls_touch_range(const void *p, size_t n, uintptr_t ip); /* first-touch/sample as if accessed */
void ls_open_page(clampi_lpage *p, uintptr_t page, int prot);
/* Waits while another thread opens the page (state BUSY); returns the state after. In a
 * forked child, whose opening thread did not survive the fork, it opens the page itself. */
uint32_t ls_page_wait_busy(clampi_lpage *p, uintptr_t page, int prot);

/* lease.c: pages opened ahead of a thread's sequential first touches, under its own
 * protection key */
void ls_lease_init(void);            /* the process's keys; the calling (main) thread's rights */
void ls_lease_thread_start(int tid); /* a new thread's rights: its own key only */
int ls_lease_enabled(void);          /* protection keys in use */
void ls_lease_handler_rights(void);  /* in a signal handler: the thread's rights again */
void ls_lease_after_first_touch(clampi_lalloc *a, uintptr_t page, int tid, const clampi_lpage *first);
int ls_lease_fault(uintptr_t addr); /* SEGV_PKUERR: settles the lease holding addr; 0 if none */
/* SEGV_ACCERR: 1 after waiting for a settle of the lease holding addr (its pages were
 * taken back for the settle and are not untouched: the access is to be retried) */
int ls_lease_wait(uintptr_t addr);
void ls_lease_settle_range(uintptr_t lo, uintptr_t hi, int except_tid);
/* 1 if a lease (open or being opened or settled) holds addr. A first touch about to be
 * recorded asks this after its page's state won UNTOUCHED -> BUSY: the owner may have
 * touched the page first, so the caller puts the state back, settles (ls_lease_fault)
 * and retries. */
int ls_lease_holds(uintptr_t addr);
void ls_lease_settle_older(uint64_t age_ns); /* sampler thread: leases open that long */
void ls_lease_settle_all(void);

/* sampler.c */
void ls_statics_init(void); /* the executable's .data/.bss objects (statics.c) */
void ls_write_maps(void);   /* DIR/rank<R>.maps: load bases for hex locations; signal-safe */

void ls_sampler_start(void);
void ls_sampler_stop(void);
double ls_count_factor(const clampi_lpage *rec, void *arg); /* samples -> estimated accesses */

/* report.c */
void ls_write_output(int complete, int has_status, int status, const char *signame, int resolve);

/* source.c: a source file read once at exit (NULL: unreadable); its line (1-based, with its
 * newline, cut to n - 1 characters: 0 past the end), its whole text and its number of lines
 * (0 for NULL). */
typedef struct ls_source ls_source;
const ls_source *ls_source_open(const char *path);
int ls_source_line(const ls_source *s, int line, char *buf, size_t n);
const char *ls_source_text(const ls_source *s);
int ls_source_lines(const ls_source *s);

/* resolve.c: instruction addresses to file:line, struct names from source lines */
void ls_resolve_run(void); /* addr2line over every recorded address (at exit, not in a signal) */
const char *ls_resolve_loc(uintptr_t ip, void *arg, char *buf, size_t n);
const char *ls_resolve_name(const clampi_lalloc *a, void *arg, char *buf, size_t n);
const char *ls_resolve_alloc_loc(const clampi_lalloc *a, void *arg, char *buf, size_t n);
const char *ls_resolve_ft_loc(const clampi_lpage *p, void *arg, char *buf, size_t n);

uint64_t ls_pfn_of(uintptr_t page); /* physical frame of a present page, else 0 */

/* real libc entry points */
void *ls_real_mmap(void *addr, size_t len, int prot, int flags, int fd, long off);
int ls_real_munmap(void *addr, size_t len);
#endif
