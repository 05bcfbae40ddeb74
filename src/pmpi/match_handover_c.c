/* The MPI carrier before MPI-4's blocking calls that wait for other processes -- the
 * large-count collectives (MPI_Bcast_c, ...) and collective file I/O (MPI_File_read_all_c,
 * ...), communicator creation from groups: every receive in clampi's queues goes to MPI first, as before the calls of match_handover.c
 * (which says why). They are always MPI's blocking call, so every process makes the same
 * choice (the int-count forms run nonblocking when small: match_progress.c). Each group is
 * built where the MPI has it (MPICH 4; none on Open MPI 4.1). */
#include <mpi.h>

#include "msg/msg.h"
#include "pmpi/match_entry.h"

#define HANDOVER_API __attribute__((visibility("default")))

#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_COLL

HANDOVER_API int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    HANDED(PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

HANDOVER_API int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                  MPI_Comm comm) {
    HANDED(PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

HANDOVER_API int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm) {
    HANDED(PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm));
}

HANDOVER_API int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    HANDED(PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

HANDOVER_API int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    HANDED(PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm));
}

HANDOVER_API int MPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    HANDED(PMPI_Alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm));
}

HANDOVER_API int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    HANDED(PMPI_Bcast_c(buffer, count, datatype, root, comm));
}

HANDOVER_API int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
    HANDED(PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm));
}

HANDOVER_API int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    HANDED(PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

HANDOVER_API int MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm) {
    HANDED(PMPI_Gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm));
}

HANDOVER_API int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm) {
    HANDED(PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm));
}

HANDOVER_API int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    HANDED(PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

HANDOVER_API int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    HANDED(PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

HANDOVER_API int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm) {
    HANDED(PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm));
}

HANDOVER_API int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    HANDED(PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

HANDOVER_API int MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                int root, MPI_Comm comm) {
    HANDED(PMPI_Scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

HANDOVER_API int MPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    HANDED(PMPI_Neighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

HANDOVER_API int MPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                           MPI_Datatype recvtype, MPI_Comm comm) {
    HANDED(PMPI_Neighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

HANDOVER_API int MPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    HANDED(PMPI_Neighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

HANDOVER_API int MPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    HANDED(PMPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                     comm));
}

HANDOVER_API int MPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                          const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    HANDED(PMPI_Neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                     comm));
}

#endif

#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_FILE
/* collective file I/O, large counts */
HANDOVER_API int MPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Status *status) {
    HANDED(PMPI_File_read_all_c(fh, buf, count, datatype, status));
}

HANDOVER_API int MPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                      MPI_Status *status) {
    HANDED(PMPI_File_write_all_c(fh, buf, count, datatype, status));
}

HANDOVER_API int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                        MPI_Datatype datatype, MPI_Status *status) {
    HANDED(PMPI_File_read_at_all_c(fh, offset, buf, count, datatype, status));
}

HANDOVER_API int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                         MPI_Datatype datatype, MPI_Status *status) {
    HANDED(PMPI_File_write_at_all_c(fh, offset, buf, count, datatype, status));
}

HANDOVER_API int MPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                         MPI_Status *status) {
    HANDED(PMPI_File_read_ordered_c(fh, buf, count, datatype, status));
}

HANDOVER_API int MPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                          MPI_Status *status) {
    HANDED(PMPI_File_write_ordered_c(fh, buf, count, datatype, status));
}

HANDOVER_API int MPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype) {
    HANDED(PMPI_File_read_all_begin_c(fh, buf, count, datatype));
}

HANDOVER_API int MPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype) {
    HANDED(PMPI_File_write_all_begin_c(fh, buf, count, datatype));
}

HANDOVER_API int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                              MPI_Datatype datatype) {
    HANDED(PMPI_File_read_at_all_begin_c(fh, offset, buf, count, datatype));
}

HANDOVER_API int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                               MPI_Datatype datatype) {
    HANDED(PMPI_File_write_at_all_begin_c(fh, offset, buf, count, datatype));
}

HANDOVER_API int MPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype) {
    HANDED(PMPI_File_read_ordered_begin_c(fh, buf, count, datatype));
}

HANDOVER_API int MPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype) {
    HANDED(PMPI_File_write_ordered_begin_c(fh, buf, count, datatype));
}

#endif

#ifdef CLAMPI_MPI_HAS_COMM_FROM_GROUP
/* communicators from groups (MPI-4 sessions) */
HANDOVER_API int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                            MPI_Errhandler errhandler, MPI_Comm *newcomm) {
    HANDED(PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm));
}

HANDOVER_API int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                                  int remote_leader, const char *stringtag, MPI_Info info,
                                                  MPI_Errhandler errhandler, MPI_Comm *newintercomm) {
    HANDED(PMPI_Intercomm_create_from_groups(local_group, local_leader, remote_group, remote_leader, stringtag, info,
                                             errhandler, newintercomm));
}
#endif
