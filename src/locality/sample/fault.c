/* The SIGSEGV handler: first touches and access samples on tracked pages; every other
 * fault goes to the program's own handler (kept aside by the sigaction/signal wrappers)
 * or, without one, ends the run after writing partial output. Async-signal-safe: no
 * malloc, no locks; only atomics, mprotect, write. */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/wait.h"
#include "locality/out.h"

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static struct sigaction app_segv; /* the program's SIGSEGV disposition */
static __thread uintptr_t retry_addr __attribute__((tls_model("initial-exec")));
static __thread int retries __attribute__((tls_model("initial-exec")));

static uintptr_t fault_ip(void *ucv) {
    ucontext_t *uc = ucv;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

/* When the first touch happened inside a library - the memset of calloc'd or
 * value-initialized memory, a memcpy, clampi's NUMA allocator - the callers in the
 * program: unwinding through the signal frame (libgcc, loaded at start-up, so no
 * allocation here); only for such faults, the common touch in the program's own loop
 * costs nothing extra. */
/* The last unwinds of this thread: a memset that first-touches page after page faults at
 * the same instruction with the same stack (pointer and word at it), so its callers are
 * those of an earlier fault: unwinding once per call, not once per page. Several entries,
 * because one loop that initializes several arrays (a[i] = b[i] = c[i] = 0) faults at one
 * instruction per array, in turn. */
enum { UNWIND_CACHE = 8 };
static __thread uintptr_t last_key[UNWIND_CACHE][4] __attribute__((tls_model("initial-exec")));
static __thread uintptr_t last_frames[UNWIND_CACHE][CLAMPI_LP_FRAMES] __attribute__((tls_model("initial-exec")));
static __thread uint32_t last_stack[UNWIND_CACHE] __attribute__((tls_model("initial-exec")));
static __thread unsigned last_next __attribute__((tls_model("initial-exec"))); /* round robin */

/* Returns the stack pool entry (1 + index) of the whole program stack, 0 if none. */
static uint32_t fault_frames(void *ucv, uintptr_t *out) {
    memset(out, 0, CLAMPI_LP_FRAMES * sizeof *out);
#if defined(__x86_64__)
    ucontext_t *uc = ucv;
    uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    /* Every first touch is unwound, not only those in a library: the
     * touching instruction may be libstdc++ template code in the program's own binary
     * (std::vector's value-initialization, out of line at -O0 or in _M_default_append at
     * -O2), whose program caller only the stack tells. Cached per (ip, sp, [sp]) ... */
    /* ... and per count of structures: library code that initializes two structures in a
     * row (std::vector's value-initialization on two lines) faults with the same ip, sp and
     * [sp], and only a new structure in between tells the callers apart */
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
              key[4] = {ip, sp, *(const uintptr_t *)sp,
                        (uintptr_t)atomic_load_explicit(&ls.nallocs, memory_order_acquire)};
    for (int c = 0; c < UNWIND_CACHE; c++)
        if (last_key[c][0] == ip && memcmp(key, last_key[c], sizeof key) == 0) {
            memcpy(out, last_frames[c], sizeof last_frames[c]);
            atomic_fetch_add_explicit(&ls.cost.unwinds_cached, 1, memory_order_relaxed);
            return last_stack[c];
        }
    void *f[LS_STACK_DEPTH + 8];
    uintptr_t all[LS_STACK_DEPTH];
    uint64_t t0 = ls_mono_ns();
    int n = backtrace(f, LS_STACK_DEPTH + 8), past = 0, k = 0;
    atomic_fetch_add_explicit(&ls.cost.unwinds, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ls.cost.unwind_ns, ls_mono_ns() - t0, memory_order_relaxed);
    for (int i = 0; i < n && k < LS_STACK_DEPTH; i++) {
        uintptr_t a = (uintptr_t)f[i];
        if (a == ip)
            past = 1;
        else if (past && !ls_is_system_code(a))
            all[k++] = a;
    }
    memcpy(out, all, (k < CLAMPI_LP_FRAMES ? k : CLAMPI_LP_FRAMES) * sizeof *out);
    uint32_t stack = 0;
    if (k > CLAMPI_LP_FRAMES) { /* deeper than the page record holds: keep it in the pool */
        uint32_t at = atomic_fetch_add(&ls.nstacks, 1);
        if (at < ls.stack_cap) {
            memset(ls.stacks[at], 0, sizeof ls.stacks[at]);
            memcpy(ls.stacks[at], all, (size_t)k * sizeof *all);
            stack = at + 1;
        } else {
            atomic_fetch_add(&ls.stacks_dropped, 1);
        }
    }
    const unsigned c = last_next++ % UNWIND_CACHE;
    memcpy(last_key[c], key, sizeof key);
    memcpy(last_frames[c], out, sizeof last_frames[c]);
    last_stack[c] = stack;
    return stack;
#else
    (void)ucv;
    return 0;
#endif
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A sample's delay: how long the page stayed protected before this access (sampler.c). */
static void note_delay(clampi_lpage *p) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    uint64_t armed = atomic_load(&p->arm_ns), delay = now > armed ? now - armed : 0;
    atomic_fetch_add(&p->delay_sum_ns, delay);
    atomic_fetch_add(&p->delay_n, 1);
    atomic_fetch_add(&ls.delay_sum_ns, delay);
    atomic_fetch_add(&ls.delay_n, 1);
}

/* One access by this thread to a tracked page. Returns 1 when the access may be retried
 * (page opened, or another thread is opening it), 0 when the page is not protected by us
 * (a genuine fault). */
/* The page gets the program's protection back: one mprotect, timed. */
static void open_page(uintptr_t page, int prot) {
    uint64_t t0 = ls_mono_ns();
    mprotect((void *)page, ls.sys_page, prot);
    atomic_fetch_add_explicit(&ls.cost.open_mprotects, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ls.cost.open_ns, ls_mono_ns() - t0, memory_order_relaxed);
}

uint32_t ls_page_wait_busy(clampi_lpage *p, uintptr_t page, int prot) {
    uint32_t st;
    for (unsigned polls = 0; (st = atomic_load_explicit(&p->state, memory_order_acquire)) == CLAMPI_LP_BUSY;) {
        if (!clampi_wait_pause(&polls, 1024)) clampi_cpu_relax();
        /* a forked child: the thread that was opening the page at the fork is not here
         * to finish, so this one does */
        if (polls > 100000 && getpid() != ls.pid) {
            mprotect((void *)page, ls.sys_page, p->prot ? p->prot : prot);
            atomic_store(&p->state, CLAMPI_LP_OPEN);
            return CLAMPI_LP_OPEN;
        }
    }
    return st;
}

static int access_page(uintptr_t page, clampi_lalloc *a, uintptr_t ip, void *uc, int is_fault) {
    uint64_t t0 = is_fault ? ls_mono_ns() : 0;
    int tid = ls_thread_id();
    clampi_lpage *p = clampi_ltab_get(&ls.tab, page);
    if (p == NULL) { /* table full: stop watching this page */
        mprotect((void *)page, ls.sys_page, a->prot);
        return 1;
    }
    uint32_t st = atomic_load(&p->state);
    switch (st) {
    case CLAMPI_LP_UNTOUCHED:
        if (!atomic_compare_exchange_strong(&p->state, &st, CLAMPI_LP_BUSY)) return 1;
        if (ls_lease_holds(page)) { /* opened ahead for a thread, which may have touched it */
            atomic_store(&p->state, CLAMPI_LP_UNTOUCHED);
            ls_lease_fault(page);
            return 2;
        }
        p->alloc = (int32_t)(a - ls.allocs);
        p->prot = a->prot;
        uintptr_t frames[CLAMPI_LP_FRAMES] = {0};
        uint32_t stack = uc ? fault_frames(uc, frames) : 0;
        clampi_ltab_first_touch(&ls.tab, p, tid, ip, frames, now_ns());
        p->ft_stack = stack;
        open_page(page, a->prot);
        atomic_store(&p->state, CLAMPI_LP_OPEN);
        retry_addr = 0;
        if (is_fault) {
            ls_lease_after_first_touch(a, page, tid, p);
            atomic_fetch_add_explicit(&ls.cost.ft_faults, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&ls.cost.ft_ns, ls_mono_ns() - t0, memory_order_relaxed);
        }
        return 1;
    case CLAMPI_LP_SAMPLED:
        if (!atomic_compare_exchange_strong(&p->state, &st, CLAMPI_LP_BUSY)) return 1;
        clampi_ltab_count_add(&ls.tab, page, tid, 1);
        note_delay(p);
        atomic_fetch_add(&ls.samples, 1);
        atomic_fetch_sub(&ls.outstanding, 1);
        open_page(page, p->prot);
        atomic_store(&p->state, CLAMPI_LP_OPEN);
        retry_addr = 0;
        if (is_fault) {
            atomic_fetch_add_explicit(&ls.cost.sample_faults, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&ls.cost.sample_ns, ls_mono_ns() - t0, memory_order_relaxed);
        }
        return 1;
    case CLAMPI_LP_BUSY:
        /* Another thread is opening this page, or the sampler closing it (an mprotect:
         * microseconds). Returning at once re-faults again and again meanwhile, a signal
         * round trip each; waiting here for the state to change costs one. A system
         * call wrapper looks at the page again afterwards: it may be SAMPLED by then. */
        if (is_fault) atomic_fetch_add_explicit(&ls.cost.busy_faults, 1, memory_order_relaxed);
        ls_page_wait_busy(p, page, a->prot);
        return is_fault ? 1 : 2;
    default: /* OPEN: opened by another thread meanwhile, or a genuine protection fault */
        if (!is_fault) return 1;
        atomic_fetch_add_explicit(&ls.cost.retry_faults, 1, memory_order_relaxed);
        /* A race with another thread's opening repeats on the same page whenever the
         * sampler re-arms it, so only many consecutive retries mean a genuine fault; on a
         * read-write page (all tracked heap memory) a genuine one cannot be ours. */
        if (retry_addr == page && ++retries > ((p->prot & PROT_WRITE) ? 1000 : 2)) return 0;
        if (retry_addr != page) {
            retry_addr = page;
            retries = 0;
        }
        return 1;
    }
}

void ls_touch_range(const void *ptr, size_t n, uintptr_t ip) {
    if (!atomic_load_explicit(&ls.ready, memory_order_relaxed) || n == 0) return;
    uintptr_t lo = (uintptr_t)ptr & ~(ls.sys_page - 1), hi = (uintptr_t)ptr + n;
    int maybe = (lo >= ls.arena_lo && lo < ls.arena_hi) || atomic_load(&ls.nmmap) > 0;
    if (!maybe) return;
    /* The kernel's copy runs with the caller's key rights: other threads' pages opened
     * ahead are settled first (and again after, for one opened meanwhile). */
    const int tid = ls_thread_id();
    ls_lease_settle_range(lo, hi, tid);
    for (uintptr_t pg = lo; pg < hi; pg += ls.sys_page) {
        clampi_lalloc *a = ls_alloc_find(pg);
        for (int tries = 0; a && !a->freed && access_page(pg, a, ip, NULL, 0) == 2 && tries < 8; tries++)
            ;
    }
    ls_lease_settle_range(lo, hi, tid);
}

static const char *sig_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    default: return "signal";
    }
}

