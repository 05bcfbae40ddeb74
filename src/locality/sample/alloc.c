/* Tracked heap allocations: malloc/calloc/realloc/posix_memalign/aligned_alloc/C++ new of
 * at least CLAMPI_LOCALITY_MIN_SIZE bytes come from a reserved PROT_NONE arena, page
 * aligned, never reused (one allocation per page, for the whole run). Smaller ones go to
 * glibc (__libc_*). */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

/* Set while the library itself allocates (backtrace, output): no tracking then. */
__thread int ls_in_lib __attribute__((tls_model("initial-exec")));

#define ARENA_BYTES (1ull << 40)

/* Callers whose allocations are never tracked, by their text:
 * - glibc: its internal buffers (getcwd, opendir, stdio) are filled by system calls,
 *   which fail with EFAULT on protected pages instead of faulting;
 * - the dynamic loader and libgcc_s: the unwinder that the SIGSEGV handler runs reads
 *   their tables (_dl_find_object's segments, allocated at each dlopen), and a protected
 *   page there faults inside the handler, where SIGSEGV is blocked: the kernel kills the
 *   process (Open MPI's components made that happen in about one run in six). */
enum { UNTRACKED_LIBS = 3 };
static struct { uintptr_t lo, hi; } untracked_text[UNTRACKED_LIBS];

static int untracked_caller(uintptr_t ret) {
    for (int i = 0; i < UNTRACKED_LIBS; i++)
        if (ret >= untracked_text[i].lo && ret < untracked_text[i].hi) return 1;
    return 0;
}

/* Text of the system libraries loaded at start-up (/lib, /usr/lib): code that is not the
 * program's own, for the fault handler (async-signal-safe lookup in a fixed array). */
#define MAX_SYS_RANGES 128
static uintptr_t sys_lo[MAX_SYS_RANGES], sys_hi[MAX_SYS_RANGES];
static int nsys;

static uintptr_t clampi_lo[8], clampi_hi[8]; /* libclampi*: its allocators touch for the program */
static int nclampi;

int ls_is_system_code(uintptr_t ip) {
    for (int i = 0; i < nsys; i++)
        if (ip >= sys_lo[i] && ip < sys_hi[i]) return 1;
    for (int i = 0; i < nclampi; i++)
        if (ip >= clampi_lo[i] && ip < clampi_hi[i]) return 1;
    return 0;
}

int ls_is_library_code(uintptr_t ip) { return ls_is_system_code(ip); }

/* One pass over /proc/self/maps: the system libraries' and libclampi's text (above), and the
 * whole range of each library whose allocations are not tracked (untracked_text). */
static void scan_maps(void) {
    Dl_info di;
    const char *libc = NULL;
    if (dladdr((void *)__libc_malloc, &di) && di.dli_fname) {
        libc = strrchr(di.dli_fname, '/');
        libc = libc ? libc : di.dli_fname; /* "/libc.so.6": /lib and /usr/lib are the same */
    }
    /* the loader and the unwinder by name: "/ld-linux-x86-64.so.2", "/libgcc_s.so.1" */
    const char *names[UNTRACKED_LIBS] = {libc, "/ld-linux", "/libgcc_s."};
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[1024], perms[8], path[512];
    unsigned long lo, hi;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, path) != 4) continue;
        const char *base = strrchr(path, '/');
        if (perms[2] == 'x') {
            if (strncmp(path, "/usr/lib", 8) == 0 || strncmp(path, "/lib", 4) == 0) {
                if (nsys < MAX_SYS_RANGES) sys_lo[nsys] = lo, sys_hi[nsys++] = hi;
            } else if (base && strncmp(base + 1, "libclampi", 9) == 0 && !strstr(base, "locality_sample") &&
                       nclampi < 8) {
                clampi_lo[nclampi] = lo;
                clampi_hi[nclampi++] = hi;
            }
        }
        if (!base) continue;
        for (int i = 0; i < UNTRACKED_LIBS; i++) {
            if (!names[i]) continue;
            int hit = i == 0 ? strcmp(base, names[i]) == 0 : strncmp(base, names[i], strlen(names[i])) == 0;
            if (!hit) continue;
            if (!untracked_text[i].lo || lo < untracked_text[i].lo) untracked_text[i].lo = lo;
            if (hi > untracked_text[i].hi) untracked_text[i].hi = hi;
        }
    }
    fclose(f);
}
#define MAX_ALLOCS (1u << 18)

