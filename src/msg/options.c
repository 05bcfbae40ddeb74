/* Matching options, through the options table: info key > environment > default. */
#include <stdio.h>

#include "clampi/match.h"
#include "common/options_info.h"
#include "msg/msg_internal.h"
#include "topo/node.h"

static int bad(const char *key) {
    fprintf(stderr, "clampi: invalid value for %s\n", key);
    return MPI_ERR_INFO_VALUE;
}

int clampi_msg_options(MPI_Info info, clampi_match_config *cfg) {
    clampi_match_config_default(cfg);
    clampi_opt_value v;
    const char *key;
    if (clampi_opt_resolve(info, CLAMPI_OPT_MATCH, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    char name[32];
    clampi_opt_format(CLAMPI_OPT_MATCH, v, name, sizeof name);
    if (clampi_match_kind_parse(name, &cfg->kind) != 0) return bad(key);
    if (clampi_opt_resolve(info, CLAMPI_OPT_MATCH_WIDTH, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    cfg->width = (unsigned)v.u;
    if (clampi_opt_resolve(info, CLAMPI_OPT_MATCH_HOT_PERIOD, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    cfg->hot_period_us = (unsigned)v.u;
    /* who touches the queues: a helper thread or the message layer's progress.
     * A helper thread without a core of its own preempts a rank spinning in a wait loop
     * (depth benchmark, MPICH, 2 ranks on 2 cores: 1.5-1.8 us per round trip against 1.0
     * touching at progress), so auto keeps it for processes with 2 CPUs per local rank. */
    if (clampi_opt_resolve(info, CLAMPI_OPT_MATCH_HOT_BY, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    if (v.u == 0) v.u = clampi_node_helper_has_core() ? 1 : 2;
    cfg->hot_by = v.u == 1 ? CLAMPI_MATCH_HOT_THREAD : CLAMPI_MATCH_HOT_PROGRESS;
    return MPI_SUCCESS;
}

int clampi_msg_carrier_options(MPI_Info info, int *carrier, unsigned *native_base, unsigned *native_cap) {
    clampi_opt_value v;
    const char *key;
    if (clampi_opt_resolve(info, CLAMPI_OPT_MATCH_CARRIER, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    /* auto on a communicator: the job's carrier */
    *carrier = clampi_carrier_choice_is_mpi(v.u, clampi_carrier_job) ? CLAMPI_CARRIER_MPI : CLAMPI_CARRIER_UCX;
    if (clampi_opt_resolve(info, CLAMPI_OPT_MATCH_NATIVE_DEPTH, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    *native_base = (unsigned)v.u;
    if (clampi_opt_resolve(info, CLAMPI_OPT_MATCH_NATIVE_DEPTH_MAX, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    /* depth 0 keeps every receive in clampi's queue: it does not grow */
    *native_cap = *native_base && (unsigned)v.u > *native_base ? (unsigned)v.u : *native_base;
    return MPI_SUCCESS;
}
