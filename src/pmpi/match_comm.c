/* CLAMPI_MATCH under the preload: which communicators clampi's matching engine carries.
 *
 * - CLAMPI_MATCH set (list | lla | hot | lla+hot | bins, with CLAMPI_MATCH_WIDTH and
 *   CLAMPI_MATCH_HOT_PERIOD): MPI_COMM_WORLD is enabled right after MPI_Init /
 *   MPI_Init_thread, and every communicator created from an enabled one (MPI_Comm_dup,
 *   _dup_with_info, _split, _split_type, _create, _create_group) is enabled right after MPI
 *   made it, collectively, with its parent's structure (or its info's clampi_match).
 * - Without CLAMPI_MATCH: MPI_Comm_dup_with_info / MPI_Comm_split_type whose info has
 *   clampi_match enable that one communicator (and, as above, what is derived from it).
 * A communicator is clampi's or MPI's from its creation to its MPI_Comm_free or
 * MPI_Comm_disconnect (disabled
 * there, collectively) or MPI_Finalize. Intercommunicators and anything the enabling fails
 * for (a bad info value, no UCX) stay on MPI, and so does the result of MPI_Comm_idup
 * (enabling is collective: it would block where the program asked not to).
 * CLAMPI_STATS: one line per clampi communicator per rank at MPI_Finalize:
 *   clampi: match rank=R comm=NAME structure=S messages=N mean_depth=D max_depth=M */
#include <mpi.h>

#include "clampi/export.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/match.h"
#include "common/options_info.h"
#include "common/stats.h"
#include "pmpi/match_profile.h"
#include "pmpi/match_entry.h"

_Atomic int clampi_pm_enabled; /* communicators enabled now: the wrappers' fast path */

/* Every communicator enabled in this process, in order, for the stats lines. */
typedef struct record {
    clampi_mcomm *mc; /* NULL once freed (the counts below are then final) */
    int seq;          /* commN's N: agreed by the members, never reused in this process */
    char name[MPI_MAX_OBJECT_NAME + 16];
    const char *structure;
    uint64_t messages, depth_sum, depth_max; /* the engine's matches, exact depths */
    uint64_t native;                         /* MPI carrier: messages MPI matched (depth unseen) */
    struct record *next;
} record;
static record *records, **records_tail = &records; /* kept only for CLAMPI_STATS / CLAMPI_MATCH_PROFILE */
static _Atomic int ever_enabled;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;

static int verbose(void) { return clampi_opt_process(CLAMPI_OPT_MATCH_VERBOSE).u != 0; }

/* NAME: MPI_Comm_get_name, or commN (N: agreed by the members at enabling: one more than
 * the largest any of them had used, so never reused in a process) when the communicator has no name of its own (Open MPI names dups "MPI COMMUNICATOR
 * n DUP FROM m": not a user's name). */
static void snapshot(record *rec) {
    clampi_mcomm *mc = rec->mc;
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(mc->comm, name, &len);
    if (!name[0] || strncmp(name, "MPI COMMUNICATOR ", 17) == 0)
        snprintf(rec->name, sizeof rec->name, "comm%d", rec->seq);
    else
        snprintf(rec->name, sizeof rec->name, "%s", name);
    clampi_match_stats st;
    clampi_matcher_stats(mc->matcher, &st);
    rec->messages = st.matches;
    rec->native = atomic_load_explicit(&mc->native_matched, memory_order_relaxed);
    rec->depth_sum = st.match_depth_sum;
    rec->depth_max = st.match_depth_max;
}

/* Collective over comm, with info's settings, or parent's when parent is not NULL. Failure
 * leaves comm on MPI (the reason on stderr with CLAMPI_MATCH_VERBOSE; a bad option value is
 * always reported by the options). */
