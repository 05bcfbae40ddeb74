/* The completion calls on clampi's requests: CMPIX_Wait/Test/Waitall/Waitany/Testall and
 * what MPI's own MPI_Wait/Test/Waitall/Waitany/Waitsome/Testall/Testany/Testsome do with
 * clampi linked (src/msg/mpi_entry.c, weak; the preload's wrappers call the same clampi_msg_
 * functions).
 *
 * clampi's requests are never handed to MPI's completion calls: their handles (request.c)
 * are inactive persistent requests, or generalized requests, that MPI would call complete
 * at once or could not give the communicator's error for. Each call splits its array: the
 * clampi requests are tested on their `finished` flags, the rest with MPI's own call on a
 * copy of the array in which clampi's entries are MPI_REQUEST_NULL. A truncated clampi
 * receive completes with MPI_ERR_TRUNCATE in its status (MPI_ERR_IN_STATUS for the
 * multiple-completion calls), raised through the request's communicator's handler. With no
 * clampi request alive these are MPI's calls unchanged.
 *
 * All-or-nothing calls (Waitall, Testall) ask MPI only once every clampi request in the
 * array is finished, so MPI never completes part of an array that then stays incomplete.
 * While a call spins on clampi requests alone it lets MPI progress now and then
 * (clampi_msg_poke_mpi): a transfer on an MPI communicator may need this process's progress. */
#include <sched.h>
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

static int done(const clampi_mreq *r) { return atomic_load_explicit(&r->finished, memory_order_acquire); }

/* One round of a waiting loop: clampi's progress; MPI's every 16th round; a yield every
 * clampi_msg_spin rounds. */
static void wait_step(unsigned *spins) {
    clampi_msg_pause(spins);
    if (*spins % 16 == 0) clampi_msg_poke_mpi();
    clampi_msg_progress();
}

/* A finished clampi request r (pinned) at requests[i]: its status, its handle released,
 * MPI_REQUEST_NULL in the array. Returns r's error (not raised). */
static int take(clampi_mreq *r, MPI_Request *handle, MPI_Status *status) {
    int e = r->error;
    if (status != MPI_STATUS_IGNORE) {
        /* MPI_ERROR is the caller's to set: only with an error (single completion) or
         * MPI_ERR_IN_STATUS (multiple); MPI leaves it alone otherwise (MPICH's mprobe). */
        int kept = status->MPI_ERROR;
        clampi_mreq_query(r, status);
        status->MPI_ERROR = e == MPI_SUCCESS ? kept : e;
    }
    clampi_mreq_complete(r, handle);
    return e;
}

/* A completed single request: its error raised on its communicator; unpins. */
static int single_done(clampi_mreq *r, MPI_Request *handle, MPI_Status *status) {
    MPI_Comm comm = clampi_mreq_err_comm(r);
    int e = take(r, handle, status);
    clampi_mreq_unpin(r);
    return e == MPI_SUCCESS ? MPI_SUCCESS : clampi_msg_raise(comm, e, "receive failed");
}

/* The array of one multiple-completion call, split. */
typedef struct split {
    int n, nclampi, nmpi; /* entries; clampi's; MPI's (MPI_REQUEST_NULL ones included) */
    clampi_mreq **p;      /* p[i]: the pinned clampi request, or NULL */
    MPI_Request *mpi;     /* a copy of the array, MPI_REQUEST_NULL at clampi's entries */
    clampi_mreq *p_stack[16];
    MPI_Request mpi_stack[16];
} split;

/* -1: no memory (nothing pinned). */
static int split_begin(split *s, int n, MPI_Request reqs[]) {
    s->n = n;
    s->nclampi = 0;
    s->p = n <= 16 ? s->p_stack : malloc(sizeof *s->p * (size_t)n);
    s->mpi = n <= 16 ? s->mpi_stack : malloc(sizeof *s->mpi * (size_t)n);
    if (!s->p || !s->mpi) {
        if (s->p != s->p_stack) free(s->p);
        if (s->mpi != s->mpi_stack) free(s->mpi);
        return -1;
    }
    s->nclampi = clampi_mreq_pin_many(n, reqs, s->p);
    for (int i = 0; i < n; i++) s->mpi[i] = s->p[i] ? MPI_REQUEST_NULL : reqs[i];
    s->nmpi = n - s->nclampi;
    return 0;
}

