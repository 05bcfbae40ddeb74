/* The structure-name heuristic (tools/locality/vgtool/cl_srcname.c) on the
 * allocation lines it has to understand, and on lines it must refuse. */
#include <stdio.h>
#include <string.h>
#include "cl_srcname.h"

static int failures;

static void expect(const char *line, const char *name) {
    char out[64];
    int found = cl_srcname_from_line(line, out, sizeof out);
    if ((name == NULL && found) || (name && (!found || strcmp(out, name) != 0))) {
        fprintf(stderr, "FAIL: \"%s\" -> %s \"%s\", expected %s\n", line, found ? "found" : "none", out,
                name ? name : "none");
        failures++;
    }
}

/* k names found in got (what: which rule, line: its input) against the expected names
 * joined by spaces ("" = none) */
static void expect_names(const char *what, const char *line, char got[][32], int k, const char *names) {
    char joined[256] = "";
    for (int i = 0; i < k; i++) {
        if (i) strcat(joined, " ");
        strcat(joined, got[i]);
    }
    if (strcmp(joined, names) != 0) {
        fprintf(stderr, "FAIL: %s \"%s\" -> \"%s\", expected \"%s\"\n", what, line, joined, names);
        failures++;
    }
}

static void expect_members(const char *line, const char *names) {
    char got[8][32];
    expect_names("members of", line, got, cl_srcname_members(line, &got[0][0], sizeof got[0], 8), names);
}

static void expect_returns(const char *line, const char *name, int want) {
    if (cl_srcname_returns(line, name) != want) {
        fprintf(stderr, "FAIL: \"%s\" returns %s: %d, expected %d\n", line, name, !want, want);
        failures++;
    }
}

static void expect_declared(const char *text, const char *name, int want) {
    int got = cl_srcname_declared(text, name);
    if (got != want) {
        fprintf(stderr, "FAIL: %s declared in \"%s\": %d, expected %d\n", name, text, got, want);
        failures++;
    }
}

static void expect_continued(const char *const *prev, int np, const char *line, const char *const *next, int nn,
                             const char *names) {
    char got[8][32];
    int k = cl_srcname_split_members(prev, np, line, next, nn, &got[0][0], sizeof got[0], 8);
    expect_names("continued", line, got, k, names);
}

