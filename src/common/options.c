/* The options table (see options.h) and its parsers. MPI-free, no allocation: the
 * locality sampler, which replaces malloc, reads its knobs through it too. */
#include "common/options.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"

const clampi_option clampi_option_table[CLAMPI_NOPTIONS] = {
#define CLAMPI_OPT_ROW(id, name, part, key, env, type, def, allowed, min, max, doc) \
    [CLAMPI_OPT_##id] = {name, part, key, env, CLAMPI_OPT_##type, def, allowed, min, max, doc},
    CLAMPI_OPTION_ROWS(CLAMPI_OPT_ROW)
#undef CLAMPI_OPT_ROW
};

/* index of text among "a|b|c", or -1 */
static int enum_index(const char *allowed, const char *text) {
    size_t n = strlen(text);
    int i = 0;
    for (const char *p = allowed; p && *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, text, n)) return i;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

static int parse_uint(const char *s, unsigned long long min, unsigned long long max, unsigned long long *out) {
    if (!s || *s < '0' || *s > '9') return -1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

int clampi_opt_parse(clampi_opt_id id, const char *text, clampi_opt_value *out) {
    const clampi_option *o = &clampi_option_table[id];
    clampi_opt_value v = {0, text};
    int b, i;
    size_t size;
    if (!text) return -1;
    switch (o->type) {
    case CLAMPI_OPT_BOOL:
        if (clampi_parse_bool(text, &b) != 0) return -1;
        v.u = (unsigned long long)b;
        break;
    case CLAMPI_OPT_SIZE:
        if (!strcmp(text, "unlimited") && !strcmp(o->def, "unlimited")) {
            v.u = SIZE_MAX;
            break;
        }
        if (o->min == 0 && !strcmp(text, "0"))
            size = 0; /* clampi_parse_size takes positive sizes */
        else if (clampi_parse_size(text, &size) != 0 || size < o->min)
            return -1;
        v.u = size;
        break;
    case CLAMPI_OPT_UINT:
        if (parse_uint(text, o->min, o->max, &v.u) != 0) return -1;
        break;
    case CLAMPI_OPT_ENUM:
        if ((i = enum_index(o->allowed, text)) < 0) return -1;
        v.u = (unsigned long long)i;
        break;
    case CLAMPI_OPT_STRING: break;
    }
    *out = v;
    return 0;
}

clampi_opt_value clampi_opt_default(clampi_opt_id id) {
    clampi_opt_value v = {0, clampi_option_table[id].def};
    clampi_opt_parse(id, clampi_option_table[id].def, &v); /* defaults parse: checked by a unit test */
    return v;
}

int clampi_opt_env(clampi_opt_id id, clampi_opt_value *out) {
    const char *s = getenv(clampi_option_table[id].env);
    if (!s || !*s) return 0;
    return clampi_opt_parse(id, s, out) == 0 ? 1 : -1;
}

/* Process-wide values, read once each. The first caller claims the slot (0 -> 2) and
 * publishes (2 -> 1); a concurrent caller waits the few instructions until it is published. */
static struct {
    int state; /* 0 unread, 2 being read, 1 read */
    clampi_opt_source source;
    clampi_opt_value value;
} process_values[CLAMPI_NOPTIONS];

static void read_process(clampi_opt_id id) {
    int expect = 0;
    if (!__atomic_compare_exchange_n(&process_values[id].state, &expect, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&process_values[id].state, __ATOMIC_ACQUIRE) != 1) sched_yield();
        return;
    }
    clampi_opt_value v = clampi_opt_default(id);
    clampi_opt_source src = CLAMPI_OPT_FROM_DEFAULT;
    int rc = clampi_opt_env(id, &v);
    if (rc > 0) {
        src = CLAMPI_OPT_FROM_ENV;
    } else if (rc < 0) {
        char allowed[256];
        clampi_opt_allowed(id, allowed, sizeof allowed);
        fprintf(stderr, "clampi: invalid value for %s: '%s' (allowed: %s); using the default, %s\n",
                clampi_option_table[id].env, getenv(clampi_option_table[id].env), allowed,
                clampi_option_table[id].def[0] ? clampi_option_table[id].def : "(empty)");
        v = clampi_opt_default(id);
    }
    process_values[id].value = v;
    process_values[id].source = src;
    __atomic_store_n(&process_values[id].state, 1, __ATOMIC_RELEASE);
}

clampi_opt_value clampi_opt_process(clampi_opt_id id) {
    if (__atomic_load_n(&process_values[id].state, __ATOMIC_ACQUIRE) != 1) read_process(id);
    return process_values[id].value;
}

clampi_opt_source clampi_opt_process_source(clampi_opt_id id) {
    if (__atomic_load_n(&process_values[id].state, __ATOMIC_ACQUIRE) != 1) read_process(id);
    return process_values[id].source;
}

void clampi_opt_format(clampi_opt_id id, clampi_opt_value v, char *buf, size_t len) {
    const clampi_option *o = &clampi_option_table[id];
    switch (o->type) {
    case CLAMPI_OPT_BOOL: snprintf(buf, len, "%s", v.u ? "true" : "false"); return;
    case CLAMPI_OPT_SIZE:
        if (v.u == SIZE_MAX)
            snprintf(buf, len, "unlimited");
        else
            snprintf(buf, len, "%llu", v.u);
        return;
    case CLAMPI_OPT_UINT: snprintf(buf, len, "%llu", v.u); return;
    case CLAMPI_OPT_ENUM: {
        const char *p = o->allowed;
        for (unsigned long long i = 0; i < v.u && p; i++) p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
        size_t n = p ? (strchr(p, '|') ? (size_t)(strchr(p, '|') - p) : strlen(p)) : 0;
        snprintf(buf, len, "%.*s", (int)n, p ? p : "");
        return;
    }
    case CLAMPI_OPT_STRING: snprintf(buf, len, "%s", v.text ? v.text : ""); return;
    }
}

#define ENUM_MAX 8
/* Filled once per option from its allowed list (a race only writes the same bytes twice). */
static char enum_names[CLAMPI_NOPTIONS][ENUM_MAX][24];
static int enum_ready[CLAMPI_NOPTIONS];

const char *clampi_opt_enum_name(clampi_opt_id id, unsigned long long index) {
    if (clampi_option_table[id].type != CLAMPI_OPT_ENUM || index >= ENUM_MAX) return "?";
    if (!__atomic_load_n(&enum_ready[id], __ATOMIC_ACQUIRE)) {
        for (unsigned i = 0; i < ENUM_MAX; i++)
            clampi_opt_format(id, (clampi_opt_value){i, NULL}, enum_names[id][i], sizeof enum_names[id][i]);
        __atomic_store_n(&enum_ready[id], 1, __ATOMIC_RELEASE);
    }
    return enum_names[id][index][0] ? enum_names[id][index] : "?";
}

void clampi_opt_allowed(clampi_opt_id id, char *buf, size_t len) {
    const clampi_option *o = &clampi_option_table[id];
    switch (o->type) {
    case CLAMPI_OPT_BOOL: snprintf(buf, len, "true|false (also 1|0, yes|no, on|off)"); return;
    case CLAMPI_OPT_SIZE:
        snprintf(buf, len, "a size >= %llu (4096, 64K, 16M, 1G)%s", o->min,
                 !strcmp(o->def, "unlimited") ? " or unlimited" : "");
        return;
    case CLAMPI_OPT_UINT: snprintf(buf, len, "%llu..%llu", o->min, o->max); return;
    case CLAMPI_OPT_ENUM:
    case CLAMPI_OPT_STRING: snprintf(buf, len, "%s", o->allowed ? o->allowed : "any text"); return;
    }
}

int clampi_opt_find_env(const char *name) {
    for (int i = 0; i < CLAMPI_NOPTIONS; i++)
        if (!strcmp(clampi_option_table[i].env, name)) return i;
    return -1;
}

int clampi_opt_find_info_key(const char *key) {
    for (int i = 0; i < CLAMPI_NOPTIONS; i++)
        if (clampi_option_table[i].info_key && !strcmp(clampi_option_table[i].info_key, key)) return i;
    return -1;
}

const char *clampi_opt_source_name(clampi_opt_source s) {
    return s == CLAMPI_OPT_FROM_INFO ? "info" : s == CLAMPI_OPT_FROM_ENV ? "environment" : "default";
}
