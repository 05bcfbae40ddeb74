/* Requests clampi finishes from progress once a condition holds, for operations made of
 * other operations: MPI_Isendrecv (pair.c: a receive and a send) and the nonblocking
 * flushes of buffered sends (bsend.c). The request is clampi's, with nothing of its own to
 * transfer; clampi_msg_progress asks each watch's function, outside MPI's own progress (the
 * functions may make MPI calls, which progress again: a thread polls once at a time). */
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

typedef struct watch {
    clampi_mreq *r; /* pinned while watched */
    clampi_watch_fn ready;
    void *ctx;
    struct watch *next;
} watch;

static pthread_mutex_t watches_lock = PTHREAD_MUTEX_INITIALIZER;
static watch *watches;
_Atomic int clampi_msg_watches_n; /* watched requests: progress skips the poll when 0 */

int clampi_msg_watched(clampi_mcomm *mc, int is_recv, void *tmp, clampi_watch_fn ready, void *ctx,
                       MPI_Request *request) {
    watch *w = malloc(sizeof *w);
    clampi_mreq *r = NULL;
    int err = w ? clampi_mreq_create(mc, is_recv, NULL, 0, MPI_BYTE, &r) : MPI_ERR_NO_MEM;
    if (err != MPI_SUCCESS) {
        free(w);
        return err;
    }
    r->tmp = tmp;
    atomic_fetch_add(&r->refs, 1);
    *w = (watch){.r = r, .ready = ready, .ctx = ctx};
    *request = r->mpi;
    pthread_mutex_lock(&watches_lock);
    w->next = watches;
    watches = w;
    atomic_fetch_add(&clampi_msg_watches_n, 1);
    pthread_mutex_unlock(&watches_lock);
    return MPI_SUCCESS;
}

void clampi_msg_watches_poll(void) {
    static _Thread_local CLAMPI_MSG_TLS int polling;
    if (polling || pthread_mutex_trylock(&watches_lock) != 0) return;
    polling = 1;
    watch *done = NULL;
    for (watch **p = &watches; *p;) {
        watch *w = *p;
        if (w->ready(w->ctx, w->r)) {
            *p = w->next;
            w->next = done;
            done = w;
            atomic_fetch_sub(&clampi_msg_watches_n, 1);
        } else {
            p = &w->next;
        }
    }
    pthread_mutex_unlock(&watches_lock);
    while (done) {
        watch *w = done;
        done = w->next;
        clampi_msg_finish(w->r);
        clampi_mreq_unpin(w->r);
        free(w);
    }
    polling = 0;
}