/* The run ends on this signal: partial output, then the default action. */
static void die_with(int sig) {
    if (getpid() == ls.pid) ls_write_output(0, 0, 0, sig_name(sig), 0);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked in the handler: delivered when it returns (a fault re-faults) */
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
#ifdef SEGV_PKUERR
    if (si->si_code == SEGV_PKUERR) {
        uintptr_t addr = (uintptr_t)si->si_addr;
        if (ls_lease_fault(addr)) {
            retry_addr = 0;
            errno = saved;
            return;
        }
        /* settled between the fault and the look-up: the page's key is 0 by now */
        clampi_lalloc *a = ls_alloc_find(addr);
        if (a && !a->freed && (retry_addr != addr || ++retries < 1000)) {
            if (retry_addr != addr) retries = 0;
            retry_addr = addr;
            errno = saved;
            return;
        }
    }
#endif
    if (si->si_code == SEGV_ACCERR) {
        uintptr_t addr = (uintptr_t)si->si_addr;
        if (ls_lease_wait(addr)) {
            errno = saved;
            return;
        }
        clampi_lalloc *a = ls_alloc_find(addr);
        if (a && !a->freed && access_page(addr & ~(ls.sys_page - 1), a, fault_ip(uc), uc, 1)) {
            errno = saved;
            return;
        }
    }
    retry_addr = 0;
    if (app_segv.sa_handler == SIG_DFL || app_segv.sa_handler == SIG_IGN) {
        char msg[160] = "clampi-locality: SIGSEGV at ", h[24];
        strcat(msg, clampi_lfmt_hex(h, sizeof h, (uintptr_t)si->si_addr));
        strcat(msg, " (instruction ");
        strcat(msg, clampi_lfmt_hex(h, sizeof h, fault_ip(uc)));
        strcat(msg, "): the program's own fault; writing partial output\n");
        (void)!syscall(SYS_write, 2, msg, strlen(msg));
        die_with(sig);
    } else {
        ls_lease_handler_rights();
        if (app_segv.sa_flags & SA_SIGINFO)
            app_segv.sa_sigaction(sig, si, uc);
        else
            app_segv.sa_handler(sig);
    }
    errno = saved;
}

