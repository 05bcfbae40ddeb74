/* The completion calls on clampi's requests: CMPIX_Wait/Test/Waitall/Waitany/Testall and
 * what MPI's own MPI_Wait/Test/Waitall/Waitany/Waitsome/Testall/Testany/Testsome do with
 * clampi linked (src/msg/mpi_entry.c, weak; the preload's wrappers call the same clampi_msg_
 * functions).
 *
 * Why wrappers: a clampi receive that was truncated must complete with MPI_ERR_TRUNCATE
 * through its communicator's handler, and MPI cannot do that for a generalized request.
 * Open MPI raises a generalized request's error (query_fn's return or its status's
 * MPI_ERROR) on MPI_COMM_WORLD, always; MPICH ignores the status's MPI_ERROR and turns a
 * non-zero return of query_fn into an MPI_ERR_OTHER on MPI_COMM_WORLD. So the query
 * function reports success to MPI, and these calls put the request's error in the
 * statuses (MPI_ERR_IN_STATUS for the multiple-completion calls) and raise it on the
 * request's communicator. With no clampi request alive they are MPI's calls unchanged. */
#include <sched.h>
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg.h"

/* Pins the clampi requests among reqs (NULL for others); NULL when none is clampi's. */
static clampi_mreq **pin_all(int n, MPI_Request reqs[], int *any) {
    clampi_mreq **p = calloc((size_t)(n ? n : 1), sizeof *p);
    *any = 0;
    for (int i = 0; p && i < n; i++) *any |= (p[i] = clampi_mreq_pin(reqs[i])) != NULL;
    return p;
}

static void unpin_all(int n, clampi_mreq **p) {
    for (int i = 0; i < n; i++)
        if (p[i]) clampi_mreq_unpin(p[i]);
    free(p);
}

/* Progress, then yield now and then: the body of every waiting loop. */
static void wait_step(int *spins) {
    if (++*spins % 64 == 0) sched_yield();
    clampi_msg_progress();
}

/* A completed single request: its error into *status and raised on its communicator. */
static int single_error(clampi_mreq *p, MPI_Status *status, int err) {
    if (!p) return err;
    int e = p->error;
    MPI_Comm comm = p->comm;
    clampi_mreq_unpin(p);
    if (e == MPI_SUCCESS || err != MPI_SUCCESS) return err;
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = e;
    return clampi_msg_raise(comm, e, "receive truncated");
}

/* Completed requests done[0..n) (indices into p): their errors into statuses (k-th
 * status for the k-th done), MPI_ERR_IN_STATUS raised on the first failed one's
 * communicator. Unpins everything. */
static int multi_error(int count, clampi_mreq **p, int n, const int *done, MPI_Status statuses[], int err) {
    int any = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    for (int k = 0; k < n; k++) {
        clampi_mreq *r = p[done ? done[k] : k];
        if (r && r->error != MPI_SUCCESS && !any) any = 1, comm = r->comm;
    }
    if (any && err == MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE)
        for (int k = 0; k < n; k++) {
            clampi_mreq *r = p[done ? done[k] : k];
            statuses[k].MPI_ERROR = r ? r->error : MPI_SUCCESS;
        }
    unpin_all(count, p);
    if (!any || err != MPI_SUCCESS) return err;
    return clampi_msg_raise(comm, MPI_ERR_IN_STATUS, "receive truncated");
}

int clampi_msg_test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!clampi_mreq_live()) return PMPI_Test(request, flag, status);
    clampi_mreq *p = clampi_mreq_pin(*request);
    if (p) clampi_msg_progress();
    int err = PMPI_Test(request, flag, status);
    if (p && !*flag) {
        clampi_mreq_unpin(p);
        return err;
    }
    return single_error(p, status, err);
}