int main(void) {
    {
        const char *head[] = {"  allocate(v(5 * n), &     ! first", "  u = 1"};
        const char *tail[] = {"           w(6 * n))       ! last", "  v = 5"};
        const char *mid[] = {"     &  x(n), &", "  y = 2"};
        expect_continued(head, 2, "           w(6 * n))       ! last", NULL, 0, "v w");
        expect_continued(NULL, 0, "  allocate(v(5 * n), &     ! first", tail, 2, "v w");
        expect_continued(head, 2, "     &  x(n), &", (const char *const[]){"     &  z(n))"}, 1, "v x z");
        expect_continued((const char *const[]){"  u = 1"}, 1, "  allocate(a(n))", mid, 2, "");
        expect_continued((const char *const[]){"  s = 'a & b'"}, 1, "  allocate(b(n))", NULL, 0, "");
    }
    expect("    if (posix_memalign((void **)&buf, 64, n * sizeof(double))) return 1;", "buf");
    expect("    posix_memalign( (void**) &s->buf, 64, n);", "s->buf");
    expect("    float (*A)[N] = malloc(sizeof(float[N][N]));", "A");
    expect("    double (* rows)[8] = calloc(n, sizeof *rows);", "rows");
    expect("    f((x)) = malloc(n);", NULL);
    const char *cls = "struct G {\n  public:\n    std::size_t size; // the count; *not* a pointer\n"
                      "    std::vector<double> cells, more;\n    double *halo, scale, *edge;\n    int idx[4];\n"
                      "    std::map<int, double> lookup;\n    G(std::size_t s) : size(s), cells(s) {}\n};\n"
                      "void f(int unused) { other = g(unused); }\n";
    expect_declared(cls, "size", 0);
    expect_declared(cls, "cells", 1);
    expect_declared(cls, "more", 1);
    expect_declared(cls, "halo", 1);
    expect_declared(cls, "scale", 0);
    expect_declared(cls, "edge", 1);
    expect_declared(cls, "idx", 1);
    expect_declared(cls, "lookup", 1);
    expect_declared(cls, "unused", -1);
    expect_declared(cls, "other", -1);
    expect_declared(cls, "missing", -1);
    expect_declared("int a; // the rest; <sizes> below\n    int k;\n", "k", 0);
    const char *alias = "using Vec = std::vector<double>;\ntypedef double *Ptr;\ntypedef double Real;\n"
                        "struct A { Vec m_x, m_y; Ptr m_p; Real m_r; std::size_t n; };";
    expect_declared(alias, "m_x", 1);
    expect_declared(alias, "m_y", 1);
    expect_declared(alias, "m_p", 1);
    expect_declared(alias, "m_r", 0);
    expect_declared(alias, "n", 0);
    expect_declared("struct S { double* p; double * q; int& r; double x, y; };", "p", 1);
    expect_declared("struct S { double* p; double * q; int& r; double x, y; };", "q", 1);
    expect_declared("struct S { double* p; double * q; int& r; double x, y; };", "r", 0);
    expect_declared("struct S { double* p; double * q; int& r; double x, y; };", "y", 0);
    expect_members("        : size(s), cells(s, 0.0), halo(new double[s]) {}", "size cells halo");
    expect_members("    a::b(x);", "");
    expect_members("    explicit Solver(int n) : data_(n) { rhs_.reserve(n); rhs_.resize(n); }", "data_ rhs_");
    expect_members("    std::vector<double> a(n), b(n);", "a b");
    expect_members("    std::vector<std::vector<double>> rows(n, std::vector<double>(m)), *p{q};", "rows p");
    expect_members("    foo(a, b), bar(c);", "");
    expect_members("    return f(a), g(b);", "");
    expect_members("    int x(1), y(2)", "");
    {
        const char *list[] = {"          m_s(n),", "        : count(n),", "    explicit Split(std::size_t n)"};
        const char *call[] = {"    int v = f(a,", "    x = 1;"};
        char got[8][32];
        const char *last = "          m_t(new double[n]) {} // the last", *arg = "              g(n));";
        expect_names("a list split over lines:", last, got,
                     cl_srcname_split_members(list, 3, last, NULL, 0, &got[0][0], sizeof got[0], 8), "m_t");
        expect_names("a call's argument, not a list entry:", arg, got,
                     cl_srcname_split_members(call, 2, arg, NULL, 0, &got[0][0], sizeof got[0], 8), "");
    }
    expect_returns("    return p;", "p", 1);
    expect_returns("\treturn (double *)p; // the block", "p", 1);
    expect_returns("    return static_cast<T *>(field);", "field", 1);
    expect_returns("    return reinterpret_cast<std::uint8_t *>( buf ) ;", "buf", 1);
    expect_returns("    return (p);", "p", 1);
    expect_returns("    return p + 1;", "p", 0);
    expect_returns("    return f(p);", "p", 0);
    expect_returns("    return q;", "p", 0);
    expect_returns("    return pp;", "p", 0);
    expect_returns("    return p->next;", "p", 0);
    expect_returns("    returnp;", "p", 0);
    expect_returns("    x = p;", "p", 0);
    expect_returns("    return s->cells;", "s->cells", 0);
    if (!cl_srcname_closes("        double *p = new double[n];", "    }") ||
        cl_srcname_closes("        double *p = new double[n];", "        }") ||
        cl_srcname_closes("    double *p = malloc(n);", "    if (x) { y(); }") ||
        !cl_srcname_closes("\tint *p = 0;", "}")) {
        fprintf(stderr, "FAIL: cl_srcname_closes\n");
        failures++;
    }
    expect_members("struct Pair { std::vector<double> m_a, m_b; Pair(int n) : m_a(n), m_b(n) {} };", "m_a m_b");
    expect_members("Dom::Dom(int n) : m_n(n), m_v{n, 0.0}, m_w() { }", "m_n m_v");
    expect_members("Flat(int n) { m_p.resize(n); m_q.resize(n); }", "m_p m_q");
    expect_members("    m_x.resize(numNode); // x", "m_x");
    expect_members("std::vector<double> u(n);", "");
    expect_members("a = b ? c : d(e);", "");
    expect_members("std::size_t n = ns::f(3);", "");
    /* Fortran allocate statements */
    expect_members("  allocate(a(n), b(n), c(n))\n", "a b c");
    expect_members("ALLOCATE (U(0:NX+1, NY), STAT=IERR) ! the field\n", "U");
    expect_members("if (.not. allocated(x)) allocate(x(n))", "x");
    expect_members("allocate(dom%x(n), dom % y(n), errmsg=msg, stat=ierr)", "dom%x dom%y");
    expect_members("allocate(real(8) :: w(n), v(2*n))", "w v");
    expect_members("allocate(b, source=a)", "b");
    expect_members("allocate(co(n)[*])", "co");
    expect_members("allocate(a(n), &", "");
    expect_members("deallocate(a, b)", "");
    expect_members("if (allocated(a)) print *, size(a)", "");
    expect_members("p = allocate(n);", "");
    expect_members("allocate(&p, n);", "");
    expect_members("std::allocator<double> al; auto *q = al.allocate(n);", "");
    expect("double *u = malloc(n * sizeof *u);", "u");
    expect("  s->cells = calloc(n, 8); // cells", "s->cells");
    expect("grid.cells = (double *)malloc(n);", "grid.cells");
    expect("std::vector<double> uBuffer(n);", "uBuffer");
    expect("std::vector<double, clampi::numa_allocator<double>> w(n, 0.0, alloc);", "w");
    expect("uBuffer.resize(n);", "uBuffer");
    expect("obj->data.resize(n);", "obj->data");
    expect("p = new double[n];", "p");
    expect("auto v = std::vector<int>(n);", "v");
    expect("grid[i] = malloc(8);", "grid");
    expect("if (posix_memalign(&p, 64, n)) return 1;", "p");
    expect("MPI_Win_allocate_shared(sz, 1, MPI_INFO_NULL, comm, &base, &win);", "base");
    expect("char *buf = mmap(NULL, sz, PROT_READ, MAP_SHARED, fd, 0);", "buf");
    expect("if (a) b = malloc(4);", "b");
    expect("MPI_Alloc_mem(bytes, MPI_INFO_NULL, &buffer);", "buffer");
    expect("explicit Mesh(int n) { m_vol = Allocate<double>(n); }", "m_vol");
    expect("Mesh::Mesh(int n) { n_ = n; m_v = new double[n]; }", "m_v");
    expect("if (n > 0) { buf = malloc(n); }", "buf");
    expect("Mesh(int n) : n_(n) { m_w = Allocate<double>(n); }", "m_w");
    expect("MPI_Init(&argc, &argv);", NULL);
    expect("return malloc(n);", NULL);
    expect("foo(n);", NULL);
    expect("x == malloc(3);", NULL);
    expect("x += 3;", NULL);
    expect("", NULL);
    char joined[64];
    if (!cl_srcname_from_statement("    double *u =\n", "        malloc(n);", joined, sizeof joined) ||
        strcmp(joined, "u") != 0 || cl_srcname_from_statement("x = 1;", "malloc(n);", joined, sizeof joined)) {
        printf("FAIL: a statement continued from the line before\n");
        failures++;
    }
    char tiny[3];
    if (!cl_srcname_from_line("abcdef = malloc(1);", tiny, sizeof tiny) || strcmp(tiny, "ab") != 0) {
        fprintf(stderr, "FAIL: truncation to the buffer\n");
        failures++;
    }
    if (failures) return 1;
    printf("srcname: all cases passed\n");
    return 0;
}
