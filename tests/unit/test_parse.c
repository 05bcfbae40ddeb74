/* Option value parsing. */
#include "check.h"
#include "common/parse.h"

int main(void) {
    size_t v = 0;
    int b = -1;
    CHECK(clampi_parse_size("4096", &v) == 0 && v == 4096);
    CHECK(clampi_parse_size("64K", &v) == 0 && v == 65536);
    CHECK(clampi_parse_size("16M", &v) == 0 && v == 16u << 20);
    CHECK(clampi_parse_size("2GiB", &v) == 0 && v == (size_t)2 << 30);
    CHECK(clampi_parse_size("1kb", &v) == 0 && v == 1024);
    v = 77;
    CHECK(clampi_parse_size("", &v) == -1 && v == 77);
    CHECK(clampi_parse_size("-5", &v) == -1);
    CHECK(clampi_parse_size("0", &v) == -1);
    CHECK(clampi_parse_size("12X", &v) == -1);
    CHECK(clampi_parse_size("abc", &v) == -1);
    CHECK(clampi_parse_size("99999999999999999999", &v) == -1);
    CHECK(clampi_parse_size("17179869184G", &v) == -1); /* overflows */
    CHECK(clampi_parse_bool("on", &b) == 0 && b == 1);
    CHECK(clampi_parse_bool("FALSE", &b) == 0 && b == 0);
    CHECK(clampi_parse_bool("maybe", &b) == -1);
    puts("parse: ok");
    return 0;
}
