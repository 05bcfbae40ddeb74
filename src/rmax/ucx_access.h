/* What the extensions need to know about a UCX-backend window: the only place in src/rmax
 * that looks inside the backend's state (src/backends/ucx/), so the rest stays out of it. */
#ifndef CLAMPI_RMAX_UCX_ACCESS_H
#define CLAMPI_RMAX_UCX_ACCESS_H
#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "rma/window.h"
#include "rmax/ucx_parts.h"

/* 1 if w is a dynamic UCX window and [base, base+size) lies in memory attached to it. */
int clampi_rmax_attached(const clampi_win *w, const void *base, size_t size);
/* The worker and endpoint that process-scope operations of w use (what the parent's
 * lock/unlock complete). */
ucp_worker_h clampi_rmax_worker(clampi_win *w);
ucp_ep_h clampi_rmax_ep(clampi_win *w, int target);
/* The worker and endpoint the calling thread uses for w (its own with thread scope). */
ucp_worker_h clampi_rmax_thread_worker(clampi_win *w);
ucp_ep_h clampi_rmax_thread_ep(clampi_win *w, int target);
/* Endpoints of w to every rank (n = w->b.nranks) for the atomic-lane query. */
int clampi_rmax_eps(clampi_win *w, ucp_ep_h **eps);
/* The window's id, agreed at creation (clampi_rmax_on_create); 0 if none. */
uint64_t clampi_rmax_win_id(const clampi_win *w);
#endif

/* The lane (worker + endpoints) the calling thread issues w's operations on (memory-handle
 * windows: the parent's process lane), entered/left around any use of its worker. */
void *clampi_rmax_lane(clampi_win *w);
void clampi_rmax_lane_enter(void *lane);
void clampi_rmax_lane_leave(void *lane);
ucp_worker_h clampi_rmax_lane_worker(void *lane);
ucp_ep_h clampi_rmax_lane_ep(clampi_win *w, void *lane, int target);
/* The process worker of w's shared state: where peers' endpoints (and their AM) arrive. */
ucp_worker_h clampi_rmax_main_worker(clampi_win *w);
