/* Alltoall and Allgather on the shared heap: announce, agree, copy along the schedule
 * (Morton or naive), synchronize. See docs/coll.md for the protocol. */
#include "coll/coll_internal.h"
#include "common/errors.h"
#include "common/stats.h"

#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CMPIX_Coll_stats clampi_coll_stats;

enum { KIND_ALLTOALL = 0, KIND_ALLGATHER = 1 };

static int check_args(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm) {
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
    if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    if (recvcount < 0) return MPI_ERR_COUNT;
    if (recvtype == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
    if (sendbuf != MPI_IN_PLACE) {
        if (sendcount < 0) return MPI_ERR_COUNT;
        if (sendtype == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
        int ss, rs;
        MPI_Type_size(sendtype, &ss);
        MPI_Type_size(recvtype, &rs);
        if ((long long)sendcount * ss != (long long)recvcount * rs) {
            /* on an intercommunicator one group may send and the other receive only:
             * those calls are MPI's (state_create), and so is their checking */
            int inter = 0;
            MPI_Comm_test_inter(comm, &inter);
            if (!inter) return MPI_ERR_TRUNCATE; /* every block of a rank has both sizes */
        }
        if (sendbuf == NULL && (long long)sendcount * ss > 0) return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

static int coll_raise(MPI_Comm comm, int err) {
    clampi_raise_mpi(comm, err);
    return err;
}

/* A shared-path wait ended by the abandonment check (coll.h): the call returns its error. */
static int coll_abandon(MPI_Comm comm, int err) {
    clampi_coll_stats.abandoned++;
    return coll_raise(comm, err);
}

/* Communicators spanning nodes: the hierarchical path on contiguous bytes. A rank with a
 * non-contiguous datatype packs its data first and unpacks after (MPI_Pack's native
 * format is the raw bytes), so every rank takes the same path without agreeing first. */
static int hier_call(clampi_coll_comm *st, int kind, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, size_t B, int contiguous, int *handled) {
    if (contiguous) return clampi_coll_hier_run(st->hier, kind, sendbuf, recvbuf, B, handled);
    const int P = st->size;
    const size_t sendlen = kind == KIND_ALLTOALL ? (size_t)P * B : B, recvlen = (size_t)P * B;
    MPI_Comm self = MPI_COMM_SELF;
    char *ts = malloc(sendlen ? sendlen : 1), *tr = malloc(recvlen ? recvlen : 1);
    int err = ts && tr ? MPI_SUCCESS : MPI_ERR_NO_MEM, pos = 0;
    if (err == MPI_SUCCESS) {
        if (sendbuf != MPI_IN_PLACE)
            err = MPI_Pack(sendbuf, kind == KIND_ALLTOALL ? P * sendcount : sendcount, sendtype, ts, (int)sendlen, &pos,
                           self);
        else if (kind == KIND_ALLTOALL)
            err = MPI_Pack(recvbuf, P * recvcount, recvtype, ts, (int)sendlen, &pos, self);
        else {
            MPI_Aint lb, ext;
            MPI_Type_get_extent(recvtype, &lb, &ext);
            err = MPI_Pack((char *)recvbuf + (MPI_Aint)st->rank * recvcount * ext, recvcount, recvtype, ts,
                           (int)sendlen, &pos, self);
        }
        if (err == MPI_SUCCESS && (size_t)pos != sendlen)
            err = MPI_ERR_INTERN; /* not the raw bytes: cannot happen with Open MPI, MPICH */
    }
    *handled = 1;
    if (err == MPI_SUCCESS) err = clampi_coll_hier_run(st->hier, kind, ts, tr, B, handled);
    if (err == MPI_SUCCESS && *handled) {
        pos = 0;
        err = MPI_Unpack(tr, (int)recvlen, &pos, recvbuf, P * recvcount, recvtype, self);
    }
    free(ts);
    free(tr);
    return err;
}

static int coll_run(int kind, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo, int *handled) {
    const clampi_coll_options *o = clampi_coll_options_get();
    *handled = 0;
    if (!o->coll) return MPI_SUCCESS;
    int err = check_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (err != MPI_SUCCESS) {
        *handled = 1;
        return coll_raise(comm, err);
    }
    /* AUTO: small blocks take the mailbox path (one synchronization per call), larger ones
     * the configured schedule; a forced schedule never takes the mailbox path */
    const int auto_algo = algo == CMPIX_COLL_AUTO;
    if (auto_algo) algo = o->algo;
    if (algo == CMPIX_COLL_MPI) return MPI_SUCCESS;
    clampi_before_blocking(); /* set-up and the hierarchical parts block inside MPI */
    clampi_coll_comm *st = clampi_coll_comm_get(comm, &err);
    if (st == NULL) {
        *handled = 1;
        return coll_raise(comm, err);
    }
    const int in_place = sendbuf == MPI_IN_PLACE;
    int rsize;
    MPI_Type_size(recvtype, &rsize);
    const size_t B = (size_t)recvcount * (size_t)rsize;
    const int contiguous = clampi_coll_type_contiguous(recvtype) && (in_place || clampi_coll_type_contiguous(sendtype));
    if (!st->intranode) {
        /* (B is the same on every rank: all take the same path) */
        if (st->hier == NULL || (kind == KIND_ALLTOALL && B > o->hier_alltoall_max)) {
            clampi_coll_stats.delegated++; /* intercommunicator, nothing to share, or a large Alltoall */
            return MPI_SUCCESS;
        }
        err = hier_call(st, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, B, contiguous, handled);
        if (!*handled)
            clampi_coll_stats.delegated++;
        else if (err == MPI_SUCCESS)
            clampi_coll_stats.hierarchical++;
        if (err == MPI_SUCCESS) return err;
        return clampi_coll_hier_abandoned(st->hier) ? coll_abandon(comm, err) : coll_raise(comm, err);
    }

    const int P = st->size, me = st->rank;
    const size_t recvlen = (size_t)P * B;
    const size_t sendlen = kind == KIND_ALLTOALL ? (size_t)P * B : B;
    const size_t scratch_need = sendlen + recvlen;
    const char *my_send = in_place ? (kind == KIND_ALLTOALL ? recvbuf : (char *)recvbuf + (size_t)me * B) : sendbuf;

    if (auto_algo && P > 1 && B <= st->cell_max) {
        /* small blocks: the mailbox path (the same choice on every rank) */
        int delegate = !contiguous || B > o->direct_max;
        err = clampi_coll_mailbox_run(st, kind == KIND_ALLTOALL, my_send, recvbuf, B, in_place, delegate, handled);
        if (!*handled)
            clampi_coll_stats.delegated++;
        else if (err == MPI_SUCCESS)
            clampi_coll_stats.eager++;
        if (err == MPI_SUCCESS) return err;
        return err == MPI_ERR_TRUNCATE ? coll_raise(comm, err) : coll_abandon(comm, err);
    }

    clampi_coll_slot s;
    memset(&s, 0, sizeof s);
    s.bytes = B;
    uint32_t f = in_place ? CLAMPI_SLOT_IN_PLACE : 0;
    if (!contiguous || B > o->direct_max) f |= CLAMPI_SLOT_DELEGATE;
    if (!(f & CLAMPI_SLOT_DELEGATE)) {
        if (clampi_heap_locate(recvbuf, recvlen, &s.recv_seg, &s.recv_off)) f |= CLAMPI_SLOT_RECV_HEAP;
        if (!in_place) {
            if (clampi_heap_locate(sendbuf, sendlen, &s.send_seg, &s.send_off)) f |= CLAMPI_SLOT_SEND_HEAP;
        } else if (kind == KIND_ALLGATHER && (f & CLAMPI_SLOT_RECV_HEAP)) {
            f |= CLAMPI_SLOT_SEND_HEAP; /* own block of the receive buffer */
            s.send_seg = s.recv_seg;
            s.send_off = s.recv_off + (uint64_t)me * B;
        }
        /* in-place alltoall always stages its send data (blocks would be overwritten) */
        int stage_send = !(f & CLAMPI_SLOT_SEND_HEAP);
        int optional_stage = (!(f & CLAMPI_SLOT_RECV_HEAP)) || (stage_send && !(in_place && kind == KIND_ALLTOALL));
        if (optional_stage && B > o->staged_max)
            f |= CLAMPI_SLOT_DELEGATE; /* large blocks: the MPI library is faster */
        else if (stage_send && st->scr_base != NULL && st->scr_bytes >= scratch_need) {
            memcpy(st->scr_base[me], my_send, sendlen); /* speculative: scratch is free */
            f |= CLAMPI_SLOT_SEND_STAGED;
        }
    }
    s.flags = f;
    const uint64_t seq = ++st->calls;
    clampi_coll_slot *slots = &st->ctl->slots[(size_t)(seq & 1) * (size_t)P];
    clampi_coll_publish(st, slots, &s, seq);
    /* A: every send buffer filled, slots published (or some rank took the mailbox path
     * with a different block size: bad input, every rank reports it) */
    err = clampi_coll_wait_slots_or_mailbox(st, slots, seq, kind == KIND_ALLTOALL, B);
    if (err != MPI_SUCCESS) {
        *handled = 1;
        return err == MPI_ERR_TRUNCATE ? coll_raise(comm, err) : coll_abandon(comm, err);
    }

    int any_delegate = 0, mismatch = 0, staging = 0, late_stage = 0;
    for (int i = 0; i < P; i++) {
        uint32_t fi = slots[i].flags;
        any_delegate |= (fi & CLAMPI_SLOT_DELEGATE) != 0;
        mismatch |= slots[i].bytes != B;
        int ss = !(fi & CLAMPI_SLOT_SEND_HEAP);
        staging |= ss || !(fi & CLAMPI_SLOT_RECV_HEAP);
        late_stage |= ss && !(fi & CLAMPI_SLOT_SEND_STAGED);
    }
    if (any_delegate) {
        clampi_coll_stats.delegated++;
        return MPI_SUCCESS; /* every rank saw the same slots: all delegate */
    }
    *handled = 1;
    if (mismatch) return coll_raise(comm, MPI_ERR_TRUNCATE); /* every rank reports it: nobody hangs */
    if (staging && !(st->scr_base != NULL && st->scr_bytes >= scratch_need)) {
        /* scratch too small (the same on every rank): grow it collectively; nobody has
         * staged speculatively then, so stage now and resynchronize */
        err = clampi_coll_scratch_ensure(st, scratch_need);
        if (err != MPI_SUCCESS) return coll_raise(comm, err);
        if (!(f & CLAMPI_SLOT_SEND_HEAP)) memcpy(st->scr_base[me], my_send, sendlen);
        if (late_stage && (err = clampi_coll_barrier(st)) != MPI_SUCCESS) return coll_abandon(comm, err);
    }

    /* where each rank's send data and receive buffer are, in this process */
    const char **src = (const char **)alloca(sizeof(char *) * (size_t)P);
    char **dst = (char **)alloca(sizeof(char *) * (size_t)P);
    for (int i = 0; i < P; i++) {
        const clampi_coll_slot *si = &slots[i];
        src[i] = (si->flags & CLAMPI_SLOT_SEND_HEAP) ? clampi_heap_addr(si->send_seg, si->send_off) : st->scr_base[i];
        dst[i] = (si->flags & CLAMPI_SLOT_RECV_HEAP) ? clampi_heap_addr(si->recv_seg, si->recv_off)
                                                     : st->scr_base[i] + sendlen;
    }
    const int naive = algo == CMPIX_COLL_NAIVE;
    const clampi_coll_cell *cells = naive ? st->naive : st->morton;
    if (kind == KIND_ALLTOALL) {
        for (int k = 0; k < P; k++) {
            uint32_t r = cells[k].r, c = cells[k].c;
            memcpy(dst[r] + (size_t)c * B, src[c] + (size_t)r * B, B);
        }
    } else {
        for (int k = 0; k < P; k++) {
            uint32_t r = cells[k].r, c = cells[k].c;
            char *d = dst[r] + (size_t)c * B;
            if (d != src[c]) memcpy(d, src[c], B);
        }
    }
    /* B: every block of my receive buffer written, nobody reads my send data any more */
    err = clampi_coll_done_wait(st, seq, naive ? st->wait_naive : st->wait_morton,
                                naive ? st->nwait_naive : st->nwait_morton);
    if (err != MPI_SUCCESS) return coll_abandon(comm, err);
    if (!(f & CLAMPI_SLOT_RECV_HEAP)) memcpy(recvbuf, st->scr_base[me] + sendlen, recvlen);
    if (staging)
        clampi_coll_stats.staged++;
    else
        clampi_coll_stats.direct++;
    return MPI_SUCCESS;
}

int clampi_coll_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo, int *handled) {
    return coll_run(KIND_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algo, handled);
}

int clampi_coll_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo, int *handled) {
    return coll_run(KIND_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algo, handled);
}

/* ---- public API ------------------------------------------------------------------ */
CLAMPI_API int CMPIX_Alltoall_algo(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo) {
    int handled;
    int err = clampi_coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algo, &handled);
    if (!handled) err = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return err;
}

CLAMPI_API int CMPIX_Allgather_algo(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo) {
    int handled;
    int err = clampi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algo, &handled);
    if (!handled) err = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return err;
}

