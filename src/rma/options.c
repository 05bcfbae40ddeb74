#include "rma/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/rma.h"
#include "clampi/rmax.h"
#include "common/options_info.h"

/* The window's knobs, in the options table (common/options.h), and where each lands. */
static const clampi_opt_id window_knobs[] = {
    CLAMPI_OPT_MODE,          CLAMPI_OPT_INDEX_SIZE, CLAMPI_OPT_BUFFER_SIZE,   CLAMPI_OPT_SHM_DIRECT,
    CLAMPI_OPT_DYNAMIC_CACHE, CLAMPI_OPT_ADAPTIVE,   CLAMPI_OPT_BACKEND,       CLAMPI_OPT_PROGRESS,
    CLAMPI_OPT_WIN_SCOPE,     CLAMPI_OPT_WIN_ORDER,  CLAMPI_OPT_ACC_INTRINSIC,
};
#define NKNOBS (sizeof window_knobs / sizeof window_knobs[0])

static void store(clampi_opt_id id, clampi_opt_value v, clampi_win_options *o) {
    switch (id) {
    case CLAMPI_OPT_MODE: o->mode = (clampi_mode)v.u; break;
    case CLAMPI_OPT_INDEX_SIZE: o->index_entries = (size_t)v.u; break;
    case CLAMPI_OPT_BUFFER_SIZE: o->buffer_bytes = (size_t)v.u; break;
    case CLAMPI_OPT_SHM_DIRECT: o->shm_direct = (int)v.u; break;
    case CLAMPI_OPT_DYNAMIC_CACHE: o->dynamic_cache = (int)v.u; break;
    case CLAMPI_OPT_ADAPTIVE: o->adaptive = (int)v.u; break;
    case CLAMPI_OPT_BACKEND: o->backend = (clampi_backend_kind)v.u; break;
    case CLAMPI_OPT_PROGRESS: o->progress = (clampi_progress_kind)v.u; break;
    case CLAMPI_OPT_WIN_SCOPE: o->thread_scope = (int)v.u; break;
    case CLAMPI_OPT_WIN_ORDER: o->ordered = (int)v.u; break;
    case CLAMPI_OPT_ACC_INTRINSIC: o->acc_intrinsic = (int)v.u; break;
    default: break;
    }
}

static unsigned long long load(clampi_opt_id id, const clampi_win_options *o) {
    switch (id) {
    case CLAMPI_OPT_MODE: return o->mode;
    case CLAMPI_OPT_INDEX_SIZE: return o->index_entries;
    case CLAMPI_OPT_BUFFER_SIZE: return o->buffer_bytes;
    case CLAMPI_OPT_SHM_DIRECT: return o->shm_direct != 0;
    case CLAMPI_OPT_DYNAMIC_CACHE: return o->dynamic_cache != 0;
    case CLAMPI_OPT_ADAPTIVE: return o->adaptive != 0;
    case CLAMPI_OPT_BACKEND: return o->backend;
    case CLAMPI_OPT_PROGRESS: return o->progress;
    case CLAMPI_OPT_WIN_SCOPE: return o->thread_scope != 0;
    case CLAMPI_OPT_WIN_ORDER: return o->ordered != 0;
    case CLAMPI_OPT_ACC_INTRINSIC: return o->acc_intrinsic != 0;
    default: return 0;
    }
}

static const char *enum_text(clampi_opt_id id, unsigned long long index) { return clampi_opt_enum_name(id, index); }

const char *clampi_mode_name(clampi_mode mode) { return enum_text(CLAMPI_OPT_MODE, mode); }
const char *clampi_backend_name(clampi_backend_kind b) { return enum_text(CLAMPI_OPT_BACKEND, b); }
const char *clampi_progress_name(clampi_progress_kind p) { return enum_text(CLAMPI_OPT_PROGRESS, p); }

int clampi_options_read(MPI_Info info, clampi_win_options *o, const char **bad_key) {
    clampi_mode unused;
    if (clampi_options_window_mode("", &unused) < 0) {
        *bad_key = "CLAMPI_WINDOW_MODES";
        return MPI_ERR_INFO_VALUE;
    }
    for (size_t k = 0; k < NKNOBS; k++) {
        clampi_opt_value v;
        int rc = clampi_opt_resolve(info, window_knobs[k], &v, NULL, bad_key);
        if (rc != MPI_SUCCESS) return rc;
        store(window_knobs[k], v, o);
    }
    return MPI_SUCCESS;
}

int clampi_options_update(MPI_Info info, clampi_win_options *o, const char **bad_key) {
    if (info == MPI_INFO_NULL) return MPI_SUCCESS; /* nothing to update */
    clampi_win_options next = *o;
    for (size_t k = 0; k < NKNOBS; k++) {
        clampi_opt_value v;
        int rc = clampi_opt_info(info, window_knobs[k], &v);
        if (rc < 0) {
            *bad_key = clampi_option_table[window_knobs[k]].info_key;
            return MPI_ERR_INFO_VALUE;
        }
        if (rc > 0) store(window_knobs[k], v, &next);
    }
    *o = next;
    return MPI_SUCCESS;
}

void clampi_options_to_info(const clampi_win_options *o, MPI_Info info) {
    for (size_t k = 0; k < NKNOBS; k++) {
        char v[64];
        clampi_opt_format(window_knobs[k], (clampi_opt_value){load(window_knobs[k], o), NULL}, v, sizeof v);
        PMPI_Info_set(info, clampi_option_table[window_knobs[k]].info_key, v);
    }
}

/* Scans "name:mode,name:mode" for name (an empty name only validates). */
int clampi_options_window_mode(const char *name, clampi_mode *mode) {
    const char *s = clampi_opt_process(CLAMPI_OPT_WINDOW_MODES).text;
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
        clampi_opt_value parsed;
        if (clampi_opt_parse(CLAMPI_OPT_MODE, m, &parsed) != 0) return -1;
        if (!found && strlen(name) == (size_t)(colon - s) && !strncmp(s, name, (size_t)(colon - s))) {
            *mode = (clampi_mode)parsed.u;
            found = 1;
        }
        if (!comma) break;
        s = comma + 1;
    }
    return found;
}
