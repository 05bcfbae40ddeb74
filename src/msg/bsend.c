/* Buffered sends in the program's attached buffers, under CLAMPI_MATCH.
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
 * same accounting against the attached size.
 *
 * MPI-4.1: a buffer attached to a communicator (MPI_Comm_attach_buffer) serves that
 * communicator's buffered sends before the process's; clampi holds it when the communicator
 * is clampi's, MPI otherwise. MPI_BUFFER_AUTOMATIC: clampi's memory per send, no limit. The
 * flushes wait for the buffered sends made before them (the nonblocking ones: a watched
 * request, watch.c). Buffers attached to sessions stay MPI's. */
#include <mpi.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

#define ALIGN 16

typedef struct block {
    MPI_Request req;   /* set under block_lock once the send is posted */
    int posted;        /* 0: reserved, its thread still packing and posting (reap leaves it) */
    size_t off, span;  /* placement in the attached buffer (owned): the packed data, aligned */
    size_t len;        /* accounted against the attached size: pack size + MPI_BSEND_OVERHEAD */
    void *own;         /* the data when the buffer is MPI's, or automatic */
    unsigned long seq; /* the pool's count of sends when it was reserved (from 1) */
    struct block *next;
} block;

/* One attached buffer: the process's, or a communicator's. */
typedef struct pool {
    MPI_Comm comm;       /* MPI_COMM_NULL: the process's */
    block *inflight;     /* sorted by off when owned */
    char *abuf;          /* the program's attached buffer */
    long attached, used; /* -1: nothing attached */
    int owned;           /* clampi took the buffer (MPI has none attached) */
    int automatic;       /* MPI_BUFFER_AUTOMATIC: clampi's memory for each send, no limit */
    unsigned long seq;   /* sends reserved so far */
    struct pool *next;
} pool;

static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER; /* every pool */
static pool process = {.comm = MPI_COMM_NULL, .attached = -1};
static pool *comm_pools; /* buffers attached to communicators */

static int is_automatic(const void *buffer) {
#ifdef MPI_BUFFER_AUTOMATIC
    return buffer == MPI_BUFFER_AUTOMATIC;
#else
    (void)buffer;
    return 0;
#endif
}

/* comm's own buffer (locked), or NULL. */
static pool *comm_pool(MPI_Comm comm) {
    for (pool *p = comm_pools; p; p = p->next)
        if (p->comm == comm) return p;
    return NULL;
}

/* Reaps pool p's buffered sends that have left (locked; wait = 1: until none is left, the
 * lock let go between passes). The list stays in place so that no reservation takes the
 * space of a send still in flight. */
static void reap_locked(pool *p, int wait) {
    for (unsigned polls = 0;;) {
        for (block **q = &p->inflight; *q;) {
            block *b = *q;
            int flag = 0;
            if (b->posted) clampi_msg_test(&b->req, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                *q = b->next;
                p->used -= (long)b->len;
                free(b->own);
                free(b);
            } else {
                q = &b->next;
            }
        }
        if (!wait || !p->inflight) return;
        pthread_mutex_unlock(&block_lock);
        clampi_msg_progress();
        clampi_msg_pause(&polls);
        pthread_mutex_lock(&block_lock);
    }
}

void clampi_msg_bsend_drain(void) {
    pthread_mutex_lock(&block_lock);
    reap_locked(&process, 1);
    for (int again = 1; again;) { /* the list may change while a reap lets the lock go */
        again = 0;
        for (pool *p = comm_pools; p && !again; p = p->next)
            if (p->inflight) reap_locked(p, 1), again = 1;
    }
    pthread_mutex_unlock(&block_lock);
}

/* ---- attaching and detaching ---------------------------------------------------------- */
/* The program's buffer to p (locked): clampi's when owned, else MPI has it. */
static void take(pool *p, void *buffer, long size, int owned) {
    p->automatic = is_automatic(buffer);
    p->abuf = p->automatic ? NULL : buffer;
    p->attached = size;
    p->used = 0;
    p->owned = owned;
}

