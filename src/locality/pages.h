/* Page bookkeeping of the locality sampler (MPI-free engine, async-signal-safe).
 *
 * Two lock-free open-addressing hash tables over caller-provided memory:
 * - page records, one per system page that was touched: state (who protects it), first
 *   touch (thread, instruction address, global order, time), owning allocation;
 * - access counters, one per (page, thread): samples taken by the sampler.
 * Insertion is a CAS on the key; nothing is ever removed; no malloc, no locks, so the
 * SIGSEGV handler can use every function here. A full table drops new entries and counts
 * them (`dropped`), it never blocks. */
#ifndef CLAMPI_LOCALITY_PAGES_H
#define CLAMPI_LOCALITY_PAGES_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Who owns the protection of a page (page record `state`). */
enum {
    CLAMPI_LP_UNTOUCHED = 0, /* never touched: PROT_NONE since allocation */
    CLAMPI_LP_BUSY = 1,      /* a fault handler or the sampler is switching it (others wait) */
    CLAMPI_LP_OPEN = 2,      /* program's own protection: accesses run at full speed */
    CLAMPI_LP_SAMPLED = 3,   /* re-protected by the sampler: next access is a sample */
};

#define CLAMPI_LP_FRAMES 3

typedef struct clampi_lpage {
    _Atomic uintptr_t key;                 /* system page address; 0 = empty slot */
    _Atomic uint32_t state;                /* CLAMPI_LP_* */
    int32_t alloc;                         /* allocation holding the page (set with the first touch) */
    int32_t ft_thread;                     /* first-touching thread (valid when ft_seq != 0) */
    int32_t prot;                          /* protection to restore when opening the page */
    uintptr_t ft_ip;                       /* instruction that made the first touch */
    uintptr_t ft_frames[CLAMPI_LP_FRAMES]; /* callers in the program when the touch happened
                                 * inside a library (memset, clampi's allocators); 0-ended */
    uint32_t ft_stack;                     /* sampler: 1 + index of the whole first-touch stack in its
                                 * stack pool (deeper than ft_frames), 0 = none */
    uint64_t ft_seq;                       /* global first-touch order (1, 2, ...); 0 = not touched */
    uint64_t ft_ns;                        /* CLOCK_REALTIME of the first touch (orders ranks) */
    _Atomic uint64_t arm_ns;               /* CLOCK_MONOTONIC when the sampler last re-protected it */
    _Atomic uint64_t delay_sum_ns;         /* sum over samples of (fault time - arm_ns) */
    _Atomic uint64_t delay_n;              /* samples taken (the counters hold who took them) */
    uint64_t pfn;                          /* physical frame (shared mappings, read before unmapping) */
} clampi_lpage;

typedef struct clampi_lcount {
    _Atomic uint64_t key; /* page | thread (thread < 4096 in the low bits); 0 empty */
    _Atomic uint64_t n;
} clampi_lcount;

typedef struct clampi_ltab {
    clampi_lpage *pages;
    size_t page_cap; /* power of two */
    clampi_lcount *counts;
    size_t count_cap;  /* power of two */
    uint32_t *touched; /* page slots in first-touch order, for the sampler */
    _Atomic size_t ntouched;
    _Atomic size_t npages; /* records in use (at most 3/4 of page_cap) */
    _Atomic uint64_t seq;
    _Atomic uint64_t dropped; /* records or counters lost to a full table */
} clampi_ltab;

#define CLAMPI_LTAB_MAX_THREADS 4096

/* Bytes of memory clampi_ltab_init needs for the given capacities (rounded up to powers
 * of two; the memory must be zeroed, e.g. fresh anonymous mmap). */
size_t clampi_ltab_bytes(size_t max_pages, size_t max_counts);
void clampi_ltab_init(clampi_ltab *t, void *zeroed_mem, size_t max_pages, size_t max_counts);

/* The record of a system page, or NULL. */
clampi_lpage *clampi_ltab_find(const clampi_ltab *t, uintptr_t page);
/* Finds or inserts (state UNTOUCHED, no first touch); NULL when the table is full. */
clampi_lpage *clampi_ltab_get(clampi_ltab *t, uintptr_t page);

/* Records the first touch if none was recorded yet; returns 1 if this call recorded it. */
int clampi_ltab_first_touch(clampi_ltab *t, clampi_lpage *p, int thread, uintptr_t ip, const uintptr_t *frames,
                            uint64_t ns);

/* Access counters per (page, thread). */
void clampi_ltab_count_add(clampi_ltab *t, uintptr_t page, int thread, uint64_t n);
uint64_t clampi_ltab_count_get(const clampi_ltab *t, uintptr_t page, int thread);

/* Slot index <-> record (for the sampler's list of touched pages). */
static inline clampi_lpage *clampi_ltab_slot(const clampi_ltab *t, uint32_t slot) { return &t->pages[slot]; }
#endif
