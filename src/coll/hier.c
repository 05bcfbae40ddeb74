/* Hierarchical Alltoall / Allgather for communicators that span nodes (the scale-out
 * path). Nothing here is shared across a node boundary: the node split is
 * clampi_node_split's (which honours CLAMPI_NODE_SIZE); the node leaders (node rank 0)
 * exchange what crosses nodes with the MPI library's collective over a communicator of
 * the leaders.
 *
 * Alltoall: the blocks between a node's own processes are copied directly through the
 * shared heap in Morton order; the blocks for other nodes are packed by every process into
 * its leader's pack buffer, the leaders exchange them (MPI_Alltoallv), and every process
 * unpacks its own blocks. Each call h, every process publishes a slot (seq h, where its
 * buffers are), waits for the node's slots, copies its Morton cells, packs, and sets
 * packed = h; the leader waits for all packed = h, runs the MPI exchange and sets
 * exchanged = h; everyone waits for it, unpacks, and (only if node peers wrote into its
 * buffers) waits for the peers' done = h. Buffer reuse: a rank writes the pack buffer of
 * call h + 1 only after exchanged = h (the leader has sent it); the leader writes the
 * receive pack of h + 1 only after every process packed h + 1, i.e. finished unpacking h.
 * Slots are double-buffered by call parity (as in collectives.c).
 *
 * Allgather: every process copies its block into one pack, at its place in node order; the
 * leader exchanges the packs in place (MPI_Allgatherv) and every process copies all P
 * blocks out. Nobody touches another process's buffers, so a call has two waits (the
 * leader for packed = h, everyone for exchanged = h), the least a hierarchical exchange
 * needs; the slots and done waits cost a scheduler round each on cores shared by several
 * processes. The bytes copied are the same as the direct path's (one block in, P out).
 * The pack alternates between the two pack buffers call by call, so a process that packs
 * call h + 1 never writes where a slower one still reads call h; the first Allgather after
 * an Alltoall takes the send pack, which the Alltoall's unpacking does not read. */
#include "coll/coll_internal.h"
#include "common/wait.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct hier_flag {
    uint64_t seq;
    char pad[CLAMPI_COLL_LINE - 8];
} hier_flag;

typedef struct hier_ctl {
    hier_flag exchanged; /* leader: last call whose inter-node exchange is complete */
    hier_flag slots[];   /* [2][n] slots (clampi_coll_slot), then [n] packed, [n] done */
} hier_ctl;

typedef struct clampi_coll_hier {
    MPI_Comm comm;                  /* the program's communicator (the abandonment check's) */
    MPI_Comm node;                  /* this node's processes of comm, in comm's order */
    MPI_Comm leaders;               /* the node leaders (node rank 0), in node order; NULL elsewhere */
    int P, me;                      /* comm size and rank */
    int n, li;                      /* node size, my index in the node */
    int M, my_node;                 /* number of nodes, my node's index (leaders' order) */
    int *node_of;                   /* [P] node of each comm rank */
    int *local_of;                  /* [P] index within its node */
    int *members;                   /* [P] comm ranks grouped by node (node order, then node index) */
    int *first, *cnt;               /* [M] where each node's members start in members[], how many */
    clampi_shared_segments ctl_seg; /* the leader's */
    hier_ctl *ctl;
    clampi_coll_slot *slots;
    hier_flag *packed, *done;
    clampi_coll_cell *morton; /* my segment of the node's n x n Morton schedule */
    uint64_t calls;
    clampi_shared_segments pack_seg; /* the leader's: [send pack][receive pack] */
    size_t pack_bytes;               /* size of each of the two packs */
    char *pack_send, *pack_recv;
    MPI_Datatype blk; /* contiguous type of blk_bytes bytes (leaders' exchange unit) */
    size_t blk_bytes;
    int gather_in_recv; /* the next Allgather packs into pack_recv (else pack_send) */
    int abandoned;      /* the last call ended by the abandonment check (coll.h) */
} clampi_coll_hier;

