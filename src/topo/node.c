/* The node split (see node.h). CLAMPI_NODE_SIZE comes from the options table. */
#include "topo/node.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fnv.h"
#include "common/options.h"

static int node_size(void) { return (int)clampi_opt_process(CLAMPI_OPT_NODE_SIZE).u; }

int clampi_node_simulated(void) { return node_size() > 0; }

/* The node communicator is clampi's own: its errors return to clampi (a shared window the
 * MPI cannot make, e.g. Open MPI with only osc pt2pt, is a fallback to MPI, never an abort
 * through the program's handler that the split inherited). */
static int internal(int err, MPI_Comm *node) {
    if (err == MPI_SUCCESS) MPI_Comm_set_errhandler(*node, MPI_ERRORS_RETURN);
    return err;
}

/* FNV-1a of the name, kept to its low `bits` bits (at most 31: a color is a non-negative int). */
static int name_color(const char *name, unsigned bits) {
    uint64_t h = clampi_fnv1a64(name, strlen(name));
    return (int)(h & (bits >= 31 ? 0x7fffffffu : (1u << bits) - 1u));
}

/* Inside one hash group: the processes whose name is mine. Usually the group is one node and
 * a broadcast of its first name settles that (*node is then the group itself); only when two
 * names share a hash do the group's names travel to every member of the group. Frees the
 * group when *node is another communicator. */
static int split_group_by_name(MPI_Comm group, const char *name, MPI_Comm *node) {
    char first[MPI_MAX_PROCESSOR_NAME];
    int n, r, err;
    MPI_Comm_size(group, &n);
    MPI_Comm_rank(group, &r);
    memcpy(first, name, sizeof first);
    err = MPI_Bcast(first, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, group);
    int same = err == MPI_SUCCESS && strncmp(first, name, MPI_MAX_PROCESSOR_NAME) == 0, all_same = 0;
    if (err == MPI_SUCCESS) err = MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, group);
    if (err == MPI_SUCCESS && all_same) {
        *node = group;
        return MPI_SUCCESS;
    }
    if (err != MPI_SUCCESS) {
        MPI_Comm_free(&group);
        return err;
    }
    char *all = malloc((size_t)n * MPI_MAX_PROCESSOR_NAME);
    int ok = all != NULL, all_ok = 0;
    err = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, group);
    if (err == MPI_SUCCESS && !all_ok) err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, group);
    int color = r; /* the first process of the group with my name */
    for (int i = 0; err == MPI_SUCCESS && i < n; i++)
        if (strncmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, name, MPI_MAX_PROCESSOR_NAME) == 0) {
            color = i;
            break;
        }
    free(all);
    if (err == MPI_SUCCESS) err = MPI_Comm_split(group, color, 0, node);
    MPI_Comm_free(&group);
    return err;
}

int clampi_node_split_by_name(MPI_Comm comm, const char *name, unsigned hash_bits, MPI_Comm *node) {
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    strncpy(mine, name, MPI_MAX_PROCESSOR_NAME - 1);
    MPI_Comm group;
    int err = MPI_Comm_split(comm, name_color(mine, hash_bits), 0, &group);
    return err != MPI_SUCCESS ? err : split_group_by_name(group, mine, node);
}

/* Processes with the same processor name (host name) share a node. Not
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): on MPICH 4.0 a communicator made that way,
 * alive for the whole run as clampi's is, made the program's small point-to-point messages
 * slower (osu_bibw 1 B; bench/results/preload_small_messages_mpich.txt), one made with
 * MPI_Comm_split did not. A name shared by two machines costs nothing but speed: the shared
 * segments (services/shared_segments.h) cannot be mapped there, and MPI serves. */
static int split_by_host(MPI_Comm comm, MPI_Comm *node) {
    char me[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(me, &len);
    return clampi_node_split_by_name(comm, me, 31, node);
}

int clampi_node_split(MPI_Comm comm, MPI_Comm *node) {
    int k = node_size();
    if (k <= 0) return internal(split_by_host(comm, node), node);
    MPI_Comm real;
    int err = split_by_host(comm, &real);
    if (err != MPI_SUCCESS) return err;
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    /* key 0 everywhere: ties keep real's order, which is comm's order */
    err = MPI_Comm_split(real, wrank / k, 0, node);
    MPI_Comm_free(&real);
    return internal(err, node);
}

int clampi_node_launcher_local_ranks(void) {
    static const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};
    for (unsigned i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *s = getenv(vars[i]);
        int n = s ? atoi(s) : 0; /* Slurm's "4(x2)" reads as 4 */
        if (n > 0) return n;
    }
    return 0;
}

int clampi_node_helper_has_core(void) {
    int local = clampi_node_launcher_local_ranks();
    return clampi_node_cpus_allowed() >= 2 * (local > 0 ? local : 1);
}

int clampi_node_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int clampi_node_cpus_allowed(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}
