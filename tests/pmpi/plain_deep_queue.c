/* Deep receive queues, random sequences, plain MPI (run plainly and preloaded by
 * run_preload.sh, which compares the "result" lines). Rank 0 sends, rank 1 receives:
 *  1. batches: rank 1 posts k receives of given tags (0..5, repeats allowed) followed by a
 *     MPI_ANY_TAG receives; rank 0 sends one message per specific receive (its tag) and a
 *     messages of tags 1000+ (only the MPI_ANY_TAG receives take those), shuffled, each of a
 *     random size (1, 100 or 20,000 ints: the last by rendezvous), in a random mode (Send,
 *     Isend, Ssend, Issend). With one sender the outcome is MPI's non-overtaking order:
 *     every receive prints what it got (tag, size, sequence number, checksum).
 *  2. probes behind a deep queue: rank 1 keeps D receives for a tag nobody sends posted
 *     (so the preload's MPI carrier queues them in clampi), then MPI_Probe + MPI_Recv,
 *     MPI_Mprobe + MPI_Mrecv, MPI_Iprobe loops, a blocking receive; finally it cancels the
 *     D receives (each reports cancelled).
 *  3. symmetric large exchange behind a deep queue: both ranks post D never-matched
 *     receives, an MPI_Irecv of 4 MiB from the peer, then a blocking MPI_Send of 4 MiB to it, then MPI_Wait: needs each process to take the peer's large message while
 *     it sits in a blocking send.
 *  4. a blocking call while the peer's large send waits (collective_behind_send): collectives,
 *     a neighbourhood collective, MPI_Win_fence, a receive on another communicator, window,
 *     topology and file creation.
 *  5. a matched probe behind 3000 messages must not take a posted receive's (probe_behind_many).
 *  6. MPI_Comm_free with sends, receives and a matched-probe message pending (free_with_pending).
 * Usage: plain_deep_queue [BATCHES] [SEED] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAXK 48
#define BIG 20000
#define HUGE (1 << 20) /* 4 MiB: no MPI sends that without the receiver */
#define NEVER 30000    /* a tag nobody sends */

static unsigned long long rng, rng_local; /* the plan both ranks share; rank 1's own choices */
static unsigned step(unsigned long long *s, unsigned n) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(*s >> 33) % n;
}
static unsigned rnd(unsigned n) { return step(&rng, n); }
static unsigned rnd_local(unsigned n) { return step(&rng_local, n); }

static long checksum(const int *b, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s = s * 31 + b[i];
    return s;
}

static void fill(int *b, int n, int seq) {
    for (int i = 0; i < n; i++) b[i] = seq * 7 + i;
}

static const int sizes[3] = {1, 100, BIG};

/* Phase 1, one batch: both ranks draw the same plan from the shared seed. */
/* depth receives from peer that no message matches (tag NEVER): they make the queue deep. */
typedef struct {
    int n;
    MPI_Request *req;
    int *sink;
} decoys;

static decoys decoys_post(int n, int peer, MPI_Comm comm) {
    decoys d = {n, malloc(sizeof(MPI_Request) * (size_t)(n + 1)), malloc(sizeof(int) * (size_t)(n + 1))};
    for (int i = 0; i < n; i++) MPI_Irecv(&d.sink[i], 1, MPI_INT, peer, NEVER, comm, &d.req[i]);
    return d;
}

/* Cancels and completes them, frees them; returns how many MPI reports cancelled. */
static int decoys_cancel(decoys *d) {
    int cancelled = 0;
    for (int i = 0; i < d->n; i++) {
        MPI_Status st;
        int c = 0;
        MPI_Cancel(&d->req[i]);
        MPI_Wait(&d->req[i], &st);
        MPI_Test_cancelled(&st, &c);
        cancelled += c;
    }
    free(d->req);
    free(d->sink);
    return cancelled;
}

