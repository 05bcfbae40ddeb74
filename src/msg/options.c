/* Matching options, read in this one place: info key > environment > default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/match.h"
#include "common/parse.h"
#include "msg/msg.h"

static int parse_uint(const char *s, unsigned max, unsigned *out) {
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || *s == '-' || v < 1 || v > max) return -1;
    *out = (unsigned)v;
    return 0;
}

/* value: from info if set there, else from the environment; NULL if neither. */
static const char *lookup(MPI_Info info, const char *key, const char *env, char *buf, int len) {
    int flag = 0;
    if (info != MPI_INFO_NULL) {
        PMPI_Info_get(info, key, len - 1, buf, &flag);
        if (flag) return buf;
    }
    return getenv(env);
}

static int bad(const char *key, const char *value) {
    fprintf(stderr, "clampi: invalid value for %s: '%s'\n", key, value);
    return MPI_ERR_INFO_VALUE;
}

int clampi_msg_options(MPI_Info info, clampi_match_config *cfg) {
    char buf[MPI_MAX_INFO_VAL + 1];
    clampi_match_config_default(cfg);
    const char *v;
    if ((v = lookup(info, CLAMPI_MATCH_KEY, "CLAMPI_MATCH", buf, sizeof buf)) &&
        clampi_match_kind_parse(v, &cfg->kind) != 0)
        return bad(CLAMPI_MATCH_KEY, v);
    if ((v = lookup(info, CLAMPI_MATCH_WIDTH_KEY, "CLAMPI_MATCH_WIDTH", buf, sizeof buf)) &&
        parse_uint(v, 1u << 16, &cfg->width) != 0)
        return bad(CLAMPI_MATCH_WIDTH_KEY, v);
    if ((v = lookup(info, CLAMPI_MATCH_HOT_PERIOD_KEY, "CLAMPI_MATCH_HOT_PERIOD", buf, sizeof buf)) &&
        parse_uint(v, 10u * 1000 * 1000, &cfg->hot_period_us) != 0)
        return bad(CLAMPI_MATCH_HOT_PERIOD_KEY, v);
    /* Who touches the queues (no info key): a helper thread (default) or progress. */
    if ((v = getenv("CLAMPI_MATCH_HOT_BY"))) {
        if (!strcmp(v, "thread")) cfg->hot_by = CLAMPI_MATCH_HOT_THREAD;
        else if (!strcmp(v, "progress")) cfg->hot_by = CLAMPI_MATCH_HOT_PROGRESS;
        else return bad("CLAMPI_MATCH_HOT_BY", v);
    }
    return MPI_SUCCESS;
}
