/* clampi message matching (the semi-permanent cache occupancy paper): point-to-point messages matched by clampi's own
 * engine (linked list of arrays, hot caching, bins) and carried by UCX active messages.
 *
 * A communicator is switched over collectively with CMPIX_Comm_enable; from then on the
 * CMPIX_ point-to-point calls below work on it with MPI's semantics (non-overtaking order
 * per pair, MPI_ANY_SOURCE / MPI_ANY_TAG, probes, cancel of a posted receive). Messages
 * sent with CMPIX_ are received only with CMPIX_ (and MPI's own with MPI's): the two paths
 * do not match each other. The completion calls accept clampi's requests and ordinary MPI
 * requests alike. A clampi request's handle is a pooled inactive persistent MPI request
 * (CLAMPI_MATCH_HANDLES=persistent, the default: no MPI call per message) or an MPI
 * generalized request (=generalized; auto picks it when MPI's Fortran bindings are loaded).
 * Linking libclampi wraps MPI's completion calls, MPI_Request_free, MPI_Cancel and
 * MPI_Request_get_status (weak symbols, PMPI underneath): they complete clampi's requests
 * themselves and report a clampi request's error as for MPI's own requests. A persistent
 * handle must not reach PMPI_Wait directly (see docs/matching.md).
 *
 * Info keys / environment (info strongest): clampi_match (CLAMPI_MATCH) = list | lla | hot
 * | lla+hot | bins; clampi_match_width (CLAMPI_MATCH_WIDTH) = entries per array;
 * clampi_match_hot_period (CLAMPI_MATCH_HOT_PERIOD) = microseconds; clampi_match_hot_by
 * (CLAMPI_MATCH_HOT_BY) = auto | thread | progress (who reads the queues for hot caching;
 * auto: a helper thread only with 2 CPUs per local rank). MPI_Comm_get_info under the
 * preload reports the values in effect (hot_by: thread or progress, auto resolved).
 *
 * Every function returns MPI_SUCCESS or an MPI error code raised through the
 * communicator's error handler: MPI_ERR_COMM (null or not enabled), MPI_ERR_RANK,
 * MPI_ERR_TAG, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_BUFFER, MPI_ERR_ARG,
 * MPI_ERR_INFO_VALUE. A receive whose message did not fit completes with
 * MPI_ERR_TRUNCATE: every completion call (CMPIX_ and MPI_Wait/Test/Waitall/Waitany/
 * Waitsome/Testall/Testany/Testsome) returns it through the handler of the receive's
 * communicator, with it in the status's MPI_ERROR (MPI_ERR_IN_STATUS from the
 * multiple-completion calls). MPI_BOTTOM with absolute-address datatypes works. */
#ifndef CLAMPI_MATCH_H
#define CLAMPI_MATCH_H

#include <mpi.h>

#include "clampi/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLAMPI_MATCH_KEY "clampi_match"
#define CLAMPI_MATCH_WIDTH_KEY "clampi_match_width"
#define CLAMPI_MATCH_HOT_PERIOD_KEY "clampi_match_hot_period"
#define CLAMPI_MATCH_HOT_BY_KEY "clampi_match_hot_by"
/* What carries the messages: "ucx" (UCX active messages, the default) or "mpi" (the MPI
 * library's own point-to-point on a duplicate of the communicator; clampi queues only the
 * receives beyond the native depth of nonblocking ones in MPI's own queue: it starts at
 * clampi_match_native_depth and grows up to clampi_match_native_depth_max while messages
 * match in the order their receives were posted). */
#define CLAMPI_MATCH_CARRIER_KEY "clampi_match_carrier"
#define CLAMPI_MATCH_NATIVE_DEPTH_KEY "clampi_match_native_depth"
/* How far the native depth may grow while receives match in posting order (docs/matching.md). */
#define CLAMPI_MATCH_NATIVE_DEPTH_MAX_KEY "clampi_match_native_depth_max"

/* Collective over comm: gives comm a matching engine (structure from info / environment),
 * a context id agreed by all its processes, and UCX endpoints to every rank (carrier ucx)
 * or a duplicate of comm that MPI carries the messages on (carrier mpi). */
CLAMPI_API int CMPIX_Comm_enable(MPI_Comm comm, MPI_Info info);
/* Collective: what enable made goes. Operations still pending on comm complete normally
 * (a posted receive may still match or be cancelled, a matched-probe message be
 * received); clampi keeps their state until none is left. Call it before MPI_Comm_free. */
CLAMPI_API int CMPIX_Comm_disable(MPI_Comm comm);

CLAMPI_API int CMPIX_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request *request);
CLAMPI_API int CMPIX_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                           MPI_Request *request);
CLAMPI_API int CMPIX_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
CLAMPI_API int CMPIX_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Status *status);
/* Synchronous mode: complete only after the matching receive has started (the receiver
 * acknowledges the match). */
CLAMPI_API int CMPIX_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            MPI_Request *request);
CLAMPI_API int CMPIX_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
/* Matched probe (MPI_Improbe / MPI_Mprobe / MPI_Imrecv / MPI_Mrecv on clampi's queues): the
 * message is taken off the unexpected queue and only the CMPIX_Message receives it. Source
 * MPI_PROC_NULL gives CMPIX_MESSAGE_NO_PROC; a received message becomes CMPIX_MESSAGE_NULL. */
typedef struct clampi_message *CMPIX_Message;
#define CMPIX_MESSAGE_NULL ((CMPIX_Message)0)
CLAMPI_API extern CMPIX_Message const CMPIX_MESSAGE_NO_PROC;
CLAMPI_API int CMPIX_Improbe(int source, int tag, MPI_Comm comm, int *flag, CMPIX_Message *message, MPI_Status *status);
CLAMPI_API int CMPIX_Mprobe(int source, int tag, MPI_Comm comm, CMPIX_Message *message, MPI_Status *status);
CLAMPI_API int CMPIX_Imrecv(void *buf, int count, MPI_Datatype datatype, CMPIX_Message *message, MPI_Request *request);
CLAMPI_API int CMPIX_Mrecv(void *buf, int count, MPI_Datatype datatype, CMPIX_Message *message, MPI_Status *status);
CLAMPI_API int CMPIX_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
CLAMPI_API int CMPIX_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
/* Cancels a posted receive that has not matched (then MPI_Test_cancelled says true).
 * On anything else (a receive that already matched, an MPI_PROC_NULL receive, a send) it
 * has no effect and returns MPI_SUCCESS, as MPI_Cancel: the request completes normally
 * and MPI_Test_cancelled says false. */
CLAMPI_API int CMPIX_Cancel(MPI_Request *request);

CLAMPI_API int CMPIX_Wait(MPI_Request *request, MPI_Status *status);
CLAMPI_API int CMPIX_Test(MPI_Request *request, int *flag, MPI_Status *status);
CLAMPI_API int CMPIX_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
CLAMPI_API int CMPIX_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
CLAMPI_API int CMPIX_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);

#ifdef __cplusplus
}
#endif
#endif
