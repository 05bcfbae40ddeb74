#include "bwin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *kind_names[] = {
    [BW_MPI_ALLOC] = "mpi_alloc", [BW_MPI_DYN] = "mpi_dynamic", [BW_CL_ALLOC] = "ucx_alloc",
    [BW_CL_DYN] = "ucx_dynamic",  [BW_CL_MH] = "ucx_memhandle", [BW_CL_MH_HEAP] = "ucx_memhandle_heap",
};
const char *bw_kind_name(bw_kind k) { return kind_names[k]; }
int bw_is_clampi(bw_kind k) { return k >= BW_CL_ALLOC; }

const char *bw_mpi_name(void) {
#if defined(OPEN_MPI)
    return "openmpi";
#elif defined(MPICH_VERSION)
    return "mpich";
#else
    return "mpi";
#endif
}

const char *bw_transport(void) {
    const char *t = getenv("RMAEXT_TRANSPORT");
    return t && *t ? t : "shm";
}

double bw_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bw_json(const char *fmt, ...) {
    char body[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    printf("{\"mpi\":\"%s\",\"transport\":\"%s\",%s}\n", bw_mpi_name(), bw_transport(), body);
    fflush(stdout);
}

static MPI_Info make_info(bw_kind kind, const char *const *keys) {
    MPI_Info info;
    MPI_Info_create(&info);
    if (bw_is_clampi(kind)) {
        MPI_Info_set(info, "clampi_backend", "ucx");
        MPI_Info_set(info, CLAMPI_MODE, CLAMPI_OFF);
    }
    for (int i = 0; keys && keys[i]; i += 2) MPI_Info_set(info, (char *)keys[i], (char *)keys[i + 1]);
    return info;
}

/* The clampi variants must really be UCX windows: a backend that silently fell back to
 * MPI would make every comparison meaningless. */
static void require_ucx(CMPI_Win w) {
    MPI_Info info;
    char v[64] = "";
    int flag = 0;
    if (CMPI_Win_get_info(w, &info) == MPI_SUCCESS) {
        MPI_Info_get(info, "clampi_backend", sizeof v - 1, v, &flag);
        MPI_Info_free(&info);
    }
    if (!flag || strcmp(v, "ucx") != 0) {
        fprintf(stderr, "rmaext_bench: the clampi window is not a UCX window (clampi_backend=%s)\n", v);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

int bw_create(bwin *w, bw_kind kind, MPI_Aint size, MPI_Comm comm, const char *const *keys, int mh_owner) {
    memset(w, 0, sizeof *w);
    if (kind == BW_CL_MH_HEAP) w->heap_mem = 1, kind = BW_CL_MH;
    w->kind = kind;
    w->size = size;
    w->mh_owner = mh_owner;
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    MPI_Info info = make_info(kind, keys);
    int rc = MPI_SUCCESS;
    switch (kind) {
    case BW_MPI_ALLOC: rc = MPI_Win_allocate(size, 1, info, comm, &w->mem, &w->mw); break;
    case BW_CL_ALLOC: rc = CMPI_Win_allocate(size, 1, info, comm, &w->mem, &w->cw); break;
    case BW_MPI_DYN:
    case BW_CL_DYN:
    case BW_CL_MH:
    case BW_CL_MH_HEAP: /* created as BW_CL_MH */
        if (w->heap_mem) {
            if (CMPI_Alloc_mem(size, MPI_INFO_NULL, &w->mem) != MPI_SUCCESS) return MPI_ERR_NO_MEM;
            memset(w->mem, 0, (size_t)size);
        } else {
            w->mem = calloc(1, size);
        }
        if (kind == BW_MPI_DYN) {
            rc = MPI_Win_create_dynamic(info, comm, &w->mw);
            if (rc == MPI_SUCCESS) rc = MPI_Win_attach(w->mw, w->mem, size);
        } else {
            rc = CMPI_Win_create_dynamic(info, comm, &w->cw);
            if (rc == MPI_SUCCESS) rc = CMPI_Win_attach(w->cw, w->mem, size);
        }
        MPI_Aint mine;
        MPI_Get_address(w->mem, &mine);
        w->remote = malloc(n * sizeof *w->remote);
        MPI_Allgather(&mine, 1, MPI_AINT, w->remote, 1, MPI_AINT, comm);
        break;
    }
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) return rc;
    w->sentinel = MPI_REQUEST_NULL;
    if (bw_is_clampi(kind)) {
        require_ucx(w->cw);
        CMPIX_Win_notify_request(w->cw, CMPIX_NOTIFY_MAX - 1, &w->sentinel); /* never notified */
    }
    if (kind == BW_CL_MH) {
        w->parent = w->cw;
        w->cw = (CMPI_Win){0};
        if (rank == mh_owner) rc = CMPIX_Memhandle_create(w->mem, size, w->parent, w->mh, &w->mh_size);
        MPI_Bcast(&w->mh_size, 1, MPI_INT, mh_owner, comm);
        MPI_Bcast(w->mh, w->mh_size, MPI_BYTE, mh_owner, comm);
        if (rc == MPI_SUCCESS && rank != mh_owner) rc = bw_mh_open(w, keys);
    }
    return rc;
}

/* Without keys: MPI_INFO_NULL, as a program making a window per exchange would pass (a
 * memory-handle window takes its backend from the parent and never caches). */
int bw_mh_open(bwin *w, const char *const *keys) {
    if (!keys) return CMPIX_Win_from_memhandle(w->mh, w->mh_size, w->mh_owner, 1, MPI_INFO_NULL, w->parent, &w->cw);
    MPI_Info info = make_info(BW_CL_MH, keys);
    int rc = CMPIX_Win_from_memhandle(w->mh, w->mh_size, w->mh_owner, 1, info, w->parent, &w->cw);
    MPI_Info_free(&info);
    return rc;
}

void bw_mh_close(bwin *w) { CMPI_Win_free(&w->cw); }

void bw_barrier(bwin *w) {
    if (w->sentinel == MPI_REQUEST_NULL) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    MPI_Request r;
    int done = 0, unused;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done) MPI_Test(&w->sentinel, &unused, MPI_STATUS_IGNORE);
    }
}

