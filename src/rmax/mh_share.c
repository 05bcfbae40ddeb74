/* Memory handles to the program's own memory, moved onto a memory file so same-node peers
 * map it (see mh_share.h for the design and its rules). */
#include "rmax/mh_share.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "common/fnv.h"
#include "rmax/mh_guard.h"

#define COPY_PIECE ((size_t)1 << 20) /* pages moved per copy-and-map step: bounds the doubled memory */

typedef struct share {
    struct share *next;
    uint64_t generation, token;
    uintptr_t lo;
    size_t len;
    int fd;
    int stack;  /* the pages are in the creating thread's stack (move_frozen) */
    int nedges; /* edge pages shared with other memory: moved under a write guard */
    uintptr_t edge[CLAMPI_MH_GUARD_RANGES];
    pid_t tid;      /* that thread: only it can move them back */
    pid_t pid;      /* the process that moved them (a forked child does not own the file) */
    uint64_t *live; /* the liveness page, mapped here */
    struct share *all_next;
} share;

static pthread_mutex_t shares_lock = PTHREAD_MUTEX_INITIALIZER;
static share *all_shares; /* every window's, for fork */

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

uint64_t clampi_mh_share_node(void) {
    static uint64_t node;
    uint64_t n = __atomic_load_n(&node, __ATOMIC_RELAXED);
    if (n) return n;
    char id[320] = {0};
    gethostname(id, 255);
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        size_t at = strlen(id);
        ssize_t got = read(fd, id + at, sizeof id - at - 1);
        (void)got;
        close(fd);
    }
    n = clampi_fnv1a64(id, sizeof id) | 1;
    __atomic_store_n(&node, n, __ATOMIC_RELAXED);
    return n;
}

static void file_name(char *out, size_t cap, uint64_t token) { snprintf(out, cap, "clampi-mh-%016" PRIx64, token); }

/* The moved pages hold more than the region (a block's header, other frames): reading them
 * is not an error, so AddressSanitizer is told to look away (and the copy's write is the
 * system call itself, not its checked wrapper). */
#define WHOLE_PAGES __attribute__((no_sanitize_address))

/* A block glibc's malloc made with its own mmap, starting at the page that holds base, with
 * the region starting right after the block's header: [*lo, *hi) is the whole block (the
 * header: prev_size 0, size a page multiple with only IS_MMAPPED set). The header is read
 * with a system call, which fails instead of faulting on an unreadable page. */
static int glibc_mmapped_block(uintptr_t base, size_t size, uintptr_t *lo, uintptr_t *hi) {
    const uintptr_t chunk = base & ~(uintptr_t)(page() - 1);
    size_t head[2];
    if (base != chunk + sizeof head) return 0;
    struct iovec local = {head, sizeof head}, remote = {(void *)chunk, sizeof head};
    if (syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) != (long)sizeof head) return 0;
    size_t sz = head[1];
    if (head[0] != 0 || (sz & 7) != 2) return 0;
    sz &= ~(size_t)7;
    if (sz == 0 || sz % page() || base + size > chunk + sz) return 0;
    *lo = chunk, *hi = chunk + sz;
    return 1;
}

/* Nodes where something may pin the program's pages for a device (an RDMA NIC through
 * UCX's ib or rdmacm, knem, xpmem): a registration made before the move would keep
 * pointing at the old pages, so nothing moves there. */
static int pages_may_be_pinned(void) {
    static int known = -1;
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (k >= 0) return k;
    k = access("/dev/knem", F_OK) == 0 || access("/dev/xpmem", F_OK) == 0;
    DIR *d = opendir("/sys/class/infiniband");
    if (d) {
        for (struct dirent *e; !k && (e = readdir(d));) k = e->d_name[0] != '.';
        closedir(d);
    }
    __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    return k;
}

extern void *__libc_stack_end; /* glibc: the main thread's stack top, as the program started */

/* The calling thread's stack holds [base, base+size): it lies between this frame and the
 * stack's top, and this frame is on that stack, not on a user-level one (the main thread's
 * top from glibc, which pthread_getattr_np would find only by reading /proc/self/maps, its
 * extent from the stack limit; another thread's from its attributes). */
