/* Matching options, through the options table: info key > environment > default. */
#include <stdio.h>

#include "clampi/match.h"
#include "common/options_info.h"
#include "msg/msg.h"

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
    /* who touches the queues (no info key): a helper thread or the message layer's progress */
    if (clampi_opt_resolve(MPI_INFO_NULL, CLAMPI_OPT_MATCH_HOT_BY, &v, NULL, &key) != MPI_SUCCESS) return bad(key);
    cfg->hot_by = v.u ? CLAMPI_MATCH_HOT_PROGRESS : CLAMPI_MATCH_HOT_THREAD;
    return MPI_SUCCESS;
}
