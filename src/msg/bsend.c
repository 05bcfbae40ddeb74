/* Buffered sends in the program's attached buffer, under CLAMPI_MATCH.
 *
 * When a clampi communicator exists at MPI_Buffer_attach (CLAMPI_MATCH: MPI_COMM_WORLD from
 * MPI_Init on), clampi takes the buffer and MPI gets none: every buffered send -- on clampi's
 * communicators (sent by clampi) and on MPI's (sent with MPI_Isend) -- packs its data into
 * the attached buffer (first fit, pack size + MPI_BSEND_OVERHEAD bytes each) and completes
 * at once; its space is free again when the send has left. When it does not fit the space
 * left (after the sends that have left are reaped), or nothing is attached, the call fails
 * with MPI_ERR_BUFFER on the communicator, as MPI's own buffered sends do. MPI_Buffer_detach
 * waits for them and gives the program's buffer back (MPI_Bsend_init on MPI's
 * communicators too: persist.c starts each as clampi_msg_bsend_mpi). Left to MPI: bad
 * arguments (MPI's own MPI_Bsend reports them). The preload's MPI_Buffer_attach/_detach,
 * MPI_Bsend and MPI_Ibsend are entry points into these calls (src/pmpi/match_entry.c).
 * When no clampi communicator exists at attach time (a clampi_match info key enables one
 * later), the buffer is MPI's, and clampi's buffered sends use memory of their own with the
 * same accounting against the attached size. */
#include <mpi.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

#define ALIGN 16

typedef struct block {
    MPI_Request req;  /* set under block_lock once the send is posted */
    int posted;       /* 0: reserved, its thread still packing and posting (reap leaves it) */
    size_t off, span; /* placement in the attached buffer (owned): the packed data, aligned */
    size_t len;       /* accounted against the attached size: pack size + MPI_BSEND_OVERHEAD */
    void *own;        /* the data when the buffer is MPI's */
    struct block *next;
} block;

static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;
static block *inflight;          /* sorted by off when owned */
static char *abuf;               /* the program's attached buffer */
static long attached = -1, used; /* -1: nothing attached */
static int owned;                /* clampi took the buffer (MPI has none attached) */

int clampi_msg_buffer_attach(void *buffer, int size) {
    pthread_mutex_lock(&block_lock);
    int busy = attached >= 0;
    pthread_mutex_unlock(&block_lock);
    if (busy || !clampi_msg_comm(MPI_COMM_WORLD) || size < 0 || (!buffer && size > 0)) {
        int rc = busy ? clampi_msg_raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "a buffer is attached already")
                      : PMPI_Buffer_attach(buffer, size);
        if (rc == MPI_SUCCESS) {
            pthread_mutex_lock(&block_lock);
            attached = size;
            owned = 0;
            pthread_mutex_unlock(&block_lock);
        }
        return rc;
    }
    pthread_mutex_lock(&block_lock);
    abuf = buffer;
    attached = size;
    used = 0;
    owned = 1;
    pthread_mutex_unlock(&block_lock);
    return MPI_SUCCESS;
}

/* Reaps the buffered sends that have left (wait = 1: until none is left). The list stays
 * in place (under the lock) so that no reservation takes the space of a send still in
 * flight; waiting, the lock is let go between passes. */
static void reap(int wait) {
    for (unsigned polls = 0;;) {
        pthread_mutex_lock(&block_lock);
        for (block **p = &inflight; *p;) {
            block *b = *p;
            int flag = 0;
            if (b->posted) clampi_msg_test(&b->req, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                *p = b->next;
                used -= (long)b->len;
                free(b->own);
                free(b);
            } else {
                p = &b->next;
            }
        }
        int left = inflight != NULL;
        pthread_mutex_unlock(&block_lock);
        if (!wait || !left) return;
        clampi_msg_progress();
        clampi_msg_pause(&polls);
    }
}

void clampi_msg_bsend_drain(void) { reap(1); }

int clampi_msg_buffer_detach(void *buffer_addr, int *size) {
    reap(1); /* MPI: detach waits for the buffered sends to leave */
    pthread_mutex_lock(&block_lock);
    int mine = owned && attached >= 0;
    pthread_mutex_unlock(&block_lock);
    if (!mine) {
        clampi_carrier_release(); /* MPI's detach waits for its buffered sends to be received */
        int rc = PMPI_Buffer_detach(buffer_addr, size);
        if (rc == MPI_SUCCESS) {
            pthread_mutex_lock(&block_lock);
            attached = -1;
            pthread_mutex_unlock(&block_lock);
        }
        return rc;
    }
    pthread_mutex_lock(&block_lock);
    *(void **)buffer_addr = abuf;
    *size = (int)attached;
    abuf = NULL;
    attached = -1;
    owned = 0;
    used = 0;
    pthread_mutex_unlock(&block_lock);
    return MPI_SUCCESS;
}