static int own_stack(uintptr_t base, size_t size) {
    volatile char here = 0;
    const uintptr_t sp = (uintptr_t)&here;
    if (base <= sp) return 0;
    uintptr_t bottom = 0, top = 0;
    if (getpid() == (pid_t)syscall(SYS_gettid)) {
        top = (uintptr_t)__libc_stack_end;
        struct rlimit rl;
        uintptr_t extent = (uintptr_t)1 << 30; /* unlimited */
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < extent)
            extent = (uintptr_t)rl.rlim_cur;
        bottom = top > extent ? top - extent : 0;
    } else {
        pthread_attr_t a;
        void *addr;
        size_t sz;
        if (pthread_getattr_np(pthread_self(), &a) != 0) return 0;
        if (pthread_attr_getstack(&a, &addr, &sz) == 0) bottom = (uintptr_t)addr, top = (uintptr_t)addr + sz;
        pthread_attr_destroy(&a);
    }
    return sp >= bottom && base + size <= top;
}

/* 1 if /proc/self/maps covers [lo, hi) with mappings all of one kind: private anonymous
 * read-write memory (want == NULL), or the memory file named want. */
static int maps_cover(uintptr_t lo, uintptr_t hi, const char *want) {
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return 0;
    char line[512];
    uintptr_t at = lo;
    while (at < hi && fgets(line, sizeof line, f)) {
        unsigned long s, e, ino;
        char perms[8], path[320] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %319[^\n]", &s, &e, perms, &ino, path) < 4) continue;
        if (e <= at) continue;
        if (s > at) break; /* a hole */
        const char *p = path;
        while (*p == ' ') p++;
        int ok = want ? !strcmp(perms, "rw-s") && !strncmp(p, "/memfd:", 7) && !strncmp(p + 7, want, strlen(want))
                      : !strcmp(perms, "rw-p") && ino == 0 && (!*p || !strcmp(p, "[heap]") || !strcmp(p, "[stack]"));
        if (!ok) break;
        at = e;
    }
    fclose(f);
    return at >= hi;
}

WHOLE_PAGES static int page_is_zero(const unsigned char *p, size_t n) {
    const uint64_t *q = (const uint64_t *)p;
    for (size_t i = 0; i < n / sizeof *q; i++)
        if (q[i]) return 0;
    return 1;
}

static int write_all(int fd, const unsigned char *p, size_t n, off_t off) {
    while (n) {
        ssize_t w = syscall(SYS_pwrite64, fd, p, n, off);
        if (w <= 0) return -1;
        p += w, n -= (size_t)w, off += w;
    }
    return 0;
}

/* The moves use the system calls themselves: UCX's and Open MPI's memory hooks replace
 * mmap and mremap (UCX's mremap drops the new address of MREMAP_FIXED), and a move of stack
 * pages runs where only system calls are safe (move_frozen). */
static void *sys_mmap(uintptr_t addr, size_t len, int prot, int flags, int fd, off_t off) {
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* Copies [lo, lo+n) into the file at off (zero pages stay holes), then maps the file there.
 * 0; -1: nothing changed; -2: copied but not mapped (what is at lo is unknown). */
static int move_piece(int fd, uintptr_t lo, size_t n, off_t off) {
    const size_t pg = page();
    const unsigned char *p = (const unsigned char *)lo;
    for (size_t i = 0; i < n;) {
        if (page_is_zero(p + i, pg)) {
            i += pg;
            continue;
        }
        size_t j = i + pg;
        while (j < n && !page_is_zero(p + j, pg)) j += pg;
        if (write_all(fd, p + i, j - i, off + (off_t)i) != 0) return -1;
        i = j;
    }
    void *m = sys_mmap(lo, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off);
    return m == (void *)lo ? 0 : -2;
}

/* The file's pages back into private memory at lo (one mremap over them). */
static int move_back(int fd, uintptr_t lo, size_t len) {
    unsigned char *tmp = sys_mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tmp == MAP_FAILED) return -1;
    off_t d = 0;
    while ((size_t)d < len && (d = syscall(SYS_lseek, fd, d, SEEK_DATA)) >= 0 && (size_t)d < len) {
        off_t h = syscall(SYS_lseek, fd, d, SEEK_HOLE);
        if (h < 0 || (size_t)h > len) h = (off_t)len;
        for (off_t at = d; at < h;) {
            ssize_t r = syscall(SYS_pread64, fd, tmp + at, (size_t)(h - at), at);
            if (r <= 0) {
                syscall(SYS_munmap, tmp, len);
                return -1;
            }
            at += r;
        }
        d = h;
    }
    if ((void *)syscall(SYS_mremap, tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo) != (void *)lo) {
        syscall(SYS_munmap, tmp, len);
        return -1;
    }
    return 0;
}