static void split_end(split *s) {
    for (int i = 0; i < s->n; i++)
        if (s->p[i]) clampi_mreq_unpin(s->p[i]);
    if (s->p != s->p_stack) free(s->p);
    if (s->mpi != s->mpi_stack) free(s->mpi);
}

static int all_clampi_done(const split *s) {
    for (int i = 0; i < s->n; i++)
        if (s->p[i] && !done(s->p[i])) return 0;
    return 1;
}

static MPI_Status *status_at(MPI_Status statuses[], int k) {
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k];
}

/* Waitall/Testall once everything completed (err: MPI's call on the rest): the clampi
 * requests taken, MPI's entries copied back; MPI_ERR_IN_STATUS raised on the first failed
 * clampi request's communicator (MPI raised its own). */
static int all_finish(split *s, MPI_Request reqs[], MPI_Status statuses[], int err) {
    MPI_Comm comm = MPI_COMM_NULL;
    int failed = 0, first = MPI_SUCCESS;
    for (int i = 0; i < s->n; i++) {
        if (!s->p[i]) {
            reqs[i] = s->mpi[i];
            continue;
        }
        int e = take(s->p[i], &reqs[i], status_at(statuses, i));
        if (e != MPI_SUCCESS && !failed) failed = 1, comm = clampi_mreq_err_comm(s->p[i]), first = e;
    }
    if (statuses != MPI_STATUSES_IGNORE && ((failed && err == MPI_SUCCESS) || err == MPI_ERR_IN_STATUS))
        for (int i = 0; i < s->n; i++) /* MPI_ERR_IN_STATUS: every status's MPI_ERROR is set */
            if (s->p[i] || err == MPI_SUCCESS) statuses[i].MPI_ERROR = s->p[i] ? s->p[i]->error : MPI_SUCCESS;
    split_end(s);
    if (!failed || err != MPI_SUCCESS) return err;
    return clampi_msg_raise_in_status(comm, first, "receive failed");
}

/* Testany's step: a finished clampi request first, else MPI's Testany on the rest.
 * *flag: completed one (*index) or nothing active left (*index MPI_UNDEFINED). */
static int any_step(split *s, MPI_Request reqs[], int *index, int *flag, MPI_Status *status, int *err_out) {
    for (int i = 0; i < s->n; i++)
        if (s->p[i] && done(s->p[i])) {
            clampi_mreq *r = s->p[i];
            s->p[i] = NULL;
            *index = i;
            *flag = 1;
            *err_out = single_done(r, &reqs[i], status);
            return 1;
        }
    int f = 0, idx = MPI_UNDEFINED;
    int err = s->nmpi ? PMPI_Testany(s->n, s->mpi, &idx, &f, status) : MPI_SUCCESS;
    if (err != MPI_SUCCESS || (f && idx != MPI_UNDEFINED)) {
        if (f && idx != MPI_UNDEFINED) reqs[idx] = s->mpi[idx];
        *index = idx;
        *flag = f;
        *err_out = err;
        return 1;
    }
    if (s->nclampi || (s->nmpi && !f)) return 0; /* clampi's or MPI's requests still active */
    *index = MPI_UNDEFINED;                      /* nothing active at all */
    *flag = 1;
    *err_out = err;
    return 1;
}

/* Testsome's step: the finished clampi requests, then MPI's Testsome on the rest.
 * 1 when something completed or nothing is active. */
