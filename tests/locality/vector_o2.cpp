// C++ data structures at -O2. std::vector's allocation and its
// value-initialization (a memset in libc) are inlined into main from libstdc++ headers;
// the report must name the program's line and variable, and a file-scope static array
// by its C++ name (its symbol is mangled: _ZL8s_static).
#include <cstdio>
#include <vector>

static double s_static[8192];

int main(int argc, char **argv) {
    size_t n = 8192 * (size_t)argc;
    std::vector<double> direct(n);                             // @DIRECT
    std::vector<double> filled(n, 1.0);                        // @FILLED
    for (size_t i = 0; i < 8192; i++) s_static[i] = (double)i; // @STATIC
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += direct[i] + filled[i] + s_static[i % 8192];
    std::printf("%g\n", sum + (argv[0] ? 0 : 1));
    return sum < 0;
}