static void on_fatal(int sig, siginfo_t *si, void *uc) {
    (void)si;
    (void)uc;
    die_with(sig);
}

int ls_fault_init(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    /* no other handler runs inside this one: one that faulted here would be killed
     * (SIGSEGV is blocked) or wait for a settle this handler is in the middle of */
    sigfillset(&sa.sa_mask);
    if (__sigaction(SIGSEGV, &sa, &app_segv) != 0) return -1;
    static const int fatal[] = {SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old, f;
        memset(&f, 0, sizeof f);
        f.sa_sigaction = on_fatal;
        f.sa_flags = SA_SIGINFO | SA_ONSTACK;
        if (__sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) __sigaction(fatal[i], &f, NULL);
    }
    return 0;
}

/* ---- the program's SIGSEGV handler is kept aside: ours stays in front ------------ */
/* An alternate signal stack in tracked memory (a static `char altstack[SIGSTKSZ]` now
 * that static data is tracked, or a malloc'ed one): the kernel writes signal frames
 * there and cannot take a fault, so its pages are opened now (first touch by the
 * caller) and never re-protected by the sampler. */
CLAMPI_API int sigaltstack(const stack_t *ss, stack_t *old) {
    /* before the sampler's own start-up (another library's constructor, e.g. libucs's)
     * nothing is tracked yet: nothing to open */
    if (ss && !(ss->ss_flags & SS_DISABLE) && ss->ss_sp && ss->ss_size && ls.sys_page) {
        uintptr_t lo = (uintptr_t)ss->ss_sp & ~(ls.sys_page - 1), hi = (uintptr_t)ss->ss_sp + ss->ss_size;
        for (uintptr_t pg = lo; pg < hi; pg += ls.sys_page) {
            clampi_lalloc *a = ls_alloc_find(pg);
            if (a) a->unwatched = 1;
        }
        /* signal frames are written with no key rights: not even the caller's own */
        ls_lease_settle_range(lo, hi, -1);
        ls_touch_range(ss->ss_sp, ss->ss_size, (uintptr_t)__builtin_return_address(0));
    }
    return (int)syscall(SYS_sigaltstack, ss, old);
}

