#include "rmax/mh_format.h"

#include "common/fnv.h"

#include <string.h>

/* Layout: magic u32 | version u16 | header bytes u16 | owner u32 | slot u32 | win_id u64 |
 * base u64 | size u64 | generation u64 | gen_addr u64 | rkey_len u32 | gen_rkey_len u32 |
 * heap_id u64 | heap_off u64 | heap_seg u32 | 0 u32 | share_node u64 | share_token u64 |
 * share_lo u64 | share_len u64 | share_pid u32 | share_fd u32 |
 * rkey | gen_rkey | total length u32 | checksum u64 (of everything before it). */
#define HEADER 128u
#define TRAILER 12u

#define PUT(T, v)                       \
    do {                                \
        T x_ = (T)(v);                  \
        memcpy(o + at, &x_, sizeof x_); \
        at += sizeof x_;                \
    } while (0)
#define GET(T, dst)                     \
    do {                                \
        T x_;                           \
        memcpy(&x_, b + at, sizeof x_); \
        at += sizeof x_;                \
        (dst) = x_;                     \
    } while (0)

int clampi_mh_encode(const clampi_mh_fields *f, void *out, size_t cap) {
    size_t total = HEADER + (size_t)f->rkey_len + f->gen_rkey_len + TRAILER;
    if (total > cap) return -1;
    unsigned char *o = out;
    size_t at = 0;
    PUT(uint32_t, CLAMPI_MH_MAGIC);
    PUT(uint16_t, CLAMPI_MH_VERSION);
    PUT(uint16_t, HEADER);
    PUT(uint32_t, f->owner);
    PUT(uint32_t, f->slot);
    PUT(uint64_t, f->win_id);
    PUT(uint64_t, f->base);
    PUT(uint64_t, f->size);
    PUT(uint64_t, f->generation);
    PUT(uint64_t, f->gen_addr);
    PUT(uint32_t, f->rkey_len);
    PUT(uint32_t, f->gen_rkey_len);
    PUT(uint64_t, f->heap_id);
    PUT(uint64_t, f->heap_off);
    PUT(uint32_t, f->heap_seg);
    PUT(uint32_t, 0);
    PUT(uint64_t, f->share_node);
    PUT(uint64_t, f->share_token);
    PUT(uint64_t, f->share_lo);
    PUT(uint64_t, f->share_len);
    PUT(uint32_t, f->share_pid);
    PUT(uint32_t, f->share_fd);
    memcpy(o + at, f->rkey, f->rkey_len);
    at += f->rkey_len;
    memcpy(o + at, f->gen_rkey, f->gen_rkey_len);
    at += f->gen_rkey_len;
    PUT(uint32_t, total);
    PUT(uint64_t, clampi_fnv1a64(o, at));
    return (int)total;
}

int clampi_mh_decode(const void *buf, size_t len, clampi_mh_fields *f) {
    const unsigned char *b = buf;
    if (!buf || len < HEADER + TRAILER) return -1;
    size_t at = 0;
    uint32_t magic, total;
    uint16_t version, header;
    uint64_t sum;
    GET(uint32_t, magic);
    GET(uint16_t, version);
    GET(uint16_t, header);
    if (magic != CLAMPI_MH_MAGIC || version != CLAMPI_MH_VERSION || header != HEADER) return -1;
    GET(uint32_t, f->owner);
    GET(uint32_t, f->slot);
    GET(uint64_t, f->win_id);
    GET(uint64_t, f->base);
    GET(uint64_t, f->size);
    GET(uint64_t, f->generation);
    GET(uint64_t, f->gen_addr);
    GET(uint32_t, f->rkey_len);
    GET(uint32_t, f->gen_rkey_len);
    uint32_t zero;
    GET(uint64_t, f->heap_id);
    GET(uint64_t, f->heap_off);
    GET(uint32_t, f->heap_seg);
    GET(uint32_t, zero);
    if (zero != 0) return -1;
    GET(uint64_t, f->share_node);
    GET(uint64_t, f->share_token);
    GET(uint64_t, f->share_lo);
    GET(uint64_t, f->share_len);
    GET(uint32_t, f->share_pid);
    GET(uint32_t, f->share_fd);
    if ((uint64_t)HEADER + f->rkey_len + f->gen_rkey_len + TRAILER != len) return -1; /* truncated or padded */
    f->rkey = b + at;
    at += f->rkey_len;
    f->gen_rkey = b + at;
    at += f->gen_rkey_len;
    GET(uint32_t, total);
    const size_t body = at; /* the checksum covers everything before it */
    GET(uint64_t, sum);
    if (total != len || sum != clampi_fnv1a64(b, body)) return -1;
    if (f->generation == 0 || f->rkey_len == 0 || f->gen_rkey_len == 0 || f->base + f->size < f->base) return -1;
    return 0;
}
