/* MPI_Isendrecv and MPI_Isendrecv_replace on a communicator clampi carries: one request
 * made of a receive and a send, each whatever its carrier gives (clampi's request or MPI's
 * on the duplicate). The pair's request is clampi's, watched (watch.c): progress tests both
 * halves and finishes it once both have completed, with the receive's status (source, tag,
 * size, cancelled, error). MPI_Cancel of the pair cancels nothing: the halves complete as
 * they would (MPI allows a cancel that does not succeed). */
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

typedef struct pair {
    MPI_Request half[2]; /* receive, send; MPI_REQUEST_NULL once complete */
    MPI_Status st;       /* the receive's */
    int err;             /* the receive's error, if any */
} pair;

/* One half tested; 1 once it has completed. */
static int half_done(pair *p, int i) {
    if (p->half[i] == MPI_REQUEST_NULL) return 1;
    int flag = 0;
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int e = clampi_msg_test_quiet(&p->half[i], &flag, i == 0 ? &st : MPI_STATUS_IGNORE);
    if (e != MPI_SUCCESS && i == 0) { /* the receive failed (truncated): the pair reports it */
        p->err = e == MPI_ERR_IN_STATUS ? st.MPI_ERROR : e;
        flag = 1;
        p->half[0] = MPI_REQUEST_NULL;
    }
    if (!flag) return 0;
    if (i == 0) p->st = st;
    return 1;
}

/* The watch (watch.c): once both halves completed, r gets the receive's status. */
static int pair_ready(void *ctx, clampi_mreq *r) {
    pair *p = ctx;
    int a = half_done(p, 0), b = half_done(p, 1);
    if (!a || !b) return 0;
    r->source = p->st.MPI_SOURCE;
    r->tag = p->st.MPI_TAG;
    MPI_Count bytes = 0;
    PMPI_Get_elements_x(&p->st, MPI_BYTE, &bytes);
    r->bytes = bytes > 0 ? (size_t)bytes : 0;
    int cancelled = 0;
    PMPI_Test_cancelled(&p->st, &cancelled);
    r->cancelled = cancelled;
    r->error = p->err;
    free(p);
    return 1;
}

int clampi_msg_pair(MPI_Comm comm, MPI_Request recv, MPI_Request send, void *tmp, MPI_Request *request) {
    pair *p = malloc(sizeof *p);
    int err = MPI_ERR_NO_MEM;
    if (p) {
        *p = (pair){.half = {recv, send}, .err = MPI_SUCCESS};
        p->st.MPI_SOURCE = MPI_ANY_SOURCE, p->st.MPI_TAG = MPI_ANY_TAG;
        /* tmp: the packed data of MPI_Isendrecv_replace, freed with the request */
        err = clampi_msg_watched(clampi_msg_comm(comm), 1, tmp, pair_ready, p, request);
        if (err == MPI_SUCCESS) return MPI_SUCCESS;
    }
    free(p);
    free(tmp);
    return clampi_msg_raise(comm, err, NULL); /* the halves stay pending, as after a failed MPI call */
}
