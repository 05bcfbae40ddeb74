/* A plain MPI program (nothing of clampi in it): 1 B ping-pong between ranks 0 and 1 with
 * MPI_Send / MPI_Recv, optionally with D MPI_ANY_SOURCE receives posted ahead on rank 1
 * that never match (the depth benchmark of docs/matching.md). Run plainly and under the preload
 * (LD_PRELOAD=libclampi_pmpi.so CLAMPI_MATCH=...) to compare.
 *
 * With one rank it sends to itself instead (MPI_Irecv, MPI_Send, MPI_Wait per iteration): no
 * peer to wait for, so an instruction count is the software's cost alone. With one rank and
 * blocking = 1: MPI_Send then MPI_Recv (the 1 B message is eager in both MPIs and in clampi).
 * With one rank and blocking = 3 or 5: MPI_Isend, the probe (MPI_Mprobe + MPI_Mrecv, or
 * MPI_Iprobe + MPI_Recv), MPI_Wait; blocking = 6: MPI_Sendrecv with itself.
 *
 * With two ranks and blocking = 2: the nonblocking forms, each completed by MPI_Wait
 * (MPI_Isend/MPI_Wait, MPI_Irecv/MPI_Wait; the receive is posted before the peer sends).
 * blocking = 3: each receive is MPI_Mprobe then MPI_Mrecv (how mpi4py receives objects).
 * blocking = 4: each send is synchronous (MPI_Ssend, then MPI_Recv).
 * blocking = 5: each receive polls MPI_Iprobe until the message is there, then MPI_Recv.
 * blocking = 6: each iteration is one MPI_Sendrecv exchange (both ranks send and receive).
 * blocking = 7: an exchange of persistent requests (MPI_Recv_init and MPI_Send_init once,
 * then MPI_Startall + MPI_Waitall each iteration); with one rank, with itself.
 * blocking = 8: an exchange of nonblocking requests (MPI_Irecv + MPI_Isend, MPI_Waitall);
 * blocking = 9: the same completed by an MPI_Testall loop; with one rank, with itself.
 * blocking = 10: osu_bw's window: 64 MPI_Irecv, 64 MPI_Isend, MPI_Waitall on each (with
 * two ranks rank 0 sends and rank 1 receives, then a 1 B reply); one iteration is 64 messages.
 * blocking = 11: a persistent halo: 8 persistent receives and 8 persistent sends of 1 KiB,
 * one tag per neighbour, MPI_Startall + MPI_Waitall of all 16 each iteration (with one rank,
 * with itself); one iteration is 8 messages each way.
 *
 *   pingpong [iters] [depth] [warmup] [blocking]
 * Prints: "pingpong depth=D iters=N us_per_roundtrip=X" on rank 0 (half of it is the
 * one-way latency osu_latency reports). count_instructions.sh runs it under callgrind
 * with two iteration counts: the difference divided by the extra iterations is the
 * instructions per round trip, start-up and finalize excluded. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = argc > 1 ? atol(argv[1]) : 10000;
    int depth = argc > 2 ? atoi(argv[2]) : 0;
    long warm = argc > 3 ? atol(argv[3]) : 100;
    int blocking = argc > 4 ? atoi(argv[4]) : 0;
    static int dummy;
    MPI_Request *ahead = malloc(sizeof(MPI_Request) * (size_t)(depth + 1));
    int rr = size == 1 ? 0 : 1; /* the rank with the receives posted ahead */
    if (rank == rr)             /* receives nobody sends to (tags above any the ping-pong uses) */
        for (int d = 0; d < depth; d++)
            MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 1000 + d, MPI_COMM_WORLD, &ahead[d]);
    char b = 1, r = 0; /* to itself: the receive gets its own buffer (a pending receive's buffer must not be sent) */
    MPI_Request pq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* blocking = 7: persistent */
    if (blocking == 7 && rank < 2) {
        int peer = size == 1 ? 0 : 1 - rank;
        MPI_Recv_init(&r, 1, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &pq[0]);
        MPI_Send_init(&b, 1, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &pq[1]);
    }
    static char hr[8][1024], hs[8][1024];
    MPI_Request hq[16]; /* blocking = 11: the halo's receives, then its sends */
    if (blocking == 11 && rank < 2) {
        int peer = size == 1 ? 0 : 1 - rank;
        for (int k = 0; k < 8; k++) {
            MPI_Recv_init(hr[k], 1024, MPI_CHAR, peer, 10 + k, MPI_COMM_WORLD, &hq[k]);
            MPI_Send_init(hs[k], 1024, MPI_CHAR, peer, 10 + k, MPI_COMM_WORLD, &hq[8 + k]);
        }
    }
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < warm + iters; i++) {
        if (i == warm) t0 = MPI_Wtime();
        if (size == 1 && (blocking == 3 || blocking == 5)) { /* a probe, then the receive */
            MPI_Request q;
            MPI_Message m;
            int flag = 0;
            MPI_Isend(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &q);
            if (blocking == 3) {
                MPI_Mprobe(0, 1, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
                MPI_Mrecv(&r, 1, MPI_CHAR, &m, MPI_STATUS_IGNORE);
            } else {
                while (!flag) MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                MPI_Recv(&r, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (blocking == 7 && rank < 2) { /* persistent receive and send, both started */
            MPI_Status pst[2];                  /* not MPI_STATUSES_IGNORE: MPICH's header makes gcc warn about it */
            MPI_Startall(2, pq);
            MPI_Waitall(2, pq, pst);
        } else if (blocking == 11 && rank < 2) { /* the persistent halo */
            MPI_Status hst[16];
            MPI_Startall(16, hq);
            MPI_Waitall(16, hq, hst);
        } else if ((blocking == 8 || blocking == 9) && rank < 2) { /* a nonblocking exchange */
            int peer = size == 1 ? 0 : 1 - rank, flag = 0;
            MPI_Request q[2];
            MPI_Irecv(&r, 1, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &q[0]);
            MPI_Isend(&b, 1, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &q[1]);
            if (blocking == 8)
                MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            else
                while (!flag) MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
        } else if (blocking == 10 && rank < 2) { /* a window of 64 (osu_bw) */
            MPI_Request w[64];
            char wb[64];
            int peer = size == 1 ? 0 : 1 - rank;
            if (size == 1 || rank == 1) {
                for (int k = 0; k < 64; k++) MPI_Irecv(&wb[k], 1, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &w[k]);
                if (size == 1) {
                    MPI_Request s[64];
                    for (int k = 0; k < 64; k++) MPI_Isend(&b, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &s[k]);
                    MPI_Waitall(64, s, MPI_STATUSES_IGNORE);
                }
                MPI_Waitall(64, w, MPI_STATUSES_IGNORE);
                if (size > 1) MPI_Send(&b, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
            } else {
                for (int k = 0; k < 64; k++) MPI_Isend(&b, 1, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &w[k]);
                MPI_Waitall(64, w, MPI_STATUSES_IGNORE);
                MPI_Recv(&r, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else if (size == 1 && blocking == 6) {
            MPI_Sendrecv(&b, 1, MPI_CHAR, 0, 1, &r, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (size == 1 && blocking) {
            MPI_Send(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            MPI_Recv(&r, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (size == 1) {
            MPI_Request q;
            MPI_Irecv(&r, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &q);
            MPI_Send(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (blocking == 2 && rank < 2) {
            MPI_Request q;
            if (rank == 0) {
                MPI_Isend(&b, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            }
            MPI_Irecv(&b, 1, MPI_CHAR, 1 - rank, 1, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            if (rank == 1) {
                MPI_Isend(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            }
        } else if (blocking == 3 && rank < 2) { /* each receive a matched probe, then MPI_Mrecv */
            MPI_Message m;
            if (rank == 0) MPI_Send(&b, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Mprobe(1 - rank, 1, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
            MPI_Mrecv(&b, 1, MPI_CHAR, &m, MPI_STATUS_IGNORE);
            if (rank == 1) MPI_Send(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        } else if (blocking == 5 && rank < 2) { /* a polling receiver */
            int flag = 0;
            if (rank == 0) MPI_Send(&b, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            while (!flag) MPI_Iprobe(1 - rank, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(&b, 1, MPI_CHAR, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rank == 1) MPI_Send(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        } else if (blocking == 6 && rank < 2) { /* an exchange (halo codes) */
            MPI_Sendrecv(&b, 1, MPI_CHAR, 1 - rank, 1, &r, 1, MPI_CHAR, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (blocking == 4 && rank < 2) {
            if (rank == 0) MPI_Ssend(&b, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&b, 1, MPI_CHAR, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rank == 1) MPI_Ssend(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Send(&b, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&b, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&b, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == rr)
        for (int d = 0; d < depth; d++) {
            MPI_Cancel(&ahead[d]);
            MPI_Wait(&ahead[d], MPI_STATUS_IGNORE);
        }
    for (int i = 0; i < 2; i++)
        if (pq[i] != MPI_REQUEST_NULL) MPI_Request_free(&pq[i]);
    if (rank == 0) printf("pingpong depth=%d iters=%ld us_per_roundtrip=%.3f\n", depth, iters, t / (double)iters * 1e6);
    free(ahead);
    MPI_Finalize();
    return 0;
}