/* With pages opened ahead under protection keys (lease.c), every signal handler starts
 * with no rights to any key but 0: a program's handler that reads its thread's own data
 * would fault with every signal blocked, and die. Its handlers are called through this
 * one, which gives the thread its rights back first (sigreturn restores them anyway). */
static struct sigaction app_act[NSIG];
static _Atomic int app_wrapped[NSIG];

static void on_app_signal(int sig, siginfo_t *si, void *uc) {
    ls_lease_handler_rights();
    const struct sigaction *a = &app_act[sig];
    if (a->sa_flags & SA_SIGINFO)
        a->sa_sigaction(sig, si, uc);
    else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN)
        a->sa_handler(sig);
}

CLAMPI_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (sig == SIGSEGV && atomic_load(&ls.ready)) {
        if (old) *old = app_segv;
        if (act) app_segv = *act;
        return 0;
    }
    if (sig <= 0 || sig >= NSIG || !ls_lease_enabled()) return __sigaction(sig, act, old);
    struct sigaction prev, mine;
    const struct sigaction *use = act;
    if (act && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) {
        mine = *act;
        mine.sa_sigaction = on_app_signal;
        mine.sa_flags |= SA_SIGINFO;
        use = &mine;
    }
    const int was_wrapped = atomic_load(&app_wrapped[sig]);
    const struct sigaction saved = app_act[sig];
    if (act) app_act[sig] = *act;
    if (__sigaction(sig, use, &prev) != 0) {
        app_act[sig] = saved;
        return -1;
    }
    if (act) atomic_store(&app_wrapped[sig], use == &mine);
    if (old) *old = was_wrapped ? saved : prev;
    return 0;
}

