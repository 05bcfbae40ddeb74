#include "backends/ucx/intrinsic.h"

#include "common/datatype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ucp_ep_print_info's text into a malloc'd string (NULL on failure). */
static char *ep_info(ucp_ep_h ep) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    ucp_ep_print_info(ep, f);
    fclose(f);
    return text;
}

uint64_t clampi_ucx_ep_amo_mds(ucp_ep_h ep) {
    char *text = ep_info(ep), *save = NULL;
    uint64_t mds = 0;
    for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        const char *arrow = strstr(line, "-> md[");
        unsigned md;
        if (strstr(line, "lane[") && strstr(line, " amo#") && arrow && sscanf(arrow, "-> md[%u]", &md) == 1 && md < 64)
            mds |= 1ull << md;
    }
    free(text);
    return mds;
}

int clampi_ucx_ep_amo_cpu(ucp_ep_h ep) {
    char *text = ep_info(ep), *save = NULL;
    int amo = 0, cpu = 1;
    for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        const char *arrow = strstr(line, "-> md[");
        unsigned md;
        char name[32] = "";
        if (!strstr(line, "lane[") || !strstr(line, " amo#") || !arrow) continue;
        amo = 1;
        if (sscanf(arrow, "-> md[%u]/%31[a-z0-9_]", &md, name) != 2 ||
            (strcmp(name, "sysv") && strcmp(name, "posix") && strcmp(name, "xpmem")))
            cpu = 0;
    }
    free(text);
    return amo && cpu;
}

uint64_t clampi_ucx_rkey_md_map(const void *packed, size_t len) {
    uint64_t map = 0;
    if (packed && len >= sizeof map) memcpy(&map, packed, sizeof map);
    return map;
}
