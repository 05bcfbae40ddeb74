/* Writing the rank's CSV/JSON: at a normal exit (locations resolved) or from a fatal
 * signal handler (partial, "complete": false, hex locations). */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "locality/out.h"

/* "pfns": physical frames of the touched pages of shared mappings, from
 * /proc/self/pagemap (readable with CAP_SYS_ADMIN; otherwise the frames read as 0 and
 * the member is left out), read at exit or, for mappings unmapped before, at munmap. Another way for `report` to see the same page across ranks. */
static void write_pfns(clampi_lw *w) {
    size_t n = atomic_load(&ls.tab.ntouched);
    if (n > ls.tab.page_cap) n = ls.tab.page_cap;
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const clampi_lpage *p = clampi_ltab_slot(&ls.tab, ls.tab.touched[i]);
        if (!ls.allocs[p->alloc].shared) continue;
        uint64_t page = atomic_load(&p->key);
        uint64_t pfn = ls.allocs[p->alloc].freed ? p->pfn : ls_pfn_of(page);
        if (pfn == 0) /* not present, or frames hidden from us */
            continue;
        clampi_lw_str(w, first ? ",\n  \"pfns\": {\"" : ", \"");
        first = 0;
        clampi_lw_hex(w, page);
        clampi_lw_str(w, "\": ");
        clampi_lw_u64(w, pfn);
    }
    if (!first) clampi_lw_str(w, "}");
}