/* Every wait here yields at every poll (CLAMPI_COLL_SPIN_OVERSUB's budget, 0 by default):
 * each call waits for a network exchange, next to which a sched_yield costs nothing, and
 * spinning would take the core from whatever shares it (the leader's MPI progress, another
 * process). Across emulated nodes on 2 cores spinning made Allgather up to 1.6x slower. */
static int wait_geq(const clampi_coll_hier *h, const uint64_t *flag, uint64_t want) {
    return clampi_coll_wait_flag(flag, want, 1, h->comm);
}

/* A wait ended by the abandonment check (a revoked communicator, a failed process: coll.h).
 * The other leaders may be inside the MPI's exchange on the leaders' communicator, which
 * the MPI does not revoke with comm: it is revoked here, so that they leave it; the
 * processes of each node then find the abandonment in their own waits. */
static int abandon(clampi_coll_hier *h, int err) {
    h->abandoned = 1;
    clampi_coll_abandon_revoke(h->leaders);
    return err;
}

/* The leaders' exchange failed (a leader left it, or died). Where the check says why for
 * comm, the call ends with that error, like its node's processes, which are left waiting
 * for a result that is not coming and find it out the same way; the notice may arrive a
 * little after the exchange's error, so the check is asked for up to a second. Otherwise
 * (no check set, an error of another kind) the error is returned and the node's processes
 * are released as after a completed exchange. */
static int exchange_failed(clampi_coll_hier *h, int err) {
    if (!clampi_coll_abandon_check_set()) return err;
    const unsigned budget = clampi_coll_spin_budget(1);
    const double until = MPI_Wtime() + 1.0;
    for (unsigned polls = 0; MPI_Wtime() < until; clampi_wait_pause(&polls, budget)) {
        int why = clampi_coll_abandon_check_now(h->comm);
        if (why != MPI_SUCCESS) return abandon(h, why);
    }
    return err;
}

/* A leader after the exchange (err: its result): the node's processes are released, unless
 * the call was abandoned (h->abandoned; they find that out in their own waits). */
static int exchange_ended(clampi_coll_hier *h, int err, uint64_t seq) {
    if (err != MPI_SUCCESS) err = exchange_failed(h, err);
    if (!h->abandoned) __atomic_store_n(&h->ctl->exchanged.seq, seq, __ATOMIC_RELEASE);
    return err;
}

void clampi_coll_hier_free(clampi_coll_hier *h) {
    if (h == NULL) return;
    clampi_shared_segments_free(&h->pack_seg);
    clampi_shared_segments_free(&h->ctl_seg);
    if (h->blk != MPI_DATATYPE_NULL) MPI_Type_free(&h->blk);
    if (h->leaders != MPI_COMM_NULL) MPI_Comm_free(&h->leaders);
    if (h->node != MPI_COMM_NULL) MPI_Comm_free(&h->node);
    free(h->node_of);
    free(h->local_of);
    free(h->members);
    free(h->first);
    free(h->cnt);
    free(h->morton);
    free(h);
}

