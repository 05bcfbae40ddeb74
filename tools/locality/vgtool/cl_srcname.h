/* Data-structure names from an allocation's source line (numalize's heuristic).
 *
 * Pure C without any library call, so the same code runs inside the Valgrind
 * tool (which has no libc) and in native unit tests. */
#ifndef CL_SRCNAME_H
#define CL_SRCNAME_H

/* Finds the variable an allocation on source line `line` is assigned to and
 * writes it (NUL-terminated, at most cap-1 characters) to out.
 *   "double *u = malloc(n)"          -> "u"
 *   "s->cells = calloc(n, 8);"       -> "s->cells"
 *   "std::vector<double> u(n);"      -> "u"
 *   "uBuffer.resize(n);"             -> "uBuffer"
 *   "p = new double[n];"             -> "p"
 * Returns 1 when a name was found, 0 otherwise (out is then ""). */
int cl_srcname_from_line(const char *line, char *out, unsigned long cap);

/* cl_srcname_from_line on `line`, else, when the statement began on the line before
 * (`prev` ends with '=', '(' or ','; NULL if there is none), on the two joined:
 *   "double *u =" / "malloc(n);"     -> "u" */
int cl_srcname_from_statement(const char *prev, const char *line, char *out, unsigned long cap);

/* The names a line allocates, in source order, when one line can hold several
 * allocations of the program's (the tools then tell them apart by their order in the
 * code): a C++ constructor's members, a Fortran allocate statement's objects.
 *   "Dom(int n) : m_x(n), m_y(n) {}"          -> m_x, m_y  (initializer list, entries
 *                                                  with arguments)
 *   "Dom(int n) { m_x.resize(n); m_y.resize(n); }" -> m_x, m_y (resize, reserve, assign)
 *   "allocate(a(n), dom%x(0:n), stat=ierr)"   -> a, dom%x  (any case; also after
 *                                                  "if (...)", with a type-spec "::")
 * Writes up to max names of at most cap-1 characters each into names[i * cap ...];
 * returns how many were found. */
int cl_srcname_members(const char *line, char *names, unsigned long cap, int max);

/* How `name` is declared in a source file's text (the first declaration found): 1 as a
 * pointer, an array or a template type (std::vector<double> m_x, double *halo, a[100]),
 * or as a type the same text aliases to one of those (using Vec = std::vector<double>;
 * Vec m_x), 0 as anything else (int n, double scale, std::size_t size: a scalar member
 * of an initializer list, which allocates nothing), -1 if no declaration is found. */
int cl_srcname_declared(const char *text, const char *name);

/* cl_srcname_members for a line inside an initializer list split over lines (clang-format's
 * one entry per line), given the nprev lines before it, nearest first: when they are entries
 * ending in ',' back to one that opens the list (a lone ':' first, or ") :"), the entries on
 * `line` ("      cells(n)," -> cells); else 0.
 *   "Grid::Grid(std::size_t n)" / "    : size(n)," / "      cells(n)," */
int cl_srcname_list_members(const char *const *prev, int nprev, const char *line, char *names, unsigned long cap,
                            int max);

/* A Fortran allocate statement continued over lines ('&'): its objects, as
 * cl_srcname_members gives them for one line, given the nprev lines before `line` and the
 * nnext after it (nearest first); 0 if `line` is not part of a continued statement.
 *   "allocate(a(n), &" / "         b(2*n))"     -> a, b (on either line) */
int cl_srcname_continued_members(const char *const *prev, int nprev, const char *line, const char *const *next,
                                 int nnext, char *names, unsigned long cap, int max);

/* The statement reader of both modes: the names on `line` when it is part of a statement
 * split over lines, given the nprev lines before it and the nnext after it (nearest
 * first): an initializer list's entry (cl_srcname_list_members), else a continued Fortran
 * allocate (cl_srcname_continued_members); 0 if neither. */
int cl_srcname_split_members(const char *const *prev, int nprev, const char *line, const char *const *next, int nnext,
                             char *names, unsigned long cap, int max);

/* Of the k names of cl_srcname_members (names[i * cap ...]), keeps those the text does not
 * declare as scalars (cl_srcname_declared != 0), in order; returns how many are left. */
int cl_srcname_keep_allocating(const char *text, char *names, unsigned long cap, int k);

/* Does `line` close the function (or block) that holds `alloc_line`: a '}' indented less
 * than it? Where reading a function on from an allocation stops. */
int cl_srcname_closes(const char *alloc_line, const char *line);

/* Does `line` return the local variable `name` (an identifier), bare or cast? Then the
 * allocation that named it was an allocation wrapper's, and its caller names the result.
 *   "return p;" "return (double *)p;" "return static_cast<T *>(p);"  -> 1
 *   "return p + 1;" "return f(p);" "return q;"                       -> 0 */
int cl_srcname_returns(const char *line, const char *name);

#endif
