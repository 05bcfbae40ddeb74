// First touch of std::vector storage under the sampler. The touching
// instruction is libstdc++ template code (value-initialization, _M_default_append of
// resize): out of line in the program's binary at -O0 and for resize at -O2 (one
// instruction first-touches every vector), inlined at -O2 for the constructor. Every
// structure must get its own program line, not a line of stl_algobase.h (reported by
// addr2line 2.40 under this file's name: "ls_vector.cpp:922") nor one shared line.
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
    size_t n = 16384 * (size_t)argc;
    std::vector<double> ctor(n); // @CTOR
    std::vector<double> grown;
    std::vector<double> other;
    grown.resize(n); // @GROWN
    other.resize(n); // @OTHER
    double sum = 0;
    for (size_t i = 0; i < n; i += 512) sum += ctor[i] + grown[i] + other[i];
    std::printf("%g %d\n", sum, argv[0] != nullptr);
    return sum != 0;
}
