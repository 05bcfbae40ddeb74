#include "rma/options.h"

#include <stdlib.h>
#include <string.h>

#include "clampi/rma.h"
#include "common/parse.h"

/* One row per knob: info key, environment variable. */
enum { OPT_MODE, OPT_INDEX, OPT_BUFFER, OPT_SHM, OPT_ADAPT, NOPTS };
static const struct {
    const char *info_key, *env;
} option_table[NOPTS] = {
    [OPT_MODE] = {CLAMPI_MODE, "CLAMPI_MODE"},
    [OPT_INDEX] = {CLAMPI_INDEX_SIZE, "CLAMPI_INDEX_SIZE"},
    [OPT_BUFFER] = {CLAMPI_BUFFER_SIZE, "CLAMPI_BUFFER_SIZE"},
    [OPT_SHM] = {CLAMPI_SHM_DIRECT, "CLAMPI_SHM_DIRECT"},
    [OPT_ADAPT] = {CLAMPI_ADAPTIVE, "CLAMPI_ADAPTIVE"},
};

static const char *mode_names[] = {
    [CLAMPI_MODE_TRANSPARENT] = CLAMPI_TRANSPARENT,
    [CLAMPI_MODE_ALWAYS] = CLAMPI_ALWAYS_CACHE,
    [CLAMPI_MODE_USER] = CLAMPI_USER_DEFINED,
    [CLAMPI_MODE_OFF] = CLAMPI_OFF,
};

const char *clampi_mode_name(clampi_mode mode) { return mode_names[mode]; }

static int parse_mode(const char *s, clampi_mode *out) {
    for (int m = 0; m <= CLAMPI_MODE_OFF; m++)
        if (!strcmp(s, mode_names[m])) { *out = (clampi_mode)m; return 0; }
    return -1;
}

static int parse_one(int opt, const char *value, clampi_win_options *o) {
    switch (opt) {
    case OPT_MODE: return parse_mode(value, &o->mode);
    case OPT_INDEX: return clampi_parse_size(value, &o->index_entries);
    case OPT_BUFFER: return clampi_parse_size(value, &o->buffer_bytes);
    case OPT_SHM: return clampi_parse_bool(value, &o->shm_direct);
    case OPT_ADAPT: return clampi_parse_bool(value, &o->adaptive);
    }
    return -1;
}

int clampi_options_read(MPI_Info info, clampi_win_options *o, const char **bad_key) {
    o->mode = CLAMPI_MODE_TRANSPARENT;
    o->index_entries = CLAMPI_DEFAULT_INDEX_ENTRIES;
    o->buffer_bytes = CLAMPI_DEFAULT_BUFFER_BYTES;
    o->shm_direct = 1;
    o->adaptive = 1;
    for (int opt = 0; opt < NOPTS; opt++) {
        const char *env = getenv(option_table[opt].env);
        if (env && *env && parse_one(opt, env, o) != 0) {
            *bad_key = option_table[opt].env;
            return MPI_ERR_INFO_VALUE;
        }
        if (info == MPI_INFO_NULL) continue;
        char value[256];
        int flag = 0;
        MPI_Info_get(info, option_table[opt].info_key, (int)sizeof value - 1, value, &flag);
        if (flag && parse_one(opt, value, o) != 0) {
            *bad_key = option_table[opt].info_key;
            return MPI_ERR_INFO_VALUE;
        }
    }
    return MPI_SUCCESS;
}

int clampi_options_stats_enabled(void) {
    static int cached = -1;
    if (cached < 0) {
        const char *s = getenv("CLAMPI_STATS");
        int v = 0;
        cached = s && *s && (clampi_parse_bool(s, &v) != 0 || v); /* any value but a "false" one */
    }
    return cached;
}