static void extra_json(clampi_lw *w, void *arg) {
    (void)arg;
    clampi_lw_str(w, ",\n  \"sampling\": {\"method\": \"page re-protection\", \"period_ms\": ");
    clampi_lw_u64(w, ls.period_ms);
    clampi_lw_str(w, ", \"pages_per_round\": ");
    clampi_lw_u64(w, ls.pages_per_round);
    clampi_lw_str(w, ", \"rounds\": ");
    clampi_lw_u64(w, atomic_load(&ls.rounds));
    clampi_lw_str(w, ", \"pages_protected\": ");
    clampi_lw_u64(w, atomic_load(&ls.protected_pages));
    clampi_lw_str(w, ", \"samples\": ");
    clampi_lw_u64(w, atomic_load(&ls.samples));
    clampi_lw_str(w, ", \"static_objects\": ");
    clampi_lw_u64(w, atomic_load(&ls.static_objects));
    clampi_lw_str(w, ", \"static_data\": \"the executable's .data/.bss objects of at least min_size bytes "
                     "(their whole pages); static data of shared libraries is not tracked\"");
    clampi_lw_str(w, ", \"stacks_dropped\": ");
    clampi_lw_u64(w, atomic_load(&ls.stacks_dropped));
    clampi_lw_str(w, ", \"arm_interval_ns\": ");
    clampi_lw_u64(w, atomic_load(&ls.arm_interval_ns));
    clampi_lw_str(
        w, ", \"count_unit\": \"estimated access bursts: sample share x re-protection interval / fault delay\"}");
    /* where the sampler's time went; "output_csv_ns" is the writer's
     * time up to here (the CSV and the JSON's head), "resolve_ns" addr2line's */
    static const struct {
        const char *key;
        _Atomic uint64_t *v;
    } cost[] = {
        {"ft_faults", &ls.cost.ft_faults},
        {"ft_handler_ns", &ls.cost.ft_ns},
        {"sample_faults", &ls.cost.sample_faults},
        {"sample_handler_ns", &ls.cost.sample_ns},
        {"busy_faults", &ls.cost.busy_faults},
        {"retry_faults", &ls.cost.retry_faults},
        {"unwinds", &ls.cost.unwinds},
        {"unwind_ns", &ls.cost.unwind_ns},
        {"unwinds_cached", &ls.cost.unwinds_cached},
        {"open_mprotects", &ls.cost.open_mprotects},
        {"open_mprotect_ns", &ls.cost.open_ns},
        {"arm_mprotects", &ls.cost.arm_mprotects},
        {"arm_mprotect_ns", &ls.cost.arm_ns},
        {"tracked_allocs", &ls.cost.alloc_unwinds},
        {"tracked_alloc_ns", &ls.cost.alloc_ns},
        {"tracked_frees", &ls.cost.frees},
        {"tracked_free_ns", &ls.cost.free_ns},
        {"reused_allocs", &ls.cost.reused},
        {"reused_bytes", &ls.cost.reused_bytes},
        {"parked_bytes_peak", &ls.cost.parked_peak},
        {"parked_released", &ls.cost.released_parked},
        {"leases", &ls.cost.leases},
        {"lease_pages", &ls.cost.lease_pages},
        {"lease_pages_touched", &ls.cost.lease_touched},
        {"lease_settles", &ls.cost.lease_settles},
        {"lease_faults", &ls.cost.lease_faults},
    };
    clampi_lw_str(w, ",\n  \"sampler_cost\": {");
    for (size_t i = 0; i < sizeof cost / sizeof cost[0]; i++) {
        clampi_lw_str(w, i ? ", \"" : "\"");
        clampi_lw_str(w, cost[i].key);
        clampi_lw_str(w, "\": ");
        clampi_lw_u64(w, atomic_load(cost[i].v));
    }
    clampi_lw_str(w, ", \"resolve_ns\": ");
    clampi_lw_u64(w, ls.cost.resolve_ns);
    clampi_lw_str(w, ", \"output_csv_ns\": ");
    clampi_lw_u64(w, ls.cost.out_start_ns ? ls_mono_ns() - ls.cost.out_start_ns : 0);
    clampi_lw_str(w, "}");
    /* what was not recorded, and how much the samples say */
    size_t touched = atomic_load(&ls.tab.ntouched), sampled = 0;
    if (touched > ls.tab.page_cap) touched = ls.tab.page_cap;
    for (size_t i = 0; i < touched; i++)
        if (atomic_load(&clampi_ltab_slot(&ls.tab, ls.tab.touched[i])->delay_n)) sampled++;
    clampi_lw_str(w, ",\n  \"coverage\": {\"page_capacity\": ");
    clampi_lw_u64(w, ls.page_capacity);
    clampi_lw_str(w, ", \"pages_recorded\": ");
    clampi_lw_u64(w, atomic_load(&ls.tab.npages));
    clampi_lw_str(w, ", \"pages_touched\": ");
    clampi_lw_u64(w, touched);
    clampi_lw_str(w, ", \"pages_sampled\": ");
    clampi_lw_u64(w, sampled);
    clampi_lw_str(w, ", \"dropped\": ");
    clampi_lw_u64(w, atomic_load(&ls.tab.dropped));
    clampi_lw_str(w, ", \"allocations_untracked\": ");
    clampi_lw_u64(w, atomic_load(&ls.allocs_untracked));
    clampi_lw_str(w, ", \"bytes_untracked\": ");
    clampi_lw_u64(w, atomic_load(&ls.bytes_untracked));
    clampi_lw_str(w, ", \"memory_bound_bytes\": ");
    clampi_lw_u64(w, ls.memory_bound);
    clampi_lw_str(w, "}");
    /* first touches of pages in shared mappings, in wall-clock time, so that a report
     * over several ranks can tell which rank touched a shared page first */
    clampi_lw_str(w, ",\n  \"shared_firsttouch_ns\": {");
    int first = 1;
    size_t n = atomic_load(&ls.tab.ntouched);
    if (n > ls.tab.page_cap) n = ls.tab.page_cap;
    for (size_t i = 0; i < n; i++) {
        const clampi_lpage *p = clampi_ltab_slot(&ls.tab, ls.tab.touched[i]);
        if (!ls.allocs[p->alloc].shared) continue;
        clampi_lw_str(w, first ? "\"" : ", \"");
        first = 0;
        clampi_lw_hex(w, atomic_load(&p->key));
        clampi_lw_str(w, "\": ");
        clampi_lw_u64(w, p->ft_ns);
    }
    clampi_lw_str(w, "}");
    if (ls.pagemap_fd >= 0) write_pfns(w);
}

