/* What is on this process's node: the one place where clampi splits a communicator by
 * node (shared heap, collectives, CMPI_Win_allocate's shared segments and direct copies). */
#ifndef CLAMPI_TOPO_NODE_H
#define CLAMPI_TOPO_NODE_H
#include <mpi.h>

/* Splits comm into the processes on this one's host (the same processor name), keeping
 * comm's order: the processes that can share memory with it. With CLAMPI_NODE_SIZE=K (a testing
 * knob) ranks [iK, (i+1)K) of MPI_COMM_WORLD form simulated node i: the result is the
 * intersection of the real node and the simulated one, so clampi never shares memory
 * across a simulated node boundary. Collective over comm. */
int clampi_node_split(MPI_Comm comm, MPI_Comm *node);
/* The real split behind it: the processes of comm whose name equals `name`, in comm's
 * order. Two steps, so that no process receives every name of a large job: an
 * MPI_Comm_split by a hash of the name kept to hash_bits bits (clampi uses 31), then, within
 * each hash group, a comparison of the names themselves (a broadcast when the group has
 * one name, an allgather of the group's names when two share a hash). Collective over comm. */
int clampi_node_split_by_name(MPI_Comm comm, const char *name, unsigned hash_bits, MPI_Comm *node);
/* Ranks of MPI_COMM_WORLD on this node as the launcher tells them (Open MPI's
 * OMPI_COMM_WORLD_LOCAL_SIZE, MPICH Hydra's MPI_LOCALNRANKS, Slurm's SLURM_NTASKS_PER_NODE),
 * 0 when none does. Not collective: for local decisions such as whether a helper thread
 * gets a core of its own. */
int clampi_node_launcher_local_ranks(void);
/* CPUs this process may run on (its affinity mask), at least 1: whether a helper thread
 * of this process gets a core of its own. */
int clampi_node_cpus_allowed(void);
/* 1 when a helper thread of this process gets a core of its own: the process may run on at
 * least 2 CPUs per MPI rank on its node (the launcher's count; 1 rank when it says none).
 * Without one, a helper woken for work preempts a rank spinning in a wait loop. */
int clampi_node_helper_has_core(void);
/* CPUs online on this node, at least 1. Every part judges oversubscription against it:
 * with more processes on the node than CPUs, the process a waiting one waits for may need
 * its CPU, so waits yield sooner. */
int clampi_node_cpus(void);
static inline int clampi_node_oversubscribed(int processes_on_node) { return processes_on_node > clampi_node_cpus(); }
/* 1 when CLAMPI_NODE_SIZE simulates nodes. */
int clampi_node_simulated(void);
#endif