int clampi_msg_buffer_attach(void *buffer, int size) {
    pthread_mutex_lock(&block_lock);
    int busy = process.attached >= 0;
    pthread_mutex_unlock(&block_lock);
    int automatic = is_automatic(buffer);
    if (busy || !clampi_msg_comm(MPI_COMM_WORLD) || size < 0 || (!buffer && size > 0 && !automatic)) {
        int rc = busy ? clampi_msg_raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "a buffer is attached already")
                      : PMPI_Buffer_attach(buffer, size);
        if (rc == MPI_SUCCESS) {
            pthread_mutex_lock(&block_lock);
            take(&process, buffer, size, 0);
            pthread_mutex_unlock(&block_lock);
        }
        return rc;
    }
    pthread_mutex_lock(&block_lock);
    take(&process, buffer, size, 1);
    pthread_mutex_unlock(&block_lock);
    return MPI_SUCCESS;
}

/* p's buffer back to the program (locked, owned), once its sends have left. */
static void give_back(pool *p, void *buffer_addr, int *size) {
    reap_locked(p, 1); /* MPI: detach waits for the buffered sends to leave */
#ifdef MPI_BUFFER_AUTOMATIC
    *(void **)buffer_addr = p->automatic ? MPI_BUFFER_AUTOMATIC : p->abuf;
#else
    *(void **)buffer_addr = p->abuf;
#endif
    *size = (int)p->attached;
    p->abuf = NULL;
    p->attached = -1;
    p->owned = p->automatic = 0;
    p->used = 0;
}

int clampi_msg_buffer_detach(void *buffer_addr, int *size) {
    pthread_mutex_lock(&block_lock);
    reap_locked(&process, 1);
    int mine = process.owned && process.attached >= 0;
    if (mine) give_back(&process, buffer_addr, size);
    pthread_mutex_unlock(&block_lock);
    if (mine) return MPI_SUCCESS;
    clampi_carrier_release(); /* MPI's detach waits for its buffered sends to be received */
    int rc = PMPI_Buffer_detach(buffer_addr, size);
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&block_lock);
        process.attached = -1;
        process.automatic = 0;
        pthread_mutex_unlock(&block_lock);
    }
    return rc;
}

#ifdef CLAMPI_MPI_HAS_BUFFER_FLUSH
int clampi_msg_comm_buffer_attach(MPI_Comm comm, void *buffer, int size) {
    int automatic = is_automatic(buffer);
    int clampis = comm != MPI_COMM_NULL && clampi_msg_comm(comm) != NULL;
    pthread_mutex_lock(&block_lock);
    int busy = comm != MPI_COMM_NULL && comm_pool(comm) != NULL;
    pthread_mutex_unlock(&block_lock);
    if (busy) return clampi_msg_raise(comm, MPI_ERR_BUFFER, "a buffer is attached to the communicator already");
    pool *p = calloc(1, sizeof *p);
    if (!p) return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
    int owned = clampis && size >= 0 && (buffer || size == 0 || automatic);
    int rc = owned ? MPI_SUCCESS : PMPI_Comm_attach_buffer(comm, buffer, size); /* MPI's, or its error */
    if (rc != MPI_SUCCESS) {
        free(p);
        return rc;
    }
    p->comm = comm;
    pthread_mutex_lock(&block_lock);
    take(p, buffer, size, owned);
    p->next = comm_pools;
    comm_pools = p;
    pthread_mutex_unlock(&block_lock);
    return MPI_SUCCESS;
}