int clampi_msg_wait(MPI_Request *request, MPI_Status *status) {
    if (!clampi_mreq_live()) return PMPI_Wait(request, status);
    clampi_mreq *p = clampi_mreq_pin(*request);
    if (!p) return PMPI_Wait(request, status);
    int flag = 0, err, spins = 0;
    clampi_msg_progress();
    while ((err = PMPI_Test(request, &flag, status)) == MPI_SUCCESS && !flag) wait_step(&spins);
    return single_error(p, status, err);
}

int clampi_msg_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    if (!clampi_mreq_live()) return PMPI_Testany(count, requests, index, flag, status);
    int any;
    clampi_mreq **p = pin_all(count, requests, &any);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (any) clampi_msg_progress();
    int err = PMPI_Testany(count, requests, index, flag, status);
    clampi_mreq *done = NULL;
    if (*flag && *index != MPI_UNDEFINED) done = p[*index], p[*index] = NULL;
    unpin_all(count, p);
    return single_error(done, status, err);
}

int clampi_msg_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (!clampi_mreq_live()) return PMPI_Waitany(count, requests, index, status);
    int any;
    clampi_mreq **p = pin_all(count, requests, &any);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!any) {
        free(p);
        return PMPI_Waitany(count, requests, index, status);
    }
    int flag = 0, err, spins = 0;
    clampi_msg_progress();
    while ((err = PMPI_Testany(count, requests, index, &flag, status)) == MPI_SUCCESS && !flag) wait_step(&spins);
    clampi_mreq *done = NULL;
    if (flag && *index != MPI_UNDEFINED) done = p[*index], p[*index] = NULL;
    unpin_all(count, p);
    return single_error(done, status, err);
}

int clampi_msg_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (!clampi_mreq_live()) return PMPI_Testall(count, requests, flag, statuses);
    int any;
    clampi_mreq **p = pin_all(count, requests, &any);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (any) clampi_msg_progress();
    int err = PMPI_Testall(count, requests, flag, statuses);
    if (!*flag) {
        unpin_all(count, p);
        return err;
    }
    return multi_error(count, p, count, NULL, statuses, err);
}

int clampi_msg_waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (!clampi_mreq_live()) return PMPI_Waitall(count, requests, statuses);
    int any;
    clampi_mreq **p = pin_all(count, requests, &any);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!any) {
        free(p);
        return PMPI_Waitall(count, requests, statuses);
    }
    int flag = 0, err, spins = 0;
    clampi_msg_progress();
    while ((err = PMPI_Testall(count, requests, &flag, statuses)) == MPI_SUCCESS && !flag) wait_step(&spins);
    return multi_error(count, p, count, NULL, statuses, err);
}

int clampi_msg_testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!clampi_mreq_live()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    int any;
    clampi_mreq **p = pin_all(incount, requests, &any);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (any) clampi_msg_progress();
    int err = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    return multi_error(incount, p, n, indices, statuses, err);
}

int clampi_msg_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!clampi_mreq_live()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    int any;
    clampi_mreq **p = pin_all(incount, requests, &any);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!any) {
        free(p);
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    }
    int err, spins = 0;
    clampi_msg_progress();
    while ((err = PMPI_Testsome(incount, requests, outcount, indices, statuses)) == MPI_SUCCESS && *outcount == 0)
        wait_step(&spins);
    int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    return multi_error(incount, p, n, indices, statuses, err);
}

/* ---- clampi's API ------------------------------------------------------------------ */
int CMPIX_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!request || !flag) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "NULL argument");
    return clampi_msg_test(request, flag, status);
}

int CMPIX_Wait(MPI_Request *request, MPI_Status *status) {
    if (!request) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "NULL request");
    return clampi_msg_wait(request, status);
}

int CMPIX_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (count < 0 || !flag || (count && !requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    return clampi_msg_testall(count, requests, flag, statuses);
}

int CMPIX_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (count < 0 || (count && !requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    return clampi_msg_waitall(count, requests, statuses);
}

int CMPIX_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (count < 0 || !index || (count && !requests))
        return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    return clampi_msg_waitany(count, requests, index, status);
}
