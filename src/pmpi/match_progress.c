/* The MPI carrier (CLAMPI_MATCH_CARRIER=mpi) inside the blocking collectives.
 *
 * While clampi holds receives in its own queue, a peer's large message to one of them
 * (rendezvous) completes only when this process takes it out of MPI (src/msg/carrier_mpi.c).
 * A peer may block in that send before it joins a collective this process is already in:
 * plain MPI progresses the transfer inside the collective, so the program is correct MPI.
 * These wrappers keep that true in one of two ways:
 *  - MPI's blocking call after clampi's queued receives go to MPI (clampi_carrier_release):
 *    by default (CLAMPI_MATCH_CARRIER_COLL_BYTES=0) every collective that carries data,
 *    since MPI's nonblocking collectives are 2-4x slower than its blocking ones at small
 *    and large sizes (docs/matching.md); a process holding no receive pays one check;
 *  - the nonblocking form, tested while clampi takes messages (clampi's queued receives
 *    stay clampi's): MPI_Barrier (clampi's barrier of messages where the MPI allows:
 *    clampi_carrier_barrier_msgs) and collectives of no data always (receives posted before
 *    a barrier keep their deep-queue benefit), and with CLAMPI_MATCH_CARRIER_COLL_BYTES > 0
 *    the collectives up to that size and the v/w variants.
 * A blocking and a nonblocking collective never match each other, so every process must
 * choose the same form: the choice depends only on what every process passes alike (the
 * data each process contributes, against CLAMPI_MATCH_CARRIER_COLL_BYTES from the
 * environment) and is made whenever the job is on the MPI carrier (clampi_carrier_job),
 * whether or not this process holds receives now; MPI's own call otherwise. The v/w
 * variants and MPI_Reduce_scatter run nonblocking (their sizes differ between processes);
 * collectives on an intercommunicator are MPI's blocking calls after the hand-over (see
 * INTER). MPI_Alltoall and MPI_Allgather fall
 * back to these in src/pmpi/preload.c. Blocking calls with no nonblocking form hand
 * clampi's queued receives to MPI first: communicator creation (match_comm.c, and the
 * hand-over rows of entry_points.tsv), collective file I/O and MPI-4's large-count
 * collectives (entry_points.tsv), window creation, fence and PSCW synchronisation
 * (preload.c). */
#include <limits.h>
#include <mpi.h>

#include "clampi/export.h"
#include <pthread.h>

#include "common/options.h"
#include "msg/msg.h"
#include "pmpi/match_entry.h"

#define ANY_SIZE (-1)  /* sizes differ between processes: always the nonblocking form */
#define BAD_INPUT (-2) /* MPI's blocking call reports it, once, on the communicator */
/* An intercommunicator: MPI's blocking call after the hand-over. Its nonblocking forms need
 * every process to reach the collective engine: Open MPI's MPI_Ibcast (and others) return
 * at once for count 0 -- what MPI_PROC_NULL processes pass (mpi4py) -- so libnbc's
 * per-communicator tag sequence skips one on those processes and later collectives
 * exchange the wrong messages (mpi4py's test_cco_obj_inter). */
#define INTER LLONG_MAX

/* Sizes of the commonest predefined types, asked once (a valid type never raises an
 * error); any other type is asked with MPI_COMM_WORLD's and MPI_COMM_SELF's handlers set
 * to return, so that an invalid handle is reported by the collective itself, on its own
 * communicator's handler, as plain MPI does. */
static struct {
    MPI_Datatype type;
    MPI_Count size;
} known[32];
static int nknown;
static pthread_once_t known_once = PTHREAD_ONCE_INIT;

