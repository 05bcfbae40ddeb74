/* Free lists for the per-message objects (requests, arrived messages): no malloc per message
 * once the lists are warm. Each thread keeps up to POOL_LOCAL free objects of each kind
 * without a lock; beyond that they go to the kind's shared list (one mutex), which a thread
 * whose own list is empty takes a batch from. Objects are never returned to malloc (a
 * process holds at most the peak number in flight plus POOL_LOCAL per thread). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "msg/msg_internal.h"

#define POOL_LOCAL 64
#define POOL_BATCH 16

typedef struct node {
    struct node *next;
} node;

static const size_t obj_size[CLAMPI_POOL_KINDS] = {sizeof(clampi_mreq), sizeof(clampi_msg)};
/* the bytes cleared on reuse (a message's inline payload is written before it is read) */
static const size_t zero_size[CLAMPI_POOL_KINDS] = {sizeof(clampi_mreq), offsetof(clampi_msg, inline_data)};
static struct {
    pthread_mutex_t lock;
    node *head;
} shared[CLAMPI_POOL_KINDS] = {{PTHREAD_MUTEX_INITIALIZER, NULL}, {PTHREAD_MUTEX_INITIALIZER, NULL}};
static _Thread_local CLAMPI_MSG_TLS struct {
    node *head;
    int n;
} local[CLAMPI_POOL_KINDS];

void *clampi_pool_get(int kind) {
    node *o = local[kind].head;
    if (!o && shared[kind].head) { /* racy peek; checked under the lock */
        pthread_mutex_lock(&shared[kind].lock);
        for (int i = 0; i < POOL_BATCH && shared[kind].head; i++) {
            node *t = shared[kind].head;
            shared[kind].head = t->next;
            t->next = local[kind].head;
            local[kind].head = t;
            local[kind].n++;
        }
        pthread_mutex_unlock(&shared[kind].lock);
        o = local[kind].head;
    }
    if (!o) return calloc(1, obj_size[kind]);
    local[kind].head = o->next;
    local[kind].n--;
    memset(o, 0, zero_size[kind]);
    return o;
}

void clampi_pool_put(int kind, void *obj) {
    node *o = obj;
    if (!o) return;
    if (local[kind].n < POOL_LOCAL) {
        o->next = local[kind].head;
        local[kind].head = o;
        local[kind].n++;
        return;
    }
    pthread_mutex_lock(&shared[kind].lock);
    o->next = shared[kind].head;
    shared[kind].head = o;
    pthread_mutex_unlock(&shared[kind].lock);
}
