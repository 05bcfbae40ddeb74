/* Matched probes keep MPI's matching order (a plain MPI program, 2 ranks; rank 0 sends,
 * rank 1 probes):
 *   posted: a receive posted before a message was sent gets it, not a later MPI_Improbe
 *           (X to the receive, Y to the probe);
 *   taken:  messages that arrived before a later one are probed first, wherever they wait
 *           (A, B while a receive of another tag was pending, then D: MPI_Mprobe gives A, B, D);
 *   null:   MPI_Mprobe(MPI_PROC_NULL) gives MPI_MESSAGE_NO_PROC, whose receive is empty;
 *   depth 0: a ping-pong of 100 messages, each taken with MPI_Mprobe + MPI_Mrecv; the
 *           program also defines PMPI_Mprobe and PMPI_Improbe, so that the preload's calls
 *           to them are counted here ("mprobe rank=1 probes=100 pmpi_mprobe=M pmpi_improbe=I").
 * Prints what rank 1 received; exits non-zero on a wrong order. Under the preload on the
 * MPI carrier a matched probe is MPI's own only while clampi holds nothing of the
 * communicator; with CLAMPI_MATCH_NATIVE_DEPTH=0 every nonblocking receive is clampi's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static long pmpi_mprobes, pmpi_improbes;

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    static int (*next)(int, int, MPI_Comm, MPI_Message *, MPI_Status *);
    if (!next) next = (int (*)(int, int, MPI_Comm, MPI_Message *, MPI_Status *))dlsym(RTLD_NEXT, "PMPI_Mprobe");
    pmpi_mprobes++;
    return next(source, tag, comm, message, status);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    static int (*next)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *);
    if (!next) next = (int (*)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *))dlsym(RTLD_NEXT, "PMPI_Improbe");
    pmpi_improbes++;
    return next(source, tag, comm, flag, message, status);
}

enum { TAG_READY = 100, TAG_GO = 101 };

static int bad;

static void expect(const char *what, int got, int want) {
    printf("result %s %d\n", what, got);
    if (got != want) {
        fprintf(stderr, "FAIL: %s %d, want %d\n", what, got, want);
        bad++;
    }
}

static int mprobed(int tag, int blocking) {
    MPI_Message m;
    MPI_Status st;
    int v = -1, flag = 0;
    if (blocking)
        MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, &st);
    else
        while (!flag) MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &m, &st);
    if (st.MPI_SOURCE != 0 || st.MPI_TAG != tag)
        bad++, fprintf(stderr, "FAIL: status %d %d\n", st.MPI_SOURCE, st.MPI_TAG);
    MPI_Mrecv(&v, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    return v;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x = -1, c = -1, one = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0) {
        int v[] = {111, 222, 1, 2, 3, 4};
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v[0], 1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* X */
        MPI_Send(&v[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* Y */
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v[2], 1, MPI_INT, 1, 2, MPI_COMM_WORLD);  /* A */
        MPI_Send(&v[3], 1, MPI_INT, 1, 2, MPI_COMM_WORLD);  /* B */
        MPI_Send(&v[4], 1, MPI_INT, 1, 50, MPI_COMM_WORLD); /* C, for the pending receive */
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v[5], 1, MPI_INT, 1, 2, MPI_COMM_WORLD); /* D */
    } else {
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r);
        MPI_Send(NULL, 0, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD);
        expect("posted: probed", mprobed(1, 0), 222);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        expect("posted: received", x, 111);

        MPI_Irecv(&c, 1, MPI_INT, 0, 50, MPI_COMM_WORLD, &r);
        MPI_Send(NULL, 0, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE); /* A and B arrived before C */
        expect("taken: received", c, 3);
        MPI_Send(NULL, 0, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD);
        expect("taken: first", mprobed(2, 1), 1);
        expect("taken: second", mprobed(2, 0), 2);
        expect("taken: third", mprobed(2, 1), 4);

        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st);
        expect("null: no proc", m == MPI_MESSAGE_NO_PROC, 1);
        MPI_Mrecv(&one, 1, MPI_INT, &m, &st);
        int n = -1;
        MPI_Get_count(&st, MPI_INT, &n);
        expect("null: source", st.MPI_SOURCE == MPI_PROC_NULL && n == 0 && one == 1, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long m0 = pmpi_mprobes, i0 = pmpi_improbes, sum = 0;
    for (int i = 0; i < 100; i++) {
        int v = i;
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Message m;
            MPI_Mprobe(0, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
            MPI_Mrecv(&v, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
            sum += v;
            MPI_Send(NULL, 0, MPI_INT, 0, 8, MPI_COMM_WORLD);
        }
    }
    if (rank == 1) {
        expect("depth 0: sum", (int)sum, 4950);
        printf("mprobe rank=1 probes=100 pmpi_mprobe=%ld pmpi_improbe=%ld\n", pmpi_mprobes - m0, pmpi_improbes - i0);
    }
    MPI_Finalize();
    return bad != 0;
}
