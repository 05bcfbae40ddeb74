/* What must run first in MPI_Finalize (finalize_first.h). */
#include "services/finalize_first.h"

#include <pthread.h>

#define MAX_FIRST 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void (*first[MAX_FIRST])(void);
static int nfirst, ran;

void clampi_finalize_first_add(void (*fn)(void)) {
    pthread_mutex_lock(&lock);
    int known = 0;
    for (int i = 0; i < nfirst; i++) known |= first[i] == fn;
    if (!known && nfirst < MAX_FIRST) first[nfirst++] = fn;
    pthread_mutex_unlock(&lock);
}

void clampi_finalize_first_run(void) {
    pthread_mutex_lock(&lock);
    const int run = !ran;
    ran = 1;
    pthread_mutex_unlock(&lock);
    if (!run) return;
    for (int i = 0; i < nfirst; i++) first[i]();
}