/* DIR/rank<R>.maps: a copy of /proc/self/maps, written at start-up and
 * again with every output (exit, _exit, fatal signal), so that the hex locations of a
 * crashed or killed run's partial output can be resolved later: a module's load base is
 * the start of its mapping at offset 0, `addr2line -e MODULE ADDR-BASE` (PIE and shared
 * libraries; a non-PIE executable: ADDR itself). Async-signal-safe (open/read/write). */
void ls_write_maps(void) {
    char path[sizeof ls.out_dir + 32], tmp[sizeof path + 8], num[24];
    int k = 0;
    unsigned r = (unsigned)ls.rank;
    do num[k++] = (char)('0' + r % 10);
    while ((r /= 10) != 0);
    size_t n = strlen(ls.out_dir);
    memcpy(path, ls.out_dir, n);
    memcpy(path + n, "/rank", 5);
    n += 5;
    while (k > 0) path[n++] = num[--k];
    memcpy(path + n, ".maps", 6);
    memcpy(tmp, path, n + 5);
    memcpy(tmp + n + 5, ".tmp", 5);
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char buf[4096];
    ssize_t got;
    int ok = out >= 0;
    while (ok && (got = read(in, buf, sizeof buf)) > 0) ok = write(out, buf, (size_t)got) == got;
    if (in >= 0) close(in);
    if (out >= 0) {
        close(out);
        if (ok)
            rename(tmp, path);
        else
            unlink(tmp);
    }
}

void ls_write_output(int complete, int has_status, int status, const char *signame, int resolve) {
    if (!atomic_load(&ls.ready) || atomic_exchange(&ls.finished, 1)) return;
    ls_write_maps();
    static uint64_t work[LS_MAX_THREADS];
    static const char *creator[LS_MAX_THREADS];
    ls_in_lib++;
    if (resolve)
        ls_sampler_stop();
    else
        atomic_store(&ls.sampler_stop, 1);
    ls_lease_settle_all(); /* pages opened ahead: their first touches are known only now */
    int nthreads = atomic_load(&ls.nthreads);
    ls_thread_work(work, nthreads);
    ls_thread_creators(creator, nthreads);
    clampi_lout o = {
        .dir = ls.out_dir,
        .rank = ls.rank,
        .pid = ls.pid,
        .argc = ls.argc,
        .argv = ls.argv,
        .mode = "sample",
        .counts = "sampled",
        .page_size = ls.page_size,
        .sys_page = ls.sys_page,
        .min_size = ls.min_size,
        .complete = complete,
        .has_exit_status = has_status,
        .exit_status = status,
        .signal = signame,
        .nthreads = nthreads,
        .thread_work = work,
        .work_unit = "cpu_ns",
        .thread_creator = creator,
        .tab = &ls.tab,
        .count_scale = 1.0,
        .count_factor = ls_count_factor,
        .allocs = ls.allocs,
        .nallocs = atomic_load(&ls.nallocs),
        .scratch = ls.scratch,
        .extra = extra_json,
    };
    if (resolve) {
        mkdir(ls.out_dir, 0755); /* addr2line's scratch files go there */
        uint64_t t0 = ls_mono_ns();
        ls_resolve_run();
        ls.cost.resolve_ns = ls_mono_ns() - t0;
        o.loc = ls_resolve_loc;
        o.name = ls_resolve_name;
        o.aloc = ls_resolve_alloc_loc;
        o.ftloc = ls_resolve_ft_loc;
    }
    ls.cost.out_start_ns = ls_mono_ns();
    if (clampi_lout_write(&o) != 0 && resolve) {
        static const char msg[] = "clampi-locality: cannot write the output directory\n";
        (void)!write(2, msg, sizeof msg - 1);
    }
    ls_in_lib--;
}
