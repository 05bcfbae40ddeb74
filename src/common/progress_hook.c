/* See progress_hook.h. */
#include "common/progress_hook.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#define MAX_HOOKS 4 /* generalized requests, the message layer, the UCX service: room to spare */

typedef int (*opal_cb)(void);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(clampi_progress_fn) hooks[MAX_HOOKS];
static int available; /* Open MPI's progress engine takes callbacks: 1 yes, -1 no, 0 not asked */
static int (*opal_register)(opal_cb);
static int on; /* run_hooks is registered (for good): MPI's progress engine calls it on every poll */

static _Atomic int nslots; /* slots ever used */

static int run_hooks(void) {
    const int n = atomic_load_explicit(&nslots, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        clampi_progress_fn fn = atomic_load_explicit(&hooks[i], memory_order_acquire);
        if (fn) fn();
    }
    return 0;
}

static void look_up(void) { /* lock held */
    if (available) return;
    opal_register = (int (*)(opal_cb))dlsym(RTLD_DEFAULT, "opal_progress_register");
    available = opal_register ? 1 : -1;
}

int clampi_progress_hook_available(void) {
    pthread_mutex_lock(&lock);
    look_up();
    int ok = available == 1;
    pthread_mutex_unlock(&lock);
    return ok;
}

int clampi_progress_hook_add(clampi_progress_fn fn) {
    pthread_mutex_lock(&lock);
    look_up();
    if (available == 1 && !on) on = opal_register(run_hooks) == 0;
    int ok = on, present = 0, free_slot = -1;
    for (int i = 0; ok && i < MAX_HOOKS; i++) {
        clampi_progress_fn h = atomic_load(&hooks[i]);
        if (h == fn) present = 1;
        if (!h && free_slot < 0) free_slot = i;
    }
    if (ok && !present) {
        if (free_slot < 0) {
            ok = 0; /* full: cannot happen with clampi's own callers */
        } else {
            atomic_store_explicit(&hooks[free_slot], fn, memory_order_release);
            if (free_slot >= atomic_load(&nslots)) atomic_store_explicit(&nslots, free_slot + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

/* run_hooks stays registered: Open MPI 4.1's opal_progress_unregister stores one slot past
 * a full callback array, and its register frees the array other threads may be walking when
 * it grows; so clampi registers once and leaves it (an empty run_hooks costs a load). */
void clampi_progress_hook_remove(clampi_progress_fn fn) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_HOOKS; i++)
        if (atomic_load(&hooks[i]) == fn) atomic_store(&hooks[i], NULL);
    pthread_mutex_unlock(&lock);
}

clampi_progress_fn clampi_idle_hooks[CLAMPI_IDLE_PARTS];
clampi_progress_fn clampi_before_blocking_hook;