clampi_coll_hier *clampi_coll_hier_create(MPI_Comm comm, MPI_Comm node, int *err) {
    *err = MPI_SUCCESS;
    clampi_coll_hier *h = calloc(1, sizeof *h);
    if (h == NULL) return NULL;
    h->node = h->leaders = MPI_COMM_NULL;
    h->comm = comm;
    h->blk = MPI_DATATYPE_NULL;
    MPI_Comm_size(comm, &h->P);
    MPI_Comm_rank(comm, &h->me);
    MPI_Comm_dup(node, &h->node);
    MPI_Comm_set_errhandler(h->node, MPI_ERRORS_RETURN); /* a failed shared window: MPI serves comm */
    MPI_Comm_size(h->node, &h->n);
    MPI_Comm_rank(h->node, &h->li);
    MPI_Comm_split(comm, h->li == 0 ? 0 : MPI_UNDEFINED, h->me, &h->leaders);
    /* the exchange's errors are returned and raised on comm's handler (collectives.c) */
    if (h->leaders != MPI_COMM_NULL) MPI_Comm_set_errhandler(h->leaders, MPI_ERRORS_RETURN);
    /* node index = rank of the node's leader among the leaders (broadcast on the node) */
    int node_id = 0;
    if (h->leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(h->leaders, &node_id);
        MPI_Comm_size(h->leaders, &h->M);
    }
    MPI_Bcast(&node_id, 1, MPI_INT, 0, h->node);
    MPI_Bcast(&h->M, 1, MPI_INT, 0, h->node);
    if (h->M == h->P) { /* one process per node: nothing to share, the MPI library is better */
        clampi_coll_hier_free(h);
        return NULL;
    }
    h->my_node = node_id;
    int mine[2] = {node_id, h->li};
    int *all = malloc(sizeof(int) * 2 * (size_t)h->P);
    h->node_of = malloc(sizeof(int) * (size_t)h->P);
    h->local_of = malloc(sizeof(int) * (size_t)h->P);
    h->members = malloc(sizeof(int) * (size_t)h->P);
    h->first = calloc((size_t)h->M + 1, sizeof(int));
    h->cnt = calloc((size_t)h->M + 1, sizeof(int));
    h->morton = malloc(sizeof *h->morton * (size_t)h->n);
    int ok = all && h->node_of && h->local_of && h->members && h->first && h->cnt && h->morton, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        free(all);
        clampi_coll_hier_free(h);
        return NULL;
    }
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    {
        for (int r = 0; r < h->P; r++) {
            h->node_of[r] = all[2 * r];
            h->local_of[r] = all[2 * r + 1];
            h->cnt[h->node_of[r]]++;
        }
        for (int b = 1; b < h->M; b++) h->first[b] = h->first[b - 1] + h->cnt[b - 1];
        for (int r = 0; r < h->P; r++) h->members[h->first[h->node_of[r]] + h->local_of[r]] = r;
        clampi_coll_morton_segment((uint32_t)h->n, (uint32_t)h->li, h->morton);
    }
    free(all);
    MPI_Aint bytes = h->li == 0 ? (MPI_Aint)(sizeof(hier_ctl) + 4 * (size_t)h->n * CLAMPI_COLL_LINE) : 0;
    int wok = clampi_shared_segments_allocate(h->node, (size_t)bytes, &h->ctl_seg) == MPI_SUCCESS;
    MPI_Allreduce(&wok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        clampi_coll_hier_free(h);
        return NULL; /* the MPI library serves this communicator */
    }
    h->ctl = (hier_ctl *)h->ctl_seg.base[0]; /* zero-filled */
    h->slots = (clampi_coll_slot *)h->ctl->slots;
    h->packed = &h->ctl->slots[2 * (size_t)h->n];
    h->done = h->packed + h->n;
    MPI_Barrier(h->node); /* the leader has zeroed the control block */
    return h;
}

/* Grows the leader's two pack buffers to at least bytes each (collective over the node;
 * every process asks for the same size). */
static int pack_ensure(clampi_coll_hier *h, size_t bytes) {
    if (h->pack_seg.base && h->pack_bytes >= bytes) return MPI_SUCCESS;
    if (h->pack_seg.base) {
        MPI_Barrier(h->node); /* everyone has unpacked the previous call */
        clampi_shared_segments_free(&h->pack_seg);
    }
    size_t want = h->pack_bytes * 2 > bytes ? h->pack_bytes * 2 : bytes;
    want = (want + 4095) & ~(size_t)4095;
    int err = clampi_shared_segments_allocate(h->node, h->li == 0 ? 2 * want : 0, &h->pack_seg);
    if (err != MPI_SUCCESS) {
        h->pack_bytes = 0;
        return err;
    }
    h->pack_send = h->pack_seg.base[0];
    h->pack_recv = h->pack_send + want;
    h->pack_bytes = want;
    return MPI_SUCCESS;
}

