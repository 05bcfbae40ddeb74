/* Differential test: the same random traffic (sizes 0 B - 1 MiB, random tags, ANY_TAG and
 * ANY_SOURCE receives, probes, cancels) run once with MPI's point-to-point and once with
 * CMPIX_ on an enabled communicator; every receive must get the same source, tag, count
 * and bytes. The plan comes from a seed shared by all ranks. ANY_SOURCE receives are used
 * only where one sender is sending to the receiver in that round, rounds separated by a
 * barrier (otherwise MPI itself may pick either). Non-overtaking is checked explicitly: per (sender, tag), the per-pair
 * sequence numbers in the payload arrive increasing in receive-posting order.
 *   test_match_diff KIND [ROUNDS] [SEED] */
#define CLAMPI_TEST_USES_MPI
#include <clampi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXM 64
typedef struct {
    int src, dst, tag, bytes, seq;
} plan_msg;
typedef struct {
    int source, tag, count;
    uint64_t sum;
    int seq;
} result;

static uint64_t rng, lrng; /* the plan's (same on all ranks), this rank's own choices */
static unsigned step(uint64_t *x, unsigned n) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (unsigned)(*x % n);
}
static unsigned rnd(unsigned n) { return step(&rng, n); }
static unsigned lrnd(unsigned n) { return step(&lrng, n); }
static int rank, size;

static int pick_size(void) {
    unsigned r = rnd(100);
    if (r < 55) return (int)rnd(65);
    if (r < 85) return (int)rnd(8193);
    return (int)rnd((1u << 20) + 1);
}

static void fill(unsigned char *b, int n, int src, int seq) {
    for (int i = 0; i < n; i++) b[i] = (unsigned char)(src * 31 + seq * 7 + i);
    if (n >= 8) {
        memcpy(b, &src, 4);
        memcpy(b + 4, &seq, 4);
    }
}

static uint64_t checksum(const unsigned char *b, int n) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*irecv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*probe_fn)(int, int, MPI_Comm, MPI_Status *);
typedef int (*cancel_fn)(MPI_Request *);
typedef int (*waitall_fn)(int, MPI_Request *, MPI_Status *);
typedef struct {
    isend_fn isend;
    irecv_fn irecv;
    probe_fn probe;
    cancel_fn cancel;
    waitall_fn waitall;
} api;

/* Runs all rounds with one API; fills res (receives in posting order); returns count. */
static int run(const api *a, MPI_Comm comm, int rounds, uint64_t seed, result *res, int maxres) {
    rng = seed * 2654435761u + 7;
    lrng = seed * 40503u + (uint64_t)rank * 977 + 3;
    int nres = 0, seq_to[16] = {0};
    for (int round = 0; round < rounds; round++) {
        if (getenv("DIFF_DEBUG"))
            fprintf(stderr, "rank %d %s round %d\n", rank, a->isend == MPI_Isend ? "mpi" : "clampi", round);
        plan_msg plan[MAXM];
        int n = 0;
        for (int s = 0; s < size; s++) {
            int k = (int)rnd(5);
            for (int i = 0; i < k && n < MAXM; i++) {
                plan[n].src = s;
                plan[n].dst = (int)rnd((unsigned)size);
                plan[n].tag = (int)rnd(4);
                plan[n].bytes = pick_size();
                plan[n].seq = 0;
                n++;
            }
        }
        /* sequence numbers per (src, dst) pair, over the whole run (same on every rank) */
        static int pair_seq[16][16];
        if (round == 0) memset(pair_seq, 0, sizeof pair_seq);
        for (int i = 0; i < n; i++) plan[i].seq = pair_seq[plan[i].src][plan[i].dst]++;
        int senders_to_me = 0, seen[16] = {0};
        for (int i = 0; i < n; i++)
            if (plan[i].dst == rank && !seen[plan[i].src]) seen[plan[i].src] = 1, senders_to_me++;
        MPI_Request reqs[2 * MAXM + 1];
        unsigned char *sbuf[MAXM] = {0}, *rbuf[MAXM] = {0};
        int nreq = 0, rr[MAXM], nrr = 0;
        for (int i = 0; i < n; i++)
            if (plan[i].src == rank) {
                sbuf[i] = malloc((size_t)plan[i].bytes + 1);
                fill(sbuf[i], plan[i].bytes, rank, plan[i].seq);
                CHECK(a->isend(sbuf[i], plan[i].bytes, MPI_BYTE, plan[i].dst, plan[i].tag, comm, &reqs[nreq++]) ==
                      MPI_SUCCESS);
            }
        /* a probe (specific source, any tag): the first message from that source */
        unsigned prob = lrnd(3);
        if (prob == 0 && senders_to_me) {
            int s = -1;
            for (int i = 0; i < n && s < 0; i++)
                if (plan[i].dst == rank) s = plan[i].src;
            MPI_Status st;
            CHECK(a->probe(s, MPI_ANY_TAG, comm, &st) == MPI_SUCCESS);
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(nres < maxres);
            res[nres++] = (result){st.MPI_SOURCE, st.MPI_TAG, cnt, 0, -2};
        }
        /* receives, one per incoming message, posted in plan order with random wildcards */
        for (int i = 0; i < n; i++) {
            if (plan[i].dst != rank) continue;
            int src = plan[i].src, tag = plan[i].tag;
            unsigned w = lrnd(4);
            if (w == 0) tag = MPI_ANY_TAG;
            if (w == 1 && senders_to_me == 1) src = MPI_ANY_SOURCE;
            if (w == 2 && senders_to_me == 1) src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
            rbuf[i] = malloc((1u << 20) + 1);
            rr[nrr++] = i;
            CHECK(a->irecv(rbuf[i], (1 << 20), MPI_BYTE, src, tag, comm, &reqs[nreq++]) == MPI_SUCCESS);
        }
        /* a receive nobody sends to, cancelled */
        int cancelled_slot = -1;
        if (lrnd(2)) {
            static int dummy;
            CHECK(a->irecv(&dummy, 1, MPI_INT, rank, 1000, comm, &reqs[nreq]) == MPI_SUCCESS);
            CHECK(a->cancel(&reqs[nreq]) == MPI_SUCCESS);
            cancelled_slot = nreq++;
        }
        MPI_Status st[2 * MAXM + 1];
        CHECK(a->waitall(nreq, reqs, st) == MPI_SUCCESS);
        int first_recv = nreq - nrr - (cancelled_slot >= 0);
        for (int j = 0; j < nrr; j++) {
            MPI_Status *s = &st[first_recv + j];
            int cnt;
            MPI_Get_count(s, MPI_BYTE, &cnt);
            unsigned char *b = rbuf[rr[j]];
            int sq = -1;
            if (cnt >= 8) memcpy(&sq, b + 4, 4);
            CHECK(nres < maxres);
            res[nres++] = (result){s->MPI_SOURCE, s->MPI_TAG, cnt, checksum(b, cnt), sq};
        }
        if (cancelled_slot >= 0) {
            int c = 0;
            MPI_Test_cancelled(&st[cancelled_slot], &c);
            CHECK(nres < maxres);
            res[nres++] = (result){-5, -5, c, 0, -3};
        }
        for (int i = 0; i < n; i++) free(sbuf[i]), free(rbuf[i]);
        /* Nobody starts the next round's sends before every receive of this one is done:
         * otherwise an ANY_SOURCE receive could take a next-round message (MPI too). */
        MPI_Barrier(MPI_COMM_WORLD);
        (void)seq_to;
    }
    return nres;
}

