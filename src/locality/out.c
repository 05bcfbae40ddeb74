/* CSV + JSON writer of the locality sampler (see out.h). Async-signal-safe by
 * construction: fixed buffers, write(2), rename(2). */
#include "locality/out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *const clampi_lalloc_kind_names[] = {
    "malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "new", "mmap", "static",
};

/* ---- buffered writer ---------------------------------------------------------- */
static void lw_flush(clampi_lw *w) {
    size_t off = 0;
    while (off < w->n && !w->err) {
        /* the raw system call: a preloaded write() wrapper is not async-signal-safe */
        ssize_t k = syscall(SYS_write, w->fd, w->buf + off, w->n - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            w->err = 1;
        else
            off += (size_t)k;
    }
    w->n = 0;
}

static void lw_bytes(clampi_lw *w, const char *s, size_t len) {
    while (len > 0) {
        if (w->n == sizeof w->buf) lw_flush(w);
        size_t k = sizeof w->buf - w->n;
        if (k > len) k = len;
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        len -= k;
    }
}

void clampi_lw_str(clampi_lw *w, const char *s) { lw_bytes(w, s, strlen(s)); }

void clampi_lw_json_str(clampi_lw *w, const char *s) {
    static const char hexd[] = "0123456789abcdef";
    lw_bytes(w, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            lw_bytes(w, e, 2);
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15]};
            lw_bytes(w, e, 6);
        } else {
            lw_bytes(w, (const char *)&c, 1);
        }
    }
    lw_bytes(w, "\"", 1);
}

void clampi_lw_u64(clampi_lw *w, uint64_t v) {
    char b[24];
    int i = sizeof b;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    lw_bytes(w, b + i, sizeof b - (size_t)i);
}

void clampi_lw_i64(clampi_lw *w, int64_t v) {
    if (v < 0) {
        lw_bytes(w, "-", 1);
        clampi_lw_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        clampi_lw_u64(w, (uint64_t)v);
    }
}

char *clampi_lfmt_hex(char *buf, size_t n, uint64_t v) {
    char b[20];
    int i = sizeof b;
    do {
        b[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    size_t len = sizeof b - (size_t)i;
    if (n < len + 3) len = n - 3;
    buf[0] = '0';
    buf[1] = 'x';
    memcpy(buf + 2, b + i, len);
    buf[2 + len] = 0;
    return buf;
}

void clampi_lw_hex(clampi_lw *w, uint64_t v) {
    char b[24];
    clampi_lw_str(w, clampi_lfmt_hex(b, sizeof b, v));
}

/* ---- pieces ------------------------------------------------------------------- */
static const char *loc_of(const clampi_lout *o, uintptr_t ip, char *buf, size_t n) {
    if (ip == 0) return "?";
    const char *s = o->loc ? o->loc(ip, o->arg, buf, n) : NULL;
    return s ? s : clampi_lfmt_hex(buf, n, ip);
}

static const char *alloc_loc(const clampi_lout *o, const clampi_lalloc *a, char *buf, size_t n) {
    const char *s = o->aloc ? o->aloc(a, o->arg, buf, n) : NULL;
    if (s) return s;
    return loc_of(o, a->nframes ? a->frames[0] : 0, buf, n);
}

static const char *struct_name(const clampi_lout *o, const clampi_lalloc *a, char *buf, size_t n) {
    if (a->name[0]) return a->name;
    const char *s = o->name ? o->name(a, o->arg, buf, n) : NULL;
    if (s) return s;
    char l[200];
    const char *where = alloc_loc(o, a, l, sizeof l);
    size_t k = strlen(where);
    if (k + 7 > n) k = n - 7;
    memcpy(buf, "alloc@", 6);
    memcpy(buf + 6, where, k);
    buf[6 + k] = 0;
    return buf;
}

/* Heapsort of allocation indices by map_start (qsort may allocate). */
static int less(const clampi_lalloc *al, uint32_t a, uint32_t b) { return al[a].map_start < al[b].map_start; }
static void sift(const clampi_lalloc *al, uint32_t *v, size_t i, size_t n) {
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && less(al, v[c], v[c + 1])) c++;
        if (!less(al, v[i], v[c])) return;
        uint32_t t = v[i];
        v[i] = v[c];
        v[c] = t;
        i = c;
    }
}
static void sort_allocs(const clampi_lalloc *al, uint32_t *v, size_t n) {
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
    for (size_t i = n / 2; i-- > 0;) sift(al, v, i, n);
    for (size_t e = n; e-- > 1;) {
        uint32_t t = v[0];
        v[0] = v[e];
        v[e] = t;
        sift(al, v, 0, e);
    }
}

