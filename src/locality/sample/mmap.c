/* Tracked mmaps: anonymous and file mappings of at least CLAMPI_LOCALITY_MIN_SIZE bytes
 * made by the program or its libraries (MPI shared-memory segments among them) are
 * protected right after mapping, so their first touches are seen like the heap's.
 * MAP_SHARED file mappings keep their file and offset for the report ("mappings").
 * Thread stacks (MAP_STACK) and reservations (PROT_NONE) are left alone: the kernel
 * writes to a stack's thread id at thread exit and must not fault there. */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int trackable(size_t len, int prot, int flags) {
    return atomic_load_explicit(&ls.ready, memory_order_acquire) && !ls_in_lib && len >= ls.min_size &&
           prot != PROT_NONE && !(flags & (MAP_STACK | MAP_GROWSDOWN | MAP_HUGETLB));
}

CLAMPI_API void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    void *ret0 = __builtin_return_address(0);
    void *p = ls_real_mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED || !trackable(len, prot, flags)) return p;
    clampi_lalloc a;
    memset(&a, 0, sizeof a);
    ls_frames(&a, ret0);
    a.start = a.map_start = (uintptr_t)p;
    a.size = len;
    a.map_size = (len + ls.sys_page - 1) & ~(ls.sys_page - 1);
    a.thread = ls_thread_id();
    a.prot = prot;
    a.kind = CLAMPI_LA_MMAP;
    if ((flags & MAP_SHARED) && !(flags & MAP_ANONYMOUS) && fd >= 0) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t k = readlink(link, a.file, sizeof a.file - 1);
        if (k > 0) {
            a.file[k] = 0;
            a.shared = 1;
            a.file_off = (uint64_t)off;
        }
    }
    /* The kernel may hand out addresses of an earlier, unmapped mapping: its pages start
     * over (untouched), or their first faults would look like the program's own. */
    for (uintptr_t pg = a.map_start; pg < a.map_start + a.map_size; pg += ls.sys_page) {
        clampi_lpage *rec = clampi_ltab_find(&ls.tab, pg);
        if (rec) {
            rec->ft_seq = 0;
            atomic_store(&rec->state, CLAMPI_LP_UNTOUCHED);
        }
    }
    pthread_mutex_lock(&ls.alloc_lock);
    uint32_t i = ls_alloc_add(&a, 0);
    pthread_mutex_unlock(&ls.alloc_lock);
    if (i != UINT32_MAX) {
        mprotect(p, a.map_size, PROT_NONE);
    } else {
        atomic_fetch_add(&ls.allocs_untracked, 1);
        atomic_fetch_add(&ls.bytes_untracked, len);
    }
    return p;
}
CLAMPI_API void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

/* Mappings that [addr, addr+len) touches stop being tracked: their pages get the
 * program's protection back (a partly unmapped mapping's rest stays usable). */
uint64_t ls_pfn_of(uintptr_t page) {
    uint64_t e = 0;
    if (ls.pagemap_fd < 0 || pread(ls.pagemap_fd, &e, sizeof e, (off_t)(page / ls.sys_page * sizeof e)) != sizeof e)
        return 0;
    return (e >> 63) ? e & ((1ull << 55) - 1) : 0;
}

static void untrack(uintptr_t lo, uintptr_t hi) {
    pthread_mutex_lock(&ls.alloc_lock);
    for (size_t k = atomic_load(&ls.nmmap); k-- > 0;) {
        clampi_lalloc *a = &ls.allocs[ls.mmap_idx[k]];
        if (a->freed || a->map_start >= hi || a->map_start + a->map_size <= lo) continue;
        if (a->shared) /* the frames go with the mapping: keep them for "pfns" */
            for (uintptr_t pg = a->map_start; pg < a->map_start + a->map_size; pg += ls.sys_page) {
                clampi_lpage *rec = clampi_ltab_find(&ls.tab, pg);
                if (rec && rec->ft_seq) rec->pfn = ls_pfn_of(pg);
            }
        a->freed = 1;
        mprotect((void *)a->map_start, a->map_size, a->prot);
    }
    pthread_mutex_unlock(&ls.alloc_lock);
}

CLAMPI_API int munmap(void *addr, size_t len) {
    if (atomic_load(&ls.nmmap)) untrack((uintptr_t)addr, (uintptr_t)addr + len);
    return ls_real_munmap(addr, len);
}

CLAMPI_API void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...) {
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    if (atomic_load(&ls.nmmap)) untrack((uintptr_t)old, (uintptr_t)old + old_len);
    long r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
    return r == -1 ? MAP_FAILED : (void *)r;
}
