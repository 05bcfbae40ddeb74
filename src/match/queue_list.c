/* "list": one heap node per entry in a doubly linked list, as MPICH's and MVAPICH's
 * posted and unexpected queues (there the node is the request object itself). */
#include <stdlib.h>

#include "match/queue.h"

typedef struct node {
    struct node *prev, *next;
    clampi_match_key key;
    uintptr_t cookie;
} node;

typedef struct {
    clampi_mq base;
    node *head, *tail;
} list_q;

static void unlink_node(list_q *l, node *n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    l->base.len--;
    free(n);
}

static int list_push(clampi_mq *q, clampi_match_key key, uintptr_t cookie) {
    list_q *l = (list_q *)q;
    node *n = malloc(sizeof *n);
    if (!n) return -1;
    n->key = key;
    n->cookie = cookie;
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    q->len++;
    return 0;
}

static int list_find(clampi_mq *q, clampi_match_key key, int remove, uintptr_t *cookie, size_t *depth) {
    list_q *l = (list_q *)q;
    size_t d = 0;
    for (node *n = l->head; n; n = n->next, d++) {
        if (clampi_mq_key_match(n->key, key)) {
            *cookie = n->cookie;
            *depth = d;
            if (remove) unlink_node(l, n);
            return 1;
        }
    }
    *depth = d;
    return 0;
}

static int list_remove_cookie(clampi_mq *q, uintptr_t cookie) {
    list_q *l = (list_q *)q;
    for (node *n = l->head; n; n = n->next)
        if (n->cookie == cookie) {
            unlink_node(l, n);
            return 1;
        }
    return 0;
}

static int list_pop(clampi_mq *q, uintptr_t *cookie) {
    list_q *l = (list_q *)q;
    if (!l->head) return 0;
    *cookie = l->head->cookie;
    unlink_node(l, l->head);
    return 1;
}

static uint64_t list_touch(clampi_mq *q) {
    uint64_t sum = 0;
    for (node *n = ((list_q *)q)->head; n; n = n->next) sum += (uint32_t)n->key.tag;
    return sum;
}

static void list_destroy(clampi_mq *q) {
    list_q *l = (list_q *)q;
    while (l->head) unlink_node(l, l->head);
    free(l);
}

static const clampi_mq_ops list_ops = {list_push, list_find, list_remove_cookie, list_pop, list_touch, list_destroy};

clampi_mq *clampi_mq_list_create(void) {
    list_q *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->base.ops = &list_ops;
    return &l->base;
}