CLAMPI_API sighandler_t signal(int sig, sighandler_t h) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

/* ---- system calls that write into program buffers: the kernel's copy does not fault
 * into our handler (it fails with EFAULT), so the buffer is opened first, as a touch by
 * the calling thread at the call. ------------------------------------------------- */
#define REAL(name)                        \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* The sampler thread can re-protect a page of the buffer (a sample) between the touch
 * and the kernel's copy: the call then fails with EFAULT, or a write stops short. A pipe
 * stops at that page; a socket at the start of the chunk it was copying, up to a few
 * ten KiB before it. When the write stopped short and a page of ours not far on is
 * not open, that was the sampler (or another thread's run): the rest is touched again and
 * written (up to 8 times in a row without progress; a write to a full non-blocking socket
 * then stops with EAGAIN and returns what was written, as before). Reads are repeated on
 * EFAULT only (a short read is the data's, and nothing was consumed on EFAULT). A single
 * buffer is written as a vector of one. */
static int tracked(const void *p, size_t n) {
    uintptr_t lo = (uintptr_t)p & ~(ls.sys_page - 1), hi = (uintptr_t)p + n;
    for (uintptr_t pg = lo; pg < hi; pg += ls.sys_page) {
        const clampi_lalloc *a = ls_alloc_find(pg);
        if (a && !a->freed) return 1;
    }
    return 0;
}

/* How far on a short write looks for a closed page: AF_UNIX stream sockets stopped within
 * about 36 KiB of it here. Not further: a write cut short for a reason of its own (a
 * signal, SO_SNDTIMEO, a full non-blocking socket) is repeated too when the sampler happens
 * to close a page that near, and a repeat can block again. */
#define CUT_PAGES 64

/* a tracked page in [p, p + n) that is not open, looking at up to *budget pages */
static int closed_in(uintptr_t p, size_t n, int *budget) {
    if (n == 0) return 0;
    const uintptr_t hi = p + n;
    for (uintptr_t pg = p & ~(ls.sys_page - 1); *budget > 0 && pg < hi; pg += ls.sys_page, --*budget) {
        const clampi_lpage *lp = tracked((const void *)pg, 1) ? clampi_ltab_find(&ls.tab, pg) : NULL;
        if (lp && atomic_load(&lp->state) != CLAMPI_LP_OPEN) return 1;
    }
    return 0;
}

static int sampler_cut(const void *p, size_t n, ssize_t r, int tries) {
    if (tries >= 8 || !atomic_load_explicit(&ls.ready, memory_order_relaxed)) return 0;
    return r < 0 && errno == EFAULT && tracked(p, n);
}

/* each buffer of a vector opened, as touched by the wrapper's caller at ra */
static void touch_iov(const struct iovec *iov, size_t cnt, uintptr_t ra) {
    for (size_t i = 0; i < cnt; i++) ls_touch_range(iov[i].iov_base, iov[i].iov_len, ra);
}

#define READ_CALL(call, buf, n)                                         \
    ssize_t r;                                                          \
    for (int tries = 0;; tries++) {                                     \
        ls_touch_range(buf, n, (uintptr_t)__builtin_return_address(0)); \
        r = call;                                                       \
        if (!sampler_cut(buf, n, r, tries)) break;                      \
    }                                                                   \
    return r

CLAMPI_API ssize_t read(int fd, void *buf, size_t n) {
    REAL(read);
    READ_CALL(real_read(fd, buf, n), buf, n);
}

CLAMPI_API ssize_t pread(int fd, void *buf, size_t n, off_t off) {
    REAL(pread);
    READ_CALL(real_pread(fd, buf, n, off), buf, n);
}

CLAMPI_API ssize_t recv(int fd, void *buf, size_t n, int flags) {
    REAL(recv);
    READ_CALL(real_recv(fd, buf, n, flags), buf, n);
}

CLAMPI_API ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *sa, socklen_t *sl) {
    REAL(recvfrom);
    READ_CALL(real_recvfrom(fd, buf, n, flags, sa, sl), buf, n);
}

/* vectors: repeated on EFAULT only */
static int iov_cut(const struct iovec *iov, size_t cnt, ssize_t r, int tries) {
    for (size_t i = 0; r < 0 && i < cnt; i++)
        if (sampler_cut(iov[i].iov_base, iov[i].iov_len, r, tries)) return 1;
    return 0;
}

#define IOV_CALL(call, iov, cnt)                                               \
    ssize_t r;                                                                 \
    for (int tries = 0;; tries++) {                                            \
        touch_iov(iov, (size_t)(cnt), (uintptr_t)__builtin_return_address(0)); \
        r = call;                                                              \
        if (!iov_cut(iov, (size_t)(cnt), r, tries)) break;                     \
    }                                                                          \
    return r

/* Gathering writes: also a write that stopped short at a sampled page goes on from there,
 * with the rest of the vector copied to `rest` (up to IOV_REST entries; a longer rest is
 * returned short, as the kernel may). */
#define IOV_REST 64
static int iov_write_cut(const struct iovec *iov, size_t cnt, ssize_t r, int tries) {
    if (r <= 0) return iov_cut(iov, cnt, r, tries);
    if (tries >= 8 || !atomic_load_explicit(&ls.ready, memory_order_relaxed)) return 0;
    size_t at = (size_t)r, k = 0;
    while (k < cnt && at >= iov[k].iov_len) at -= iov[k++].iov_len;
    int budget = CUT_PAGES;
    for (; k < cnt && budget > 0; k++, at = 0)
        if (closed_in((uintptr_t)iov[k].iov_base + at, iov[k].iov_len - at, &budget)) return 1;
    return 0; /* all written, or stopped for a reason of its own */
}

/* the part of iov after its first r bytes, into rest (may be iov itself); its count, or -1 */
static int iov_after(const struct iovec *iov, size_t cnt, size_t r, struct iovec *rest) {
    size_t i = 0;
    while (i < cnt && r >= iov[i].iov_len) r -= iov[i++].iov_len;
    if (i == cnt) return 0;
    if (cnt - i > IOV_REST) return -1;
    for (size_t j = i; j < cnt; j++) rest[j - i] = iov[j];
    rest[0].iov_base = (char *)rest[0].iov_base + r;
    rest[0].iov_len -= r;
    return (int)(cnt - i);
}

/* call uses iov, cnt and done (bytes written so far); after a partial write, `again` runs
 * (sendmsg drops its control data) */
#define IOV_WRITE_CALL(call, iov0, cnt0, again)                      \
    const struct iovec *iov = (iov0);                                \
    size_t cnt = (cnt0), done = 0;                                   \
    struct iovec rest[IOV_REST];                                     \
    for (int tries = 0;; tries++) {                                  \
        touch_iov(iov, cnt, (uintptr_t)__builtin_return_address(0)); \
        ssize_t r = call;                                            \
        if (!iov_write_cut(iov, cnt, r, tries)) {                    \
            if (r < 0) return done ? (ssize_t)done : r;              \
            return (ssize_t)(done + (size_t)r);                      \
        }                                                            \
        if (r > 0) {                                                 \
            int nrest = iov_after(iov, cnt, (size_t)r, rest);        \
            done += (size_t)r;                                       \
            if (nrest < 0) return (ssize_t)done;                     \
            iov = rest;                                              \
            cnt = (size_t)nrest;                                     \
            tries = -1;                                              \
            again;                                                   \
        }                                                            \
    }

/* one buffer: a vector of one entry (call uses iov->iov_base, iov->iov_len and done) */
#define ONE_WRITE_CALL(call, buf, n)               \
    const struct iovec one = {(void *)(buf), (n)}; \
    IOV_WRITE_CALL(call, &one, 1, (void)0)

CLAMPI_API ssize_t readv(int fd, const struct iovec *iov, int cnt) {
    REAL(readv);
    IOV_CALL(real_readv(fd, iov, cnt), iov, cnt > 0 ? cnt : 0);
}

CLAMPI_API size_t fread(void *buf, size_t size, size_t n, FILE *f) {
    REAL(fread);
    ls_touch_range(buf, size * n, (uintptr_t)__builtin_return_address(0));
    return real_fread(buf, size, n, f);
}

CLAMPI_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
    REAL(recvmsg);
    if (!msg) return real_recvmsg(fd, msg, flags);
    IOV_CALL(real_recvmsg(fd, msg, flags), msg->msg_iov, msg->msg_iovlen);
}