void *ls_real_mmap(void *addr, size_t len, int prot, int flags, int fd, long off) {
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int ls_real_munmap(void *addr, size_t len) { return (int)syscall(SYS_munmap, addr, len); }

static void *map_zeroed(size_t bytes) {
    void *p = ls_real_mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int ls_alloc_init(void) {
    /* The sampler's memory is bounded by these tables, sized at start-up:
     * CLAMPI_LOCALITY_MAX_PAGES page records (default 2^20: 4 GiB of 4 KiB pages, 3/4 of
     * them usable), twice as many (page, thread) counters. What does not fit is counted
     * (dropped, allocations_untracked), never lost silently. */
    size_t max_pages = ls.max_pages ? ls.max_pages : (1u << 20), max_counts = 2 * max_pages;
    ls.memory_bound = clampi_ltab_bytes(max_pages, max_counts) + MAX_ALLOCS * sizeof(clampi_lalloc) +
                      3ull * MAX_ALLOCS * sizeof(uint32_t) + (size_t)LS_MAX_STACKS * LS_STACK_DEPTH * sizeof(uintptr_t);
    ls.page_capacity = max_pages - max_pages / 4;
    void *tab = map_zeroed(clampi_ltab_bytes(max_pages, max_counts));
    ls.alloc_cap = MAX_ALLOCS;
    ls.allocs = map_zeroed(MAX_ALLOCS * sizeof(clampi_lalloc));
    uint32_t *idx = map_zeroed(3ull * MAX_ALLOCS * sizeof(uint32_t));
    void *arena = ls_real_mmap(NULL, ARENA_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ls.stacks = map_zeroed((size_t)LS_MAX_STACKS * sizeof *ls.stacks);
    ls.stack_cap = ls.stacks ? LS_MAX_STACKS : 0;
    if (!tab || !ls.allocs || !idx || arena == MAP_FAILED) return -1;
    clampi_ltab_init(&ls.tab, tab, max_pages, max_counts);
    ls.arena_idx = idx;
    ls.mmap_idx = idx + MAX_ALLOCS;
    ls.scratch = idx + 2 * MAX_ALLOCS;
    ls.arena_lo = ls.arena_next = (uintptr_t)arena;
    ls.arena_hi = ls.arena_lo + ARENA_BYTES;
    /* backtrace() loads libgcc_s (and allocates) on its first call: do it now, before the
     * maps are read. */
    void *f[2];
    ls_in_lib = 1;
    backtrace(f, 2);
    ls_in_lib = 0;
    scan_maps();
    return 0;
}

void ls_frames(clampi_lalloc *a, void *ret0) {
    void *f[CLAMPI_LA_FRAMES + 2];
    ls_in_lib++;
    int n = backtrace(f, CLAMPI_LA_FRAMES + 2);
    ls_in_lib--;
    /* f[0] is ls_frames, f[1] our wrapper: start at the wrapper's caller (ret0). */
    int k = 0;
    for (int i = 0; i < n && k < CLAMPI_LA_FRAMES; i++) {
        if (k == 0 && f[i] != ret0) continue;
        a->frames[k++] = (uintptr_t)f[i];
    }
    if (k == 0) a->frames[k++] = (uintptr_t)ret0;
    a->nframes = (uint8_t)k;
}

uint32_t ls_alloc_add(const clampi_lalloc *a, int in_arena) {
    size_t i = atomic_load(&ls.nallocs);
    if (i >= ls.alloc_cap) return UINT32_MAX;
    ls.allocs[i] = *a;
    atomic_store_explicit(&ls.nallocs, i + 1, memory_order_release);
    if (in_arena) {
        size_t k = atomic_load(&ls.narena);
        ls.arena_idx[k] = (uint32_t)i;
        atomic_store_explicit(&ls.narena, k + 1, memory_order_release);
    } else {
        size_t k = atomic_load(&ls.nmmap);
        ls.mmap_idx[k] = (uint32_t)i;
        atomic_store_explicit(&ls.nmmap, k + 1, memory_order_release);
    }
    return (uint32_t)i;
}

clampi_lalloc *ls_alloc_find(uintptr_t addr) {
    if (addr >= ls.arena_lo && addr < ls.arena_hi) {
        /* arena allocations are appended in address order: binary search */
        size_t lo = 0, hi = atomic_load_explicit(&ls.narena, memory_order_acquire);
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            clampi_lalloc *a = &ls.allocs[ls.arena_idx[mid]];
            if (addr < a->map_start)
                hi = mid;
            else if (addr >= a->map_start + a->map_size)
                lo = mid + 1;
            else
                return a;
        }
        return NULL;
    }
    /* mmaps: newest first (an address range may have been unmapped and mapped again) */
    for (size_t k = atomic_load_explicit(&ls.nmmap, memory_order_acquire); k-- > 0;) {
        clampi_lalloc *a = &ls.allocs[ls.mmap_idx[k]];
        if (addr >= a->map_start && addr < a->map_start + a->map_size && !a->freed) return a;
    }
    return NULL;
}

static int in_arena(const void *p) { return (uintptr_t)p >= ls.arena_lo && (uintptr_t)p < ls.arena_hi; }

static clampi_lalloc *arena_alloc_at(const void *p) {
    clampi_lalloc *a = in_arena(p) ? ls_alloc_find((uintptr_t)p) : NULL;
    return a && a->start == (uintptr_t)p && !a->freed ? a : NULL;
}

/* Parked blocks. A program that allocates and frees the same
 * temporary arrays every iteration (LULESH: about 20 arrays per time step) made the
 * never-reused arena first-touch fresh pages every iteration: one fault, one mprotect and
 * one zeroed kernel page per page and iteration, and a page record each (LULESH -i 300
 * dropped 1.3 M of them). glibc hands such a program the same memory again, already
 * placed, so the physical pages keep the node of their first touch. The sampler does the
 * same: a freed block is parked, open pages still open, and a later allocation from the
 * same call stack (same return addresses), kind and page-rounded size gets it back: the
 * same structure, the same page records, its earlier first touches (which placed those
 * pages) and samples counted on. calloc is never served from a parked block (it would
 * have to be zeroed in the sampler's code, a first touch by the wrong line), and blocks
 * beyond the park's bounds are given back as before (madvise + PROT_NONE). */
#define PARK_MAX 1024
#define PARK_BYTES (512ull << 20)
static uint32_t parked[PARK_MAX]; /* allocation indexes, under alloc_lock */
static size_t nparked;

static int same_site(const clampi_lalloc *r, const clampi_lalloc *a, size_t len, size_t align) {
    return r->map_size == len && r->kind == a->kind && r->nframes == a->nframes && (r->start & (align - 1)) == 0 &&
           memcmp(r->frames, a->frames, a->nframes * sizeof a->frames[0]) == 0;
}

/* Caller holds alloc_lock. The parked block for a, or NULL. */
static clampi_lalloc *park_take(const clampi_lalloc *a, size_t len, size_t align) {
    for (size_t i = nparked; i-- > 0;) {
        clampi_lalloc *r = &ls.allocs[parked[i]];
        if (!same_site(r, a, len, align)) continue;
        parked[i] = parked[--nparked];
        atomic_fetch_sub(&ls.cost.parked_bytes, len);
        r->size = a->size;
        r->reuses++;
        __atomic_store_n(&r->freed, 0, __ATOMIC_RELEASE);
        atomic_fetch_add_explicit(&ls.cost.reused, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&ls.cost.reused_bytes, len, memory_order_relaxed);
        return r;
    }
    return NULL;
}

/* A tracked allocation, or NULL when this one is not tracked (too small, not ready,
 * arena or table full): the caller then uses glibc. */
static void *track(size_t size, size_t align, int kind, void *ret0) {
    if (!atomic_load_explicit(&ls.ready, memory_order_acquire) || ls_in_lib || size < ls.min_size || size == 0)
        return NULL;
    if (untracked_caller((uintptr_t)ret0)) return NULL;
    uint64_t t0 = ls_mono_ns();
    if (align < ls.page_size) align = ls.page_size;
    size_t len = (size + ls.page_size - 1) & ~(ls.page_size - 1);
    clampi_lalloc a;
    memset(&a, 0, sizeof a);
    ls_frames(&a, ret0);
    a.size = size;
    a.map_size = len;
    a.thread = ls_thread_id();
    a.prot = PROT_READ | PROT_WRITE;
    a.kind = (uint8_t)kind;
    pthread_mutex_lock(&ls.alloc_lock);
    uintptr_t start = (ls.arena_next + align - 1) & ~(uintptr_t)(align - 1);
    void *ret = NULL;
    clampi_lalloc *r = kind == CLAMPI_LA_CALLOC ? NULL : park_take(&a, len, align);
    if (r) {
        ret = (void *)r->start;
    } else if (start + len <= ls.arena_hi && start + len > start) {
        a.start = a.map_start = start;
        if (ls_alloc_add(&a, 1) != UINT32_MAX) {
            ls.arena_next = start + len;
            ret = (void *)start;
        }
    }
    pthread_mutex_unlock(&ls.alloc_lock);
    if (!ret) { /* arena or allocation table full: glibc's block, not watched, but counted */
        atomic_fetch_add(&ls.allocs_untracked, 1);
        atomic_fetch_add(&ls.bytes_untracked, size);
    }
    atomic_fetch_add_explicit(&ls.cost.alloc_unwinds, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ls.cost.alloc_ns, ls_mono_ns() - t0, memory_order_relaxed);
    /* fresh arena: PROT_NONE and never used before: zero, untouched; a parked block:
     * malloc's contents are undefined */
    return ret;
}

static void release(clampi_lalloc *a) {
    uint64_t t0 = ls_mono_ns();
    ls_lease_settle_range(a->map_start, a->map_start + a->map_size, -1);
    atomic_fetch_add_explicit(&ls.cost.frees, 1, memory_order_relaxed);
    if (a->kind != CLAMPI_LA_CALLOC && !a->unwatched) {
        pthread_mutex_lock(&ls.alloc_lock);
        int park = nparked < PARK_MAX && atomic_load(&ls.cost.parked_bytes) + a->map_size <= PARK_BYTES;
        if (park) {
            a->freed = 1;
            parked[nparked++] = (uint32_t)(a - ls.allocs);
            uint64_t now = atomic_fetch_add(&ls.cost.parked_bytes, a->map_size) + a->map_size;
            if (now > atomic_load(&ls.cost.parked_peak)) atomic_store(&ls.cost.parked_peak, now);
        }
        pthread_mutex_unlock(&ls.alloc_lock);
        if (park) {
            atomic_fetch_add_explicit(&ls.cost.free_ns, ls_mono_ns() - t0, memory_order_relaxed);
            return;
        }
        atomic_fetch_add_explicit(&ls.cost.released_parked, 1, memory_order_relaxed);
    }
    a->freed = 1;
    /* Give the memory back, keep the addresses reserved (never reused). */
    madvise((void *)a->map_start, a->map_size, MADV_DONTNEED);
    mprotect((void *)a->map_start, a->map_size, PROT_NONE);
    atomic_fetch_add_explicit(&ls.cost.free_ns, ls_mono_ns() - t0, memory_order_relaxed);
}

CLAMPI_API void *malloc(size_t n) {
    void *p = track(n, 0, CLAMPI_LA_MALLOC, __builtin_return_address(0));
    return p ? p : __libc_malloc(n);
}

CLAMPI_API void *calloc(size_t n, size_t m) {
    size_t bytes;
    if (__builtin_mul_overflow(n, m, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = track(bytes, 0, CLAMPI_LA_CALLOC, __builtin_return_address(0));
    return p ? p : __libc_calloc(n, m);
}

CLAMPI_API void free(void *p) {
    if (p == NULL) return;
    if (in_arena(p)) {
        clampi_lalloc *a = arena_alloc_at(p);
        if (a) release(a);
        return;
    }
    __libc_free(p);
}

CLAMPI_API size_t malloc_usable_size(void *p) {
    static size_t (*real)(void *);
    if (p && in_arena(p)) {
        clampi_lalloc *a = arena_alloc_at(p);
        return a ? a->map_size : 0;
    }
    if (!real) real = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    return real ? real(p) : 0;
}

CLAMPI_API void *realloc(void *p, size_t n) {
    void *ret0 = __builtin_return_address(0);
    if (p == NULL) {
        void *q = track(n, 0, CLAMPI_LA_REALLOC, ret0);
        return q ? q : __libc_malloc(n);
    }
    clampi_lalloc *a = in_arena(p) ? arena_alloc_at(p) : NULL;
    if (in_arena(p) && !a) return NULL; /* not an allocation of ours */
    if (a && n == 0) {
        release(a);
        return NULL;
    }
    if (a && n <= a->map_size && n >= ls.min_size) {
        a->size = n; /* fits in its pages */
        return p;
    }
    size_t old = a ? a->size : malloc_usable_size(p);
    void *q = track(n, 0, CLAMPI_LA_REALLOC, ret0);
    if (!q) {
        if (!a) return __libc_realloc(p, n);
        q = __libc_malloc(n);
        if (!q) return NULL;
    }
    size_t copy = old < n ? old : n;
    /* realloc's copy is the first touch of the new pages, by the caller, at the call */
    ls_touch_range(p, copy, (uintptr_t)ret0);
    ls_touch_range(q, copy, (uintptr_t)ret0);
    memcpy(q, p, copy);
    if (a)
        release(a);
    else
        __libc_free(p);
    return q;
}

static int aligned(void **out, size_t align, size_t n, int kind, void *ret0) {
    if (align == 0 || (align & (align - 1)) || align % sizeof(void *)) return EINVAL;
    void *p = track(n, align, kind, ret0);
    if (!p) p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

CLAMPI_API int posix_memalign(void **out, size_t align, size_t n) {
    return aligned(out, align, n, CLAMPI_LA_POSIX_MEMALIGN, __builtin_return_address(0));
}

CLAMPI_API void *aligned_alloc(size_t align, size_t n) {
    void *p = NULL;
    int rc = aligned(&p, align ? align : 1, n, CLAMPI_LA_ALIGNED_ALLOC, __builtin_return_address(0));
    if (rc) errno = rc;
    return rc ? NULL : p;
}

CLAMPI_API void *memalign(size_t align, size_t n) {
    void *p = track(n, align, CLAMPI_LA_ALIGNED_ALLOC, __builtin_return_address(0));
    return p ? p : __libc_memalign(align, n);
}

/* ---- C++ operator new (delete ends in free) -------------------------------------- */
typedef void *(*new_fn)(size_t);
typedef void *(*new_al_fn)(size_t, size_t);

/* Small requests go to libstdc++'s operator (new_handler, bad_alloc stay its business). */
static void *new_common(void **real, const char *sym, size_t n, size_t align, void *ret0) {
    void *p = track(n, align, CLAMPI_LA_NEW, ret0);
    if (p) return p;
    if (!*real) *real = dlsym(RTLD_NEXT, sym);
    return align ? ((new_al_fn)*real)(n, align) : ((new_fn)*real)(n);
}

static void *real_new[4];
CLAMPI_API void *_Znwm(size_t n) { return new_common(&real_new[0], "_Znwm", n, 0, __builtin_return_address(0)); }
CLAMPI_API void *_Znam(size_t n) { return new_common(&real_new[1], "_Znam", n, 0, __builtin_return_address(0)); }
CLAMPI_API void *_ZnwmSt11align_val_t(size_t n, size_t al) {
    return new_common(&real_new[2], "_ZnwmSt11align_val_t", n, al, __builtin_return_address(0));
}
CLAMPI_API void *_ZnamSt11align_val_t(size_t n, size_t al) {
    return new_common(&real_new[3], "_ZnamSt11align_val_t", n, al, __builtin_return_address(0));
}
