/* CMPIX_Wait / Test / Waitall / Waitany / Testall: MPI's completion calls, run with
 * clampi's progress, for clampi's and ordinary requests alike. A clampi receive that was
 * truncated completes with MPI_ERR_TRUNCATE, raised through its communicator's handler
 * (and in MPI_ERROR of the statuses for the multiple-completion calls). */
#include <sched.h>
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg.h"

/* After MPI completed a pinned request: its error, or MPI_SUCCESS. */
static int pinned_error(clampi_mreq *p, MPI_Comm *comm) {
    if (!p) return MPI_SUCCESS;
    int e = p->error;
    *comm = p->comm;
    clampi_mreq_unpin(p);
    return e;
}

/* Test one request with progress; *done when complete. */
static int test_one(MPI_Request *request, int *done, MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    clampi_mreq *p = clampi_mreq_pin(*request);
    clampi_msg_progress();
    int err = PMPI_Test(request, done, status);
    if (!p) return err;
    MPI_Comm comm = MPI_COMM_NULL;
    if (!*done) { clampi_mreq_unpin(p); return err; }
    int e = pinned_error(p, &comm);
    if (e != MPI_SUCCESS) {
        status->MPI_ERROR = e;
        return clampi_msg_raise(comm, e, "receive truncated");
    }
    return err;
}

int CMPIX_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!request || !flag) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "NULL argument");
    return test_one(request, flag, status);
}

int CMPIX_Wait(MPI_Request *request, MPI_Status *status) {
    if (!request) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "NULL request");
    int done = 0, err, spins = 0;
    while ((err = test_one(request, &done, status)) == MPI_SUCCESS && !done)
        if (++spins % 64 == 0) sched_yield();
    return err;
}

/* Pins the clampi requests among reqs (NULL for others). */
static clampi_mreq **pin_all(int n, MPI_Request reqs[]) {
    clampi_mreq **p = calloc((size_t)(n ? n : 1), sizeof *p);
    for (int i = 0; p && i < n; i++) p[i] = clampi_mreq_pin(reqs[i]);
    return p;
}

/* Errors of completed pinned requests into statuses; unpins all. MPI_ERR_IN_STATUS if any. */
static int finish_all(int n, clampi_mreq **p, MPI_Status statuses[], int completed) {
    int any = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    for (int i = 0; i < n; i++) {
        if (!p[i]) continue;
        int e = completed ? pinned_error(p[i], &comm) : (clampi_mreq_unpin(p[i]), MPI_SUCCESS);
        if (e != MPI_SUCCESS) any = 1;
        if (statuses != MPI_STATUSES_IGNORE && completed) statuses[i].MPI_ERROR = e;
    }
    if (any && statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < n; i++)
            if (!p[i]) statuses[i].MPI_ERROR = MPI_SUCCESS;
    free(p);
    return any ? clampi_msg_raise(comm, MPI_ERR_IN_STATUS, "receive truncated") : MPI_SUCCESS;
}

int CMPIX_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (count < 0 || !flag || (count && !requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    clampi_mreq **p = pin_all(count, requests);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    clampi_msg_progress();
    int err = PMPI_Testall(count, requests, flag, statuses);
    int e = finish_all(count, p, statuses, *flag);
    return err != MPI_SUCCESS ? err : e;
}

int CMPIX_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (count < 0 || (count && !requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    clampi_mreq **p = pin_all(count, requests);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    int flag = 0, err, spins = 0;
    for (;;) {
        clampi_msg_progress();
        err = PMPI_Testall(count, requests, &flag, statuses);
        if (err != MPI_SUCCESS || flag) break;
        if (++spins % 64 == 0) sched_yield();
    }
    int e = finish_all(count, p, statuses, flag);
    return err != MPI_SUCCESS ? err : e;
}

int CMPIX_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (count < 0 || !index || (count && !requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    clampi_mreq **p = pin_all(count, requests);
    if (!p) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    int flag = 0, err, spins = 0;
    for (;;) {
        clampi_msg_progress();
        err = PMPI_Testany(count, requests, index, &flag, status);
        if (err != MPI_SUCCESS || flag) break;
        if (++spins % 64 == 0) sched_yield();
    }
    int e = MPI_SUCCESS;
    MPI_Comm comm = MPI_COMM_NULL;
    for (int i = 0; i < count; i++) {
        if (!p[i]) continue;
        if (i == *index) e = pinned_error(p[i], &comm);
        else clampi_mreq_unpin(p[i]);
    }
    free(p);
    if (e != MPI_SUCCESS) {
        status->MPI_ERROR = e;
        return clampi_msg_raise(comm, e, "receive truncated");
    }
    return err;
}
