/* See progress_hook.h. */
#include "common/progress_hook.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#define MAX_HOOKS 4 /* generalized requests, the message layer: room to spare */

typedef int (*opal_cb)(void);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(clampi_progress_fn) hooks[MAX_HOOKS];
static int registered; /* with Open MPI's progress engine: 1 yes, -1 not available */

static int run_hooks(void) {
    for (int i = 0; i < MAX_HOOKS; i++) {
        clampi_progress_fn fn = atomic_load_explicit(&hooks[i], memory_order_acquire);
        if (fn) fn();
    }
    return 0;
}

int clampi_progress_hook_add(clampi_progress_fn fn) {
    pthread_mutex_lock(&lock);
    if (!registered) {
        int (*reg)(opal_cb) = (int (*)(opal_cb))dlsym(RTLD_DEFAULT, "opal_progress_register");
        registered = reg && reg(run_hooks) == 0 ? 1 : -1;
    }
    int ok = registered == 1, present = 0, free_slot = -1;
    for (int i = 0; ok && i < MAX_HOOKS; i++) {
        clampi_progress_fn h = atomic_load(&hooks[i]);
        if (h == fn) present = 1;
        if (!h && free_slot < 0) free_slot = i;
    }
    if (ok && !present) {
        if (free_slot < 0)
            ok = 0; /* full: cannot happen with clampi's own callers */
        else
            atomic_store_explicit(&hooks[free_slot], fn, memory_order_release);
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

void clampi_progress_hook_remove(clampi_progress_fn fn) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_HOOKS; i++)
        if (atomic_load(&hooks[i]) == fn) atomic_store(&hooks[i], NULL);
    pthread_mutex_unlock(&lock);
}

clampi_progress_fn clampi_idle_hook;
clampi_progress_fn clampi_before_blocking_hook;
