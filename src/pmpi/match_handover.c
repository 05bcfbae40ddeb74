/* The MPI carrier (CLAMPI_MATCH_CARRIER=mpi) before blocking calls that have no nonblocking
 * form: communicator creation the preload does not enable for clampi (intercommunicators,
 * process topologies, dynamic processes) and collective file I/O.
 *
 * While clampi holds receives in its own queue, a peer's large message to one of them
 * completes only when this process takes it out of MPI (src/msg/carrier.c). Inside these
 * calls this process waits for its peers inside MPI, and a peer may be blocked in such a
 * send before it joins: plain MPI progresses the transfer there. So every receive in
 * clampi's queues goes to MPI first, in posting order (clampi_carrier_release, as before
 * MPI_Comm_dup in match_comm.c); later receives start at depth 0 again. With no receive in
 * clampi's queues this is one load. Window creation, fence and PSCW synchronisation do the
 * same in src/pmpi/preload.c; the collectives with a nonblocking form run it instead
 * (match_progress.c). */
#include <mpi.h>

#include "msg/msg.h"
#include "pmpi/match_entry.h"

#define HANDOVER_API __attribute__((visibility("default")))

/* ---- communicators ---------------------------------------------------------------------- */
HANDOVER_API int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                                      int tag, MPI_Comm *newintercomm) {
    HANDED(PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm));
}

HANDOVER_API int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    HANDED(PMPI_Intercomm_merge(intercomm, high, newintracomm));
}

HANDOVER_API int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                 MPI_Comm *comm_cart) {
    HANDED(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart));
}

HANDOVER_API int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    HANDED(PMPI_Cart_sub(comm, remain_dims, newcomm));
}

HANDOVER_API int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                  MPI_Comm *comm_graph) {
    HANDED(PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph));
}

HANDOVER_API int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                       const int destinations[], const int weights[], MPI_Info info, int reorder,
                                       MPI_Comm *comm_dist_graph) {
    HANDED(
        PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph));
}

HANDOVER_API int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                                const int sourceweights[], int outdegree, const int destinations[],
                                                const int destweights[], MPI_Info info, int reorder,
                                                MPI_Comm *comm_dist_graph) {
    HANDED(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                           destweights, info, reorder, comm_dist_graph));
}

HANDOVER_API int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                                MPI_Comm *intercomm, int array_of_errcodes[]) {
    HANDED(PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes));
}

HANDOVER_API int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                         const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                                         MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]) {
    HANDED(PMPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root,
                                    comm, intercomm, array_of_errcodes));
}

HANDOVER_API int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) {
    HANDED(PMPI_Comm_accept(port_name, info, root, comm, newcomm));
}

HANDOVER_API int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) {
    HANDED(PMPI_Comm_connect(port_name, info, root, comm, newcomm));
}

/* a clampi communicator (a duplicate of MPI_COMM_WORLD, say) leaves clampi as at MPI_Comm_free */
HANDOVER_API int MPI_Comm_disconnect(MPI_Comm *comm) {
    clampi_pm_comm_forget(comm);
    HANDED(PMPI_Comm_disconnect(comm));
}

HANDOVER_API int MPI_Comm_join(int fd, MPI_Comm *intercomm) { HANDED(PMPI_Comm_join(fd, intercomm)); }

/* ---- collective file I/O ------------------------------------------------------------------ */
HANDOVER_API int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    HANDED(PMPI_File_open(comm, filename, amode, info, fh));
}

HANDOVER_API int MPI_File_close(MPI_File *fh) { HANDED(PMPI_File_close(fh)); }

HANDOVER_API int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                   const char *datarep, MPI_Info info) {
    HANDED(PMPI_File_set_view(fh, disp, etype, filetype, datarep, info));
}

HANDOVER_API int MPI_File_set_size(MPI_File fh, MPI_Offset size) { HANDED(PMPI_File_set_size(fh, size)); }
HANDOVER_API int MPI_File_preallocate(MPI_File fh, MPI_Offset size) { HANDED(PMPI_File_preallocate(fh, size)); }
HANDOVER_API int MPI_File_set_info(MPI_File fh, MPI_Info info) { HANDED(PMPI_File_set_info(fh, info)); }
HANDOVER_API int MPI_File_set_atomicity(MPI_File fh, int flag) { HANDED(PMPI_File_set_atomicity(fh, flag)); }
HANDOVER_API int MPI_File_sync(MPI_File fh) { HANDED(PMPI_File_sync(fh)); }

HANDOVER_API int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    HANDED(PMPI_File_seek_shared(fh, offset, whence));
}

HANDOVER_API int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
    HANDED(PMPI_File_read_all(fh, buf, count, type, status));
}

HANDOVER_API int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
    HANDED(PMPI_File_write_all(fh, buf, count, type, status));
}

HANDOVER_API int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                                      MPI_Status *status) {
    HANDED(PMPI_File_read_at_all(fh, offset, buf, count, type, status));
}

HANDOVER_API int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type,
                                       MPI_Status *status) {
    HANDED(PMPI_File_write_at_all(fh, offset, buf, count, type, status));
}

HANDOVER_API int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
    HANDED(PMPI_File_read_ordered(fh, buf, count, type, status));
}

HANDOVER_API int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                                        MPI_Status *status) {
    HANDED(PMPI_File_write_ordered(fh, buf, count, type, status));
}

/* split collectives: either half may wait for the other processes */
HANDOVER_API int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype type) {
    HANDED(PMPI_File_read_all_begin(fh, buf, count, type));
}
HANDOVER_API int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    HANDED(PMPI_File_read_all_end(fh, buf, status));
}
HANDOVER_API int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type) {
    HANDED(PMPI_File_write_all_begin(fh, buf, count, type));
}
HANDOVER_API int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    HANDED(PMPI_File_write_all_end(fh, buf, status));
}
HANDOVER_API int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type) {
    HANDED(PMPI_File_read_at_all_begin(fh, offset, buf, count, type));
}
HANDOVER_API int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    HANDED(PMPI_File_read_at_all_end(fh, buf, status));
}
HANDOVER_API int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                             MPI_Datatype type) {
    HANDED(PMPI_File_write_at_all_begin(fh, offset, buf, count, type));
}
HANDOVER_API int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    HANDED(PMPI_File_write_at_all_end(fh, buf, status));
}
HANDOVER_API int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype type) {
    HANDED(PMPI_File_read_ordered_begin(fh, buf, count, type));
}
HANDOVER_API int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status) {
    HANDED(PMPI_File_read_ordered_end(fh, buf, status));
}
HANDOVER_API int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type) {
    HANDED(PMPI_File_write_ordered_begin(fh, buf, count, type));
}
HANDOVER_API int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status) {
    HANDED(PMPI_File_write_ordered_end(fh, buf, status));
}