static int blk_type(clampi_coll_hier *h, size_t B) {
    if (h->blk != MPI_DATATYPE_NULL && h->blk_bytes == B) return MPI_SUCCESS;
    if (h->blk != MPI_DATATYPE_NULL) MPI_Type_free(&h->blk);
    int err = MPI_Type_contiguous((int)B, MPI_BYTE, &h->blk);
    if (err == MPI_SUCCESS) err = MPI_Type_commit(&h->blk);
    h->blk_bytes = B;
    return err;
}

/* The leaders' Alltoall exchange of the packs (leader only). */
static int leaders_alltoall(clampi_coll_hier *h, int local_direct) {
    int M = h->M, n = h->n;
    int *sc = malloc(sizeof(int) * 4 * (size_t)M);
    if (sc == NULL) return MPI_ERR_NO_MEM;
    int *sd = sc + M, *rc = sd + M, *rd = rc + M;
    for (int b = 0; b < M; b++) { /* pack layout: [node b][my local c][b's local j] */
        int skip = local_direct && b == h->my_node;
        sc[b] = skip ? 0 : n * h->cnt[b];
        sd[b] = n * h->first[b];
        rc[b] = skip ? 0 : h->cnt[b] * n; /* [node a][a's local c][my local j] */
        rd[b] = h->first[b] * n;
    }
    int err = MPI_Alltoallv(h->pack_send, sc, sd, h->blk, h->pack_recv, rc, rd, h->blk, h->leaders);
    free(sc);
    return err;
}

/* Allgather through one pack in node order (see the top of the file). */
static int hier_allgather(clampi_coll_hier *h, uint64_t seq, const char *sp, char *rp, size_t B, int in_place) {
    char *pack = h->gather_in_recv ? h->pack_recv : h->pack_send;
    h->gather_in_recv ^= 1;
    memcpy(pack + ((size_t)h->first[h->my_node] + (size_t)h->li) * B, sp, B);
    __atomic_store_n(&h->packed[h->li].seq, seq, __ATOMIC_RELEASE);
    int err = MPI_SUCCESS;
    if (h->li == 0) {
        for (int i = 0; i < h->n; i++)
            if ((err = wait_geq(h, &h->packed[i].seq, seq)) != MPI_SUCCESS) return abandon(h, err);
        err = exchange_ended(
            h, MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pack, h->cnt, h->first, h->blk, h->leaders), seq);
        if (h->abandoned) return err;
    } else if ((err = wait_geq(h, &h->ctl->exchanged.seq, seq)) != MPI_SUCCESS)
        return abandon(h, err);
    for (int k = 0; k < h->P; k++) {
        int r = h->members[k];
        if (!(in_place && r == h->me)) memcpy(rp + (size_t)r * B, pack + (size_t)k * B, B);
    }
    return err;
}

