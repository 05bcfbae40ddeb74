// C++ members named as a debugger prints them: std::vector members of objects made with
// new, set up in constructors (in the body, one per line; in an initializer list, with
// scalars among them, on the head's line, on its own or one entry per line; several on one
// line); arrays from an allocation wrapper named after the variable the caller
// assigns (a member, a local), also when the wrapper names its own variable and returns it.
// Built at -O2 (inlined libstdc++ code and wrapper) and -O0.
#include <cstdio>
#include <cstdlib>
#include <vector>

// An allocation wrapper, as LULESH's Allocate<T>: its own line names nothing.
template <typename T> T *AllocateArray(size_t n) {
    return static_cast<T *>(malloc(sizeof(T) * n)); // @WRAP
}
// A C-style wrapper that names its own variable, checks it, and returns it.
static double *NewField(size_t n) {
    double *field = static_cast<double *>(calloc(n, sizeof(double))); // @OWNVAR
    if (!field) abort();
    return field;
}
struct Mesh {
    explicit Mesh(int n) { m_vol = AllocateArray<double>(n); }
    ~Mesh() { free(m_vol); }
    double *m_vol;
};

class Dom {
  public:
    explicit Dom(int n) { Allocate(n); }
    void Allocate(int n) {
        m_x.resize(n); // @MX
        m_y.resize(n); // @MY
    }
    std::vector<double> m_x, m_y;
};
// Each of these is one line on purpose.
// clang-format off
struct Pair { std::vector<double> m_a, m_b; explicit Pair(int n) : m_a(n), m_b(n) {} }; // @PAIR
struct Flat { std::vector<double> m_p, m_q; explicit Flat(int n) { m_p.resize(n); m_q.resize(n); } }; // @FLAT
// Scalars in an initializer list allocate nothing; a list on a line of its own.
struct Mixed { int n; double scale; std::vector<double> m_u, m_w; Mixed(int k) : n(k), scale(1.0), m_u(k), m_w(k) {} }; // @MIXED
struct Grid {
    std::size_t size;
    std::vector<double> cells;
    double *halo;
    explicit Grid(std::size_t s)
        : size(s), cells(s, 0.0), halo(new double[s]) {} // @GRID
    ~Grid() { delete[] halo; }
};
// A method that keeps what it allocates: the next method's "return buf;" is not its own.
struct Holder {
    double *buf = nullptr;
    void Init(std::size_t n) {
        double *buf = new double[n]; // @HOLDER
        this->buf = buf;
    }
    double *Get() const {
        return buf;
    }
    ~Holder() { delete[] buf; }
};
// The same through a type alias of the program's.
using Field = std::vector<double>;
struct Aliased { int nx; Field m_f, m_g; Aliased(int k) : nx(k), m_f(k), m_g(k) {} }; // @ALIASED
// A list and calls in the body on one line; reserve then resize allocates once.
struct Solver { std::vector<double> data_, rhs_; explicit Solver(int k) : data_(k) { rhs_.reserve(k); rhs_.resize(k); } }; // @SOLVER
// An initializer list one entry per line (clang-format's style for long lists).
struct Split {
    std::size_t count;
    std::vector<double> m_s;
    double *m_t;
    explicit Split(std::size_t n)
        : count(n),
          m_s(n), // @SPLIT_S
          m_t(new double[n]) {} // @SPLIT_T
    ~Split() { delete[] m_t; }
};
// clang-format on

int main(int argc, char **argv) {
    int n = 16384 * argc;
    Dom *locDom = new Dom(n);
    Pair *pair = new Pair(n);
    Flat *flat = new Flat(n);
    Mesh *mesh = new Mesh(n);
    double *pressure = AllocateArray<double>(n);
    double *density = NewField(n);
    Mixed *mixed = new Mixed(n);
    Grid *grid = new Grid(n);
    Split *split = new Split(n);
    Aliased *aliased = new Aliased(n);
    Solver *solver = new Solver(n);
    Holder *holder = new Holder;
    holder->Init(n);
    std::vector<double> left(n), right(n); // @TWO
    double s = 0;
    for (int i = 0; i < n; i++) {
        locDom->m_x[i] = i;
        locDom->m_y[i] = s;
        pair->m_a[i] = pair->m_b[i] + i;
        flat->m_p[i] = flat->m_q[i] + 1;
        mesh->m_vol[i] = pressure[i] = density[i] = i;
        mixed->m_u[i] = mixed->m_w[i] = grid->cells[i] = grid->halo[i] = mixed->scale * i + mixed->n;
        split->m_s[i] = split->m_t[i] = aliased->m_f[i] = aliased->m_g[i] = i + aliased->nx;
        solver->data_[i] = solver->rhs_[i] = left[i] = right[i] = holder->Get()[i] = i;
        s += locDom->m_x[i] * 1e-9 + pair->m_a[i] * 1e-9 + flat->m_p[i] * 1e-9;
    }
    std::printf("%g\n", s + left[n / 2] + right[n / 3] + (argv[0] ? 0 : 1));
    delete locDom;
    delete pair;
    delete flat;
    delete mesh;
    free(pressure);
    free(density);
    delete mixed;
    delete grid;
    delete split;
    delete aliased;
    delete solver;
    delete holder;
    return s < 0;
}