CLAMPI_API int CMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
    return CMPIX_Alltoall_algo(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, CMPIX_COLL_AUTO);
}

CLAMPI_API int CMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm) {
    return CMPIX_Allgather_algo(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, CMPIX_COLL_AUTO);
}

void clampi_coll_stats_print(void) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    clampi_stats_line line;
    clampi_stats_begin(&line, "coll", rank);
    clampi_stats_u64(&line, "direct", clampi_coll_stats.direct);
    clampi_stats_u64(&line, "staged", clampi_coll_stats.staged);
    clampi_stats_u64(&line, "delegated", clampi_coll_stats.delegated);
    clampi_stats_u64(&line, "heap_fallbacks", clampi_heap_fallbacks());
    clampi_stats_u64(&line, "eager", clampi_coll_stats.eager);
    clampi_stats_u64(&line, "hierarchical", clampi_coll_stats.hierarchical);
    clampi_stats_u64(&line, "abandoned", clampi_coll_stats.abandoned);
    clampi_stats_emit(&line);
}

CLAMPI_API int CMPIX_Coll_get_stats(CMPIX_Coll_stats *stats) {
    if (stats == NULL) {
        clampi_raise_mpi(MPI_COMM_WORLD, MPI_ERR_ARG);
        return MPI_ERR_ARG;
    }
    *stats = clampi_coll_stats;
    return MPI_SUCCESS;
}