/* comm's pool out of the list (locked). */
static void unlink_pool(pool *p) {
    for (pool **q = &comm_pools; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
}

int clampi_msg_comm_buffer_detach(MPI_Comm comm, void *buffer_addr, int *size) {
    pthread_mutex_lock(&block_lock);
    pool *p = comm_pool(comm);
    if (p && p->owned) {
        give_back(p, buffer_addr, size);
        unlink_pool(p);
        pthread_mutex_unlock(&block_lock);
        free(p);
        return MPI_SUCCESS;
    }
    pthread_mutex_unlock(&block_lock);
    clampi_carrier_release(); /* as MPI_Buffer_detach */
    int rc = PMPI_Comm_detach_buffer(comm, buffer_addr, size);
    if (rc == MPI_SUCCESS && p) {
        pthread_mutex_lock(&block_lock);
        reap_locked(p, 1); /* clampi's own sends accounted against MPI's buffer */
        unlink_pool(p);
        pthread_mutex_unlock(&block_lock);
        free(p);
    }
    return rc;
}

void clampi_msg_comm_buffer_freed(MPI_Comm comm) {
    pthread_mutex_lock(&block_lock);
    pool *p = comm_pools ? comm_pool(comm) : NULL;
    if (p) {
        reap_locked(p, 1); /* as MPI_Comm_detach_buffer would */
        unlink_pool(p);
    }
    pthread_mutex_unlock(&block_lock);
    free(p);
}

/* ---- flushes -------------------------------------------------------------------------- */
/* The buffer a flush of comm (MPI_COMM_NULL: the process's) waits for (locked), or NULL. */
static pool *flush_pool(MPI_Comm comm) {
    pool *p = comm == MPI_COMM_NULL ? &process : comm_pool(comm);
    return p && p->attached >= 0 ? p : NULL;
}

int clampi_msg_buffer_flush(MPI_Comm comm) {
    pthread_mutex_lock(&block_lock);
    pool *p = flush_pool(comm);
    if (p) reap_locked(p, 1);
    int mine = p && p->owned;
    pthread_mutex_unlock(&block_lock);
    if (mine) return MPI_SUCCESS;
    clampi_carrier_release(); /* MPI's flush waits for its buffered sends to be received */
    return comm == MPI_COMM_NULL ? PMPI_Buffer_flush() : PMPI_Comm_flush_buffer(comm);
}

/* A nonblocking flush's watch: done when the pool has no send of seq <= upto left. */
typedef struct flush_watch {
    MPI_Comm comm;
    unsigned long upto;
} flush_watch;

static int flush_ready(void *ctx, clampi_mreq *r) {
    flush_watch *f = ctx;
    /* Progress may run inside a reap, with the lock held by this thread: not ready yet then. */
    if (pthread_mutex_trylock(&block_lock) != 0) return 0;
    pool *p = f->comm == MPI_COMM_NULL ? &process : comm_pool(f->comm);
    int left = 0;
    if (p) {
        reap_locked(p, 0);
        for (block *b = p->inflight; b && !left; b = b->next) left = b->seq <= f->upto;
    }
    pthread_mutex_unlock(&block_lock);
    if (left) return 0;
    (void)r;
    free(f);
    return 1;
}

int clampi_msg_buffer_iflush(MPI_Comm comm, MPI_Request *request) {
    pthread_mutex_lock(&block_lock);
    pool *p = request ? flush_pool(comm) : NULL;
    unsigned long upto = p ? p->seq : 0;
    int mine = p && p->owned;
    if (p && !mine) reap_locked(p, 1); /* clampi's own sends against MPI's buffer (enabled after the attach) */
    pthread_mutex_unlock(&block_lock);
    if (!mine) return comm == MPI_COMM_NULL ? PMPI_Buffer_iflush(request) : PMPI_Comm_iflush_buffer(comm, request);
    flush_watch *f = malloc(sizeof *f);
    int err = MPI_ERR_NO_MEM;
    if (f) {
        *f = (flush_watch){.comm = comm, .upto = upto};
        err = clampi_msg_watched(NULL, 0, NULL, flush_ready, f, request);
        if (err == MPI_SUCCESS) return MPI_SUCCESS;
    }
    free(f);
    return clampi_msg_raise(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err, NULL);
}
#endif

/* Space in p for a send of size packed bytes (locked): a block in the list, or NULL. A
 * send is accounted at size + MPI_BSEND_OVERHEAD, as the program sized the buffer, and
 * placed in size rounded up to ALIGN: the block's bookkeeping lives outside the buffer, so
 * the overhead pays for the alignment and a buffer sized by the standard's rule always holds
 * its sends (MPICH's bsend1: three odd-sized sends to self that stay in flight). */
static block *reserve(pool *p, size_t size) {
    size_t need = size + MPI_BSEND_OVERHEAD;
    block *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->len = need;
    b->span = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (!p->owned || p->automatic) {
        if ((!p->automatic && p->used + (long)need > p->attached) || !(b->own = malloc(need))) {
            free(b);
            return NULL;
        }
        p->used += (long)need;
        b->seq = ++p->seq;
        b->next = p->inflight;
        p->inflight = b;
        return b;
    }
    size_t at = 0;
    block **q = &p->inflight;
    for (; *q; q = &(*q)->next) { /* first gap that holds it */
        if ((*q)->off >= at + b->span) break;
        at = (*q)->off + (*q)->span;
    }
    if (p->used + (long)need > p->attached || at + b->span > (size_t)p->attached) {
        free(b);
        return NULL;
    }
    b->off = at;
    b->seq = ++p->seq;
    b->next = *q;
    *q = b;
    p->used += (long)need;
    return b;
}

static void unreserve(pool *p, block *b) {
    pthread_mutex_lock(&block_lock);
    for (block **q = &p->inflight; *q; q = &(*q)->next)
        if (*q == b) {
            *q = b->next;
            break;
        }
    p->used -= (long)b->len;
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

/* The buffer a buffered send on comm uses (locked): comm's own, else the process's. */
static pool *send_pool(MPI_Comm comm) {
    pool *p = comm_pools ? comm_pool(comm) : NULL;
    return p ? p : &process;
}

/* A buffered send into p: on comm's clampi path (clampi = 1) or MPI's MPI_Isend. */
static int bsend(pool *p, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, int clampi,
                 MPI_Request *request) {
    int size = 0, pos = 0;
    PMPI_Pack_size(count, type, comm, &size);
    pthread_mutex_lock(&block_lock);
    reap_locked(p, 0);
    block *b = p->attached >= 0 ? reserve(p, (size_t)size) : NULL;
    char *data = b ? (b->own ? b->own : p->abuf + b->off) : NULL;
    pthread_mutex_unlock(&block_lock);
    if (!b) return clampi_msg_raise(comm, MPI_ERR_BUFFER, "buffered send does not fit the attached buffer");
    if (size) PMPI_Pack(buf, count, type, data, size, &pos, comm);
    /* Posted into a request of its own: another thread's reap reads b->req (locked) */
    MPI_Request req;
    int rc = clampi ? CMPIX_Isend(data, pos, MPI_PACKED, dest, tag, comm, &req)
                    : PMPI_Isend(data, pos, MPI_PACKED, dest, tag, comm, &req);
    if (rc != MPI_SUCCESS) {
        unreserve(p, b);
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
    pool *p = send_pool(comm);
    long have = p->attached;
    pthread_mutex_unlock(&block_lock);
    if (have < 0) /* nothing attached: MPI reports it (MPI_ERR_BUFFER) */
        return request ? PMPI_Ibsend(buf, count, type, dest, tag, comm, request)
                       : PMPI_Bsend(buf, count, type, dest, tag, comm);
    return bsend(p, buf, count, type, dest, tag, comm, 1, request);
}

int clampi_msg_bsend_mpi(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *request) {
    pthread_mutex_lock(&block_lock);
    pool *p = send_pool(comm);
    int mine = p->owned && p->attached >= 0;
    pthread_mutex_unlock(&block_lock);
    if (!mine || comm == MPI_COMM_NULL || count < 0 || type == MPI_DATATYPE_NULL) /* MPI's buffer, or MPI's error */
        return request ? PMPI_Ibsend(buf, count, type, dest, tag, comm, request)
                       : PMPI_Bsend(buf, count, type, dest, tag, comm);
    if (dest == MPI_PROC_NULL) return request ? PMPI_Isend(buf, count, type, dest, tag, comm, request) : MPI_SUCCESS;
    return bsend(p, buf, count, type, dest, tag, comm, 0, request);
}
