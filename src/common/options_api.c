/* CMPIX_Option_*: the options table for programs and tools (include/clampi/options.h). */
#include "clampi/options.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/options.h"

static const char *const type_names[] = {
    [CLAMPI_OPT_BOOL] = "bool", [CLAMPI_OPT_SIZE] = "size",     [CLAMPI_OPT_UINT] = "uint",
    [CLAMPI_OPT_ENUM] = "enum", [CLAMPI_OPT_STRING] = "string",
};

int CMPIX_Option_count(void) { return CLAMPI_NOPTIONS; }

int CMPIX_Option_get(int index, CMPIX_Option *option) {
    if (index < 0 || index >= CLAMPI_NOPTIONS || !option) return MPI_ERR_ARG;
    const clampi_option *o = &clampi_option_table[index];
    *option = (CMPIX_Option){o->name, o->part, o->info_key, o->env, type_names[o->type], o->def, o->doc};
    return MPI_SUCCESS;
}

int CMPIX_Option_allowed(int index, char *buf, int len) {
    if (index < 0 || index >= CLAMPI_NOPTIONS || !buf || len <= 0) return MPI_ERR_ARG;
    clampi_opt_allowed((clampi_opt_id)index, buf, (size_t)len);
    return MPI_SUCCESS;
}

int CMPIX_Option_current(int index, char *value, int len, const char **source) {
    if (index < 0 || index >= CLAMPI_NOPTIONS || !value || len <= 0) return MPI_ERR_ARG;
    clampi_opt_id id = (clampi_opt_id)index;
    clampi_opt_value v = clampi_opt_default(id);
    int rc = clampi_opt_env(id, &v);
    if (rc < 0) {
        snprintf(value, (size_t)len, "%s", getenv(clampi_option_table[id].env));
    } else {
        clampi_opt_format(id, v, value, (size_t)len);
    }
    if (source)
        *source = rc < 0 ? "invalid" : clampi_opt_source_name(rc > 0 ? CLAMPI_OPT_FROM_ENV : CLAMPI_OPT_FROM_DEFAULT);
    return MPI_SUCCESS;
}