CLAMPI_API char *getcwd(char *buf, size_t n) {
    REAL(getcwd);
    if (buf) ls_touch_range(buf, n, (uintptr_t)__builtin_return_address(0));
    return real_getcwd(buf, n);
}

CLAMPI_API ssize_t readlink(const char *path, char *buf, size_t n) {
    REAL(readlink);
    ls_touch_range(buf, n, (uintptr_t)__builtin_return_address(0));
    return real_readlink(path, buf, n);
}

/* MSG_ZEROCOPY numbers its completions by kernel call: never two calls for one */
#define ZEROCOPY_CALL(buf, n, call) (ls_touch_range(buf, n, (uintptr_t)__builtin_return_address(0)), call)

/* system calls that read program buffers: a never-touched or re-protected page (or one
 * opened ahead for another thread) would fail the kernel's copy with EFAULT */
CLAMPI_API ssize_t send(int fd, const void *buf, size_t n, int flags) {
    REAL(send);
    if (flags & MSG_ZEROCOPY) return ZEROCOPY_CALL(buf, n, real_send(fd, buf, n, flags));
    ONE_WRITE_CALL(real_send(fd, iov->iov_base, iov->iov_len, flags), buf, n);
}

CLAMPI_API ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *sa, socklen_t sl) {
    REAL(sendto);
    if (flags & MSG_ZEROCOPY) return ZEROCOPY_CALL(buf, n, real_sendto(fd, buf, n, flags, sa, sl));
    ONE_WRITE_CALL(real_sendto(fd, iov->iov_base, iov->iov_len, flags, sa, sl), buf, n);
}