/* Space for a send of size packed bytes (locked): a block in the list, or NULL. A send is
 * accounted at size + MPI_BSEND_OVERHEAD, as the program sized the buffer, and placed in
 * size rounded up to ALIGN: the block's bookkeeping lives outside the buffer, so the
 * overhead pays for the alignment and a buffer sized by the standard's rule always holds
 * its sends (MPICH's bsend1: three odd-sized sends to self that stay in flight). */
static block *reserve(size_t size) {
    size_t need = size + MPI_BSEND_OVERHEAD;
    block *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->len = need;
    b->span = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (!owned) {
        if (used + (long)need > attached || !(b->own = malloc(need))) {
            free(b);
            return NULL;
        }
        used += (long)need;
        b->next = inflight;
        inflight = b;
        return b;
    }
    size_t at = 0;
    block **p = &inflight;
    for (; *p; p = &(*p)->next) { /* first gap that holds it */
        if ((*p)->off >= at + b->span) break;
        at = (*p)->off + (*p)->span;
    }
    if (used + (long)need > attached || at + b->span > (size_t)attached) {
        free(b);
        return NULL;
    }
    b->off = at;
    b->next = *p;
    *p = b;
    used += (long)need;
    return b;
}

static void unreserve(block *b) {
    pthread_mutex_lock(&block_lock);
    for (block **p = &inflight; *p; p = &(*p)->next)
        if (*p == b) {
            *p = b->next;
            break;
        }
    used -= (long)b->len;
    pthread_mutex_unlock(&block_lock);
    free(b->own);
    free(b);
}

static int done_query(void *extra, MPI_Status *status) {
    (void)extra;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_cancelled(status, 0);
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    return MPI_SUCCESS;
}
static int done_free(void *extra) {
    (void)extra;
    return MPI_SUCCESS;
}
static int done_cancel(void *extra, int complete) {
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

/* An already complete request (a buffered send, complete for the program); MPI's to free. */
static int done_request(MPI_Request *request) {
    int rc = PMPI_Grequest_start(done_query, done_free, done_cancel, NULL, request);
    return rc == MPI_SUCCESS ? PMPI_Grequest_complete(*request) : rc;
}

/* A buffered send: on comm's clampi path (clampi = 1) or MPI's MPI_Isend. */
static int bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, int clampi,
                 MPI_Request *request) {
    int size = 0, pos = 0;
    PMPI_Pack_size(count, type, comm, &size);
    reap(0);
    pthread_mutex_lock(&block_lock);
    block *b = attached >= 0 ? reserve((size_t)size) : NULL;
    char *data = b ? (b->own ? b->own : abuf + b->off) : NULL;
    pthread_mutex_unlock(&block_lock);
    if (!b) return clampi_msg_raise(comm, MPI_ERR_BUFFER, "buffered send does not fit the attached buffer");
    if (size) PMPI_Pack(buf, count, type, data, size, &pos, comm);
    /* Posted into a request of its own: another thread's reap reads b->req (locked) */
    MPI_Request req;
    int rc = clampi ? CMPIX_Isend(data, pos, MPI_PACKED, dest, tag, comm, &req)
                    : PMPI_Isend(data, pos, MPI_PACKED, dest, tag, comm, &req);
    if (rc != MPI_SUCCESS) {
        unreserve(b);
        return rc;
    }
    pthread_mutex_lock(&block_lock);
    b->req = req;
    b->posted = 1;
    pthread_mutex_unlock(&block_lock);
    /* complete for the program: an already complete request */
    return request ? done_request(request) : MPI_SUCCESS;
}

int clampi_msg_bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request *request) {
    pthread_mutex_lock(&block_lock);
    long have = attached;
    pthread_mutex_unlock(&block_lock);
    if (have < 0) /* nothing attached: MPI reports it (MPI_ERR_BUFFER) */
        return request ? PMPI_Ibsend(buf, count, type, dest, tag, comm, request)
                       : PMPI_Bsend(buf, count, type, dest, tag, comm);
    return bsend(buf, count, type, dest, tag, comm, 1, request);
}

int clampi_msg_bsend_mpi(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *request) {
    pthread_mutex_lock(&block_lock);
    int mine = owned && attached >= 0;
    pthread_mutex_unlock(&block_lock);
    if (!mine || comm == MPI_COMM_NULL || count < 0 || type == MPI_DATATYPE_NULL) /* MPI's buffer, or MPI's error */
        return request ? PMPI_Ibsend(buf, count, type, dest, tag, comm, request)
                       : PMPI_Bsend(buf, count, type, dest, tag, comm);
    if (dest == MPI_PROC_NULL) return request ? PMPI_Isend(buf, count, type, dest, tag, comm, request) : MPI_SUCCESS;
    return bsend(buf, count, type, dest, tag, comm, 0, request);
}
