/* The options table: every default is an allowed value, names are unique, values parse
 * strictly, and the process-wide reader reports a bad variable instead of taking it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/options.h"

int main(void) {
    for (int i = 0; i < CLAMPI_NOPTIONS; i++) {
        const clampi_option *o = &clampi_option_table[i];
        clampi_opt_value v;
        CHECK(o->name && o->part && o->env && o->doc && o->def);
        CHECK(strncmp(o->env, "CLAMPI_", 7) == 0);
        CHECK(clampi_opt_parse((clampi_opt_id)i, o->def, &v) == 0); /* the default is allowed */
        for (int j = 0; j < i; j++) {
            CHECK(strcmp(o->env, clampi_option_table[j].env) != 0);
            CHECK(strcmp(o->name, clampi_option_table[j].name) != 0);
            CHECK(!o->info_key || !clampi_option_table[j].info_key ||
                  strcmp(o->info_key, clampi_option_table[j].info_key) != 0);
        }
        CHECK(clampi_opt_find_env(o->env) == i);
    }
    clampi_opt_value v;
    char buf[64];
    CHECK(clampi_opt_parse(CLAMPI_OPT_MODE, "always_cache", &v) == 0 && v.u == 1);
    CHECK(clampi_opt_parse(CLAMPI_OPT_MODE, "always", &v) == -1);
    CHECK(clampi_opt_parse(CLAMPI_OPT_MODE, "always_cache_", &v) == -1);
    CHECK(!strcmp(clampi_opt_enum_name(CLAMPI_OPT_MODE, 3), "off"));
    CHECK(!strcmp(clampi_opt_enum_name(CLAMPI_OPT_MATCH, 4), "bins"));
    CHECK(!strcmp(clampi_opt_enum_name(CLAMPI_OPT_MODE, 7), "?") &&
          !strcmp(clampi_opt_enum_name(CLAMPI_OPT_STATS, 0), "?"));
    for (int i = 0; i < CLAMPI_NOPTIONS; i++) /* every enum's names fit the name cache (8) */
        if (clampi_option_table[i].type == CLAMPI_OPT_ENUM) {
            int n = 1;
            for (const char *p = clampi_option_table[i].allowed; *p; p++) n += *p == '|';
            CHECK(n <= 8);
        }
    CHECK(clampi_opt_parse(CLAMPI_OPT_MATCH, "lla+hot", &v) == 0);
    clampi_opt_format(CLAMPI_OPT_MATCH, v, buf, sizeof buf);
    CHECK(!strcmp(buf, "lla+hot"));
    CHECK(clampi_opt_parse(CLAMPI_OPT_MATCH_WIDTH, "0", &v) == -1);
    CHECK(clampi_opt_parse(CLAMPI_OPT_MATCH_WIDTH, "65537", &v) == -1);
    CHECK(clampi_opt_parse(CLAMPI_OPT_MATCH_WIDTH, "16x", &v) == -1);
    CHECK(clampi_opt_parse(CLAMPI_OPT_MATCH_WIDTH, "32", &v) == 0 && v.u == 32);
    CHECK(clampi_opt_parse(CLAMPI_OPT_BUFFER_SIZE, "64M", &v) == 0 && v.u == 64u << 20);
    CHECK(clampi_opt_parse(CLAMPI_OPT_BUFFER_SIZE, "unlimited", &v) == -1);
    CHECK(clampi_opt_parse(CLAMPI_OPT_COLL_DIRECT_MAX, "unlimited", &v) == 0 && v.u == SIZE_MAX);
    CHECK(clampi_opt_parse(CLAMPI_OPT_COLL_EAGER_MAX, "0", &v) == 0 && v.u == 0);
    CHECK(clampi_opt_parse(CLAMPI_OPT_COLL, "OFF", &v) == 0 && v.u == 0);
    CHECK(clampi_opt_parse(CLAMPI_OPT_COLL, "of", &v) == -1);
    /* environment: unset, valid, invalid (the default is used, and says so on stderr) */
    unsetenv("CLAMPI_MATCH_WIDTH");
    CHECK(clampi_opt_env(CLAMPI_OPT_MATCH_WIDTH, &v) == 0);
    setenv("CLAMPI_MATCH_WIDTH", "8", 1);
    CHECK(clampi_opt_env(CLAMPI_OPT_MATCH_WIDTH, &v) == 1 && v.u == 8);
    setenv("CLAMPI_COLL_SPIN", "lots", 1);
    CHECK(clampi_opt_process(CLAMPI_OPT_COLL_SPIN).u == 256);
    CHECK(clampi_opt_process_source(CLAMPI_OPT_COLL_SPIN) == CLAMPI_OPT_FROM_DEFAULT);
    setenv("CLAMPI_COLL_SPIN_OVERSUB", "7", 1);
    CHECK(clampi_opt_process(CLAMPI_OPT_COLL_SPIN_OVERSUB).u == 7);
    CHECK(clampi_opt_process_source(CLAMPI_OPT_COLL_SPIN_OVERSUB) == CLAMPI_OPT_FROM_ENV);
    puts("options: ok");
    return 0;
}
