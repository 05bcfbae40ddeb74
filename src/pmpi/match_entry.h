/* CLAMPI_MATCH under the preload: MPI's point-to-point calls on communicators carried by
 * clampi's matching engine (src/msg). One concern per file:
 *   match_comm.c     which communicators are clampi's (MPI_COMM_WORLD after MPI_Init, the
 *                    communicators derived from an enabled one, the clampi_match info key),
 *                    MPI_Comm_get_info, MPI_Comm_free, the stats lines at MPI_Finalize
 *   match_entry.c    MPI_Send ... MPI_Mrecv, MPI_Cancel, MPI_Request_get_status: clampi's
 *                    path on a clampi communicator with valid arguments, MPI's otherwise
 *   match_persist.c  persistent requests (MPI_Send_init ... MPI_Start/Startall) and the
 *                    completion calls over them (MPI_Wait ... in match_profile.c call these)
 *   match_bsend.c    buffered sends in the program's buffer of MPI_Buffer_attach
 *   match_progress.c the MPI carrier inside blocking collectives (nonblocking when small)
 *   entry_points.tsv  (its hand-over rows, generated) the MPI carrier before blocking calls
 *                    with no nonblocking form (communicator creation, collective file I/O,
 *                    MPI-4 large-count collectives): clampi's queued receives go to MPI first */
#ifndef CLAMPI_PMPI_MATCH_ENTRY_H
#define CLAMPI_PMPI_MATCH_ENTRY_H
#include <mpi.h>

#include "msg/carrier_ops.h"

/* match_entry.c: Fortran handles of MPI_Message, clampi's own (from matched probes) included */
#ifndef MPI_ABI /* the MPI-5 ABI build has no Fortran side (docs/platforms.md) */
MPI_Message clampi_pm_message_f2c(MPI_Fint f);
MPI_Fint clampi_pm_message_c2f(MPI_Message m);
#endif

/* match_comm.c */
void clampi_pm_after_init(void);            /* enables MPI_COMM_WORLD when CLAMPI_MATCH is set */
void clampi_pm_finalize(void);              /* stats lines (CLAMPI_STATS), outstanding buffered sends */
void clampi_pm_comm_forget(MPI_Comm *comm); /* before MPI_Comm_free / _disconnect of any communicator */
/* The clampi communicator behind comm, or NULL (MPI's, or none enabled at all). */
extern _Atomic int clampi_pm_enabled; /* communicators enabled now */
static inline clampi_mcomm *clampi_pm_comm(MPI_Comm comm) {
    if (!atomic_load_explicit(&clampi_pm_enabled, memory_order_relaxed) || comm == MPI_COMM_NULL) return NULL;
    return clampi_msg_comm(comm);
}

/* match_entry.c: MPI_Irecv / MPI_Recv for match_profile.c's wrappers */
int clampi_pm_irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request);
int clampi_pm_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status);

/* match_persist.c: the completion calls with clampi's persistent requests among them */
int clampi_pm_request_free(MPI_Request *request);
int clampi_pm_wait(MPI_Request *request, MPI_Status *status);
int clampi_pm_test(MPI_Request *request, int *flag, MPI_Status *status);
int clampi_pm_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int clampi_pm_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int clampi_pm_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int clampi_pm_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int clampi_pm_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int clampi_pm_testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
/* persistent request -> its active clampi request (MPI_REQUEST_NULL if inactive); 0 if
 * request is not a clampi persistent request */
int clampi_pm_persistent(MPI_Request request, MPI_Request **inner);

/* match_bsend.c: a buffered send on a clampi communicator (valid arguments, dest a rank):
 * completes locally; *request (may be NULL) gets an already complete request. */
int clampi_pm_bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request);
void clampi_pm_bsend_drain(void); /* waits for every buffered send still in flight */
/* a buffered send anywhere else (an MPI communicator, or arguments clampi leaves to MPI):
 * into the program's buffer when clampi holds it, else MPI's own call */
int clampi_pm_bsend_mpi(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request);
int clampi_pm_done_request(MPI_Request *request); /* match_comm.c: an already complete request */
/* The generated hand-over entry points (entry_points.tsv): MPI's blocking call after
 * clampi's queued receives went to MPI (the MPI carrier) */
#define HANDED(call)              \
    do {                          \
        clampi_carrier_release(); \
        return call;              \
    } while (0)

/* match_progress.c: MPI's MPI_Alltoall / MPI_Allgather, nonblocking in a carrier job */
int clampi_pm_alltoall_unblocked(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                 MPI_Datatype rtype, MPI_Comm comm);
int clampi_pm_allgather_unblocked(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                  MPI_Datatype rtype, MPI_Comm comm);
#endif
