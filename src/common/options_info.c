#include "common/options_info.h"

int clampi_opt_info(MPI_Info info, clampi_opt_id id, clampi_opt_value *out) {
    const char *key = clampi_option_table[id].info_key;
    if (info == MPI_INFO_NULL || !key) return 0;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag) != MPI_SUCCESS || !flag) return 0;
    clampi_opt_value v;
    if (clampi_opt_parse(id, value, &v) != 0) return -1;
    v.text = NULL;
    *out = v;
    return 1;
}

int clampi_opt_resolve(MPI_Info info, clampi_opt_id id, clampi_opt_value *out, clampi_opt_source *source,
                       const char **bad) {
    clampi_opt_value v = clampi_opt_default(id);
    clampi_opt_source src = CLAMPI_OPT_FROM_DEFAULT;
    int rc = clampi_opt_env(id, &v);
    if (rc < 0) {
        *bad = clampi_option_table[id].env;
        return MPI_ERR_INFO_VALUE;
    }
    if (rc > 0) src = CLAMPI_OPT_FROM_ENV;
    rc = clampi_opt_info(info, id, &v);
    if (rc < 0) {
        *bad = clampi_option_table[id].info_key;
        return MPI_ERR_INFO_VALUE;
    }
    if (rc > 0) src = CLAMPI_OPT_FROM_INFO;
    *out = v;
    if (source) *source = src;
    return MPI_SUCCESS;
}