int clampi_coll_hier_run(clampi_coll_hier *h, int kind, const void *sendbuf, void *recvbuf, size_t B, int *handled) {
    *handled = 0;
    h->abandoned = 0;
    /* every rank of comm computes the same answer here (same B, same options) */
    const size_t pack_need = kind == 0 ? (size_t)h->n * (size_t)h->P * B : (size_t)h->P * B;
    if (B > INT_MAX || B == 0 || (size_t)h->n * (size_t)h->P > INT_MAX) return MPI_SUCCESS;
    int err = pack_ensure(h, pack_need);
    if (err == MPI_SUCCESS) err = blk_type(h, B);
    if (err != MPI_SUCCESS) return err;
    *handled = 1;
    const int P = h->P, me = h->me, n = h->n, li = h->li;
    const int in_place = sendbuf == MPI_IN_PLACE;
    char *rp = recvbuf;
    if (kind == 1) return hier_allgather(h, ++h->calls, in_place ? rp + (size_t)me * B : sendbuf, rp, B, in_place);
    h->gather_in_recv = 0; /* the Alltoall's unpacking reads pack_recv until all have packed again */
    /* in-place Alltoall: peers' Morton copies would overwrite blocks still to be packed */
    const char *sp = in_place ? NULL : sendbuf;

    clampi_coll_slot s;
    memset(&s, 0, sizeof s);
    s.bytes = B;
    if (sp != NULL && clampi_heap_locate(sp, (size_t)P * B, &s.send_seg, &s.send_off) &&
        clampi_heap_locate(rp, (size_t)P * B, &s.recv_seg, &s.recv_off))
        s.flags = CLAMPI_SLOT_SEND_HEAP | CLAMPI_SLOT_RECV_HEAP;
    const uint64_t seq = ++h->calls;
    clampi_coll_slot *slots = &h->slots[(size_t)(seq & 1) * (size_t)n];
    clampi_coll_slot_publish(&slots[li], &s, seq);
    int local_direct = n > 1;
    for (int i = 0; i < n; i++) {
        if ((err = wait_geq(h, &slots[i].seq, seq)) != MPI_SUCCESS) return abandon(h, err);
        local_direct &= (slots[i].flags & CLAMPI_SLOT_RECV_HEAP) != 0;
    }
    char *ps = h->pack_send, *pr = h->pack_recv;
    const int *mem = h->members, *first = h->first, *cnt = h->cnt;
    /* (in-place Alltoall announced no heap buffers: its own node's blocks are packed too) */
    for (int b = 0; b < h->M; b++) {
        if (local_direct && b == h->my_node) continue;
        char *d = ps + ((size_t)n * first[b] + (size_t)li * cnt[b]) * B;
        const char *src = in_place ? rp : sp;
        for (int j = 0; j < cnt[b]; j++) memcpy(d + (size_t)j * B, src + (size_t)mem[first[b] + j] * B, B);
    }
    __atomic_store_n(&h->packed[li].seq, seq, __ATOMIC_RELEASE);

    if (local_direct) { /* on-node blocks: Morton cells straight between heap buffers */
        const int *my = mem + first[h->my_node];
        for (int k = 0; k < n; k++) {
            uint32_t r = h->morton[k].r, c = h->morton[k].c;
            const clampi_coll_slot *sr = &slots[r], *sc = &slots[c];
            char *dst = clampi_heap_addr(sr->recv_seg, sr->recv_off) + (size_t)my[c] * B;
            const char *src = clampi_heap_addr(sc->send_seg, sc->send_off) + (size_t)my[r] * B;
            if (dst != src) memcpy(dst, src, B);
        }
    }
    if (li == 0) {
        for (int i = 0; i < n; i++)
            if ((err = wait_geq(h, &h->packed[i].seq, seq)) != MPI_SUCCESS) return abandon(h, err);
        err = exchange_ended(h, leaders_alltoall(h, local_direct), seq);
        if (h->abandoned) return err;
    } else if ((err = wait_geq(h, &h->ctl->exchanged.seq, seq)) != MPI_SUCCESS)
        return abandon(h, err);

    for (int a = 0; a < h->M; a++) {
        if (local_direct && a == h->my_node) continue;
        const char *src = pr + ((size_t)first[a] * n + li) * B;
        for (int c = 0; c < cnt[a]; c++) memcpy(rp + (size_t)mem[first[a] + c] * B, src + (size_t)c * n * B, B);
    }
    if (local_direct) { /* node peers wrote into my receive buffer and read my send data */
        __atomic_store_n(&h->done[li].seq, seq, __ATOMIC_RELEASE);
        for (int i = 0; i < n; i++) {
            int werr = wait_geq(h, &h->done[i].seq, seq);
            if (werr != MPI_SUCCESS) return abandon(h, werr);
        }
    }
    return err;
}

int clampi_coll_hier_abandoned(const clampi_coll_hier *h) { return h->abandoned; }
