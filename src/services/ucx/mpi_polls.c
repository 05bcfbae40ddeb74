/* See mpi_polls.h. Compiled with _GNU_SOURCE (dladdr). */
#include "services/ucx/mpi_polls.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef unsigned (*progress_fn)(ucp_worker_h);

static progress_fn real;
static _Atomic int seen;
static _Atomic(clampi_progress_fn) callback;
/* What a call does while clampi has nothing to do in it: UCX's progress itself, once the
 * MPI's first poll is noted, while no callback is set and once UCX's definition is known;
 * NULL otherwise (then the call takes the slow path). One load decides every call. */
static _Atomic(progress_fn) direct;
static pthread_mutex_t direct_lock = PTHREAD_MUTEX_INITIALIZER;
/* in clampi's own poll, or in the callback: the callback does not run */
static __thread int inside __attribute__((tls_model("initial-exec")));
/* in the callback, run from the MPI's poll */
static __thread int from_mpi __attribute__((tls_model("initial-exec")));

/* Never clampi's own definition (it would call itself): compared by the object that holds
 * it, since in position-independent code ucp_worker_progress names whichever definition
 * comes first in the lookup, not necessarily this one. */
static progress_fn from(void *lib) {
    progress_fn f = lib ? (progress_fn)dlsym(lib, "ucp_worker_progress") : NULL;
    Dl_info found, self;
    if (f && dladdr((void *)f, &found) && dladdr((void *)&from, &self) && found.dli_fbase == self.dli_fbase)
        return NULL;
    return f;
}

/* The next definition after clampi's in the lookup order (UCX's, or a counting tool's
 * loaded after clampi); else, when libucp comes before clampi (RTLD_NEXT finds nothing),
 * the one in the library that defines ucp_worker_create (which clampi does not define);
 * else libucp's by name. */
static progress_fn find_real(void) {
    progress_fn f = from(RTLD_NEXT);
    Dl_info info;
    if (!f && dladdr((void *)&ucp_worker_create, &info) && info.dli_fname) {
        void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        f = from(lib);
        if (lib) dlclose(lib);
    }
    if (!f) {
        void *lib = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
        f = from(lib);
        if (lib) dlclose(lib);
    }
    return f;
}

static progress_fn direct_now(void) {
    int quiet =
        !atomic_load_explicit(&callback, memory_order_acquire) && atomic_load_explicit(&seen, memory_order_acquire);
    return quiet ? __atomic_load_n(&real, __ATOMIC_ACQUIRE) : NULL;
}

/* Recomputed under a lock by whatever changes one of its inputs, so that two changes in two
 * threads cannot leave a stale value behind. */
static void update_direct(void) {
    pthread_mutex_lock(&direct_lock);
    atomic_store_explicit(&direct, direct_now(), memory_order_release);
    pthread_mutex_unlock(&direct_lock);
}

/* A child of fork has no progress thread: its MPI's polls (if any) run no pass. It has one
 * thread, and the lock may have been held by another at the fork. */
static void clear_in_child(void) {
    atomic_store_explicit(&callback, NULL, memory_order_relaxed);
    pthread_mutex_init(&direct_lock, NULL);
    atomic_store_explicit(&direct, direct_now(), memory_order_relaxed);
}

static void resolve(void) {
    if (!real) {
        __atomic_store_n(&real, find_real(), __ATOMIC_RELEASE);
        update_direct();
    }
}

__attribute__((constructor)) static void init(void) {
    resolve();
    pthread_atfork(NULL, NULL, clear_in_child);
}

__attribute__((noinline, cold)) static progress_fn resolve_or_abort(void) {
    resolve();
    progress_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) { /* no UCX to call: every wait of clampi's would spin forever */
        fprintf(stderr, "clampi: ucp_worker_progress of UCX not found\n");
        abort();
    }
    return f;
}

static inline unsigned real_progress(ucp_worker_h worker) {
    progress_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (__builtin_expect(!f, 0)) f = resolve_or_abort();
    return f(worker);
}

/* Through the program's symbol lookup, as any caller: a tool that counts UCX calls by
 * defining ucp_worker_progress itself (clampi's tests do) still sees clampi's. */
unsigned clampi_ucx_progress(ucp_worker_h worker) {
    inside++;
    unsigned n = ucp_worker_progress(worker);
    inside--;
    return n;
}

/* Out of line, so that the common call keeps no stack frame. */
__attribute__((noinline, cold)) static void run_pass(clampi_progress_fn cb) {
    if (inside) return; /* clampi's own poll */
    inside = from_mpi = 1;
    cb();
    inside = from_mpi = 0;
}
static void note_seen(void) {
    if (inside || atomic_load_explicit(&seen, memory_order_relaxed)) return;
    atomic_store_explicit(&seen, 1, memory_order_release);
    update_direct();
}

/* A call while clampi has something to do in it: the pass (before UCX's progress), or the
 * first poll to note, or UCX's definition to find. */
__attribute__((noinline, cold)) static unsigned slow_progress(ucp_worker_h worker) {
    clampi_progress_fn cb = atomic_load_explicit(&callback, memory_order_acquire);
    if (cb != NULL) run_pass(cb);
    note_seen();
    return real_progress(worker);
}

/* Exported (the library hides every other symbol): the MPI's calls must find it. Weak: a
 * program linking clampi statically may define its own (a counting tool), which wins.
 * While clampi has nothing to do a call costs one load, a test and a tail call to UCX
 * (bench/results/mpi_polls_instructions.txt). */
__attribute__((weak, visibility("default"))) unsigned ucp_worker_progress(ucp_worker_h worker) {
    progress_fn f = atomic_load_explicit(&direct, memory_order_acquire);
    if (__builtin_expect(f != NULL, 1)) return f(worker);
    return slow_progress(worker);
}

int clampi_ucx_mpi_polls_running_here(void) { return from_mpi; }

int clampi_ucx_mpi_polls_seen(void) { return atomic_load_explicit(&seen, memory_order_relaxed); }

void clampi_ucx_mpi_polls_set(clampi_progress_fn fn) {
    atomic_store_explicit(&callback, fn, memory_order_release);
    update_direct();
}
