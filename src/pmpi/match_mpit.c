/* The MPI library's own matching-queue figures, through the MPI tool information interface
 * (MPI_T performance variables), for CLAMPI_MATCH_PROFILE.
 *
 * What the MPIs publish (probed on this machine): Open MPI's ob1 point-to-point layer has
 * pml_ob1_posted_recvq_length and pml_ob1_unexpected_msgq_length, level variables bound
 * to a communicator with one value per peer; Debian's MPICH 4.0.2 publishes no performance
 * variables at all (built without them), nor does Open MPI's UCX layer. The profile reads
 * them, where they exist, on MPI_COMM_WORLD right after the program posts a receive: the
 * length of the MPI library's posted-receive queue, the new receive included (the entries
 * a message for it may walk past), and of the unexpected-message queue. Where none exist
 * the profile says so. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mpi_cvar.h"
#include "pmpi/match_mpit.h"

static struct {
    int ready;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle posted, unexpected;
    int have_posted, have_unexpected, count_posted, count_unexpected;
    unsigned long long *buf;
    int buflen;
} mt;

/* index of the performance variable called name, or -1 */
static int find_pvar(const char *name) {
    int n = 0;
    if (PMPI_T_pvar_get_num(&n) != MPI_SUCCESS) return -1;
    for (int i = 0; i < n; i++) {
        char nm[256], desc[8];
        int nl = sizeof nm, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (PMPI_T_pvar_get_info(i, nm, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &atomic) !=
            MPI_SUCCESS)
            continue;
        if (!strcmp(nm, name) && bind == MPI_T_BIND_MPI_COMM &&
            (dt == MPI_UNSIGNED || dt == MPI_INT)) /* read as 32-bit values */
            return i;
    }
    return -1;
}

static int open_handle(const char *name, MPI_T_pvar_handle *h, int *count) {
    int idx = find_pvar(name);
    MPI_Comm world = MPI_COMM_WORLD;
    if (idx < 0 || PMPI_T_pvar_handle_alloc(mt.session, idx, &world, h, count) != MPI_SUCCESS) return 0;
    PMPI_T_pvar_start(mt.session, *h); /* continuous variables: a no-op or an error, both fine */
    return 1;
}

void clampi_mpit_queues_start(void) {
    if (mt.ready || !clampi_mpi_t_ready()) return;
    if (PMPI_T_pvar_session_create(&mt.session) != MPI_SUCCESS) return;
    mt.have_posted = open_handle("pml_ob1_posted_recvq_length", &mt.posted, &mt.count_posted);
    mt.have_unexpected = open_handle("pml_ob1_unexpected_msgq_length", &mt.unexpected, &mt.count_unexpected);
    int n = mt.count_posted > mt.count_unexpected ? mt.count_posted : mt.count_unexpected;
    mt.buf = n > 0 ? calloc((size_t)n, sizeof *mt.buf) : NULL;
    mt.buflen = mt.buf ? n : 0;
    mt.ready = 1;
}

/* Sum over the peers of one per-peer variable (read as unsigned; the MPIs use 32-bit). */
static uint64_t read_sum(MPI_T_pvar_handle h, int count) {
    if (count <= 0 || count > mt.buflen) return 0;
    unsigned *v = (unsigned *)mt.buf;
    memset(mt.buf, 0, (size_t)mt.buflen * sizeof *mt.buf);
    if (PMPI_T_pvar_read(mt.session, h, v) != MPI_SUCCESS) return 0;
    uint64_t s = 0;
    for (int i = 0; i < count; i++) s += v[i];
    return s;
}

int clampi_mpit_queues_available(void) { return mt.ready && (mt.have_posted || mt.have_unexpected); }

void clampi_mpit_queues_sample(clampi_mpit_sample *s) {
    if (!clampi_mpit_queues_available()) return;
    if (mt.have_posted) {
        uint64_t p = read_sum(mt.posted, mt.count_posted);
        s->posted_sum += p;
        if (p > s->posted_max) s->posted_max = p;
    }
    if (mt.have_unexpected) {
        uint64_t u = read_sum(mt.unexpected, mt.count_unexpected);
        s->unexpected_sum += u;
        if (u > s->unexpected_max) s->unexpected_max = u;
    }
    s->samples++;
}

void clampi_mpit_queues_stop(void) {
    if (!mt.ready) return;
    if (mt.have_posted) PMPI_T_pvar_handle_free(mt.session, &mt.posted);
    if (mt.have_unexpected) PMPI_T_pvar_handle_free(mt.session, &mt.unexpected);
    PMPI_T_pvar_session_free(&mt.session); /* MPI_T itself stays initialised (common/mpi_cvar.h) */
    free(mt.buf);
    memset(&mt, 0, sizeof mt);
}
