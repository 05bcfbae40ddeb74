// Value-initialized std::vector storage large enough for pages of its own, at -O0: libstdc++
// constructs the first element in a function that returns right after the store, then
// copies it to the rest. Every page, the first element's too, is first touched on the
// program's line. The copies of a vector of vectors are allocated 13 frames below the
// program's line: they are named after it too.
#include <vector>

struct Grid {
    std::vector<double> m_u;
    explicit Grid(long n) { m_u.resize(n); } // @RESIZE
};

int main() {
    std::vector<double> v(1 << 18); // @VALUE
    Grid *g = new Grid(1 << 18);
    std::vector<std::vector<double>> vv(2, std::vector<double>(1 << 16)); // @NESTED
    v[5] = g->m_u[7] + 1 + vv[1][3];
    const double s = v[5];
    delete g;
    return s == 1.0 ? 0 : 1;
}
