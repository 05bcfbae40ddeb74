/* CLAMPI_MATCH under the preload: buffered sends on clampi communicators.
 *
 * MPI_Buffer_attach / MPI_Buffer_detach still go to MPI (MPI's buffered sends on other
 * communicators use the buffer) and clampi notes the buffer's size. A clampi buffered send
 * packs the data (its copy: so it completes locally) and sends it with clampi; it takes
 * pack size + MPI_BSEND_OVERHEAD of the attached size until the send has left. When
 * nothing is attached or the message could never fit, MPI's own MPI_Bsend is called and
 * reports MPI_ERR_BUFFER as it does. When it fits the buffer but not the space left, the
 * older buffered sends are waited for first (where MPI would fail: a difference). The
 * data itself sits in clampi's own memory, not in the attached buffer. */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>

#include "clampi/match.h"
#include "pmpi/match_entry.h"

#define MATCH_API __attribute__((visibility("default")))

typedef struct pending {
    MPI_Request req;
    void *data;
    long need;
    struct pending *next;
} pending;

static pthread_mutex_t block = PTHREAD_MUTEX_INITIALIZER;
static pending *inflight;
static long attached = -1, used; /* -1: nothing attached */

MATCH_API int MPI_Buffer_attach(void *buffer, int size) {
    int rc = PMPI_Buffer_attach(buffer, size);
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&block);
        attached = size;
        pthread_mutex_unlock(&block);
    }
    return rc;
}

/* Completes (wait = 1) or reaps (wait = 0) the buffered sends in flight. Called unlocked. */
static void reap(int wait) {
    pthread_mutex_lock(&block);
    pending *list = inflight;
    inflight = NULL;
    pthread_mutex_unlock(&block);
    pending *keep = NULL;
    while (list) {
        pending *p = list;
        list = p->next;
        int flag = 1;
        if (wait)
            clampi_msg_wait(&p->req, MPI_STATUS_IGNORE);
        else
            clampi_msg_test(&p->req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            pthread_mutex_lock(&block);
            used -= p->need;
            pthread_mutex_unlock(&block);
            free(p->data);
            free(p);
        } else {
            p->next = keep;
            keep = p;
        }
    }
    pthread_mutex_lock(&block);
    while (keep) {
        pending *p = keep;
        keep = p->next;
        p->next = inflight;
        inflight = p;
    }
    pthread_mutex_unlock(&block);
}

void clampi_pm_bsend_drain(void) { reap(1); }

MATCH_API int MPI_Buffer_detach(void *buffer_addr, int *size) {
    reap(1); /* MPI: detach waits for the buffered sends to leave */
    int rc = PMPI_Buffer_detach(buffer_addr, size);
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&block);
        attached = -1;
        pthread_mutex_unlock(&block);
    }
    return rc;
}

int clampi_pm_bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request) {
    int size = 0;
    PMPI_Pack_size(count, type, comm, &size);
    long need = (long)size + MPI_BSEND_OVERHEAD;
    reap(0);
    pthread_mutex_lock(&block);
    long have = attached;
    pthread_mutex_unlock(&block);
    if (have < 0 || need > have) /* MPI reports it (MPI_ERR_BUFFER) */
        return request ? PMPI_Ibsend(buf, count, type, dest, tag, comm, request)
                       : PMPI_Bsend(buf, count, type, dest, tag, comm);
    for (;;) {
        pthread_mutex_lock(&block);
        int fits = used + need <= attached;
        if (fits) used += need;
        pthread_mutex_unlock(&block);
        if (fits) break;
        clampi_msg_progress();
        reap(0);
    }
    pending *p = malloc(sizeof *p);
    void *data = malloc(size ? (size_t)size : 1);
    int pos = 0;
    if (!p || !data) {
        free(p);
        free(data);
        pthread_mutex_lock(&block);
        used -= need;
        pthread_mutex_unlock(&block);
        return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
    }
    if (size) PMPI_Pack(buf, count, type, data, size, &pos, comm);
    int rc = CMPIX_Isend(data, pos, MPI_PACKED, dest, tag, comm, &p->req);
    if (rc != MPI_SUCCESS) {
        free(p);
        free(data);
        pthread_mutex_lock(&block);
        used -= need;
        pthread_mutex_unlock(&block);
        return rc;
    }
    p->data = data;
    p->need = need;
    pthread_mutex_lock(&block);
    p->next = inflight;
    inflight = p;
    pthread_mutex_unlock(&block);
    /* the buffered send is complete for the program: an already complete request */
    if (request) return CMPIX_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, tag, comm, request);
    return MPI_SUCCESS;
}
