#include "rma/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/rma.h"
#include "clampi/rmax.h"
#include "common/parse.h"

/* One row per knob: info key, environment variable. */
enum { OPT_MODE, OPT_INDEX, OPT_BUFFER, OPT_SHM, OPT_DYNAMIC, OPT_ADAPT, OPT_BACKEND, OPT_PROGRESS, OPT_SCOPE,
       OPT_ORDER, OPT_ACC_INTRINSIC, NOPTS };
static const struct {
    const char *info_key, *env;
} option_table[NOPTS] = {
    [OPT_MODE] = {CLAMPI_MODE, "CLAMPI_MODE"},
    [OPT_INDEX] = {CLAMPI_INDEX_SIZE, "CLAMPI_INDEX_SIZE"},
    [OPT_BUFFER] = {CLAMPI_BUFFER_SIZE, "CLAMPI_BUFFER_SIZE"},
    [OPT_SHM] = {CLAMPI_SHM_DIRECT, "CLAMPI_SHM_DIRECT"},
    [OPT_DYNAMIC] = {CLAMPI_DYNAMIC_CACHE, "CLAMPI_DYNAMIC_CACHE"},
    [OPT_ADAPT] = {CLAMPI_ADAPTIVE, "CLAMPI_ADAPTIVE"},
    [OPT_BACKEND] = {CLAMPI_BACKEND, "CLAMPI_BACKEND"},
    [OPT_PROGRESS] = {CLAMPI_PROGRESS, "CLAMPI_PROGRESS"},
    [OPT_SCOPE] = {CLAMPI_WIN_SCOPE, "CLAMPI_WIN_SCOPE"},
    [OPT_ORDER] = {CLAMPI_WIN_ORDER, "CLAMPI_WIN_ORDER"},
    [OPT_ACC_INTRINSIC] = {CLAMPI_ACC_INTRINSIC, "CLAMPI_ACC_INTRINSIC"},
};
/* Process-wide settings (no info key): CLAMPI_STATS, CLAMPI_WINDOW_MODES, CLAMPI_NODE_SIZE; the preload's
 * and the collectives' switches are read in src/pmpi/preload.c and src/coll/options.c. */

static const char *mode_names[] = {
    [CLAMPI_MODE_TRANSPARENT] = CLAMPI_TRANSPARENT,
    [CLAMPI_MODE_ALWAYS] = CLAMPI_ALWAYS_CACHE,
    [CLAMPI_MODE_USER] = CLAMPI_USER_DEFINED,
    [CLAMPI_MODE_OFF] = CLAMPI_OFF,
};

const char *clampi_mode_name(clampi_mode mode) { return mode_names[mode]; }

static const char *backend_names[] = {[CLAMPI_BACKEND_KIND_MPI] = "mpi", [CLAMPI_BACKEND_KIND_UCX] = "ucx"};
static const char *progress_names[] = {
    [CLAMPI_PROGRESS_AUTO] = "auto", [CLAMPI_PROGRESS_THREAD] = "thread", [CLAMPI_PROGRESS_NONE] = "none"};
static const char *scope_names[] = {"process", "thread"};
const char *clampi_backend_name(clampi_backend_kind b) { return backend_names[b]; }
const char *clampi_progress_name(clampi_progress_kind p) { return progress_names[p]; }

/* value one of names[0..n) -> *out = its index; else -1 */
static int parse_name(const char *s, const char *const *names, int n, int *out) {
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) { *out = i; return 0; }
    return -1;
}

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
    case OPT_DYNAMIC: return clampi_parse_bool(value, &o->dynamic_cache);
    case OPT_ADAPT: return clampi_parse_bool(value, &o->adaptive);
    case OPT_BACKEND: return parse_name(value, backend_names, 2, (int *)&o->backend);
    case OPT_PROGRESS: return parse_name(value, progress_names, 3, (int *)&o->progress);
    case OPT_SCOPE: return parse_name(value, scope_names, 2, &o->thread_scope);
    case OPT_ORDER: return clampi_parse_bool(value, &o->ordered);
    case OPT_ACC_INTRINSIC: return clampi_parse_bool(value, &o->acc_intrinsic);
    }
    return -1;
}