static void batch(int rank, int b) {
    int k = (int)rnd(MAXK) + 1, a = (int)rnd(4), n = k + a;
    int tag[MAXK + 4], size[MAXK + 4], mode[MAXK + 4], order[MAXK + 4];
    for (int i = 0; i < k; i++) tag[i] = (int)rnd(6);
    for (int i = 0; i < a; i++) tag[k + i] = 1000 + (int)rnd(3);
    for (int i = 0; i < n; i++) size[i] = sizes[rnd(3)], mode[i] = (int)rnd(4), order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd((unsigned)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int late = (int)rnd(2); /* receives posted after the sends (unexpected) or before */
    if (rank == 0) {
        MPI_Request rq[MAXK + 4];
        int *buf[MAXK + 4];
        if (!late) MPI_Barrier(MPI_COMM_WORLD);
        for (int s = 0; s < n; s++) {
            int i = order[s];
            buf[s] = malloc(sizeof(int) * (size_t)size[i]);
            fill(buf[s], size[i], b * 1000 + s);
            rq[s] = MPI_REQUEST_NULL;
            /* blocking modes need the receive posted: only when it is (not late) */
            switch (mode[i]) {
            case 0:
                if (!late) {
                    MPI_Send(buf[s], size[i], MPI_INT, 1, tag[i], MPI_COMM_WORLD);
                    break;
                }
                MPI_Isend(buf[s], size[i], MPI_INT, 1, tag[i], MPI_COMM_WORLD, &rq[s]);
                break;
            case 1: MPI_Isend(buf[s], size[i], MPI_INT, 1, tag[i], MPI_COMM_WORLD, &rq[s]); break;
            case 2:
                if (!late) {
                    MPI_Ssend(buf[s], size[i], MPI_INT, 1, tag[i], MPI_COMM_WORLD);
                    break;
                }
                MPI_Isend(buf[s], size[i], MPI_INT, 1, tag[i], MPI_COMM_WORLD, &rq[s]);
                break;
            default: MPI_Issend(buf[s], size[i], MPI_INT, 1, tag[i], MPI_COMM_WORLD, &rq[s]); break;
            }
        }
        if (late) MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        for (int s = 0; s < n; s++) free(buf[s]);
    } else if (rank == 1) {
        MPI_Request rq[MAXK + 4];
        int *buf[MAXK + 4];
        MPI_Status st[MAXK + 4];
        if (late) MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            buf[i] = malloc(sizeof(int) * BIG);
            MPI_Irecv(buf[i], BIG, MPI_INT, rnd_local(4) == 0 ? MPI_ANY_SOURCE : 0, i < k ? tag[i] : MPI_ANY_TAG,
                      MPI_COMM_WORLD, &rq[i]);
        }
        if (!late) MPI_Barrier(MPI_COMM_WORLD);
        /* completion in a random style */
        switch (rnd_local(3)) {
        case 0: MPI_Waitall(n, rq, st); break;
        case 1:
            for (int i = n - 1; i >= 0; i--) MPI_Wait(&rq[i], &st[i]);
            break;
        default:
            for (int left = n; left > 0; left--) {
                int idx;
                MPI_Status s1;
                MPI_Waitany(n, rq, &idx, &s1);
                st[idx] = s1;
            }
        }
        for (int i = 0; i < n; i++) {
            int cnt;
            MPI_Get_count(&st[i], MPI_INT, &cnt);
            printf("result batch=%d recv=%d src=%d tag=%d count=%d first=%d sum=%ld\n", b, i, st[i].MPI_SOURCE,
                   st[i].MPI_TAG, cnt, buf[i][0], checksum(buf[i], cnt));
            free(buf[i]);
        }
    }
}

/* Phase 1b, a two-step batch: rank 1 posts h receives of tags 0..3; rank 0 sends the
 * messages of the first j_t receives of each tag t only; rank 1 waits for exactly those,
 * then posts k - h more receives (some of the same tags) and rank 0 sends the rest. The
 * receives left waiting from the first step must get the next messages of their tags
 * before the later ones do (MPI's posting order), also when the first ones completed. */