void bw_free(bwin *w) {
    if (w->sentinel != MPI_REQUEST_NULL) {
        MPI_Cancel(&w->sentinel);
        MPI_Wait(&w->sentinel, MPI_STATUS_IGNORE);
    }
    switch (w->kind) {
    case BW_MPI_ALLOC: MPI_Win_free(&w->mw); break;
    case BW_CL_ALLOC: CMPI_Win_free(&w->cw); break;
    case BW_MPI_DYN:
        MPI_Win_detach(w->mw, w->mem);
        MPI_Win_free(&w->mw);
        break;
    case BW_CL_MH:
    case BW_CL_MH_HEAP: /* created as BW_CL_MH */
        if (w->cw.serial) CMPI_Win_free(&w->cw);
        MPI_Barrier(MPI_COMM_WORLD); /* peers are done with the handle */
        if (w->mh_size && w->mh[0] && w->parent.serial) {
            int rank;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            if (rank == w->mh_owner) CMPIX_Memhandle_release(w->mh, w->parent);
        }
        w->cw = w->parent;
        /* fall through */
    case BW_CL_DYN:
        CMPI_Win_detach(w->cw, w->mem);
        CMPI_Win_free(&w->cw);
        break;
    }
    if (w->heap_mem)
        CMPI_Free_mem(w->mem);
    else if (w->kind == BW_MPI_DYN || w->kind == BW_CL_DYN || w->kind == BW_CL_MH)
        free(w->mem);
    free(w->remote);
}

/* Displacement of byte off in target's memory. */
static MPI_Aint disp(const bwin *w, int target, MPI_Aint off) {
    return (w->kind == BW_MPI_DYN || w->kind == BW_CL_DYN) ? w->remote[target] + off : off;
}

void bw_lock_all(bwin *w) {
    if (w->kind == BW_MPI_ALLOC || w->kind == BW_MPI_DYN)
        MPI_Win_lock_all(0, w->mw);
    else
        CMPI_Win_lock_all(0, w->kind == BW_CL_MH ? w->parent : w->cw);
}

void bw_unlock_all(bwin *w) {
    if (w->kind == BW_MPI_ALLOC || w->kind == BW_MPI_DYN)
        MPI_Win_unlock_all(w->mw);
    else
        CMPI_Win_unlock_all(w->kind == BW_CL_MH ? w->parent : w->cw);
}

void bw_put(bwin *w, const void *buf, int n, int target, MPI_Aint off) {
    if (bw_is_clampi(w->kind))
        CMPI_Put(buf, n, MPI_BYTE, target, disp(w, target, off), n, MPI_BYTE, w->cw);
    else
        MPI_Put(buf, n, MPI_BYTE, target, disp(w, target, off), n, MPI_BYTE, w->mw);
}

void bw_get(bwin *w, void *buf, int n, int target, MPI_Aint off) {
    if (bw_is_clampi(w->kind))
        CMPI_Get(buf, n, MPI_BYTE, target, disp(w, target, off), n, MPI_BYTE, w->cw);
    else
        MPI_Get(buf, n, MPI_BYTE, target, disp(w, target, off), n, MPI_BYTE, w->mw);
}

void bw_flush(bwin *w, int target) {
    if (bw_is_clampi(w->kind))
        CMPI_Win_flush(target, w->cw);
    else
        MPI_Win_flush(target, w->mw);
}

void bw_fetch_add(bwin *w, const long *v, long *res, int target, MPI_Aint off) {
    if (bw_is_clampi(w->kind))
        CMPI_Fetch_and_op(v, res, MPI_LONG, target, disp(w, target, off), MPI_SUM, w->cw);
    else
        MPI_Fetch_and_op(v, res, MPI_LONG, target, disp(w, target, off), MPI_SUM, w->mw);
}

void bw_cas(bwin *w, const long *v, const long *cmp, long *res, int target, MPI_Aint off) {
    if (bw_is_clampi(w->kind))
        CMPI_Compare_and_swap(v, cmp, res, MPI_LONG, target, disp(w, target, off), w->cw);
    else
        MPI_Compare_and_swap(v, cmp, res, MPI_LONG, target, disp(w, target, off), w->mw);
}
