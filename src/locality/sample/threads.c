/* Thread numbering (0 = main, then creation order) and per-thread CPU time, by wrapping
 * pthread_create's start routine. */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

static __thread int my_id __attribute__((tls_model("initial-exec"))) = -1;
static _Atomic int next_id = 1;

static void register_self(int id) {
    my_id = id;
    if (id < 0 || id >= LS_MAX_THREADS) return;
    ls_thread *t = &ls.threads[id];
    if (pthread_getcpuclockid(pthread_self(), &t->clock) == 0) atomic_store(&t->alive, 1);
    atomic_store(&t->used, 1);
    int n = atomic_load(&ls.nthreads);
    while (n < id + 1 && !atomic_compare_exchange_weak(&ls.nthreads, &n, id + 1))
        ;
}

int ls_thread_id(void) {
    if (my_id < 0) /* a thread we did not see start (e.g. created with clone) */
        register_self(atomic_fetch_add(&next_id, 1));
    return my_id;
}

void ls_thread_main_init(void) { register_self(0); }

static void thread_ended(void *arg) {
    (void)arg;
    if (my_id < 0 || my_id >= LS_MAX_THREADS) return;
    ls_thread *t = &ls.threads[my_id];
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        atomic_store(&t->cpu_ns, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
    atomic_store(&t->alive, 0);
}

struct start_arg {
    void *(*fn)(void *);
    void *arg;
    int id;
};

static void *trampoline(void *p) {
    struct start_arg sa = *(struct start_arg *)p;
    __libc_free(p);
    register_self(sa.id);
    ls_lease_thread_start(sa.id);
    void *ret;
    pthread_cleanup_push(thread_ended, NULL);
    ret = sa.fn(sa.arg);
    pthread_cleanup_pop(1);
    return ret;
}

/* C11 threads: glibc starts them without going through pthread_create's symbol. */
struct c11_arg {
    thrd_start_t fn;
    void *arg;
};

static void *c11_start(void *p) {
    struct c11_arg c = *(struct c11_arg *)p;
    __libc_free(p);
    return (void *)(intptr_t)c.fn(c.arg);
}

static int skipped_module(const Dl_info *info, const char *base) {
    static Dl_info own;
    if (!own.dli_fbase) dladdr((void *)skipped_module, &own);
    return info->dli_fbase == own.dli_fbase || strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0 ||
           strncmp(base, "libpthread", 10) == 0;
}

/* The file name of the module whose code created the thread: the innermost frame outside
 * the C library and this one (pthread_create, thrd_create), kept now because a library may
 * be unloaded (MPI's components at MPI_Finalize) before the output is written. The report
 * tells the runtimes' threads from the program's by it. dladdr takes the loader's lock,
 * which a thread created inside a constructor already holds (it is recursive). */
static void note_creator(ls_thread *t) {
    void *frames[12];
    int n = backtrace(frames, 12);
    for (int i = 1; i < n; i++) {
        Dl_info info;
        if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
        const char *slash = strrchr(info.dli_fname, '/');
        const char *base = slash ? slash + 1 : info.dli_fname;
        if (skipped_module(&info, base)) continue;
        snprintf(t->creator, sizeof t->creator, "%s", base);
        return;
    }
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

CLAMPI_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    static create_fn real;
    if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    struct start_arg *sa = __libc_malloc(sizeof *sa);
    if (!sa) return real(th, attr, fn, arg);
    sa->fn = fn;
    sa->arg = arg;
    sa->id = atomic_fetch_add(&next_id, 1); /* numbered at creation, in the creating order */
    if (sa->id < LS_MAX_THREADS) note_creator(&ls.threads[sa->id]);
    int rc = real(th, attr, trampoline, sa);
    if (rc != 0) __libc_free(sa);
    return rc;
}

void ls_thread_work(uint64_t *work, int n) {
    for (int i = 0; i < n && i < LS_MAX_THREADS; i++) {
        ls_thread *t = &ls.threads[i];
        struct timespec ts;
        work[i] = atomic_load(&t->cpu_ns);
        if (atomic_load(&t->alive) && clock_gettime(t->clock, &ts) == 0)
            work[i] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
}

void ls_thread_creators(const char **module, int n) {
    for (int i = 0; i < n && i < LS_MAX_THREADS; i++) module[i] = ls.threads[i].creator;
}

/* The sampler's own thread: not numbered, not a thread of the program. */
int ls_spawn_helper(pthread_t *th, void *(*fn)(void *), void *arg) {
    create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    return real(th, NULL, fn, arg);
}

CLAMPI_API int thrd_create(thrd_t *th, thrd_start_t fn, void *arg) {
    struct c11_arg *c = __libc_malloc(sizeof *c);
    if (!c) return thrd_nomem;
    c->fn = fn;
    c->arg = arg;
    int rc = pthread_create((pthread_t *)th, NULL, c11_start, c);
    if (rc != 0) __libc_free(c);
    return rc == 0 ? thrd_success : rc == EAGAIN ? thrd_nomem : thrd_error;
}