static void known_init(void) {
    const MPI_Datatype types[] = {MPI_BYTE,
                                  MPI_CHAR,
                                  MPI_SIGNED_CHAR,
                                  MPI_UNSIGNED_CHAR,
                                  MPI_SHORT,
                                  MPI_INT,
                                  MPI_UNSIGNED,
                                  MPI_LONG,
                                  MPI_UNSIGNED_LONG,
                                  MPI_LONG_LONG,
                                  MPI_UNSIGNED_LONG_LONG,
                                  MPI_FLOAT,
                                  MPI_DOUBLE,
                                  MPI_LONG_DOUBLE,
                                  MPI_C_BOOL,
                                  MPI_INT8_T,
                                  MPI_INT16_T,
                                  MPI_INT32_T,
                                  MPI_INT64_T,
                                  MPI_UINT8_T,
                                  MPI_UINT32_T,
                                  MPI_UINT64_T,
                                  MPI_C_FLOAT_COMPLEX,
                                  MPI_C_DOUBLE_COMPLEX,
                                  MPI_2INT,
                                  MPI_DOUBLE_INT,
                                  MPI_FLOAT_INT,
                                  MPI_LONG_INT,
                                  MPI_PACKED};
    for (unsigned i = 0; i < sizeof types / sizeof *types; i++)
        if (PMPI_Type_size_x(types[i], &known[nknown].size) == MPI_SUCCESS) known[nknown++].type = types[i];
}

static long long type_size(MPI_Datatype type) {
    pthread_once(&known_once, known_init);
    for (int i = 0; i < nknown; i++)
        if (known[i].type == type) return (long long)known[i].size;
    MPI_Errhandler world, self;
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Count size = 0;
    int rc = PMPI_Type_size_x(type, &size);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, self);
    PMPI_Errhandler_free(&world);
    PMPI_Errhandler_free(&self);
    return rc == MPI_SUCCESS && size >= 0 ? (long long)size : BAD_INPUT;
}

/* MPI's blocking call reports a bad communicator itself (and an intercommunicator's sizes
 * differ between its groups). */
static int intra(MPI_Comm comm) {
    int inter = 0;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

/* The data one process contributes: count elements of type, the same on every process of
 * an intracommunicator whatever types describe it (MPI's type-signature rule), saturated;
 * INTER on an intercommunicator; BAD_INPUT for what MPI will refuse. */
static long long block_bytes(MPI_Comm comm, int count, MPI_Datatype type) {
    if (comm == MPI_COMM_NULL) return BAD_INPUT;
    if (!intra(comm)) return INTER;
    if (count <= 0) return 0;
    if (type == MPI_DATATYPE_NULL) return BAD_INPUT;
    long long size = type_size(type);
    if (size < 0) return size;
    return size && count > LLONG_MAX / size ? LLONG_MAX : (long long)count * size;
}

/* Gather (scatter = 0) and Scatter (1): the root's significant side, everyone else's other. */
static long long rooted_bytes(MPI_Comm comm, int root, int scatter, int scount, MPI_Datatype stype, int rcount,
                              MPI_Datatype rtype) {
    int me = -1;
    if (!intra(comm)) return comm == MPI_COMM_NULL ? BAD_INPUT : INTER;
    PMPI_Comm_rank(comm, &me);
    return (me == root) == (scatter != 0) ? block_bytes(comm, scount, stype) : block_bytes(comm, rcount, rtype);
}

/* The blocking call, or in a carrier job: its nonblocking form tested while clampi takes
 * messages (r: the nonblocking call's request) when bytes is at most the threshold or
 * ANY_SIZE, else the blocking call after the hand-over. */
#define CARRIED(bytes, blocking, nonblocking)                                                      \
    do {                                                                                           \
        if (!clampi_carrier_job() || clampi_pm_revoked(comm)) return blocking; /* MPI's error */   \
        long long b_ = (bytes);                                                                    \
        if (b_ == ANY_SIZE && comm != MPI_COMM_NULL && !intra(comm)) b_ = INTER;                   \
        if (b_ == BAD_INPUT) return blocking;                                                      \
        unsigned long long max_ = clampi_opt_process(CLAMPI_OPT_MATCH_CARRIER_COLL_BYTES).u;       \
        if (b_ == ANY_SIZE ? max_ == 0 : b_ > (long long)max_) { /* 0: any collective with data */ \
            clampi_carrier_release();                                                              \
            return blocking;                                                                       \
        }                                                                                          \
        MPI_Request r;                                                                             \
        int err = nonblocking;                                                                     \
        return err != MPI_SUCCESS ? err : clampi_carrier_spin(&r, MPI_STATUS_IGNORE);              \
    } while (0)

/* On a communicator the MPI carrier holds: clampi's barrier of empty messages, which keeps
 * taking messages as MPI's nonblocking form does and costs what MPI's blocking one does.
 * Its messages use the program's communicator, which no point-to-point call of the program
 * reaches: the preload carries every one (MPI-4's large-count forms and MPI_Isendrecv too). */
CLAMPI_API int MPI_Barrier(MPI_Comm comm) {
    if (clampi_carrier_job()) {
        clampi_mcomm *mc = clampi_pm_comm(comm);
        if (mc && mc->wire != MPI_COMM_NULL && intra(comm) && !clampi_pm_revoked(comm))
            return clampi_carrier_barrier_msgs(mc);
    }
    CARRIED(0, PMPI_Barrier(comm), PMPI_Ibarrier(comm, &r));
}

CLAMPI_API int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    CARRIED(block_bytes(comm, count, type), PMPI_Bcast(buf, count, type, root, comm),
            PMPI_Ibcast(buf, count, type, root, comm, &r));
}