static int some_step(split *s, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[], int *err_out) {
    int k = 0;
    for (int i = 0; i < s->n; i++)
        if (s->p[i] && done(s->p[i])) indices[k++] = i;
    int m = MPI_UNDEFINED, err = MPI_SUCCESS;
    if (s->nmpi)
        err = PMPI_Testsome(s->n, s->mpi, &m, indices + k, statuses == MPI_STATUSES_IGNORE ? statuses : statuses + k);
    int active_clampi = s->nclampi - k;
    if (k == 0 && err == MPI_SUCCESS && (m == 0 || (m == MPI_UNDEFINED && active_clampi))) return 0;
    int got = m == MPI_UNDEFINED ? 0 : m;
    for (int j = k; j < k + got; j++) reqs[indices[j]] = s->mpi[indices[j]];
    MPI_Comm comm = MPI_COMM_NULL;
    int failed = 0, first = MPI_SUCCESS;
    for (int j = 0; j < k; j++) {
        clampi_mreq *r = s->p[indices[j]];
        int e = take(r, &reqs[indices[j]], status_at(statuses, j));
        if (e != MPI_SUCCESS && !failed) failed = 1, comm = clampi_mreq_err_comm(r), first = e;
    }
    *outcount = k + got == 0 ? MPI_UNDEFINED : k + got;
    if (statuses != MPI_STATUSES_IGNORE && ((failed && err == MPI_SUCCESS) || err == MPI_ERR_IN_STATUS))
        for (int j = 0; j < k + got; j++)
            if (j < k || err == MPI_SUCCESS) statuses[j].MPI_ERROR = j < k ? s->p[indices[j]]->error : MPI_SUCCESS;
    *err_out = failed && err == MPI_SUCCESS ? clampi_msg_raise_in_status(comm, first, "receive failed") : err;
    return 1;
}

/* One test of clampi's request p (pinned; unpinned on return). Its error, once finished, is
 * raised on its communicator, or only returned (quiet). */
static inline int test_clampi(clampi_mreq *p, MPI_Request *request, int *flag, MPI_Status *status, int quiet) {
    clampi_msg_reap(); /* finished already (a self send, an earlier progress): no UCX call */
    if (!done(p)) clampi_msg_progress();
    if (!done(p)) {
        static _Thread_local CLAMPI_MSG_TLS unsigned tests;
        if (++tests % 16 == 0) clampi_msg_poke_mpi();
        clampi_mreq_unpin(p);
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    if (!quiet) return single_done(p, request, status);
    int e = take(p, request, status);
    clampi_mreq_unpin(p);
    return e;
}

static int test_impl(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!clampi_mreq_live() || !request || !flag) return PMPI_Test(request, flag, status); /* MPI says what is bad */
    clampi_mreq *p = clampi_mreq_pin(*request);
    if (!p) { /* MPI's request: clampi's queue takes messages first, as MPI's own would (a
               * peer's large send to a receive there completes only then); one load if empty */
        clampi_carrier_progress();
        return PMPI_Test(request, flag, status);
    }
    return test_clampi(p, request, flag, status, 0);
}

/* MPI's request (or bad input) with spin set: tested while clampi takes messages. */
static int mpi_wait(MPI_Request *request, MPI_Status *status, int spin) {
    if (!spin || !request) return PMPI_Wait(request, status);
    int flag = 0;
    for (unsigned spins = 0;; wait_step(&spins)) {
        int e = PMPI_Test(request, &flag, status);
        if (e != MPI_SUCCESS || flag) return e;
    }
}

static int wait_impl(MPI_Request *request, MPI_Status *status, int spin) {
    if (!clampi_mreq_live() || !request) return mpi_wait(request, status, spin);
    clampi_mreq *p = clampi_mreq_pin(*request);
    if (!p) return mpi_wait(request, status, spin);
    unsigned spins = 0;
    clampi_msg_reap();
    if (!done(p)) clampi_msg_progress();
    while (!done(p)) wait_step(&spins);
    return single_done(p, request, status);
}