static void enable(MPI_Comm comm, MPI_Info info, const clampi_mcomm *parent, const clampi_wire_recipe *how) {
    MPI_Errhandler eh;
    PMPI_Comm_get_errhandler(comm, &eh);
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rc = parent ? clampi_msg_comm_enable_like(comm, parent, how) : CMPIX_Comm_enable(comm, info);
    PMPI_Comm_set_errhandler(comm, eh);
    PMPI_Errhandler_free(&eh);
    if (rc != MPI_SUCCESS) {
        if (verbose()) fprintf(stderr, "clampi: communicator stays on MPI (enabling failed, error %d)\n", rc);
        return;
    }
    atomic_store(&ever_enabled, 1);
    clampi_mcomm *mc = clampi_msg_comm(comm);
    /* a program making 200,000 communicators keeps no records unless asked to print them */
    record *rec = clampi_stats_enabled() || clampi_match_profile_on() ? calloc(1, sizeof *rec) : NULL;
    if (rec && mc) {
        rec->mc = mc;
        rec->seq = mc->serial;
        mc->owner = rec;
        rec->structure = clampi_match_kind_name(mc->cfg.kind);
        pthread_mutex_lock(&records_lock);
        *records_tail = rec;
        records_tail = &rec->next;
        pthread_mutex_unlock(&records_lock);
    } else {
        free(rec);
    }
    atomic_fetch_add(&clampi_pm_enabled, 1);
}

void clampi_pm_after_init(void) {
    clampi_opt_value v;
    clampi_pm_ulfm_init();
    /* set (or set to a bad value: CMPIX_Comm_enable reports it, WORLD stays on MPI) */
    if (clampi_opt_env(CLAMPI_OPT_MATCH, &v) != 0) {
        clampi_carrier_auto_preload(); /* CLAMPI_MATCH_CARRIER=auto: the MPI carrier */
        enable(MPI_COMM_WORLD, MPI_INFO_NULL, NULL, NULL);
    }
}

static const char *hot_by_name(clampi_match_hot_by h) { return h == CLAMPI_MATCH_HOT_THREAD ? "thread" : "progress"; }

static int info_has_key(MPI_Info info) {
    if (info == MPI_INFO_NULL) return 0;
    char v[64];
    int flag = 0;
    PMPI_Info_get(info, CLAMPI_MATCH_KEY, (int)sizeof v - 1, v, &flag);
    return flag;
}

/* A new communicator made from parent (collectively over parent: every member of *newcomm
 * knows whether parent is clampi's). info: the creation's info (dup_with_info, split_type)
 * or MPI_INFO_NULL. how: how newcomm was made from parent (the MPI carrier makes its wire
 * the same way), or NULL where an info may carry clampi_match on some processes only: those
 * take CMPIX_Comm_enable, whose first agreement the others must meet. */
static void derived(MPI_Comm parent, MPI_Comm newcomm, MPI_Info info, const clampi_wire_recipe *how) {
    clampi_mcomm *pm = NULL;
    if (newcomm == MPI_COMM_NULL) {
        /* the wire is made over the parent's wire: outside the group too */
        if (how && how->kind != CLAMPI_WIRE_COPY && (pm = clampi_pm_comm(parent)))
            clampi_msg_comm_wire_outside(pm, how);
        return;
    }
    int inter = 0;
    PMPI_Comm_test_inter(newcomm, &inter);
    if (inter) return;
    pm = clampi_pm_comm(parent);
    int want = pm != NULL, info_may_enable = how == NULL;
    if (!want && info_may_enable) {
        /* the info key may differ between processes: all or none */
        int mine = info_has_key(info), all = 0;
        clampi_carrier_allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, newcomm);
        want = all;
    }
    if (!want) return;
    if (info_has_key(info)) {
        enable(newcomm, info, NULL, NULL);
        return;
    }
    enable(newcomm, MPI_INFO_NULL, pm, how); /* the parent's structure */
}

CLAMPI_API int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    clampi_carrier_release(); /* blocking in MPI: see msg.h */
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc == MPI_SUCCESS) derived(comm, *newcomm, MPI_INFO_NULL, &(clampi_wire_recipe){CLAMPI_WIRE_DUP});
    return rc;
}

