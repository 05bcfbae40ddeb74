/* The completion calls once persistent requests exist (persist.c) or a hook is set
 * (msg.h: clampi_msg_request_hooks, the preload's matching profile): a persistent handle is
 * replaced by the request it stands for while complete.c completes the mix, and given back
 * after (persistent requests stay; one whose operation finished becomes inactive); the
 * handles the call finished are reported to the hook. While no persistent handle stands for
 * a clampi request or is an MPI_PROC_NULL stand-in (every one MPI's own on the MPI carrier's
 * duplicate, none of them serving a start of clampi's) and no hook is set, the calls pass the
 * program's array on as it is.
 * mpi_entry.c takes this path only from then on (clampi_msg_hooked). */
#include <mpi.h>

#include <stdlib.h>
#include <string.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

#define STACK 64

_Atomic int clampi_msg_hooked;
static clampi_msg_request_hooks hooks;

void clampi_msg_hook_requests(const clampi_msg_request_hooks *rows) {
    hooks = *rows;
    clampi_msg_hooks_need();
}

void clampi_msg_hooks_need(void) { atomic_store_explicit(&clampi_msg_hooked, 1, memory_order_release); }

static MPI_Request *persistent(MPI_Request h) { return h != MPI_REQUEST_NULL ? clampi_msg_persistent(h) : NULL; }

/* A persistent handle stands for another request now, or is an MPI_PROC_NULL stand-in
 * (else every handle is MPI's own, which MPI completes as it is). */
static inline int swaps_handles(void) {
    return atomic_load_explicit(&clampi_msg_ninner, memory_order_acquire) != 0 ||
           atomic_load_explicit(&clampi_msg_nproxy, memory_order_relaxed) != 0;
}

/* Neither a handle to replace nor a hook to tell: complete.c's call as it is. */
static inline int as_is(void) { return !hooks.completed && !swaps_handles(); }

/* One completion call's requests: what complete.c sees (reqs: the program's array itself
 * while no persistent handle stands for a clampi request), each persistent handle's slot
 * (inner[i]), and the program's handles as they were (handles, for the hook's report). */
typedef struct {
    int n;
    MPI_Request *program, *reqs, *handles, **inner;
    MPI_Request reqs_stack[STACK], handles_stack[STACK], *inner_stack[STACK];
} around;

static void *take(void *stack, size_t size, int n) { return n <= STACK ? stack : malloc(size * (size_t)n); }

static void enter(around *a, int n, MPI_Request requests[]) {
    a->n = n;
    a->program = a->reqs = requests;
    a->inner = NULL;
    a->handles = hooks.completed ? take(a->handles_stack, sizeof(MPI_Request), n) : NULL;
    if (a->handles) memcpy(a->handles, requests, sizeof(MPI_Request) * (size_t)n);
    /* complete.c on the handles themselves: every persistent handle is MPI's own request on
     * the wire, none standing for another */
    if (!swaps_handles()) return;
    MPI_Request *reqs = take(a->reqs_stack, sizeof(MPI_Request), n);
    MPI_Request **inner = take(a->inner_stack, sizeof(MPI_Request *), n);
    if (!reqs || !inner) { /* no memory: complete.c on the handles themselves */
        if (reqs && reqs != a->reqs_stack) free(reqs);
        if (inner && inner != a->inner_stack) free(inner);
        return;
    }
    for (int i = 0; i < n; i++) {
        inner[i] = persistent(requests[i]);
        /* an inactive handle: MPI_REQUEST_NULL; one on the wire is MPI's request itself
         * (inactive, or active since a native start) */
        reqs[i] = !inner[i] || (*inner[i] == MPI_REQUEST_NULL && !clampi_msg_persistent_started(inner[i])) ? requests[i]
                                                                                                           : *inner[i];
    }
    a->reqs = reqs, a->inner = inner;
}

/* Copies back; a persistent request whose operation completed becomes inactive (its MPI half,
 * made for MPI_PROC_NULL, is complete already). */
static void leave(around *a) {
    if (!a->inner) return;
    for (int i = 0; i < a->n; i++) {
        if (!a->inner[i]) {
            a->program[i] = a->reqs[i];
        } else if (*a->inner[i] != MPI_REQUEST_NULL && a->reqs[i] == MPI_REQUEST_NULL) {
            *a->inner[i] = MPI_REQUEST_NULL;
            atomic_fetch_sub(&clampi_msg_ninner, 1);
            MPI_Request h = a->program[i]; /* the handle stays the program's */
            if (clampi_msg_persistent_started(a->inner[i])) PMPI_Wait(&h, MPI_STATUS_IGNORE);
        }
    }
}

static void report(const around *a, int i) {
    if (hooks.completed && a->handles && i >= 0 && i < a->n) hooks.completed(a->handles[i], 1);
}

static int done(around *a, int rc) {
    if (a->reqs != a->reqs_stack && a->reqs != a->program) free(a->reqs);
    if (a->handles != a->handles_stack) free(a->handles);
    if (a->inner != a->inner_stack) free(a->inner);
    return rc;
}