static int mpi_cancel(MPI_Request *r) { return MPI_Cancel(r); }

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 16);
    const char *kind = argc > 1 ? argv[1] : "lla+hot";
    int rounds = argc > 2 ? atoi(argv[2]) : 12;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    MPI_Comm cm, cc;
    MPI_Comm_dup(MPI_COMM_WORLD, &cm);
    MPI_Comm_dup(MPI_COMM_WORLD, &cc);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_match", kind);
    CHECK(CMPIX_Comm_enable(cc, info) == MPI_SUCCESS);
    int maxres = rounds * (MAXM + 4);
    result *r1 = calloc((size_t)maxres, sizeof *r1), *r2 = calloc((size_t)maxres, sizeof *r2);
    api mpi = {MPI_Isend, MPI_Irecv, MPI_Probe, mpi_cancel, MPI_Waitall};
    api cmpix = {CMPIX_Isend, CMPIX_Irecv, CMPIX_Probe, CMPIX_Cancel, CMPIX_Waitall};
    for (int rep = 0; rep < 2; rep++) {
        uint64_t s = seed + (uint64_t)rep * 1000;
        int n1 = run(&mpi, cm, rounds, s, r1, maxres);
        int n2 = run(&cmpix, cc, rounds, s, r2, maxres);
        CHECK_EQ_INT(n1, n2);
        for (int i = 0; i < n1; i++) {
            if (memcmp(&r1[i], &r2[i], sizeof r1[i]) != 0)
                fprintf(
                    stderr,
                    "rank %d receive %d: MPI src %d tag %d count %d seq %d | clampi src %d tag %d count %d seq %d\n",
                    rank, i, r1[i].source, r1[i].tag, r1[i].count, r1[i].seq, r2[i].source, r2[i].tag, r2[i].count,
                    r2[i].seq);
            CHECK(memcmp(&r1[i], &r2[i], sizeof r1[i]) == 0);
        }
        /* non-overtaking, explicitly: per (source, tag), sequence numbers increase */
        int last[16][4];
        memset(last, -1, sizeof last);
        for (int i = 0; i < n2; i++) {
            if (r2[i].seq < 0 || r2[i].source < 0) continue;
            CHECK(r2[i].seq > last[r2[i].source][r2[i].tag]);
            last[r2[i].source][r2[i].tag] = r2[i].seq;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK(CMPIX_Comm_disable(cc) == MPI_SUCCESS);
    MPI_Comm_free(&cc);
    MPI_Comm_free(&cm);
    MPI_Info_free(&info);
    free(r1);
    free(r2);
    if (rank == 0) printf("match diff (%s, np %d): ok\n", kind, size);
    MPI_Finalize();
    return 0;
}
