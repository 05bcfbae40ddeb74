/* A communicator's carrier: what moves its messages. One operations table per carrier,
 * chosen once when the communicator is enabled (comm.c sets mc->ops); every step of the
 * message layer that depends on a communicator's carrier goes through a row of mc->ops.
 * (Closing UCX endpoints at finalize and retirement stays in comm_ucx.c: those calls find
 * nothing to close on an MPI-carrier communicator.)
 *
 *   carrier_ucx.c   clampi's own matching over UCX active messages (built only with UCX)
 *   carrier_mpi.c   the MPI library's messages on a duplicate of the communicator; clampi
 *                   matches only the receives that would sit deep in MPI's queue
 *
 * What stays process-wide, not per communicator: progress (progress.c, and carrier_mpi.c's
 * pull of arrivals, clampi_carrier_progress) and the hand-over before a blocking MPI call
 * (clampi_carrier_release): both act on every communicator of a carrier at once. */
#ifndef CLAMPI_MSG_CARRIER_OPS_H
#define CLAMPI_MSG_CARRIER_OPS_H
#include "common/datatype.h"
#include "msg/msg.h"

struct clampi_carrier_ops {
    const char *name; /* the value of the info key clampi_match_carrier */
    /* Local, before enabling's first agreement (NULL: nothing): what the carrier allocates
     * per communicator (UCX: per-peer arrays; MPI: a place in its table of communicators),
     * so a failure counts in that agreement. */
    int (*prepare)(clampi_mcomm *mc);
    /* The carrier's state, collective over mc->comm once every process prepared (UCX: the
     * endpoints; MPI: the duplicate, or only its local settings once `start` made it).
     * Returns this process's result, which CMPIX_Comm_enable then agrees on with the
     * context id (state made on success is freed by disable and release if some other
     * process failed). */
    int (*enable)(clampi_mcomm *mc, unsigned native_base, unsigned native_cap);
    /* Optional, for a communicator made from an enabled one (every process has its parent's
     * settings, so none can fail in parsing them): the carrier's collective part run on
     * every process before any agreement (one whose local set-up failed too, mc NULL, and,
     * where how says it is collective over the parent, every process of the parent), so
     * enabling needs one agreement, after it; then mc->wire is *wire and enable is local.
     * MPI: the duplicate, made from the parent's wire as the communicator was made from the
     * parent (msg.h, clampi_wire_recipe); *wire MPI_COMM_NULL outside the new group. */
    int (*start)(const clampi_mcomm *parent, const clampi_wire_recipe *how, MPI_Comm *wire);
    /* Optional (UCX), for a communicator made from an enabled one of the same carrier whose
     * set-up connected every member it shares with it (parent->world): enable without a
     * collective, since the parent's set-up already agreed on what it would find. Returns
     * this process's result, agreed on next as enable's is. */
    int (*enable_like)(clampi_mcomm *mc, const clampi_mcomm *parent);
    /* Optional (MPI: its spare wires, carrier_mpi.c), for a duplicate (CLAMPI_WIRE_DUP) of
     * parent: *spare the slots whose wire waits here for the parent's next duplicate,
     * *used the slots taken here (spare or a live duplicate's), *hint whether the last
     * agreement over a duplicate of parent saw a slot spare on every process that it left
     * (agreed: the same on every process). Under enabling's lock. */
    void (*wire_slots)(const clampi_mcomm *parent, uint32_t *spare, uint32_t *used, int *hint);
    /* After an agreement over a duplicate mc of parent that succeeded everywhere: spare and
     * free the slots spare resp. free on every process, unused_somewhere the slots free on
     * some process (a spare of those here can never be taken: freed). take: mc's wire is
     * the wire of the lowest spare slot (enabling made none); else mc's wire, just made,
     * takes the lowest free slot, if any. Sets the hint. Local, cannot fail. */
    void (*wire_agreed)(const clampi_mcomm *parent, clampi_mcomm *mc, uint32_t spare, uint32_t free,
                        uint32_t unused_somewhere, int take);
    /* The preload's entry points, any arguments. UCX: what it does not take (MPI_PROC_NULL,
     * input MPI must judge) goes to clampi_msg_mpi_send / _recv on the program's communicator;
     * MPI: everything goes to the duplicate, where MPI judges it. One row per hot call, with
     * that call's arguments (mc for comm), so MPI_Send reaches the carrier as a tail call. */
    int (*entry_send)(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag);
    int (*entry_isend)(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Request *request);
    /* MPI_Ssend/Rsend (request NULL) and MPI_Issend/Irsend: mode CLAMPI_SEND_SYNC or _READY */
    int (*entry_send_mode)(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag, int mode,
                           MPI_Request *request);
    int (*entry_recv)(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Status *status);
    int (*entry_irecv)(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                       MPI_Request *request);
    /* The preload's probes, mc's arguments checked: nonblocking where flag is not NULL,
     * matched where message is not NULL (MPI_Iprobe, MPI_Probe, MPI_Improbe, MPI_Mprobe).
     * CLAMPI_CARRIER_NOT_NATIVE where clampi's own probe must serve (NULL: always). A
     * message handle it gives is MPI's, so MPI_Mrecv/MPI_Imrecv are MPI's too. */
    int (*entry_probe)(clampi_mcomm *mc, int source, int tag, int *flag, MPI_Message *message, MPI_Status *status);
    /* The preload's MPI_Sendrecv (replace: MPI_Sendrecv_replace of sendbuf, the receive's
     * arguments unused), mc's arguments checked: CLAMPI_CARRIER_NOT_NATIVE where clampi's
     * receive and send must serve (NULL: always). */
    int (*entry_sendrecv)(clampi_mcomm *mc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                          int replace, MPI_Status *status);
    /* The preload's MPI_Send_init (mode CLAMPI_SEND_STANDARD), _Ssend_init (SYNC) and
     * _Rsend_init (READY), mc's arguments checked: a persistent request of the carrier's
     * own (NULL: clampi's persistent request, src/msg/persist.c, serves). */
    int (*entry_send_init)(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag, int mode,
                           MPI_Request *request);
    /* The preload's MPI_Recv_init, mc's arguments checked: a persistent receive of the
     * carrier's own (NULL: clampi's persistent request serves every start). entry_start_recv
     * starts it where a receive would go to MPI's queue now (the depth-0 condition of
     * entry_irecv); CLAMPI_CARRIER_NOT_NATIVE where clampi's receive must serve this start
     * (the request then stays inactive). */
    int (*entry_recv_init)(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                           MPI_Request *request);
    int (*entry_start_recv)(clampi_mcomm *mc, MPI_Request *request);
    /* The CMPIX_ calls, after p2p.c's checks: tf and bytes the datatype's facts, dest and
     * source a rank (or MPI_ANY_SOURCE), request NULL: blocking (status filled). */
    int (*send)(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, const clampi_type_info *tf,
                size_t bytes, int dest, int tag, int sync, MPI_Request *request);
    int (*recv)(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, const clampi_type_info *tf, int source,
                int tag, MPI_Request *request, MPI_Status *status);
    /* *flag and the status; remove = 1 also takes the message (*m, for mrecv) */
    int (*probe)(clampi_mcomm *mc, int source, int tag, int remove, int *flag, clampi_msg **m, MPI_Status *status);
    void (*mrecv)(clampi_mreq *r, clampi_msg *m); /* a message taken by probe, into receive r */
    int (*cancel)(clampi_mreq *r);                /* 1: r was in clampi's posted queue (now out) */
    /* The communicator was revoked (ULFM, revoke.c): the receives in clampi's posted queue
     * finish with code, and a sender waiting for a message of clampi's queues to be
     * received (a synchronous or rendezvous send) is let go. */
    void (*fail_posted)(clampi_mcomm *mc, int code);
    /* The end of enabling, collective: nobody sends before every process can route the
     * communicator's messages (UCX: by its context id, set just before). NULL where
     * messages sent early wait in MPI: the MPI carrier reads a duplicate only for
     * receives posted in clampi's queue, and those need the communicator enabled. */
    int (*barrier)(clampi_mcomm *mc);
    /* MPI_Comm_free with operations pending (retire.c): unexpected messages dropped, and
     * (MPI) receives still in clampi's queue handed to MPI, which finishes them. */
    void (*retire)(clampi_mcomm *mc);
    void (*disable)(clampi_mcomm *mc);                       /* local, before its matcher goes (not once retired) */
    void (*release)(clampi_mcomm *mc);                       /* the last: nothing names mc any more */
    void (*get_info)(const clampi_mcomm *mc, MPI_Info info); /* its info keys' values (MPI_Comm_get_info) */
};

#define CLAMPI_CARRIER_NOT_NATIVE (-1) /* an entry_ call not served: clampi's path serves */

extern const clampi_carrier_ops clampi_carrier_mpi_ops;
#if CLAMPI_HAVE_UCX
extern const clampi_carrier_ops clampi_carrier_ucx_ops;
#endif

/* The table for a carrier of the options (CLAMPI_CARRIER_); without UCX always MPI's. */
static inline const clampi_carrier_ops *clampi_carrier_ops_of(int carrier) {
#if CLAMPI_HAVE_UCX
    if (carrier == CLAMPI_CARRIER_UCX) return &clampi_carrier_ucx_ops;
#endif
    (void)carrier;
    return &clampi_carrier_mpi_ops;
}

#endif