static int open_tmp(const clampi_lout *o, const char *ext, char *tmp, char *final, size_t n) {
    char r[24];
    /* DIR/rank<R>.<ext>[.tmp] */
    size_t dl = strlen(o->dir);
    int i = sizeof r;
    unsigned v = (unsigned)(o->rank < 0 ? 0 : o->rank);
    r[--i] = 0;
    do {
        r[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    const char *rs = r + i;
    if (dl + strlen(rs) + strlen(ext) + 16 > n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(final, o->dir, dl);
    final[dl] = 0;
    strcat(final, "/rank");
    strcat(final, rs);
    strcat(final, ext);
    strcpy(tmp, final);
    strcat(tmp, ".tmp");
    return open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static int finish(clampi_lw *w, const char *tmp, const char *final) {
    lw_flush(w);
    int bad = w->err;
    if (close(w->fd) != 0) bad = 1;
    if (bad || rename(tmp, final) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static uint64_t thread_acc[CLAMPI_LTAB_MAX_THREADS];

/* The first touch of a reported page: the earliest among its system pages. */
static const clampi_lpage *first_touch(const clampi_lout *o, uintptr_t page) {
    const clampi_lpage *best = NULL;
    for (uintptr_t s = page; s < page + o->page_size; s += o->sys_page) {
        const clampi_lpage *p = clampi_ltab_find(o->tab, s);
        if (p && p->ft_seq && (!best || p->ft_seq < best->ft_seq)) best = p;
    }
    return best;
}

static void csv_page(const clampi_lout *o, clampi_lw *w, const clampi_lalloc *a, uintptr_t page, const char *aloc,
                     const char *name) {
    char b[256];
    clampi_lw_hex(w, page);
    clampi_lw_str(w, ",");
    clampi_lw_i64(w, a->thread);
    clampi_lw_str(w, ",");
    clampi_lw_str(w, aloc);
    clampi_lw_str(w, ",");
    const clampi_lpage *ft = first_touch(o, page);
    if (ft) {
        clampi_lw_i64(w, ft->ft_thread);
        clampi_lw_str(w, ",");
        const char *s = o->ftloc ? o->ftloc(ft, o->arg, b, sizeof b) : NULL;
        clampi_lw_str(w, s ? s : loc_of(o, ft->ft_ip, b, sizeof b));
    } else {
        clampi_lw_str(w, "-1,?");
    }
    clampi_lw_str(w, ",");
    clampi_lw_str(w, name);
    for (int t = 0; t < o->nthreads; t++) {
        double n = 0;
        for (uintptr_t s = page; s < page + o->page_size; s += o->sys_page) {
            uint64_t c = clampi_ltab_count_get(o->tab, s, t);
            const clampi_lpage *rec = c && o->count_factor ? clampi_ltab_find(o->tab, s) : NULL;
            n += (double)c * (rec ? o->count_factor(rec, o->arg) : o->count_scale);
        }
        uint64_t est = (uint64_t)(n + 0.5);
        if (t < CLAMPI_LTAB_MAX_THREADS) thread_acc[t] += est;
        clampi_lw_str(w, ",");
        clampi_lw_u64(w, est);
    }
    clampi_lw_str(w, "\n");
}

static int write_csv(const clampi_lout *o) {
    static clampi_lw w;
    char tmp[512], final[512], aloc[256], nameb[256];
    w.fd = open_tmp(o, ".csv", tmp, final, sizeof tmp);
    if (w.fd < 0) return -1;
    w.err = 0;
    w.n = 0;
    clampi_lw_str(&w, "address,alloc.thread,alloc.location,firsttouch.thread,firsttouch.location,struct.name");
    for (int t = 0; t < o->nthreads; t++) {
        clampi_lw_str(&w, ",T");
        clampi_lw_u64(&w, (uint64_t)t);
    }
    clampi_lw_str(&w, "\n");
    memset(thread_acc, 0, sizeof thread_acc);
    sort_allocs(o->allocs, o->scratch, o->nallocs);
    uintptr_t last = 0; /* reported pages in address order, each once */
    for (size_t i = 0; i < o->nallocs; i++) {
        const clampi_lalloc *a = &o->allocs[o->scratch[i]];
        if (a->map_size == 0) continue;
        const char *al = alloc_loc(o, a, aloc, sizeof aloc);
        const char *nm = struct_name(o, a, nameb, sizeof nameb);
        uintptr_t p0 = a->map_start & ~(uintptr_t)(o->page_size - 1);
        for (uintptr_t p = p0; p < a->map_start + a->map_size; p += o->page_size) {
            if (last != 0 && p <= last) continue;
            csv_page(o, &w, a, p, al, nm);
            last = p;
        }
    }
    return finish(&w, tmp, final);
}

static void json_key(clampi_lw *w, const char *k) {
    clampi_lw_str(w, ",\n  ");
    clampi_lw_json_str(w, k);
    clampi_lw_str(w, ": ");
}

static int write_json(const clampi_lout *o) {
    static clampi_lw w;
    char tmp[512], final[512], b[256];
    w.fd = open_tmp(o, ".json", tmp, final, sizeof tmp);
    if (w.fd < 0) return -1;
    w.err = 0;
    w.n = 0;
    clampi_lw_str(&w, "{\n  \"tool\": \"clampi-locality\"");
    json_key(&w, "version");
    clampi_lw_str(&w, "1");
    json_key(&w, "mode");
    clampi_lw_json_str(&w, o->mode);
    json_key(&w, "counts");
    clampi_lw_json_str(&w, o->counts);
    json_key(&w, "rank");
    clampi_lw_i64(&w, o->rank);
    json_key(&w, "pid");
    clampi_lw_i64(&w, o->pid);
    json_key(&w, "program");
    clampi_lw_str(&w, "[");
    for (int i = 0; i < o->argc; i++) {
        if (i) clampi_lw_str(&w, ", ");
        clampi_lw_json_str(&w, o->argv[i] ? o->argv[i] : "");
    }
    clampi_lw_str(&w, "]");
    json_key(&w, "page_size");
    clampi_lw_u64(&w, o->page_size);
    json_key(&w, "min_size");
    clampi_lw_u64(&w, o->min_size);
    json_key(&w, "complete");
    clampi_lw_str(&w, o->complete ? "true" : "false");
    json_key(&w, "exit_status");
    if (o->has_exit_status)
        clampi_lw_i64(&w, o->exit_status);
    else
        clampi_lw_str(&w, "null");
    json_key(&w, "signal");
    if (o->signal)
        clampi_lw_json_str(&w, o->signal);
    else
        clampi_lw_str(&w, "null");
    json_key(&w, "threads");
    clampi_lw_i64(&w, o->nthreads);
    json_key(&w, "thread_work");
    clampi_lw_str(&w, "[");
    for (int t = 0; t < o->nthreads; t++) {
        if (t) clampi_lw_str(&w, ", ");
        clampi_lw_u64(&w, o->thread_work ? o->thread_work[t] : 0);
    }
    clampi_lw_str(&w, "]");
    json_key(&w, "work_unit");
    clampi_lw_json_str(&w, o->work_unit);
    if (o->thread_creator) {
        json_key(&w, "thread_creator");
        clampi_lw_str(&w, "[");
        for (int t = 0; t < o->nthreads; t++) {
            if (t) clampi_lw_str(&w, ", ");
            clampi_lw_json_str(&w, o->thread_creator[t]);
        }
        clampi_lw_str(&w, "]");
    }
    json_key(&w, "thread_accesses");
    clampi_lw_str(&w, "[");
    for (int t = 0; t < o->nthreads; t++) {
        if (t) clampi_lw_str(&w, ", ");
        clampi_lw_u64(&w, t < CLAMPI_LTAB_MAX_THREADS ? thread_acc[t] : 0);
    }
    clampi_lw_str(&w, "]");
    json_key(&w, "structures");
    clampi_lw_str(&w, "[");
    for (size_t i = 0; i < o->nallocs; i++) {
        const clampi_lalloc *a = &o->allocs[o->scratch[i]];
        clampi_lw_str(&w, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        clampi_lw_json_str(&w, struct_name(o, a, b, sizeof b));
        clampi_lw_str(&w, ", \"address\": ");
        clampi_lw_str(&w, "\"");
        clampi_lw_hex(&w, a->start);
        clampi_lw_str(&w, "\", \"size\": ");
        clampi_lw_u64(&w, a->size);
        clampi_lw_str(&w, ", \"alloc_thread\": ");
        clampi_lw_i64(&w, a->thread);
        clampi_lw_str(&w, ", \"alloc_location\": ");
        clampi_lw_json_str(&w, alloc_loc(o, a, b, sizeof b));
        clampi_lw_str(&w, ", \"kind\": ");
        clampi_lw_json_str(&w, clampi_lalloc_kind_names[a->kind]);
        if (a->reuses) { /* the sampler gave this block to later allocations of the same site */
            clampi_lw_str(&w, ", \"reuses\": ");
            clampi_lw_u64(&w, a->reuses);
        }
        clampi_lw_str(&w, ", \"freed\": ");
        clampi_lw_str(&w, a->freed ? "true}" : "false}");
    }
    clampi_lw_str(&w, o->nallocs ? "\n  ]" : "]");
    json_key(&w, "mappings");
    clampi_lw_str(&w, "[");
    int first = 1;
    for (size_t i = 0; i < o->nallocs; i++) {
        const clampi_lalloc *a = &o->allocs[o->scratch[i]];
        if (!a->shared) continue;
        clampi_lw_str(&w, first ? "\n    {\"start\": \"" : ",\n    {\"start\": \"");
        first = 0;
        clampi_lw_hex(&w, a->map_start);
        clampi_lw_str(&w, "\", \"end\": \"");
        clampi_lw_hex(&w, a->map_start + a->map_size);
        clampi_lw_str(&w, "\", \"file\": ");
        clampi_lw_json_str(&w, a->file);
        clampi_lw_str(&w, ", \"offset\": ");
        clampi_lw_u64(&w, a->file_off);
        clampi_lw_str(&w, ", \"shared\": true}");
    }
    clampi_lw_str(&w, first ? "]" : "\n  ]");
    json_key(&w, "dropped");
    clampi_lw_u64(&w, atomic_load(&((clampi_ltab *)o->tab)->dropped));
    if (o->extra) o->extra(&w, o->arg);
    clampi_lw_str(&w, "\n}\n");
    return finish(&w, tmp, final);
}

int clampi_lout_write(const clampi_lout *o) {
    static atomic_int busy;
    if (atomic_exchange(&busy, 1)) return -1;
    mkdir(o->dir, 0755); /* may exist */
    int rc = write_csv(o);
    if (rc == 0) rc = write_json(o);
    atomic_store(&busy, 0);
    return rc;
}