CLAMPI_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                          MPI_Comm comm) {
    CARRIED(block_bytes(comm, count, type), PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm),
            PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, &r));
}

CLAMPI_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    CARRIED(block_bytes(comm, count, type), PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm),
            PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &r));
}

CLAMPI_API int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                          int root, MPI_Comm comm) {
    CARRIED(rooted_bytes(comm, root, 0, scount, stype, rcount, rtype),
            PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
            PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r));
}

CLAMPI_API int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                           const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm),
            PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, &r));
}

CLAMPI_API int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                           int root, MPI_Comm comm) {
    CARRIED(rooted_bytes(comm, root, 1, scount, stype, rcount, rtype),
            PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
            PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r));
}

CLAMPI_API int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                            int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm),
            PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, &r));
}

CLAMPI_API int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                              const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm),
            PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, &r));
}

CLAMPI_API int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                             const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
            PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, &r));
}

CLAMPI_API int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                             void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
                             MPI_Comm comm) {
    /* in place (every process alike): MPI's blocking call, as MPICH 4.0's MPI_Ialltoallw in
     * place gives wrong data when the receive types differ between peers (fixed in 4.1) */
    CARRIED(sbuf == MPI_IN_PLACE ? INTER : ANY_SIZE,
            PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm),
            PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, &r));
}

CLAMPI_API int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm),
            PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, &r));
}

CLAMPI_API int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                                        MPI_Comm comm) {
    CARRIED(block_bytes(comm, rcount, type), PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm),
            PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, &r));
}

CLAMPI_API int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    CARRIED(block_bytes(comm, count, type), PMPI_Scan(sbuf, rbuf, count, type, op, comm),
            PMPI_Iscan(sbuf, rbuf, count, type, op, comm, &r));
}

CLAMPI_API int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    CARRIED(block_bytes(comm, count, type), PMPI_Exscan(sbuf, rbuf, count, type, op, comm),
            PMPI_Iexscan(sbuf, rbuf, count, type, op, comm, &r));
}

/* MPI_Alltoall / MPI_Allgather when clampi's own collectives do not take them (preload.c). */
int clampi_pm_alltoall_unblocked(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                 MPI_Datatype rtype, MPI_Comm comm) {
    CARRIED(block_bytes(comm, rcount, rtype), PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm),
            PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r));
}

int clampi_pm_allgather_unblocked(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                  MPI_Datatype rtype, MPI_Comm comm) {
    CARRIED(block_bytes(comm, rcount, rtype), PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm),
            PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r));
}

/* ---- neighbourhood collectives (MPI-3): nonblocking forms too ---------------------------- */
CLAMPI_API int MPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                      MPI_Datatype rtype, MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm),
            PMPI_Ineighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r));
}

CLAMPI_API int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                       const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm),
            PMPI_Ineighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, &r));
}

CLAMPI_API int MPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                     MPI_Datatype rtype, MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm),
            PMPI_Ineighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r));
}

CLAMPI_API int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                                      void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                                      MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
            PMPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, &r));
}

CLAMPI_API int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                                      const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
    CARRIED(ANY_SIZE, PMPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm),
            PMPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, &r));
}
