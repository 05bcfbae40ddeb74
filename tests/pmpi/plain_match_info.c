/* Plain MPI: what MPI_Comm_get_info says about clampi_match_hot_by on MPI_COMM_WORLD and on
 * an MPI_Comm_dup_with_info communicator that asks for clampi_match_hot_by=thread (a key
 * MPI ignores). "note" lines only (plainly MPI reports nothing of clampi's), plus one
 * "result" line of a message exchange so run_preload.sh compares something.
 * Usage: plain_match_info [pin1]   pin1: this process may run on one CPU only, set before
 * MPI_Init (so hot caching's auto choice, made when WORLD goes on clampi, sees it). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static int me;
#include "plain_check.h"

static void note(MPI_Comm comm, const char *name) {
    MPI_Info used;
    char v[64] = "unset";
    int flag = 0;
    CHECK(MPI_Comm_get_info(comm, &used));
    MPI_Info_get(used, "clampi_match_hot_by", (int)sizeof v - 1, v, &flag);
    printf("note rank=%d comm=%s hot_by=%s\n", me, name, flag ? v : "unset");
    MPI_Info_free(&used);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "pin1") == 0) {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set)) {
                    CPU_ZERO(&set);
                    CPU_SET(c, &set);
                    sched_setaffinity(0, sizeof set, &set);
                    break;
                }
        }
    }
    MPI_Init(&argc, &argv);
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Info info;
    MPI_Comm dup;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_match", "lla+hot");
    MPI_Info_set(info, "clampi_match_hot_by", "thread");
    CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup));
    MPI_Info_free(&info);
    note(MPI_COMM_WORLD, "world");
    note(dup, "dup_with_info");
    int v = me + 1, w = 0;
    CHECK(MPI_Sendrecv(&v, 1, MPI_INT, (me + 1) % n, 5, &w, 1, MPI_INT, (me + n - 1) % n, 5, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    printf("result rank=%d received=%d\n", me, w);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