int clampi_options_read(MPI_Info info, clampi_win_options *o, const char **bad_key) {
    o->mode = CLAMPI_MODE_TRANSPARENT;
    o->index_entries = CLAMPI_DEFAULT_INDEX_ENTRIES;
    o->buffer_bytes = CLAMPI_DEFAULT_BUFFER_BYTES;
    o->shm_direct = 1;
    o->dynamic_cache = 0;
    o->adaptive = 1;
    o->backend = CLAMPI_BACKEND_KIND_MPI;
    o->progress = CLAMPI_PROGRESS_AUTO;
    o->thread_scope = 0;
    o->ordered = 0;
    o->acc_intrinsic = 0;
    clampi_mode unused;
    if (clampi_options_window_mode("", &unused) < 0) {
        *bad_key = "CLAMPI_WINDOW_MODES";
        return MPI_ERR_INFO_VALUE;
    }
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

int clampi_options_update(MPI_Info info, clampi_win_options *o, const char **bad_key) {
    clampi_win_options next = *o;
    for (int opt = 0; info != MPI_INFO_NULL && opt < NOPTS; opt++) {
        char value[256];
        int flag = 0;
        MPI_Info_get(info, option_table[opt].info_key, (int)sizeof value - 1, value, &flag);
        if (flag && parse_one(opt, value, &next) != 0) {
            *bad_key = option_table[opt].info_key;
            return MPI_ERR_INFO_VALUE;
        }
    }
    *o = next;
    return MPI_SUCCESS;
}

void clampi_options_to_info(const clampi_win_options *o, MPI_Info info) {
    char v[32];
    MPI_Info_set(info, CLAMPI_MODE, (char *)clampi_mode_name(o->mode));
    snprintf(v, sizeof v, "%zu", o->index_entries);
    MPI_Info_set(info, CLAMPI_INDEX_SIZE, v);
    snprintf(v, sizeof v, "%zu", o->buffer_bytes);
    MPI_Info_set(info, CLAMPI_BUFFER_SIZE, v);
    MPI_Info_set(info, CLAMPI_SHM_DIRECT, o->shm_direct ? "true" : "false");
    MPI_Info_set(info, CLAMPI_DYNAMIC_CACHE, o->dynamic_cache ? "true" : "false");
    MPI_Info_set(info, CLAMPI_BACKEND, (char *)clampi_backend_name(o->backend));
    MPI_Info_set(info, CLAMPI_PROGRESS, (char *)clampi_progress_name(o->progress));
    MPI_Info_set(info, CLAMPI_WIN_SCOPE, (char *)scope_names[o->thread_scope != 0]);
    MPI_Info_set(info, CLAMPI_WIN_ORDER, o->ordered ? "true" : "false");
    MPI_Info_set(info, CLAMPI_ACC_INTRINSIC, o->acc_intrinsic ? "true" : "false");
}

/* Scans "name:mode,name:mode" for name (an empty name only validates). */
int clampi_options_window_mode(const char *name, clampi_mode *mode) {
    const char *s = getenv("CLAMPI_WINDOW_MODES");
    if (!s || !*s) return 0;
    int found = 0;
    while (*s) {
        const char *comma = strchr(s, ','), *end = comma ? comma : s + strlen(s);
        const char *colon = memchr(s, ':', (size_t)(end - s));
        if (!colon || colon == s) return -1;
        char m[32];
        size_t mlen = (size_t)(end - colon - 1);
        if (mlen == 0 || mlen >= sizeof m) return -1;
        memcpy(m, colon + 1, mlen);
        m[mlen] = 0;
        clampi_mode parsed;
        if (parse_mode(m, &parsed) != 0) return -1;
        if (!found && strlen(name) == (size_t)(colon - s) && !strncmp(s, name, (size_t)(colon - s))) {
            *mode = parsed;
            found = 1;
        }
        if (!comma) break;
        s = comma + 1;
    }
    return found;
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

int clampi_options_node_size(void) {
    static int cached = -1;
    if (cached < 0) {
        const char *s = getenv("CLAMPI_NODE_SIZE");
        size_t k = 0;
        if (s && *s && (clampi_parse_size(s, &k) != 0 || k == 0 || k > (size_t)1 << 30)) {
            fprintf(stderr, "clampi: CLAMPI_NODE_SIZE=%s is not a positive rank count; ignored (real nodes)\n", s);
            k = 0;
        }
        cached = (int)k;
    }
    return cached;
}
