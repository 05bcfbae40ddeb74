/* Every environment knob of the collectives, read in one place (see docs/coll.md). */
#include "coll/coll_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t clampi_coll_parse_size(const char *s, size_t def)
{
    if (s == NULL || *s == '\0')
        return def;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return def;
    switch (toupper((unsigned char)*end)) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    return *end == '\0' ? (size_t)v : def;
}

static int parse_switch(const char *s, int def)
{
    if (s == NULL)
        return def;
    if (!strcasecmp(s, "on") || !strcasecmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true"))
        return 1;
    if (!strcasecmp(s, "off") || !strcasecmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false"))
        return 0;
    return def;
}

static clampi_coll_options opts;
static int opts_read;

const clampi_coll_options *clampi_coll_options_get(void)
{
    if (!opts_read) {
        opts.coll = parse_switch(getenv("CLAMPI_COLL"), 1);
        opts.shmem_alloc = parse_switch(getenv("CLAMPI_SHMEM_ALLOC"), 1);
        opts.heap_size = clampi_coll_parse_size(getenv("CLAMPI_HEAP_SIZE"), (size_t)256 << 20);
        opts.staged_max = clampi_coll_parse_size(getenv("CLAMPI_COLL_STAGED_MAX"), (size_t)32 << 10);
        opts.direct_max = clampi_coll_parse_size(getenv("CLAMPI_COLL_DIRECT_MAX"), SIZE_MAX);
        opts.spin = (int)clampi_coll_parse_size(getenv("CLAMPI_COLL_SPIN"), 256);
        opts.spin_oversub = (int)clampi_coll_parse_size(getenv("CLAMPI_COLL_SPIN_OVERSUB"), 0);
        opts.eager_max = clampi_coll_parse_size(getenv("CLAMPI_COLL_EAGER_MAX"), CLAMPI_COLL_EAGER_MAX_DEFAULT);
        opts.hier = parse_switch(getenv("CLAMPI_COLL_HIER"), 1);
        const char *a = getenv("CLAMPI_COLL_ALGO");
        opts.algo = CMPIX_COLL_MORTON;
        if (a && !strcasecmp(a, "naive"))
            opts.algo = CMPIX_COLL_NAIVE;
        else if (a && !strcasecmp(a, "mpi"))
            opts.algo = CMPIX_COLL_MPI;
        opts_read = 1;
    }
    return &opts;
}
