/* What making a communicator costs in collectives, counted by
 * tests/support/count_collectives.c preloaded after clampi (every collective call clampi
 * makes, and MPI's own dup):
 * - kept: 50 times MPI_Comm_dup of MPI_COMM_WORLD, then 50 MPI_Comm_free. Enabling clampi's
 *   matching on each duplicate takes, besides MPI's dup: the MPI carrier its own duplicate
 *   (the wire) and one reduction; the UCX carrier one reduction and a barrier (its
 *   parent's set-up already joined every member's endpoint).
 * - loop: 50 times MPI_Comm_dup, then MPI_Comm_free, counted from the third on: the MPI
 *   carrier then takes a freed duplicate's wire (one reduction, no duplicate of its own).
 * - late: the loop again, but each duplicate is freed while its exchange is pending
 *   (MPI_Irecv, MPI_Isend, MPI_Comm_free, MPI_Waitall): the MPI carrier keeps the wire until
 *   the receive completes, then takes it as in the loop.
 * A program making communicators by the thousand (MPICH's comm/ctxalloc: 200,000) pays
 * each of them on every one. MPI_Comm_free makes no collective call.
 * Usage: plain_comm_create_cost MAX_MAKES MAX_OTHERS [LOOP_MAX_MAKES LOOP_MAX_OTHERS
 * [LATE_MAX_MAKES LATE_MAX_OTHERS]] (per MPI_Comm_dup, MPI's dup included); without the
 * counting library only the program runs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*counts_fn)(unsigned long *comm_makes, unsigned long *collectives);
#define N 50

/* A phase of duplicates made and freed one at a time, counted from the third on: prints
 * the counts per duplicate and checks them against argv[lim], argv[lim + 1] if given. */
static int report_loop(const char *phase, unsigned long makes0, unsigned long others0, unsigned long makes1,
                       unsigned long others1, int argc, char **argv, int lim) {
    double makes = (double)(makes1 - makes0) / (N - 2), others = (double)(others1 - others0) / (N - 2);
    printf("comm_create_cost: %s, per MPI_Comm_dup + MPI_Comm_free %.2f communicator makes, %.2f other collectives\n",
           phase, makes, others);
    if (argc > lim + 1 && (makes > atof(argv[lim]) || others > atof(argv[lim + 1]))) {
        printf("FAIL: %s: more than %s makes or %s other collectives per MPI_Comm_dup\n", phase, argv[lim],
               argv[lim + 1]);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    counts_fn counts = (counts_fn)dlsym(RTLD_DEFAULT, "clampi_test_collective_counts");
    unsigned long m0 = 0, o0 = 0, m1 = 0, o1 = 0, m2 = 0, o2 = 0;
    MPI_Comm c[N];
    if (counts) counts(&m0, &o0);
    for (int i = 0; i < N; i++) MPI_Comm_dup(MPI_COMM_WORLD, &c[i]);
    if (counts) counts(&m1, &o1);
    for (int i = 0; i < N; i++) MPI_Comm_free(&c[i]);
    if (counts) counts(&m2, &o2);
    if (counts && rank == 0) {
        double makes = (double)(m1 - m0) / N, others = (double)(o1 - o0) / N;
        printf("comm_create_cost: per MPI_Comm_dup %.2f communicator makes, %.2f other collectives; "
               "per MPI_Comm_free %.2f and %.2f\n",
               makes, others, (double)(m2 - m1) / N, (double)(o2 - o1) / N);
        if (argc > 2 && (makes > atof(argv[1]) || others > atof(argv[2]))) {
            printf("FAIL: more than %s makes or %s other collectives per MPI_Comm_dup\n", argv[1], argv[2]);
            bad = 1;
        }
        if (m2 != m1 || o2 != o1) {
            printf("FAIL: MPI_Comm_free made collective calls\n");
            bad = 1;
        }
    }
    unsigned long m3 = 0, o3 = 0, m4 = 0, o4 = 0;
    for (int i = 0; i < N; i++) {
        if (i == 2 && counts) counts(&m3, &o3);
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        int in = rank + i, out = -1, left = (rank + size - 1) % size; /* the duplicate works: a ring */
        MPI_Sendrecv(&in, 1, MPI_INT, (rank + 1) % size, 0, &out, 1, MPI_INT, left, 0, d, MPI_STATUS_IGNORE);
        if (out != left + i) {
            printf("FAIL: rank %d got %d from %d on duplicate %d, expected %d\n", rank, out, left, i, left + i);
            bad = 1;
        }
        MPI_Comm_free(&d);
    }
    if (counts) counts(&m4, &o4);
    if (counts && rank == 0) bad |= report_loop("loop", m3, o3, m4, o4, argc, argv, 3);
    unsigned long m5 = 0, o5 = 0, m6 = 0, o6 = 0;
    for (int i = 0; i < N; i++) {
        if (i == 2 && counts) counts(&m5, &o5);
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        int in = rank - i, out = -1, left = (rank + size - 1) % size;
        MPI_Request q[2];
        MPI_Irecv(&out, 1, MPI_INT, left, 0, d, &q[0]);
        MPI_Isend(&in, 1, MPI_INT, (rank + 1) % size, 0, d, &q[1]);
        MPI_Comm_free(&d); /* the exchange completes after the free */
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        if (out != left - i) {
            printf("FAIL: late: rank %d got %d from %d on duplicate %d, expected %d\n", rank, out, left, i, left - i);
            bad = 1;
        }
    }
    if (counts) counts(&m6, &o6);
    if (counts && rank == 0) bad |= report_loop("late", m5, o5, m6, o6, argc, argv, 5);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(bad ? "comm_create_cost: FAIL\n" : "comm_create_cost: ok%s\n", counts ? "" : " (not counted)");
    MPI_Finalize();
    return bad;
}