static int move_all(int fd, uintptr_t lo, size_t len) {
    size_t moved = 0;
    int rc = 0;
    while (moved < len && rc == 0) {
        size_t n = len - moved < COPY_PIECE ? len - moved : COPY_PIECE;
        rc = move_piece(fd, lo + moved, n, (off_t)moved);
        if (rc != -1) moved += n; /* -2: the file holds the piece: it goes back with the rest */
    }
    if (rc == 0) return 0;
    if (moved) move_back(fd, lo, moved);
    return -1;
}

/* A move (or move back) of pages of the calling thread's own stack, whose edge pages hold
 * its live frames: the thread switches to a stack of its own (swapcontext, every signal
 * blocked) and copies from there, so nothing writes the old pages between the copy and the
 * mapping; it switches back onto the moved pages. */
typedef struct frozen_move {
    int fd, back, rc;
    uintptr_t lo;
    size_t len;
} frozen_move;

static _Thread_local frozen_move *frozen_current;

static void frozen_main(void) {
    frozen_move *m = frozen_current;
    m->rc = m->back ? move_back(m->fd, m->lo, m->len) : move_all(m->fd, m->lo, m->len);
}

static int move_frozen(int fd, uintptr_t lo, size_t len, int back) {
    frozen_move m = {.fd = fd, .back = back, .rc = -1, .lo = lo, .len = len};
    const size_t stack_size = 256 << 10;
    void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) return -1;
    ucontext_t home, work;
    if (getcontext(&work) != 0) {
        munmap(stack, stack_size);
        return -1;
    }
    work.uc_stack.ss_sp = stack;
    work.uc_stack.ss_size = stack_size;
    work.uc_link = &home;
    sigfillset(&work.uc_sigmask);
    makecontext(&work, frozen_main, 0);
    frozen_current = &m;
    if (swapcontext(&home, &work) != 0) m.rc = -1;
    munmap(stack, stack_size);
    return m.rc;
}

/* fork: the child would share the moved pages with the parent (a heap page's other blocks,
 * malloc's fields). They are not inherited (MADV_DONTFORK); the child gets a private copy
 * of them before fork returns there. Stack pages are inherited (the forking thread's frames
 * may be on them) and copied likewise, from a stack of clampi's own. */
static pid_t fork_tid;

static void fork_prepare(void) {
    pthread_mutex_lock(&shares_lock);
    fork_tid = (pid_t)syscall(SYS_gettid);
}

static void fork_parent(void) { pthread_mutex_unlock(&shares_lock); }

static void fork_child(void) {
    for (share *s = all_shares; s; s = s->all_next) {
        if (s->stack && s->tid == fork_tid)
            move_frozen(s->fd, s->lo, s->len, 1);
        else if (!s->stack)
            move_back(s->fd, s->lo, s->len);
    }
    all_shares = NULL;
    pthread_mutex_unlock(&shares_lock);
}

static void fork_handlers(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

static int overlaps(const share *s, uintptr_t lo, uintptr_t hi) {
    for (; s; s = s->next)
        if (lo < s->lo + s->len && s->lo < hi) return 1;
    return 0;
}

/* The region's pages not wholly inside it, [elo, ehi) being all its pages: up to two. */
static int edge_pages(uintptr_t b, size_t size, uintptr_t elo, uintptr_t ehi, uintptr_t *edge) {
    const size_t pg = page();
    int n = 0;
    if (b != elo) edge[n++] = elo;
    if (b + size != ehi && (n == 0 || edge[0] != ehi - pg)) edge[n++] = ehi - pg;
    return n;
}

static int move_guarded(int fd, uintptr_t lo, size_t len, int nedges, const uintptr_t *edge, int back) {
    if (nedges == 0) return back ? move_back(fd, lo, len) : move_all(fd, lo, len);
    const size_t pg = page(), lens[CLAMPI_MH_GUARD_RANGES] = {pg, pg};
    clampi_mh_guard g;
    if (clampi_mh_guard_begin(&g, nedges, edge, lens, back) != 0) return -1;
    int rc = back ? move_back(fd, lo, len) : move_all(fd, lo, len);
    clampi_mh_guard_end(&g);
    return rc;
}

/* A memory file named name holding [lo, lo+len) moved there, its liveness page after them;
 * 0, or -1 with nothing changed. */
static int move_onto_file(const char *name, uintptr_t lo, size_t len, int stack, int nedges, const uintptr_t *edge,
                          int *fd_out, uint64_t **live_out) {
    const size_t pg = page();
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    uint64_t *live = MAP_FAILED;
    if (ftruncate(fd, (off_t)(len + pg)) == 0)
        live = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)len);
    if (live == MAP_FAILED || (stack ? move_frozen(fd, lo, len, 0) : move_guarded(fd, lo, len, nedges, edge, 0)) != 0) {
        if (live != MAP_FAILED) munmap(live, pg);
        close(fd);
        return -1;
    }
    if (!stack) syscall(SYS_madvise, lo, len, MADV_DONTFORK);
    *fd_out = fd, *live_out = live;
    return 0;
}