CLAMPI_API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
    REAL(sendmsg);
    if (!msg) return real_sendmsg(fd, msg, flags);
    if (flags & MSG_ZEROCOPY) {
        touch_iov(msg->msg_iov, msg->msg_iovlen, (uintptr_t)__builtin_return_address(0));
        return real_sendmsg(fd, msg, flags);
    }
    struct msghdr m = *msg;
    IOV_WRITE_CALL((m.msg_iov = (struct iovec *)iov, m.msg_iovlen = cnt, real_sendmsg(fd, &m, flags)), msg->msg_iov,
                   msg->msg_iovlen, (m.msg_control = NULL, m.msg_controllen = 0));
}

CLAMPI_API ssize_t writev(int fd, const struct iovec *iov0, int cnt0) {
    REAL(writev);
    if (cnt0 <= 0) return real_writev(fd, iov0, cnt0);
    IOV_WRITE_CALL(real_writev(fd, iov, (int)cnt), iov0, (size_t)cnt0, (void)0);
}

CLAMPI_API ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite);
    ONE_WRITE_CALL(real_pwrite(fd, iov->iov_base, iov->iov_len, off + (off_t)done), buf, n);
}

CLAMPI_API ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write);
    ONE_WRITE_CALL(real_write(fd, iov->iov_base, iov->iov_len), buf, n);
}