static int testany_impl(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    if (!clampi_mreq_live() || count <= 0 || !requests || !index || !flag)
        return PMPI_Testany(count, requests, index, flag, status);
    split s;
    if (split_begin(&s, count, requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!s.nclampi) {
        split_end(&s);
        clampi_carrier_progress(); /* as in test_impl */
        return PMPI_Testany(count, requests, index, flag, status);
    }
    clampi_msg_progress();
    int err = MPI_SUCCESS;
    if (!any_step(&s, requests, index, flag, status, &err)) *flag = 0, *index = MPI_UNDEFINED;
    split_end(&s);
    return err;
}

/* The waits, with spin set (the MPI carrier holds receives: nothing may block inside MPI),
 * split their array once (arrays of MPI's requests alone too) and test in a loop that takes
 * messages; MPI's part is tested, never waited for. */
static int waitany_impl(int count, MPI_Request requests[], int *index, MPI_Status *status, int spin) {
    if (count <= 0 || !requests || !index || (!spin && !clampi_mreq_live()))
        return PMPI_Waitany(count, requests, index, status);
    split s;
    if (split_begin(&s, count, requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!s.nclampi && !spin) {
        split_end(&s);
        return PMPI_Waitany(count, requests, index, status);
    }
    int err = MPI_SUCCESS, flag = 0;
    unsigned spins = 0;
    clampi_msg_progress();
    while (!any_step(&s, requests, index, &flag, status, &err)) wait_step(&spins);
    split_end(&s);
    return err;
}

static int testall_impl(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (!clampi_mreq_live() || count <= 0 || !requests || !flag) return PMPI_Testall(count, requests, flag, statuses);
    split s;
    if (split_begin(&s, count, requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!s.nclampi) {
        split_end(&s);
        clampi_carrier_progress(); /* as in test_impl */
        return PMPI_Testall(count, requests, flag, statuses);
    }
    clampi_msg_progress();
    int err = MPI_SUCCESS;
    *flag = 0;
    if (all_clampi_done(&s)) {
        *flag = 1;
        if (s.nmpi) err = PMPI_Testall(count, s.mpi, flag, statuses);
    } else {
        clampi_msg_poke_mpi();
    }
    if (!*flag && err == MPI_SUCCESS) {
        split_end(&s);
        return MPI_SUCCESS;
    }
    return all_finish(&s, requests, statuses, err);
}

static int waitall_impl(int count, MPI_Request requests[], MPI_Status statuses[], int spin) {
    if (count <= 0 || !requests || (!spin && !clampi_mreq_live())) return PMPI_Waitall(count, requests, statuses);
    split s;
    if (split_begin(&s, count, requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!s.nclampi && !spin) {
        split_end(&s);
        return PMPI_Waitall(count, requests, statuses);
    }
    int err = MPI_SUCCESS, flag = 0;
    unsigned spins = 0;
    clampi_msg_progress();
    for (;;) {
        if (all_clampi_done(&s)) {
            flag = 1;
            if (s.nmpi) err = PMPI_Testall(count, s.mpi, &flag, statuses);
            if (flag || err != MPI_SUCCESS) break;
        }
        wait_step(&spins);
    }
    return all_finish(&s, requests, statuses, err);
}

static int testsome_impl(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!clampi_mreq_live() || incount <= 0 || !requests || !indices || !outcount)
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    split s;
    if (split_begin(&s, incount, requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!s.nclampi) {
        split_end(&s);
        clampi_carrier_progress(); /* as in test_impl */
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    }
    clampi_msg_progress();
    int err = MPI_SUCCESS;
    if (!some_step(&s, requests, outcount, indices, statuses, &err)) *outcount = 0;
    split_end(&s);
    return err;
}

static int waitsome_impl(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[],
                         int spin) {
    if (incount <= 0 || !requests || !indices || !outcount || (!spin && !clampi_mreq_live()))
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    split s;
    if (split_begin(&s, incount, requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, NULL);
    if (!s.nclampi && !spin) {
        split_end(&s);
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    }
    int err = MPI_SUCCESS;
    unsigned spins = 0;
    clampi_msg_progress();
    while (!some_step(&s, requests, outcount, indices, statuses, &err)) wait_step(&spins);
    split_end(&s);
    return err;
}

/* ---- the MPI carrier (carrier_mpi.c) ---------------------------------------------------------
 * Receives it handed to MPI's own queue are counted until they complete: the handles are
 * compared before and after each call (one MPI set to MPI_REQUEST_NULL completed), and a
 * persistent request, which keeps its handle, completed when the call says it finished it
 * (snap_end_done). While clampi holds receives a peer's large message
 * needs this process to take it, so no call here blocks inside MPI: a wait is a test loop. */
#define SNAP_STACK 64 /* osu_bw's window: no allocation per call */
typedef struct snap {
    int n;
    MPI_Request *p;
    MPI_Request st[SNAP_STACK];
} snap;

static inline void snap_begin(snap *s, int n, const MPI_Request *reqs) {
    clampi_wire_code = 0;
    s->n = 0;
    s->p = s->st;
    if (n <= 0 || !reqs || !clampi_carrier_tracking()) return;
    if (n > SNAP_STACK && !(s->p = malloc(sizeof *s->p * (size_t)n))) {
        s->p = s->st;
        return;
    }
    for (int i = 0; i < n; i++) s->p[i] = reqs[i]; /* a few handles: no call to memcpy */
    s->n = n;
}

/* before untracked if it was a tracked receive that completed (done: the call finished it,
 * so a persistent request that kept its handle completed too). */
static inline void untrack_single(MPI_Request before, MPI_Request after, int done) {
    if (before != MPI_REQUEST_NULL && (after == MPI_REQUEST_NULL || (done && after == before)))
        clampi_carrier_untrack_one(before);
}

/* The code of a call on MPI's requests. MPI raised its error already: through the wire's
 * handler, which passes it to the program's communicator (MPICH 4.0 raises the errors of
 * MPI_Wait and MPI_Test on MPI_COMM_WORLD instead, as it does for the program's own
 * requests); raising it again would run the program's handler twice. MPICH 5 returns
 * MPI_SUCCESS from a call whose error went to the wire's handler: its code is returned,
 * unless the program's own handler took it (then what MPI returned, as plain MPI). */
static inline int mpi_code(int err) {
    return err == MPI_SUCCESS && clampi_wire_code && !clampi_wire_handled ? clampi_wire_code : err;
}

/* A call that returned err finished the request(s) it names unless MPI refused its
 * arguments (a failed receive completes, with its error). */
static int finished_despite(int err) {
    if (err == MPI_SUCCESS) return 1;
    int cls = err;
    PMPI_Error_class(err, &cls);
    return cls != MPI_ERR_REQUEST && cls != MPI_ERR_ARG && cls != MPI_ERR_COUNT;
}

/* Besides those MPI set to MPI_REQUEST_NULL (a persistent request keeps its handle), the
 * requests the call finished: all; idx[0..nidx); or, after MPI_ERR_IN_STATUS, those whose
 * status (sts, not MPI_STATUSES_IGNORE) is not MPI_ERR_PENDING. */
static inline int snap_end_done(snap *s, const MPI_Request *after, int err, int all, const int *idx, int nidx,
                                const MPI_Status *sts) {
    if (s->n == 1)
        untrack_single(s->p[0], after[0], all || nidx > 0); /* the common one: no array walk */
    else if (s->n)
        clampi_carrier_untrack(s->p, after, s->n, all);
    for (int j = 0; s->n > 1 && !all && j < nidx; j++)
        if (idx[j] >= 0 && idx[j] < s->n && after[idx[j]] == s->p[idx[j]] && after[idx[j]] != MPI_REQUEST_NULL)
            clampi_carrier_untrack_one(s->p[idx[j]]);
    if (err == MPI_ERR_IN_STATUS && sts && sts != MPI_STATUSES_IGNORE)
        for (int k = 0; k < s->n; k++)
            if (after[k] == s->p[k] && after[k] != MPI_REQUEST_NULL && sts[k].MPI_ERROR != MPI_ERR_PENDING)
                clampi_carrier_untrack_one(s->p[k]);
    if (s->p != s->st) free(s->p);
    return mpi_code(err);
}

/* One request: untracked if it was MPI's own receive and completed (done: the call says so). */
static int single_end(MPI_Request before, const MPI_Request *after, int err, int done) {
    untrack_single(before, *after, done && finished_despite(err));
    return mpi_code(err);
}

int clampi_msg_test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!request || !clampi_carrier_tracking()) return test_impl(request, flag, status);
    MPI_Request before = *request;
    clampi_wire_code = 0;
    if (!clampi_mreq_live()) { /* as test_impl */
        int err = PMPI_Test(request, flag, status);
        return single_end(before, request, err, flag && *flag);
    }
    int err = test_impl(request, flag, status);
    return single_end(before, request, err, flag && *flag);
}

/* One request tested for a caller that reports its error itself (the halves of
 * MPI_Isendrecv, src/msg/pair.c): the error is returned, no handler runs. */
int clampi_msg_test_quiet(MPI_Request *request, int *flag, MPI_Status *status) {
    clampi_mreq *p = clampi_mreq_live() ? clampi_mreq_pin(*request) : NULL;
    if (!p) { /* MPI's receive on the MPI carrier's wire */
        MPI_Request before = *request;
        clampi_carrier_progress();
        int saved = clampi_wire_code; /* the caller's call may be on the wire too */
        clampi_wire_code = 0;
        clampi_wire_quiet = 1;
        int e = PMPI_Test(request, flag, status);
        clampi_wire_quiet = 0;
        if (e == MPI_SUCCESS) e = clampi_wire_code;
        clampi_wire_code = saved;
        if (clampi_carrier_tracking()) untrack_single(before, *request, e == MPI_SUCCESS && *flag);
        return e;
    }
    return test_clampi(p, request, flag, status, 1);
}

/* The index a Waitany/Testany finished, as a list of at most one. */
static int one_done(const int *index, const int *flag) {
    return index && *index != MPI_UNDEFINED && *index >= 0 && (!flag || *flag);
}

/* How many indices a Waitsome/Testsome finished (none written unless it succeeded or
 * returned MPI_ERR_IN_STATUS). */
static int some_done(int err, const int *outcount, const int *indices) {
    if (err != MPI_SUCCESS && err != MPI_ERR_IN_STATUS) return 0;
    return outcount && indices && *outcount != MPI_UNDEFINED && *outcount > 0 ? *outcount : 0;
}

int clampi_msg_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    snap s;
    snap_begin(&s, count, requests);
    int err = testany_impl(count, requests, index, flag, status);
    return snap_end_done(&s, requests, err, 0, index, one_done(index, flag) && finished_despite(err), NULL);
}

int clampi_msg_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    snap s;
    snap_begin(&s, count, requests);
    int err = testall_impl(count, requests, flag, statuses);
    return snap_end_done(&s, requests, err, err == MPI_SUCCESS && flag && *flag, NULL, 0, statuses);
}

int clampi_msg_testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    snap s;
    snap_begin(&s, incount, requests);
    int err = testsome_impl(incount, requests, outcount, indices, statuses);
    return snap_end_done(&s, requests, err, 0, indices, some_done(err, outcount, indices), NULL);
}