int clampi_mh_share(void **shares, void *base, size_t size, uint64_t generation, clampi_mh_share_ref *ref) {
    const size_t pg = page();
    const uintptr_t b = (uintptr_t)base;
    uintptr_t lo = (b + pg - 1) & ~(uintptr_t)(pg - 1), hi = (b + size) & ~(uintptr_t)(pg - 1);
    const uintptr_t elo = b & ~(uintptr_t)(pg - 1), ehi = (b + size + pg - 1) & ~(uintptr_t)(pg - 1);
    const int stack = own_stack(b, size);
    uintptr_t edge[CLAMPI_MH_GUARD_RANGES] = {0, 0};
    int nedges = 0;
    if (stack) /* its edge pages hold only this thread's frames: they move too */
        lo = elo, hi = ehi;
    else if (!glibc_mmapped_block(b, size, &lo, &hi) && clampi_mh_guard_available(0) && clampi_mh_guard_available(1))
        nedges = edge_pages(b, size, elo, ehi, edge); /* other memory shares them: guarded */
    if (pages_may_be_pinned()) return -1;
    static uint64_t counter;
    const uint64_t token = clampi_fnv1a64(
        &(uint64_t[3]){generation, (uint64_t)getpid(), __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED)},
        3 * sizeof(uint64_t));
    char name[64];
    file_name(name, sizeof name, token);
    share *s = calloc(1, sizeof *s);
    if (!s) return -1;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fork_handlers);
    pthread_mutex_lock(&shares_lock);
    int fd = -1, rc = -1;
    uint64_t *live = NULL;
    /* With edges: all the region's pages. Without (no guard, another handle's page, a page
     * that is not private anonymous memory, the guard refused): the whole pages inside. */
    if (nedges && !overlaps(*shares, elo, ehi) && maps_cover(elo, ehi, NULL))
        rc = move_onto_file(name, elo, ehi - elo, 0, nedges, edge, &fd, &live);
    if (rc == 0)
        lo = elo, hi = ehi;
    else if ((nedges = 0, hi > lo) && !overlaps(*shares, lo, hi) && maps_cover(lo, hi, NULL))
        rc = move_onto_file(name, lo, hi - lo, stack, 0, edge, &fd, &live);
    if (rc != 0) {
        pthread_mutex_unlock(&shares_lock);
        free(s);
        return -1;
    }
    const size_t len = hi - lo;
    __atomic_store_n(live, generation, __ATOMIC_RELEASE);
    *s = (share){.next = *shares,
                 .generation = generation,
                 .token = token,
                 .lo = lo,
                 .len = len,
                 .fd = fd,
                 .stack = stack,
                 .nedges = nedges,
                 .edge = {edge[0], edge[1]},
                 .tid = (pid_t)syscall(SYS_gettid),
                 .pid = getpid(),
                 .live = live,
                 .all_next = all_shares};
    *shares = s;
    all_shares = s;
    pthread_mutex_unlock(&shares_lock);
    *ref = (clampi_mh_share_ref){.node = clampi_mh_share_node(),
                                 .token = token,
                                 .lo = lo,
                                 .len = len,
                                 .pid = (uint32_t)getpid(),
                                 .fd = (uint32_t)fd};
    return 0;
}

static void undo(share *s) {
    for (share **p = &all_shares; *p; p = &(*p)->all_next)
        if (*p == s) {
            *p = s->all_next;
            break;
        }
    if (s->pid != getpid()) { /* a forked child's copy: the file and its pages are the parent's */
        close(s->fd);
        free(s);
        return;
    }
    __atomic_store_n(s->live, 0, __ATOMIC_SEQ_CST);
    char name[64];
    file_name(name, sizeof name, s->token);
    /* Pages the program unmapped meanwhile (it freed the memory) are not put back, nor
     * another thread's stack pages (that thread runs on them): those stay on the file. */
    int back = -1;
    if (!s->stack || s->tid == (pid_t)syscall(SYS_gettid)) {
        if (maps_cover(s->lo, s->lo + s->len, name))
            back = s->stack ? move_frozen(s->fd, s->lo, s->len, 1)
                            : move_guarded(s->fd, s->lo, s->len, s->nedges, s->edge, 1);
        else
            back = 0;
    }
    if (back != 0 && !s->stack) syscall(SYS_madvise, s->lo, s->len, MADV_DOFORK); /* they stay */
    /* Peers still mapping the file keep nothing of the program's memory alive. */
    if (back == 0) fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)s->len);
    munmap(s->live, page());
    close(s->fd);
    free(s);
}