/* MPI's, and the duplicate stays MPI's: enabling is collective and would have to block
 * here or in the completion of the request, and programs post MPI_Comm_idup exactly so
 * that the members need not meet (MPICH's comm_idup test hangs otherwise). */
CLAMPI_API int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    return PMPI_Comm_idup(comm, newcomm, request);
}

CLAMPI_API int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    clampi_carrier_release(); /* blocking in MPI: see msg.h */
    int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    if (rc == MPI_SUCCESS) derived(comm, *newcomm, info, NULL);
    return rc;
}

CLAMPI_API int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    clampi_carrier_release(); /* blocking in MPI: see msg.h */
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS)
        derived(comm, *newcomm, MPI_INFO_NULL, &(clampi_wire_recipe){CLAMPI_WIRE_SPLIT, .color = color, .key = key});
    return rc;
}

CLAMPI_API int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    clampi_carrier_release(); /* blocking in MPI: see msg.h */
    int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    if (rc == MPI_SUCCESS) derived(comm, *newcomm, info, NULL);
    return rc;
}

CLAMPI_API int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    clampi_carrier_release(); /* blocking in MPI: see msg.h */
    int rc = PMPI_Comm_create(comm, group, newcomm);
    if (rc == MPI_SUCCESS)
        derived(comm, *newcomm, MPI_INFO_NULL, &(clampi_wire_recipe){CLAMPI_WIRE_CREATE, .group = group});
    return rc;
}

CLAMPI_API int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    clampi_carrier_release(); /* blocking in MPI: see msg.h */
    int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
    if (rc == MPI_SUCCESS)
        derived(comm, *newcomm, MPI_INFO_NULL, &(clampi_wire_recipe){CLAMPI_WIRE_COPY, .made = *newcomm});
    return rc;
}

/* Before MPI_Comm_free / MPI_Comm_disconnect of a clampi communicator: its stats line
 * recorded, clampi's state for it gone (collective, as the call itself is). */
void clampi_pm_comm_forget(MPI_Comm *comm) {
    clampi_mcomm *mc = comm ? clampi_pm_comm_any(*comm) : NULL;
    if (mc && *comm != MPI_COMM_WORLD && *comm != MPI_COMM_SELF) {
        record *r = mc->owner;
        if (r) {
            pthread_mutex_lock(&records_lock);
            snapshot(r);
            r->mc = NULL;
            mc->owner = NULL;
            pthread_mutex_unlock(&records_lock);
        }
        MPI_Errhandler eh;
        PMPI_Comm_get_errhandler(*comm, &eh);
        PMPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
        if (CMPIX_Comm_disable(*comm) == MPI_SUCCESS) atomic_fetch_sub(&clampi_pm_enabled, 1);
        PMPI_Comm_set_errhandler(*comm, eh);
        PMPI_Errhandler_free(&eh);
    }
}

CLAMPI_API int MPI_Comm_free(MPI_Comm *comm) {
#ifdef CLAMPI_MPI_HAS_BUFFER_FLUSH
    if (comm) clampi_msg_comm_buffer_freed(*comm); /* its attached buffer (MPI-4.1) */
#endif
    clampi_pm_comm_forget(comm);
    return PMPI_Comm_free(comm);
}

/* A clampi communicator (a duplicate of MPI_COMM_WORLD, say) leaves clampi as at
 * MPI_Comm_free; MPI's call waits for the other processes, so the MPI carrier's queue goes
 * to MPI first (entry_points.tsv, last section, says why). */
CLAMPI_API int MPI_Comm_disconnect(MPI_Comm *comm) {
#ifdef CLAMPI_MPI_HAS_BUFFER_FLUSH
    if (comm) clampi_msg_comm_buffer_freed(*comm);
#endif
    clampi_pm_comm_forget(comm);
    HANDED(PMPI_Comm_disconnect(comm));
}

/* clampi_match (the structure) on a clampi communicator; on any other, nothing that
 * claims clampi (an MPI that keeps unknown keys would return the user's). */
