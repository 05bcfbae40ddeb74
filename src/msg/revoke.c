/* Communicators revoked by another process (ULFM, where the MPI has it; the preload gives
 * the test: pmpi/ulfm.c). The MPI learns of another process's revocation in its own
 * progress and fails its own pending operations on the communicator. The receives waiting
 * in clampi's queue (all of the UCX carrier's, the MPI carrier's beyond its native depth) it
 * does not know of: they would wait for ever. So clampi's waits, after a call of MPI's
 * progress (clampi_msg_poke_mpi), ask the MPI now and then about each enabled
 * communicator; one revoked is marked (msg.h: its later calls fail, and the preload leaves
 * it to MPI), and the receives in its queue fail with the MPI's code. Its carrier also lets
 * go the senders that wait for this side (fail_posted: the UCX carrier drops what arrived
 * unreceived: a synchronous sender's send fails, a rendezvous sender's completes). */
#include "msg/carrier_ops.h"
#include "msg/msg_internal.h"

static int (*_Atomic code_of)(MPI_Comm comm);
static _Atomic int revoked_error; /* the MPI's code for "revoked" (MPIX_ERR_REVOKED) */

void clampi_msg_on_revocation(int (*fn)(MPI_Comm comm), int code) {
    atomic_store(&revoked_error, code);
    atomic_store(&code_of, fn);
}

int clampi_msg_revocation_error(void) { return atomic_load_explicit(&revoked_error, memory_order_relaxed); }

void clampi_msg_comm_revoked(clampi_mcomm *mc, int code) {
    int none = 0;
    if (atomic_compare_exchange_strong(&mc->revoked, &none, code)) mc->ops->fail_posted(mc, code); /* once */
}

static void check(clampi_mcomm *mc, MPI_Comm comm) {
    int (*fn)(MPI_Comm) = atomic_load_explicit(&code_of, memory_order_relaxed);
    if (atomic_load_explicit(&mc->revoked, memory_order_relaxed)) return;
    int code = fn(comm);
    if (code) clampi_msg_comm_revoked(mc, code);
}

void clampi_msg_revocation_check(clampi_mcomm *mc) {
    if (atomic_load_explicit(&code_of, memory_order_relaxed) && mc->comm != MPI_COMM_NULL) check(mc, mc->comm);
}

/* Every 16th call per thread: the walk asks the MPI once per enabled communicator. */
void clampi_msg_revocation_poll(void) {
    static _Thread_local CLAMPI_MSG_TLS unsigned calls;
    if (!atomic_load_explicit(&code_of, memory_order_relaxed) || ++calls % 16 != 0) return;
    clampi_msg_comm_visit(check);
}
