/* The memory-handle byte format: round trip, and every truncation, padding and single-bit
 * corruption of a valid handle is refused (the checksum and length fields). */
#include <string.h>

#include "check.h"
#include "rmax/mh_format.h"

int main(void) {
    unsigned char rkey[40], gen_rkey[9];
    for (unsigned i = 0; i < sizeof rkey; i++) rkey[i] = (unsigned char)(i * 7 + 1);
    for (unsigned i = 0; i < sizeof gen_rkey; i++) gen_rkey[i] = (unsigned char)(200 - i);
    clampi_mh_fields f = {.owner = 3,
                          .win_id = 0x1122334455667788ull,
                          .base = 0x7f0000001000ull,
                          .size = 4096,
                          .slot = 17,
                          .generation = 99,
                          .gen_addr = 0x7f0000100088ull,
                          .rkey = rkey,
                          .rkey_len = sizeof rkey,
                          .gen_rkey = gen_rkey,
                          .gen_rkey_len = sizeof gen_rkey,
                          .heap_id = 0x0123456789abcdefull,
                          .heap_off = 8192,
                          .heap_seg = 5};
    unsigned char h[256], c[256];
    CHECK_EQ_INT(clampi_mh_encode(&f, h, 10), -1); /* does not fit */
    int len = clampi_mh_encode(&f, h, sizeof h);
    CHECK(len > 0 && len <= 256);
    clampi_mh_fields g;
    CHECK_EQ_INT(clampi_mh_decode(h, (size_t)len, &g), 0);
    CHECK(g.heap_id == f.heap_id && g.heap_off == 8192 && g.heap_seg == 5);
    CHECK(g.owner == 3 && g.win_id == f.win_id && g.base == f.base && g.size == 4096 && g.slot == 17 &&
          g.generation == 99 && g.gen_addr == f.gen_addr && g.rkey_len == sizeof rkey &&
          g.gen_rkey_len == sizeof gen_rkey && !memcmp(g.rkey, rkey, sizeof rkey) &&
          !memcmp(g.gen_rkey, gen_rkey, sizeof gen_rkey));
    for (int l = 0; l < len; l++) CHECK_EQ_INT(clampi_mh_decode(h, (size_t)l, &g), -1); /* truncated */
    memcpy(c, h, (size_t)len);
    c[len] = 0;
    CHECK_EQ_INT(clampi_mh_decode(c, (size_t)len + 1, &g), -1); /* padded */
    for (int byte = 0; byte < len; byte++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(c, h, (size_t)len);
            c[byte] ^= (unsigned char)(1u << bit);
            CHECK_EQ_INT(clampi_mh_decode(c, (size_t)len, &g), -1);
        }
    memset(c, 0, sizeof c);
    CHECK_EQ_INT(clampi_mh_decode(c, (size_t)len, &g), -1); /* zeros */
    CHECK_EQ_INT(clampi_mh_decode(NULL, (size_t)len, &g), -1);
    printf("test_mh_format: ok\n");
    return 0;
}