CLAMPI_API int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used) {
    int rc = PMPI_Comm_get_info(comm, info_used);
    if (rc != MPI_SUCCESS) return rc;
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (mc) {
        char s[32];
        PMPI_Info_set(*info_used, CLAMPI_MATCH_KEY, clampi_match_kind_name(mc->cfg.kind));
        snprintf(s, sizeof s, "%u", mc->cfg.width);
        PMPI_Info_set(*info_used, CLAMPI_MATCH_WIDTH_KEY, s);
        snprintf(s, sizeof s, "%u", mc->cfg.hot_period_us);
        PMPI_Info_set(*info_used, CLAMPI_MATCH_HOT_PERIOD_KEY, s);
        PMPI_Info_set(*info_used, CLAMPI_MATCH_HOT_BY_KEY, hot_by_name(mc->cfg.hot_by));
        mc->ops->get_info(mc, *info_used);
    } else {
        const char *keys[] = {CLAMPI_MATCH_KEY,
                              CLAMPI_MATCH_WIDTH_KEY,
                              CLAMPI_MATCH_HOT_PERIOD_KEY,
                              CLAMPI_MATCH_HOT_BY_KEY,
                              CLAMPI_MATCH_CARRIER_KEY,
                              CLAMPI_MATCH_NATIVE_DEPTH_KEY,
                              CLAMPI_MATCH_NATIVE_DEPTH_MAX_KEY};
        for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++) {
            char v[64];
            int flag = 0;
            PMPI_Info_get(*info_used, keys[i], (int)sizeof v - 1, v, &flag);
            if (flag) PMPI_Info_delete(*info_used, keys[i]);
        }
    }
    return rc;
}

/* MPI_Finalize completes what is pending (freed requests too): every rank progresses until
 * its sends are done -- a rendezvous send needs its receiver's progress, which may have
 * freed the receive and gone on to MPI_Finalize -- and until everybody got there. */
static void drain_sends(void) {
    clampi_msg_bsend_drain();
    unsigned spins = 0;
    while (clampi_msg_sends_in_flight() > 0) {
        clampi_msg_progress();
        clampi_msg_pause(&spins);
    }
    MPI_Request b;
    int done = 0;
    if (PMPI_Ibarrier(MPI_COMM_WORLD, &b) != MPI_SUCCESS) return;
    while (!done) {
        clampi_msg_progress();
        PMPI_Test(&b, &done, MPI_STATUS_IGNORE);
        if (!done) clampi_msg_pause(&spins);
    }
}

void clampi_pm_finalize(void) {
    if (atomic_load(&ever_enabled)) drain_sends();
    int stats = clampi_stats_enabled(), profile = clampi_match_profile_on();
    if (!records || (!stats && !profile)) return;
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_mutex_lock(&records_lock);
    for (record *r = records; r; r = r->next) {
        if (r->mc) snapshot(r);
        /* CLAMPI_STATS: the match line, every message received (on the MPI carrier those MPI
         * matched count at depth 0: its search is not visible); CLAMPI_MATCH_PROFILE: the
         * profile's engine source, the engine's matches alone at their exact search depths */
        for (int kind = 0; kind < 2; kind++) {
            if (!(kind ? profile : stats)) continue;
            uint64_t messages = r->messages + (kind ? 0 : r->native);
            clampi_stats_line l;
            clampi_stats_begin(&l, kind ? "match profile" : "match", rank);
            if (kind) clampi_stats_str(&l, "source", "engine");
            clampi_stats_str(&l, "comm", r->name);
            clampi_stats_str(&l, "structure", r->structure);
            clampi_stats_u64(&l, "messages", messages);
            clampi_stats_f64(&l, "mean_depth", messages ? (double)r->depth_sum / (double)messages : 0.0);
            clampi_stats_u64(&l, "max_depth", r->depth_max);
            clampi_stats_emit(&l);
        }
    }
    pthread_mutex_unlock(&records_lock);
}