int clampi_msg_hooked_wait(MPI_Request *request, MPI_Status *status) {
    if (!request || !swaps_handles()) { /* the hook only: no copies */
        MPI_Request h = request ? *request : MPI_REQUEST_NULL;
        int rc = clampi_msg_wait(request, status);
        if (hooks.completed) hooks.completed(h, 1);
        return rc;
    }
    around a;
    enter(&a, 1, request);
    int rc = clampi_msg_wait(a.reqs, status);
    leave(&a);
    report(&a, 0);
    return done(&a, rc);
}

int clampi_msg_hooked_test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!request || !flag || !swaps_handles()) {
        MPI_Request h = request ? *request : MPI_REQUEST_NULL;
        int rc = clampi_msg_test(request, flag, status);
        if (rc == MPI_SUCCESS && flag && *flag && hooks.completed) hooks.completed(h, 1);
        return rc;
    }
    around a;
    enter(&a, 1, request);
    int rc = clampi_msg_test(a.reqs, flag, status);
    leave(&a);
    if (*flag) report(&a, 0);
    return done(&a, rc);
}

int clampi_msg_hooked_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (count <= 0 || !requests || as_is()) return clampi_msg_waitany(count, requests, index, status);
    around a;
    enter(&a, count, requests);
    int rc = clampi_msg_waitany(count, a.reqs, index, status);
    leave(&a);
    if (index && *index != MPI_UNDEFINED) report(&a, *index);
    return done(&a, rc);
}

int clampi_msg_hooked_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    if (count <= 0 || !requests || as_is()) return clampi_msg_testany(count, requests, index, flag, status);
    around a;
    enter(&a, count, requests);
    int rc = clampi_msg_testany(count, a.reqs, index, flag, status);
    leave(&a);
    if (flag && *flag && index && *index != MPI_UNDEFINED) report(&a, *index);
    return done(&a, rc);
}

int clampi_msg_hooked_waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (count <= 0 || !requests || as_is()) return clampi_msg_waitall(count, requests, statuses);
    around a;
    enter(&a, count, requests);
    int rc = clampi_msg_waitall(count, a.reqs, statuses);
    leave(&a);
    for (int i = 0; i < count; i++) report(&a, i);
    return done(&a, rc);
}

int clampi_msg_hooked_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (count <= 0 || !requests || as_is()) return clampi_msg_testall(count, requests, flag, statuses);
    around a;
    enter(&a, count, requests);
    int rc = clampi_msg_testall(count, a.reqs, flag, statuses);
    leave(&a);
    for (int i = 0; flag && *flag && i < count; i++) report(&a, i);
    return done(&a, rc);
}

int clampi_msg_hooked_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                               MPI_Status statuses[]) {
    if (incount <= 0 || !requests || as_is())
        return clampi_msg_waitsome(incount, requests, outcount, indices, statuses);
    around a;
    enter(&a, incount, requests);
    int rc = clampi_msg_waitsome(incount, a.reqs, outcount, indices, statuses);
    leave(&a);
    for (int i = 0; outcount && indices && *outcount != MPI_UNDEFINED && i < *outcount; i++) report(&a, indices[i]);
    return done(&a, rc);
}

int clampi_msg_hooked_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                               MPI_Status statuses[]) {
    if (incount <= 0 || !requests || as_is())
        return clampi_msg_testsome(incount, requests, outcount, indices, statuses);
    around a;
    enter(&a, incount, requests);
    int rc = clampi_msg_testsome(incount, a.reqs, outcount, indices, statuses);
    leave(&a);
    for (int i = 0; outcount && indices && *outcount != MPI_UNDEFINED && i < *outcount; i++) report(&a, indices[i]);
    return done(&a, rc);
}

/* MPI_Request_free: a persistent request's active operation is left to finish (MPI's rule),
 * its handle freed. */
int clampi_msg_hooked_request_free(MPI_Request *request) {
    MPI_Request h = request ? *request : MPI_REQUEST_NULL;
    int rc = request && persistent(h) ? clampi_msg_persistent_free(request) : clampi_msg_request_free(request);
    if (rc == MPI_SUCCESS && hooks.completed && h != MPI_REQUEST_NULL) hooks.completed(h, 0);
    return rc;
}

/* MPI_Cancel: a persistent handle cancels its active operation (MPI's own when inactive). */
int clampi_msg_hooked_cancel(MPI_Request *request) {
    MPI_Request *inner = request ? persistent(*request) : NULL;
    if (inner) return *inner != MPI_REQUEST_NULL ? CMPIX_Cancel(inner) : PMPI_Cancel(request);
    return request && clampi_mreq_live() ? CMPIX_Cancel(request) : PMPI_Cancel(request);
}

int clampi_msg_hooked_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    MPI_Request *inner = persistent(request);
    if (inner && *inner != MPI_REQUEST_NULL) request = *inner;
    return clampi_msg_get_status(request, flag, status);
}