void clampi_mh_unshare(void **shares, uint64_t generation) {
    pthread_mutex_lock(&shares_lock);
    for (share **p = (share **)shares; *p; p = &(*p)->next)
        if ((*p)->generation == generation) {
            share *s = *p;
            *p = s->next;
            undo(s);
            break;
        }
    pthread_mutex_unlock(&shares_lock);
}

void clampi_mh_shares_free(void **shares) {
    pthread_mutex_lock(&shares_lock);
    while (*shares) {
        share *s = *shares;
        *shares = s->next;
        undo(s);
    }
    pthread_mutex_unlock(&shares_lock);
}

/* ---- peer side: mappings kept for the next window of the same handle --------------- */

#define KEPT_UNUSED 16 /* mappings of live handles no window uses, kept for the next one */

typedef struct mapping {
    struct mapping *next;
    uint64_t token;
    uint32_t pid, fd;
    unsigned char *map;
    size_t map_len, len;
    int refs;
    uint64_t used; /* when it was last opened (a counter) */
} mapping;

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static mapping *maps;
static uint64_t maps_clock;

static int mapping_dead(const mapping *m) {
    return __atomic_load_n((const uint64_t *)(m->map + m->len), __ATOMIC_ACQUIRE) == 0;
}

static void unmap_unused(int keep) {
    for (;;) {
        int unused = 0;
        mapping **victim = NULL;
        for (mapping **p = &maps; *p; p = &(*p)->next) {
            if ((*p)->refs) continue;
            unused++;
            if (mapping_dead(*p) || !victim || (*p)->used < (*victim)->used) victim = p;
            if (mapping_dead(*p)) break;
        }
        if (!victim || (unused <= keep && !mapping_dead(*victim))) return;
        mapping *m = *victim;
        *victim = m->next;
        munmap(m->map, m->map_len);
        free(m);
    }
}

static mapping *map_file(const clampi_mh_share_ref *ref) {
    const size_t pg = page();
    char path[64], self[64], got[128], want[96], name[64];
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/fd/%" PRIu32, ref->pid, ref->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    /* The name of what was opened, not of what the number named a moment before. */
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    file_name(name, sizeof name, ref->token);
    snprintf(want, sizeof want, "/memfd:%s (deleted)", name);
    ssize_t n = readlink(self, got, sizeof got - 1);
    struct stat st;
    void *map = MAP_FAILED;
    if (n > 0 && (got[n] = 0, !strcmp(got, want)) && fstat(fd, &st) == 0 && (uint64_t)st.st_size == ref->len + pg)
        map = mmap(NULL, ref->len + pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    mapping *m = map != MAP_FAILED ? calloc(1, sizeof *m) : NULL;
    if (!m) {
        if (map != MAP_FAILED) munmap(map, ref->len + pg);
        return NULL;
    }
    *m = (mapping){
        .token = ref->token, .pid = ref->pid, .fd = ref->fd, .map = map, .map_len = ref->len + pg, .len = ref->len};
    return m;
}

void *clampi_mh_share_open(const clampi_mh_share_ref *ref, unsigned char **pages, const uint64_t **live) {
    if (ref->node != clampi_mh_share_node() || ref->len == 0 || ref->len % page()) return NULL;
    pthread_mutex_lock(&maps_lock);
    mapping *m = maps;
    while (m && !(m->token == ref->token && m->pid == ref->pid && m->fd == ref->fd && m->len == ref->len)) m = m->next;
    if (!m && (m = map_file(ref))) {
        m->next = maps;
        maps = m;
    }
    if (m && mapping_dead(m)) m = NULL; /* released: the window goes through UCX, which says so */
    if (m) {
        m->refs++;
        m->used = ++maps_clock;
        *pages = m->map;
        *live = (const uint64_t *)(m->map + m->len);
    }
    unmap_unused(KEPT_UNUSED);
    pthread_mutex_unlock(&maps_lock);
    return m;
}

void clampi_mh_share_close(void *mapping_ref) {
    mapping *m = mapping_ref;
    pthread_mutex_lock(&maps_lock);
    m->refs--;
    unmap_unused(KEPT_UNUSED);
    pthread_mutex_unlock(&maps_lock);
}
