/* Lock-free page and counter tables of the locality sampler (see pages.h). */
#include "locality/pages.h"

static size_t pow2_at_least(size_t n) {
    size_t p = 64;
    while (p < n) p <<= 1;
    return p;
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* First slot of a page: runs of 64 consecutive 4 KiB pages get 64 consecutive slots at a
 * hashed place. A hash of each page alone scattered the records of a
 * contiguous array over the whole table, so every touched page made another page of the
 * table resident (advect1d: +110 MB, 1.9x the program's resident size); this way the
 * table's resident part is about 3 % of the touched memory, and the probe sequences stay
 * short as long as the table is at most 3/4 full. */
static size_t page_slot(uintptr_t page, size_t mask) {
    uint64_t idx = (uint64_t)page >> 12;
    return (size_t)((mix(idx >> 6) << 6) | (idx & 63)) & mask;
}

/* Counters: four consecutive slots per page (threads 0-3; more threads probe on), pages
 * placed as page_slot does, for the same reason. */
static size_t count_slot(uintptr_t page, int thread, size_t mask) {
    return ((page_slot(page, mask >> 2) << 2) + (size_t)(thread & 3)) & mask;
}

size_t clampi_ltab_bytes(size_t max_pages, size_t max_counts) {
    size_t np = pow2_at_least(max_pages), nc = pow2_at_least(max_counts);
    return np * sizeof(clampi_lpage) + nc * sizeof(clampi_lcount) + np * sizeof(uint32_t);
}

void clampi_ltab_init(clampi_ltab *t, void *mem, size_t max_pages, size_t max_counts) {
    t->page_cap = pow2_at_least(max_pages);
    t->count_cap = pow2_at_least(max_counts);
    t->pages = mem;
    t->counts = (clampi_lcount *)(t->pages + t->page_cap);
    t->touched = (uint32_t *)(t->counts + t->count_cap);
    atomic_init(&t->ntouched, 0);
    atomic_init(&t->npages, 0);
    atomic_init(&t->seq, 0);
    atomic_init(&t->dropped, 0);
}

clampi_lpage *clampi_ltab_find(const clampi_ltab *t, uintptr_t page) {
    size_t mask = t->page_cap - 1;
    for (size_t i = page_slot(page, mask), n = 0; n < t->page_cap; i = (i + 1) & mask, n++) {
        uintptr_t k = atomic_load_explicit(&t->pages[i].key, memory_order_acquire);
        if (k == page) return &t->pages[i];
        if (k == 0) return NULL;
    }
    return NULL;
}

clampi_lpage *clampi_ltab_get(clampi_ltab *t, uintptr_t page) {
    size_t mask = t->page_cap - 1;
    for (size_t i = page_slot(page, mask), n = 0; n < t->page_cap; i = (i + 1) & mask, n++) {
        clampi_lpage *p = &t->pages[i];
        uintptr_t k = atomic_load_explicit(&p->key, memory_order_acquire);
        if (k == 0) {
            /* Keep a quarter free: probe sequences stay short. */
            if (atomic_fetch_add(&t->npages, 1) >= t->page_cap - t->page_cap / 4) {
                atomic_fetch_sub(&t->npages, 1);
                break;
            }
            /* Fields are written before the key is published; a loser of the CAS reads
             * the winner's key and goes on comparing. */
            if (atomic_compare_exchange_strong_explicit(&p->key, &k, page, memory_order_acq_rel, memory_order_acquire))
                return p;
            atomic_fetch_sub(&t->npages, 1);
        }
        if (k == page) return p;
    }
    atomic_fetch_add(&t->dropped, 1);
    return NULL;
}

int clampi_ltab_first_touch(clampi_ltab *t, clampi_lpage *p, int thread, uintptr_t ip, const uintptr_t *frames,
                            uint64_t ns) {
    /* The caller won the page's UNTOUCHED -> BUSY transition, so it is alone here. */
    if (p->ft_seq != 0) return 0;
    p->ft_thread = thread;
    p->ft_ip = ip;
    for (int i = 0; i < CLAMPI_LP_FRAMES; i++) p->ft_frames[i] = frames ? frames[i] : 0;
    p->ft_ns = ns;
    p->ft_seq = atomic_fetch_add(&t->seq, 1) + 1;
    size_t slot = (size_t)(p - t->pages);
    size_t at = atomic_fetch_add(&t->ntouched, 1);
    if (at < t->page_cap) t->touched[at] = (uint32_t)slot;
    return 1;
}

void clampi_ltab_count_add(clampi_ltab *t, uintptr_t page, int thread, uint64_t n) {
    if (thread < 0 || thread >= CLAMPI_LTAB_MAX_THREADS) return;
    uint64_t key = (uint64_t)page | (uint64_t)(thread + 1); /* +1: (page 0, thread 0) is not the empty key */
    size_t mask = t->count_cap - 1;
    for (size_t i = count_slot(page, thread, mask), probes = 0; probes < t->count_cap - t->count_cap / 4;
         i = (i + 1) & mask, probes++) {
        clampi_lcount *c = &t->counts[i];
        uint64_t k = atomic_load_explicit(&c->key, memory_order_acquire);
        if (k == 0 &&
            atomic_compare_exchange_strong_explicit(&c->key, &k, key, memory_order_acq_rel, memory_order_acquire))
            k = key;
        if (k == key) {
            atomic_fetch_add_explicit(&c->n, n, memory_order_relaxed);
            return;
        }
    }
    atomic_fetch_add(&t->dropped, 1);
}

uint64_t clampi_ltab_count_get(const clampi_ltab *t, uintptr_t page, int thread) {
    if (thread < 0 || thread >= CLAMPI_LTAB_MAX_THREADS) return 0;
    uint64_t key = (uint64_t)page | (uint64_t)(thread + 1);
    size_t mask = t->count_cap - 1;
    for (size_t i = count_slot(page, thread, mask), probes = 0; probes < t->count_cap; i = (i + 1) & mask, probes++) {
        uint64_t k = atomic_load_explicit(&t->counts[i].key, memory_order_acquire);
        if (k == key) return atomic_load_explicit(&t->counts[i].n, memory_order_relaxed);
        if (k == 0) return 0;
    }
    return 0;
}
