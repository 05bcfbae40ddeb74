/* MPI's completion calls: MPI_Wait/Test/Waitall/Waitany/Waitsome/Testall/Testany/Testsome on
 * any mix of clampi's and MPI's requests (complete.c says why), and MPI_Request_free/Cancel/
 * Request_get_status, which must know clampi's handles. Defined here once, for libclampi and
 * the preload alike: the preload's persistent requests and matching profile are hooks
 * (complete_hooks.c), taken after one load and branch once set.
 *
 * This file defines MPI_ names, so it is compiled without the PMPI shim
 * (CLAMPI_DEFINES_MPI_NAMES, src/CMakeLists.txt) and calls nothing by an MPI_ name
 * (scripts/check_pmpi.py checks it as a wrapper file). */
#include <mpi.h>

#include "clampi/export.h"

#include "clampi/match.h"
#include "msg/msg_internal.h"

#define ENTRY CLAMPI_API

/* Each completion call: MPI's own at once while nothing of clampi's point-to-point exists
 * (clampi_msg_mpi_only), so a program preloaded without CLAMPI_MATCH pays a few loads. */
ENTRY int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    if (clampi_msg_mpi_only()) return PMPI_Wait(request, status);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_wait(request, status);
    return clampi_msg_wait(request, status);
}
ENTRY int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (clampi_msg_mpi_only()) return PMPI_Test(request, flag, status);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_test(request, flag, status);
    return clampi_msg_test(request, flag, status);
}
ENTRY int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (clampi_msg_mpi_only()) return PMPI_Waitany(count, requests, index, status);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_waitany(count, requests, index, status);
    return clampi_msg_waitany(count, requests, index, status);
}
ENTRY int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    if (clampi_msg_mpi_only()) return PMPI_Testany(count, requests, index, flag, status);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_testany(count, requests, index, flag, status);
    return clampi_msg_testany(count, requests, index, flag, status);
}
ENTRY int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (clampi_msg_mpi_only()) return PMPI_Waitall(count, requests, statuses);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_waitall(count, requests, statuses);
    return clampi_msg_waitall(count, requests, statuses);
}
ENTRY int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (clampi_msg_mpi_only()) return PMPI_Testall(count, requests, flag, statuses);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_testall(count, requests, flag, statuses);
    return clampi_msg_testall(count, requests, flag, statuses);
}
ENTRY int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (clampi_msg_mpi_only()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_waitsome(incount, requests, outcount, indices, statuses);
    return clampi_msg_waitsome(incount, requests, outcount, indices, statuses);
}
ENTRY int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (clampi_msg_mpi_only()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_testsome(incount, requests, outcount, indices, statuses);
    return clampi_msg_testsome(incount, requests, outcount, indices, statuses);
}
/* A clampi request's handle is only clampi's to free, cancel or query (request.c). */
ENTRY int MPI_Request_free(MPI_Request *request) {
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_request_free(request);
    return clampi_msg_request_free(request);
}
ENTRY int MPI_Cancel(MPI_Request *request) {
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_cancel(request);
    return request && clampi_mreq_live() ? CMPIX_Cancel(request) : PMPI_Cancel(request);
}
static int one_status(MPI_Request request, int *flag, MPI_Status *status) {
    if (clampi_msg_hooks_on()) return clampi_msg_hooked_get_status(request, flag, status);
    return clampi_msg_get_status(request, flag, status);
}
ENTRY int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    return one_status(request, flag, status);
}

/* MPI 4.1's calls over arrays (MPICH 5, the MPI-5 ABI): MPI's own would take a clampi request's
 * handle for an inactive persistent request, i.e. complete. Each element as
 * MPI_Request_get_status; arrays without a request of clampi's go to MPI. */
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#ifdef I_MPI_VERSION /* Intel MPI 2021 declares the arrays without const */
#define REQS_IN MPI_Request
#else
#define REQS_IN const MPI_Request
#endif
static int any_of_clampi(int count, const MPI_Request requests[]) {
    if (!clampi_mreq_live() && !clampi_msg_persist_live()) return 0;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        clampi_mreq *r = clampi_mreq_pin(requests[i]);
        if (r) {
            clampi_mreq_unpin(r);
            return 1;
        }
        if (clampi_msg_persistent(requests[i])) return 1;
    }
    return 0;
}

ENTRY int MPI_Request_get_status_all(int count, REQS_IN requests[], int *flag, MPI_Status statuses[]) {
    if (count < 0 || !flag || !requests || !any_of_clampi(count, requests))
        return PMPI_Request_get_status_all(count, requests, flag, statuses);
    int all = 1, rc;
    for (int i = 0; i < count && all; i++)
        if ((rc = one_status(requests[i], &all, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return rc;
    *flag = all;
    for (int i = 0; all && statuses != MPI_STATUSES_IGNORE && i < count; i++)
        if ((rc = one_status(requests[i], &all, &statuses[i])) != MPI_SUCCESS) return rc;
    return MPI_SUCCESS;
}

ENTRY int MPI_Request_get_status_any(int count, REQS_IN requests[], int *index, int *flag, MPI_Status *status) {
    if (count < 0 || !flag || !index || !requests || !any_of_clampi(count, requests))
        return PMPI_Request_get_status_any(count, requests, index, flag, status);
    int active = 0, rc;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        active = 1;
        if ((rc = one_status(requests[i], flag, status)) != MPI_SUCCESS) return rc;
        if (*flag) {
            *index = i;
            return MPI_SUCCESS;
        }
    }
    *flag = !active; /* no active request: flag true, index MPI_UNDEFINED */
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

ENTRY int MPI_Request_get_status_some(int incount, REQS_IN requests[], int *outcount, int indices[],
                                      MPI_Status statuses[]) {
    if (incount < 0 || !outcount || !requests || !any_of_clampi(incount, requests))
        return PMPI_Request_get_status_some(incount, requests, outcount, indices, statuses);
    int active = 0, n = 0, rc;
    for (int i = 0; i < incount; i++) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        active = 1;
        int f = 0;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        if ((rc = one_status(requests[i], &f, st)) != MPI_SUCCESS) return rc;
        if (f) indices[n++] = i;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
#endif