/* MPI's blocking call when nothing of clampi's waits for a peer, else a test loop (the
 * array split once: a spin costs a few loads per request, not a lookup). */
int clampi_msg_wait(MPI_Request *request, MPI_Status *status) {
    if (!request || !clampi_carrier_watching()) return wait_impl(request, status, 0);
    int spin = clampi_carrier_pending() != 0;
    if (!clampi_carrier_tracking()) return wait_impl(request, status, spin);
    MPI_Request before = *request;
    clampi_wire_code = 0;
    /* depth 0: MPI's own receive, nothing of clampi's to take meanwhile -- what wait_impl
     * would reach, without its two calls */
    if (!spin && !clampi_mreq_live()) return single_end(before, request, PMPI_Wait(request, status), 1);
    return single_end(before, request, wait_impl(request, status, spin), 1);
}

int clampi_msg_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (!clampi_carrier_watching() || count <= 0 || !requests || !index)
        return waitany_impl(count, requests, index, status, 0);
    snap s;
    snap_begin(&s, count, requests);
    int err = waitany_impl(count, requests, index, status, clampi_carrier_pending() != 0);
    return snap_end_done(&s, requests, err, 0, index, one_done(index, NULL) && finished_despite(err), NULL);
}

int clampi_msg_waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (!clampi_carrier_watching() || count <= 0 || !requests) return waitall_impl(count, requests, statuses, 0);
    snap s;
    snap_begin(&s, count, requests);
    int err = waitall_impl(count, requests, statuses, clampi_carrier_pending() != 0);
    return snap_end_done(&s, requests, err, err == MPI_SUCCESS, NULL, 0, statuses);
}