static void batch2(int rank, int b) {
    int h = (int)rnd(MAXK / 2) + 1, k = h + (int)rnd(MAXK / 2) + 1;
    int tag[MAXK + 2], first[MAXK + 2], seen[4] = {0}, j[4];
    for (int i = 0; i < k; i++) tag[i] = (int)rnd(4);
    for (int t = 0; t < 4; t++) j[t] = (int)rnd(h + 1);
    for (int i = 0; i < k; i++) first[i] = i < h && seen[tag[i]]++ < j[tag[i]];
    if (rank == 0) {
        int buf[MAXK + 2];
        for (int step = 1; step <= 2; step++) {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < k; i++)
                if (first[i] == (step == 1)) {
                    buf[i] = b * 1000 + i;
                    if (step == 1)
                        MPI_Send(&buf[i], 1, MPI_INT, 1, tag[i], MPI_COMM_WORLD);
                    else
                        MPI_Ssend(&buf[i], 1, MPI_INT, 1, tag[i], MPI_COMM_WORLD);
                }
        }
    } else if (rank == 1) {
        int buf[MAXK + 2];
        MPI_Request rq[MAXK + 2];
        MPI_Status st[MAXK + 2];
        for (int i = 0; i < h; i++) MPI_Irecv(&buf[i], 1, MPI_INT, 0, tag[i], MPI_COMM_WORLD, &rq[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < h; i++)
            if (first[i]) MPI_Wait(&rq[i], &st[i]);
        for (int i = h; i < k; i++) MPI_Irecv(&buf[i], 1, MPI_INT, 0, tag[i], MPI_COMM_WORLD, &rq[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < k; i++)
            if (!first[i]) MPI_Wait(&rq[i], &st[i]);
        for (int i = 0; i < k; i++)
            printf("result batch2=%d recv=%d tag=%d got=%d\n", b, i, st[i].MPI_TAG, buf[i] - b * 1000);
    }
}

static void probes(int rank, int depth) {
    int small[100], big[BIG];
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD); /* rank 1's decoys are posted */
        for (int i = 0; i < 6; i++) {
            int n = i % 2 ? BIG : 100;
            int *b = n == BIG ? big : small;
            fill(b, n, 500 + i);
            MPI_Send(b, n, MPI_INT, 1, 40 + i, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    if (rank != 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    decoys d = decoys_post(depth, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Status st;
    int cnt, flag = 0;
    /* 40: probe then receive; 41: matched probe; 42: iprobe loop; 43: blocking receive;
     * 44: iprobe on any tag; 45: matched probe, nonblocking receive */
    MPI_Probe(0, 40, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    MPI_Recv(small, cnt, MPI_INT, 0, 40, MPI_COMM_WORLD, &st);
    printf("result probe tag=%d count=%d sum=%ld\n", st.MPI_TAG, cnt, checksum(small, cnt));
    MPI_Message m;
    MPI_Mprobe(0, 41, MPI_COMM_WORLD, &m, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    MPI_Mrecv(big, cnt, MPI_INT, &m, &st);
    printf("result mprobe tag=%d count=%d sum=%ld\n", st.MPI_TAG, cnt, checksum(big, cnt));
    while (!flag) MPI_Iprobe(0, 42, MPI_COMM_WORLD, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    MPI_Recv(small, cnt, MPI_INT, 0, 42, MPI_COMM_WORLD, &st);
    printf("result iprobe tag=%d count=%d sum=%ld\n", st.MPI_TAG, cnt, checksum(small, cnt));
    MPI_Recv(big, BIG, MPI_INT, 0, 43, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    printf("result recv tag=%d count=%d sum=%ld\n", st.MPI_TAG, cnt, checksum(big, cnt));
    for (flag = 0; !flag;) MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    MPI_Recv(small, cnt, MPI_INT, 0, st.MPI_TAG, MPI_COMM_WORLD, &st);
    printf("result anyprobe tag=%d count=%d sum=%ld\n", st.MPI_TAG, cnt, checksum(small, cnt));
    MPI_Request r;
    for (flag = 0; !flag;) MPI_Improbe(0, 45, MPI_COMM_WORLD, &flag, &m, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    MPI_Imrecv(big, cnt, MPI_INT, &m, &r);
    MPI_Wait(&r, &st);
    printf("result improbe tag=%d count=%d sum=%ld\n", st.MPI_TAG, cnt, checksum(big, cnt));
    int cancelled = decoys_cancel(&d);
    printf("result cancelled=%d of %d\n", cancelled, depth);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void exchange(int rank, int depth) {
    if (rank > 1) return;
    int peer = 1 - rank;
    MPI_Request r;
    int *out = malloc(sizeof(int) * HUGE), *in = malloc(sizeof(int) * HUGE);
    decoys d = decoys_post(depth, peer, MPI_COMM_WORLD);
    fill(out, HUGE, 900 + rank);
    MPI_Irecv(in, HUGE, MPI_INT, peer, 7, MPI_COMM_WORLD, &r);
    MPI_Send(out, HUGE, MPI_INT, peer, 7, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Wait(&r, &st);
    long sum = checksum(in, HUGE), peer_sum; /* rank 1 prints both: one writer */
    if (rank == 0) MPI_Send(&sum, 1, MPI_LONG, 1, 8, MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Recv(&peer_sum, 1, MPI_LONG, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("result exchange rank=0 sum=%ld\nresult exchange rank=1 sum=%ld\n", peer_sum, sum);
    }
    decoys_cancel(&d);
    free(out);
    free(in);
}

/* 4. a blocking call while the peer's large send waits: rank 1 posts D never-matched
 * receives and a receive of 4 MiB from rank 0, then enters a blocking call; rank 0 sends the
 * 4 MiB with a blocking MPI_Send first and joins the call after it. The calls (which):
 * collectives MPI_Barrier, _Allreduce, _Gather, _Alltoallv, _Scan, _Allgather (0-5),
 * MPI_Neighbor_allgather on a ring (6), MPI_Win_fence (7), a blocking receive on another
 * communicator, the ring (8), MPI_Cart_create (9), MPI_File_open (10), MPI_Win_create (11),
 * MPI_Allreduce of 32 KiB per process (12), MPI_Allreduce_c where the MPI has it (13), 32 KiB
 * MPI_Bcast with the root's data as one derived-type element (14), 32 KiB MPI_Gather with
 * MPI_IN_PLACE at the root (15), MPI_Sendrecv (16) and MPI_Probe (17) on the ring, PSCW (18),
 * and polls on MPI's own requests: MPI_Test of an MPI_Ibarrier (19), MPI_Iprobe on the ring (20),
 * MPI_Testall of a receive on the ring (21). */
static MPI_Comm ring;  /* a periodic 1-D process topology over MPI_COMM_WORLD */
static MPI_Win fenced; /* a window over one int per process, synchronised by fences */
static MPI_Win pscw;   /* the same, synchronised by post-start-complete-wait */
static int pscw_mem;
static int fenced_mem;
enum { BEHIND = 22 };
static char behind_out[BEHIND][96];

static void blocking_call(int rank, int which, int *one, int *sum, int *all, int *counts, int *displs) {
    MPI_Comm c;
    MPI_File f;
    MPI_Win w;
    int dims[1] = {0}, periods[1] = {1}, two[2];
    char path[64];
    switch (which) {
    case 0: MPI_Barrier(MPI_COMM_WORLD); break;
    case 1: MPI_Allreduce(one, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
    case 2: MPI_Gather(one, 1, MPI_INT, all, 1, MPI_INT, 1, MPI_COMM_WORLD); break;
    case 3: MPI_Alltoallv(counts, counts, displs, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD); break;
    case 4: MPI_Scan(one, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
    case 5: MPI_Allgather(one, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD); break;
    case 6: MPI_Neighbor_allgather(one, 1, MPI_INT, two, 1, MPI_INT, ring); break;
    case 7: MPI_Win_fence(0, fenced); break;
    case 8:
        if (rank == 0) MPI_Send(one, 1, MPI_INT, 1, 3, ring);
        if (rank == 1) MPI_Recv(sum, 1, MPI_INT, 0, 3, ring, MPI_STATUS_IGNORE);
        break;
    case 9:
        MPI_Comm_size(MPI_COMM_WORLD, &dims[0]);
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
        MPI_Comm_free(&c);
        break;
    case 10:
        snprintf(path, sizeof path, "/tmp/clampi_deep_queue_%d.tmp", (int)getpid()); /* rank 0's */
        MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, &f) == MPI_SUCCESS)
            MPI_File_close(&f);
        else
            fprintf(stderr, "plain_deep_queue: MPI_File_open of %s failed: that case tests nothing\n", path);
        break;
    case 11:
        MPI_Win_create(one, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        MPI_Win_free(&w);
        break;
    case 12: { /* 32 KiB per process: a blocking collective after the hand-over at any CLAMPI_MATCH_CARRIER_COLL_BYTES up to 16 KiB */
        enum { N = 8192 };
        int *v = malloc(sizeof(int) * N), *t = malloc(sizeof(int) * N);
        for (int i = 0; i < N; i++) v[i] = i + rank;
        MPI_Allreduce(v, t, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        *sum = t[N - 1];
        free(v);
        free(t);
        break;
    }
    case 13: /* MPI-4's large-count form (MPICH 4; nothing on an MPI-3 library) */
#if MPI_VERSION >= 4
        MPI_Allreduce_c(one, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
#endif
        break;
    case 14:   /* 32 KiB, the root describing it by a derived type, the others by MPI_INT: */
    case 15: { /* both must choose the same form; 15: MPI_Gather, MPI_IN_PLACE at its root */
        enum { N = 8192 };
        int size, *v = calloc((size_t)N * 4, sizeof(int));
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (which == 14) {
            MPI_Datatype block;
            MPI_Type_contiguous(N, MPI_INT, &block);
            MPI_Type_commit(&block);
            if (rank == 0)
                MPI_Bcast(v, 1, block, 0, MPI_COMM_WORLD);
            else
                MPI_Bcast(v, N, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Type_free(&block);
        } else {
            int *g = rank == 1 ? calloc((size_t)N * (size_t)size, sizeof(int)) : NULL;
            MPI_Gather(rank == 1 ? MPI_IN_PLACE : v, N, MPI_INT, g, N, MPI_INT, 1, MPI_COMM_WORLD);
            free(g);
        }
        free(v);
        break;
    }
    case 16: /* MPI_Sendrecv on another communicator */
        if (rank <= 1)
            MPI_Sendrecv(one, 1, MPI_INT, 1 - rank, 4, sum, 1, MPI_INT, 1 - rank, 4, ring, MPI_STATUS_IGNORE);
        break;
    case 17: /* MPI_Probe on another communicator */
        if (rank == 0) MPI_Send(one, 1, MPI_INT, 1, 5, ring);
        if (rank == 1) {
            MPI_Status st;
            MPI_Probe(0, 5, ring, &st);
            MPI_Recv(sum, 1, MPI_INT, 0, 5, ring, MPI_STATUS_IGNORE);
        }
        break;
    case 18: { /* PSCW: rank 1 exposes its window to rank 0 and waits for rank 0's epoch */
        MPI_Group world, peer;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int other = 1 - rank;
        if (rank <= 1) MPI_Group_incl(world, 1, &other, &peer);
        if (rank == 1) {
            MPI_Win_post(peer, 0, pscw);
            MPI_Win_wait(pscw);
        } else if (rank == 0) {
            MPI_Win_start(peer, 0, pscw);
            MPI_Put(one, 1, MPI_INT, 1, 0, 1, MPI_INT, pscw);
            MPI_Win_complete(pscw);
        }
        if (rank <= 1) MPI_Group_free(&peer);
        MPI_Group_free(&world);
        break;
    }
    case 19: { /* MPI_Test polled on MPI's own request (rank 0 reaches the barrier after its send) */
        MPI_Request b;
        int done = 0;
        MPI_Ibarrier(MPI_COMM_WORLD, &b);
        while (!done) MPI_Test(&b, &done, MPI_STATUS_IGNORE);
        break;
    }
    case 20: /* MPI_Iprobe polled on another communicator */
        if (rank == 0) MPI_Send(one, 1, MPI_INT, 1, 6, ring);
        if (rank == 1) {
            int flag = 0;
            while (!flag) MPI_Iprobe(0, 6, ring, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(sum, 1, MPI_INT, 0, 6, ring, MPI_STATUS_IGNORE);
        }
        break;
    case 21: /* MPI_Testall polled on MPI's requests alone (a receive on another communicator) */
        if (rank == 0) MPI_Send(one, 1, MPI_INT, 1, 7, ring);
        if (rank == 1) {
            MPI_Request q;
            MPI_Status st;
            int done = 0;
            MPI_Irecv(sum, 1, MPI_INT, 0, 7, ring, &q);
            while (!done) MPI_Testall(1, &q, &done, &st);
        }
        break;
    }
}

static void collective_behind_send(int rank, int depth, int which) {
    int *data = rank <= 1 ? malloc(sizeof(int) * HUGE) : NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    decoys d = {0, NULL, NULL};
    int one = 1, sum = 0;
    int go = 1;
    if (rank == 0) {
        fill(data, HUGE, 700 + which);
        MPI_Recv(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(data, HUGE, MPI_INT, 1, 9, MPI_COMM_WORLD);
    } else if (rank == 1) {
        d = decoys_post(depth, 0, MPI_COMM_WORLD);
        MPI_Irecv(data, HUGE, MPI_INT, 0, 9, MPI_COMM_WORLD, &r);
        MPI_Send(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
        usleep(20000); /* the large send starts while nothing takes messages: only the collective can */
    }
    int size, *all = NULL, *counts = NULL, *displs = NULL;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    all = calloc((size_t)size, sizeof *all);
    counts = malloc(sizeof *counts * (size_t)size);
    displs = malloc(sizeof *displs * (size_t)size);
    for (int i = 0; i < size; i++) counts[i] = 1, displs[i] = i;
    blocking_call(rank, which, &one, &sum, all, counts, displs);
    free(all);
    free(counts);
    free(displs);
    if (rank == 1) {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        /* printed at the end: CLAMPI_STATS lines of windows freed meanwhile would split it */
        snprintf(behind_out[which], sizeof behind_out[which], "result collective=%d sum=%ld\n", which,
                 checksum(data, HUGE));
        decoys_cancel(&d);
    }
    free(data);
}

/* 5. a matched probe must not take a posted receive's message, even far behind: rank 1
 * keeps D never-matched receives and a receive of tag 5 posted, rank 0 sends 3000 messages of
 * tag 9 and then one of tag 5; rank 1 tries MPI_Improbe(0, 5) until its receive completes
 * (plain MPI: the receive has the message, the probe never finds it), then takes the 3000. */
static void probe_behind_many(int rank, int depth) {
    enum { MANY = 3000 };
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < MANY; i++) MPI_Send(&i, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        int five = 5;
        MPI_Send(&five, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    if (rank != 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    MPI_Request r;
    int got = -1, done = 0, stolen = 0, sum = 0;
    decoys d = decoys_post(depth, 0, MPI_COMM_WORLD);
    MPI_Irecv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(200000); /* the 3001 messages arrive meanwhile, and nothing takes them yet */
    while (!done) {
        int flag = 0;
        MPI_Message m;
        MPI_Improbe(0, 5, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
        if (flag) {
            int x;
            MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
            stolen++;
        }
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < MANY; i++) {
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += x;
    }
    printf("result probe_behind_many got=%d stolen=%d sum=%d\n", got, stolen, sum);
    decoys_cancel(&d);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 6. MPI_Comm_free with operations pending (MPI: they complete normally). On a duplicate
 * of WORLD, before both free it (collective) and then complete everything:
 *  rank 0: a 4 MiB MPI_Isend (tag 3), an MPI_Issend (tag 5), a small message nobody
 *          receives (tag 6), a small message rank 1 takes with MPI_Mprobe (tag 4);
 *  rank 1: D never-matched receives (cancelled before the free), the 4 MiB receive, the
 *          tag-5 receive, one receive nothing matches (tag NEVER, cancelled after the
 *          free), MPI_Mprobe of tag 4 (MPI_Mrecv after the free). */
static void free_with_pending(int rank, int depth) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int *data = rank <= 1 ? malloc(sizeof(int) * HUGE) : NULL;
    MPI_Request r = MPI_REQUEST_NULL, rs = MPI_REQUEST_NULL, orphan = MPI_REQUEST_NULL;
    MPI_Message held = MPI_MESSAGE_NULL;
    int small = 0, sync_in = 0, unwanted = 66, probed = 0, never = 0;
    if (rank == 1) {
        decoys d = decoys_post(depth, 0, dup);
        MPI_Irecv(data, HUGE, MPI_INT, 0, 3, dup, &r);
        MPI_Irecv(&sync_in, 1, MPI_INT, 0, 5, dup, &rs);
        MPI_Irecv(&never, 1, MPI_INT, 0, NEVER, dup, &orphan);
        decoys_cancel(&d);
        MPI_Mprobe(0, 4, dup, &held, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        fill(data, HUGE, 300);
        small = 44;
        sync_in = 55;
        MPI_Send(&small, 1, MPI_INT, 1, 4, dup);
        MPI_Send(&unwanted, 1, MPI_INT, 1, 6, dup);
        MPI_Isend(data, HUGE, MPI_INT, 1, 3, dup, &r);
        MPI_Issend(&sync_in, 1, MPI_INT, 1, 5, dup, &rs);
    }
    MPI_Comm_free(&dup);
    MPI_Status st, st_sync, st_orphan;
    int cancelled = 0;
    if (rank == 1) {
        MPI_Mrecv(&probed, 1, MPI_INT, &held, MPI_STATUS_IGNORE);
        MPI_Cancel(&orphan);
        MPI_Wait(&orphan, &st_orphan);
        MPI_Test_cancelled(&st_orphan, &cancelled);
    }
    MPI_Wait(&r, &st);
    MPI_Wait(&rs, &st_sync);
    if (rank == 1) {
        int cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        printf("result free_with_pending src=%d tag=%d count=%d sum=%ld\n", st.MPI_SOURCE, st.MPI_TAG, cnt,
               checksum(data, HUGE));
        printf("result free_with_pending_after mrecv=%d ssend=%d/%d cancelled=%d\n", probed, sync_in, st_sync.MPI_TAG,
               cancelled);
    }
    free(data);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines: both ranks print */
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int batches = argc > 1 ? atoi(argv[1]) : 40;
    rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 12345;
    rng_local = rng ^ 0x5deece66dull;
    for (int b = 0; b < batches; b++) {
        if (rank > 1) { /* keep the shared random stream in step, take no part */
            MPI_Barrier(MPI_COMM_WORLD);
            int k = (int)rnd(MAXK) + 1, a = (int)rnd(4), n = k + a;
            for (int i = 0; i < k; i++) rnd(6);
            for (int i = 0; i < a; i++) rnd(3);
            for (int i = 0; i < n; i++) rnd(3), rnd(4);
            for (int i = n - 1; i > 0; i--) rnd((unsigned)i + 1);
            rnd(2);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            int h = (int)rnd(MAXK / 2) + 1, k2 = h + (int)rnd(MAXK / 2) + 1;
            for (int i = 0; i < k2; i++) rnd(4);
            for (int t = 0; t < 4; t++) rnd((unsigned)h + 1);
            continue;
        }
        batch(rank, b);
        batch2(rank, b);
    }
    probes(rank, 64);
    exchange(rank, 64);
    probe_behind_many(rank, 64);
    free_with_pending(rank, 64);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Win_create(&fenced_mem, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &fenced);
    MPI_Win_fence(0, fenced);
    MPI_Win_create(&pscw_mem, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &pscw);
    for (int which = 0; which < BEHIND; which++) collective_behind_send(rank, 64, which);
    MPI_Win_free(&pscw);
    MPI_Win_fence(0, fenced);
    MPI_Win_free(&fenced);
    MPI_Comm_free(&ring);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) usleep(100000); /* its windows' stats lines out first */
    if (rank == 1)
        for (int which = 0; which < BEHIND; which++) fputs(behind_out[which], stdout);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    /* The preload's stats lines at MPI_Finalize come after ours: the launcher merges the
     * ranks' output in pieces, and a line split by another rank's would be lost. */
    if (rank != 1) usleep(200000);
    MPI_Finalize();
    return 0;
}