int clampi_msg_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!clampi_carrier_watching() || incount <= 0 || !requests || !indices || !outcount)
        return waitsome_impl(incount, requests, outcount, indices, statuses, 0);
    snap s;
    snap_begin(&s, incount, requests);
    int err = waitsome_impl(incount, requests, outcount, indices, statuses, clampi_carrier_pending() != 0);
    return snap_end_done(&s, requests, err, 0, indices, some_done(err, outcount, indices), NULL);
}

/* MPI_Request_get_status: a clampi request's state without completing it. A truncated
 * receive: MPICH's own call returns MPI_ERR_TRUNCATE (raised on the communicator, the
 * status's MPI_ERROR untouched), Open MPI's MPI_SUCCESS; clampi does what the MPI does. */
int clampi_msg_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    clampi_mreq *r = clampi_mreq_live() && flag ? clampi_mreq_pin(request) : NULL;
    if (!r) {
        if (clampi_mreq_live()) clampi_msg_progress();
        /* MPI_REQUEST_NULL: an empty status, MPI_ERROR included (Open MPI 4.1 leaves that
         * field as it was: MPICH's rqstatus test then depends on the stack's contents) */
        if (request == MPI_REQUEST_NULL && status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_SUCCESS;
        return PMPI_Request_get_status(request, flag, status);
    }
    clampi_msg_progress();
    *flag = done(r);
    int e = *flag ? r->error : MPI_SUCCESS;
    if (*flag && status != MPI_STATUS_IGNORE) clampi_mreq_query(r, status);
    MPI_Comm comm = clampi_mreq_err_comm(r);
    clampi_mreq_unpin(r);
#ifdef MPICH
    if (e != MPI_SUCCESS) return clampi_msg_raise(comm, e, "receive failed");
#else
    (void)e, (void)comm;
#endif
    return MPI_SUCCESS;
}

/* ---- clampi's API ------------------------------------------------------------------ */
int CMPIX_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!request || !flag) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "NULL argument");
    return clampi_msg_test(request, flag, status);
}

int CMPIX_Wait(MPI_Request *request, MPI_Status *status) {
    if (!request) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "NULL request");
    return clampi_msg_wait(request, status);
}

int CMPIX_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (count < 0 || !flag || (count && !requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    return clampi_msg_testall(count, requests, flag, statuses);
}

int CMPIX_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (count < 0 || (count && !requests)) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    return clampi_msg_waitall(count, requests, statuses);
}

int CMPIX_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (count < 0 || !index || (count && !requests))
        return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "bad argument");
    return clampi_msg_waitany(count, requests, index, status);
}
