/* Variable names from source lines: see cl_srcname.h. No libc calls here. */
#include "cl_srcname.h"

static int is_ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static unsigned long str_len(const char *s) {
    unsigned long n = 0;
    while (s[n]) n++;
    return n;
}

static int word_eq(const char *s, unsigned long n, const char *w) {
    unsigned long i = 0;
    for (; i < n && w[i]; i++)
        if (s[i] != w[i]) return 0;
    return i == n && w[i] == 0;
}

/* Words that can stand before a call without declaring a variable. */
static int is_stmt_keyword(const char *s, unsigned long n) {
    static const char *const kw[] = {"return", "else",      "do",  "case",   "goto",
                                     "throw",  "co_return", "if",  "while",  "for",
                                     "switch", "sizeof",    "new", "delete", 0};
    for (int i = 0; kw[i]; i++)
        if (word_eq(s, n, kw[i])) return 1;
    return 0;
}

static int copy_out(const char *s, unsigned long n, char *out, unsigned long cap) {
    if (n == 0 || cap == 0) return 0;
    if (n >= cap) n = cap - 1;
    for (unsigned long i = 0; i < n; i++) out[i] = s[i];
    out[n] = 0;
    return 1;
}

/* Scans backwards from end (exclusive) over an lvalue such as a, s->f, a.b, a[i].c;
 * trailing [..] index groups are dropped. Returns its start, or end if none. */
static unsigned long lvalue_start(const char *s, unsigned long end, unsigned long *stripped_end) {
    unsigned long e = end;
    while (e > 0 && is_space(s[e - 1])) e--;
    while (e > 0 && s[e - 1] == ']') { /* drop a trailing subscript */
        int depth = 0;
        unsigned long i = e;
        while (i > 0) {
            i--;
            if (s[i] == ']')
                depth++;
            else if (s[i] == '[' && --depth == 0)
                break;
        }
        if (depth != 0) break;
        e = i;
        while (e > 0 && is_space(s[e - 1])) e--;
    }
    /* a pointer to an array, "float (*A)[N]": the name inside the parentheses */
    if (e > 0 && s[e - 1] == ')') {
        unsigned long c = e - 1;
        while (c > 0 && is_space(s[c - 1])) c--;
        unsigned long nb = c;
        while (nb > 0 && is_ident(s[nb - 1])) nb--;
        unsigned long st = nb;
        while (st > 0 && is_space(s[st - 1])) st--;
        if (nb < c && st > 0 && s[st - 1] == '*') {
            st--;
            while (st > 0 && is_space(s[st - 1])) st--;
            if (st > 0 && s[st - 1] == '(') e = c;
        }
    }
    *stripped_end = e;
    unsigned long b = e;
    for (;;) {
        while (b > 0 && is_ident(s[b - 1])) b--;
        if (b >= 1 && s[b - 1] == '.' && b >= 2 && is_ident(s[b - 2])) {
            b--;
            continue;
        }
        if (b >= 2 && s[b - 1] == '>' && s[b - 2] == '-' && b >= 3 && is_ident(s[b - 3])) {
            b -= 2;
            continue;
        }
        break;
    }
    while (b < e && s[b] >= '0' && s[b] <= '9') b++; /* not an identifier start */
    return b;
}

/* Rule 1: "lhs = ..." with a plain '=' outside parentheses. */
static int from_assignment(const char *s, unsigned long n, char *out, unsigned long cap) {
    int depth = 0;
    for (unsigned long i = 0; i < n; i++) {
        char c = s[i];
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if (c == ')' || c == ']' || c == '}')
            depth--;
        else if (c == '"' || c == '\'')
            return 0; /* strings: give up rather than guess */
        else if (c == '=' && depth == 0) {
            char prev = i ? s[i - 1] : 0, next = s[i + 1];
            if (next == '=') {
                i++;
                continue;
            }
            if (prev && (prev == '=' || prev == '!' || prev == '<' || prev == '>' || prev == '+' || prev == '-' ||
                         prev == '*' || prev == '/' || prev == '%' || prev == '&' || prev == '|' || prev == '^'))
                continue;
            unsigned long e, b = lvalue_start(s, i, &e);
            if (b < e && !is_stmt_keyword(s + b, e - b)) return copy_out(s + b, e - b, out, cap);
            return 0;
        }
    }
    return 0;
}

static int lower(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Does s[b, e) contain word (case-insensitive)? */
static int contains(const char *s, unsigned long b, unsigned long e, const char *word) {
    unsigned long n = str_len(word);
    for (unsigned long i = b; i + n <= e; i++) {
        unsigned long k = 0;
        while (k < n && lower(s[i + k]) == word[k]) k++;
        if (k == n) return 1;
    }
    return 0;
}

/* Does the word ending at s[e) name an allocating function (...alloc..., ...memalign)? */
static int allocating_call(const char *s, unsigned long e) {
    unsigned long b = e;
    while (b > 0 && is_ident(s[b - 1])) b--;
    return contains(s, b, e, "alloc") || contains(s, b, e, "memalign");
}

/* Rule 2: an output argument "&name" of an allocating call: posix_memalign(&p, ...),
 * MPI_Win_allocate_shared(n, 1, info, comm, &base, &win) (not MPI_Init(&argc, ...)). */
static int from_out_argument(const char *s, unsigned long n, char *out, unsigned long cap) {
    unsigned long open = 0;
    while (open < n && s[open] != '(') open++;
    while (open < n) { /* the first call whose name says it allocates */
        unsigned long e = open;
        while (e > 0 && is_space(s[e - 1])) e--;
        if (allocating_call(s, e)) break;
        open++;
        while (open < n && s[open] != '(') open++;
    }
    for (unsigned long i = open + 1; i + 1 < n; i++) {
        if (s[i] != '&') continue;
        unsigned long p = i;
        while (p > 0 && is_space(s[p - 1])) p--;
        if (p > 0 && s[p - 1] == ')') { /* a cast: posix_memalign((void **)&buf, ...) */
            unsigned long q = p - 1;
            while (q > 0 && s[q - 1] != '(' && (is_ident(s[q - 1]) || is_space(s[q - 1]) || s[q - 1] == '*')) q--;
            if (q > 0 && s[q - 1] == '(') {
                p = q - 1;
                while (p > 0 && is_space(s[p - 1])) p--;
            }
        }
        if (p == 0 || (s[p - 1] != '(' && s[p - 1] != ',')) continue;
        unsigned long b = i + 1;
        while (b < n && is_space(s[b])) b++;
        unsigned long e = b;
        for (;;) {
            while (e < n && is_ident(s[e])) e++;
            if (e + 1 < n && s[e] == '.' && is_ident(s[e + 1])) {
                e++;
                continue;
            }
            if (e + 2 < n && s[e] == '-' && s[e + 1] == '>' && is_ident(s[e + 2])) {
                e += 2;
                continue;
            }
            break;
        }
        if (e > b && !(s[b] >= '0' && s[b] <= '9')) return copy_out(s + b, e - b, out, cap);
    }
    return 0;
}

/* Rules 3 and 4, on the first call "word(" of the line:
 *   obj.method(...) / obj->method(...)  -> obj      (u.resize(n))
 *   Type name(...) / Type name{...}     -> name     (std::vector<double> u(n)) */
static int from_call_or_declaration(const char *s, unsigned long n, char *out, unsigned long cap) {
    for (unsigned long i = 1; i < n; i++) {
        if (s[i] != '(' && s[i] != '{') continue;
        unsigned long e = i;
        while (e > 0 && is_space(s[e - 1])) e--;
        unsigned long b = e;
        while (b > 0 && is_ident(s[b - 1])) b--;
        if (b == e) return 0;
        if (b >= 1 && s[b - 1] == '.') {
            unsigned long oe, ob = lvalue_start(s, b - 1, &oe);
            return ob < oe ? copy_out(s + ob, oe - ob, out, cap) : 0;
        }
        if (b >= 2 && s[b - 1] == '>' && s[b - 2] == '-') {
            unsigned long oe, ob = lvalue_start(s, b - 2, &oe);
            return ob < oe ? copy_out(s + ob, oe - ob, out, cap) : 0;
        }
        unsigned long p = b;
        while (p > 0 && is_space(s[p - 1])) p--;
        if (p == 0) return 0; /* a plain call at the start: f(x) */
        char c = s[p - 1];
        if (is_ident(c)) {
            unsigned long wb = p;
            while (wb > 0 && is_ident(s[wb - 1])) wb--;
            if (is_stmt_keyword(s + wb, p - wb)) return 0;
        } else if (c != '>' && c != '*' && c != '&') {
            return 0;
        }
        if (is_stmt_keyword(s + b, e - b)) return 0;
        return copy_out(s + b, e - b, out, cap);
    }
    return 0;
}

static int starts(const char *s, unsigned long n, const char *w) {
    unsigned long i = 0;
    for (; w[i]; i++)
        if (i >= n || s[i] != w[i]) return 0;
    return 1;
}

/* Skips a balanced (...) or {...} group starting at s[i] (the opener); returns the index
 * after it, or n if unbalanced. */
static unsigned long skip_group(const char *s, unsigned long n, unsigned long i) {
    char open = s[i], close = open == '(' ? ')' : '}';
    int depth = 0;
    for (; i < n; i++) {
        if (s[i] == open) depth++;
        if (s[i] == close && --depth == 0) return i + 1;
    }
    return n;
}

/* A Fortran object in an allocate list: a, a(n), dom%x(0:n), x[*]; writes "a" or "dom%x"
 * and returns the index after it, or 0 when s[i, e) is no object (stat=, source=). */
static unsigned long fortran_object(const char *s, unsigned long i, unsigned long e, char *out, unsigned long cap) {
    unsigned long k = 0;
    for (;;) {
        while (i < e && is_space(s[i])) i++;
        unsigned long b = i;
        while (i < e && is_ident(s[i])) i++;
        if (b == i || (s[b] >= '0' && s[b] <= '9')) return 0;
        for (unsigned long j = b; j < i && k + 1 < cap; j++) out[k++] = s[j];
        while (i < e && is_space(s[i])) i++;
        while (i < e && (s[i] == '(' || s[i] == '[')) { /* bounds and codimensions */
            int depth = 0;
            for (; i < e; i++) {
                if (s[i] == '(' || s[i] == '[') depth++;
                if ((s[i] == ')' || s[i] == ']') && --depth == 0) break;
            }
            i++;
            while (i < e && is_space(s[i])) i++;
        }
        if (i < e && s[i] == '%' && k + 1 < cap) {
            out[k++] = '%';
            i++;
            continue;
        }
        break;
    }
    if (i < e && s[i] == '=') return 0; /* stat=, errmsg=, source=, mold= */
    out[k] = 0;
    return k ? i : 0;
}

/* Fortran: "allocate(a(n), b(n), stat=ierr)" or "if (.not. allocated(x)) allocate(x(n))"
 * or "allocate(real(8) :: w(n))" -> a, b / x / w, in the list's order. The statement has
 * nothing after it but a comment or a continuation (a C call ends with ';'). */
static int fortran_allocate(const char *s, unsigned long n, char *names, unsigned long cap, int max) {
    unsigned long i = 0;
    for (;; i++) {
        if (i + 8 > n) return 0;
        if (contains(s, i, i + 8, "allocate") && (i == 0 || !is_ident(s[i - 1])) && !is_ident(s[i + 8])) break;
    }
    unsigned long open = i + 8;
    while (open < n && is_space(s[open])) open++;
    if (open >= n || s[open] != '(') return 0;
    unsigned long close = skip_group(s, n, open);
    if (close == n && s[n - 1] != ')') return 0;
    for (unsigned long j = close; j < n && s[j] != '!'; j++)
        if (!is_space(s[j]) && s[j] != '&') return 0;
    unsigned long b = open + 1, e = close - 1;
    for (unsigned long j = b; j + 1 < e; j++) /* a type-spec: "real(8) :: w(n)" */
        if (s[j] == ':' && s[j + 1] == ':') b = j + 2;
    int found = 0;
    while (b < e && found < max) {
        unsigned long end = b;
        int depth = 0;
        while (end < e && !(depth == 0 && s[end] == ',')) {
            if (s[end] == '(' || s[end] == '[') depth++;
            if (s[end] == ')' || s[end] == ']') depth--;
            end++;
        }
        char *out = names + (unsigned long)found * cap;
        unsigned long after = fortran_object(s, b, end, out, cap);
        if (after) {
            while (after < end && is_space(s[after])) after++;
            if (after == end) found++;
        }
        b = end + 1;
    }
    return found;
}

/* A declaration of two or more variables with constructor arguments, one allocation each:
 * "std::vector<double> a(n), b(n);" -> a, b ("std::vector<double> u(n);" alone is rule 4's). */
static int declarators(const char *s, unsigned long n, char *names, unsigned long cap, int max) {
    unsigned long i = 0;
    int types = 0, found = 0;
    while (i < n && is_space(s[i])) i++;
    /* the type: words, "::", <...>, '*', '&', up to a word followed by '(' or '{' */
    for (;;) {
        if (i + 1 < n && s[i] == ':' && s[i + 1] == ':') {
            i += 2;
        } else if (i < n && s[i] == '<') {
            int depth = 0;
            for (; i < n; i++) {
                if (s[i] == '<') depth++;
                if (s[i] == '>' && --depth == 0) break;
            }
            if (i >= n) return 0;
            i++;
        } else if (i < n && (is_space(s[i]) || s[i] == '*' || s[i] == '&')) {
            i++;
        } else if (i < n && is_ident(s[i]) && !(s[i] >= '0' && s[i] <= '9')) {
            unsigned long b = i;
            while (i < n && is_ident(s[i])) i++;
            if (is_stmt_keyword(s + b, i - b)) return 0;
            unsigned long j = i;
            while (j < n && is_space(s[j])) j++;
            if (j < n && (s[j] == '(' || s[j] == '{')) {
                if (!types) return 0; /* a call, not a declaration */
                i = b;
                break;
            }
            types++;
        } else {
            return 0;
        }
    }
    /* the declarators: name(args) or name{args}, separated by ',', up to ';' */
    while (found < max) {
        while (i < n && (is_space(s[i]) || s[i] == '*' || s[i] == '&')) i++;
        unsigned long b = i;
        while (i < n && is_ident(s[i])) i++;
        if (i == b) return 0;
        unsigned long e = i;
        while (i < n && is_space(s[i])) i++;
        if (i >= n || (s[i] != '(' && s[i] != '{')) return 0;
        i = skip_group(s, n, i);
        if (!copy_out(s + b, e - b, names + (unsigned long)found * cap, cap)) return 0;
        found++;
        while (i < n && is_space(s[i])) i++;
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        if (i < n && s[i] == ';') break;
        return 0;
    }
    return found >= 2 ? found : 0;
}

int cl_srcname_members(const char *line, char *names, unsigned long cap, int max) {
    unsigned long n = str_len(line);
    int found = fortran_allocate(line, n, names, cap, max);
    if (found) return found;
    /* an initializer list: ") : name(args), name{args} ... {" (not "::"), or a line that
     * begins with its ':' (the constructor's head on the line before) */
    unsigned long lead = 0;
    while (lead < n && is_space(line[lead])) lead++;
    for (unsigned long i = 0; i + 1 < n && found == 0; i++) {
        if (line[i] != ')' && !(i == lead && line[i] == ':')) continue;
        unsigned long j = line[i] == ':' ? i : i + 1;
        while (j < n && is_space(line[j])) j++;
        if (j >= n || line[j] != ':' || (j + 1 < n && line[j + 1] == ':')) continue;
        j++;
        while (j < n && found < max) {
            while (j < n && (is_space(line[j]) || line[j] == ',')) j++;
            unsigned long b = j;
            while (j < n && is_ident(line[j])) j++;
            if (b == j) break;
            unsigned long e = j;
            while (j < n && is_space(line[j])) j++;
            if (j >= n || (line[j] != '(' && line[j] != '{')) break;
            unsigned long after = skip_group(line, n, j);
            int has_args = 0;
            for (unsigned long k = j + 1; k + 1 < after; k++)
                if (!is_space(line[k])) has_args = 1;
            if (has_args && copy_out(line + b, e - b, names + (unsigned long)found * cap, cap)) found++;
            j = after;
        }
    }
    /* then calls that allocate a member, in the list's body too ("Solver(int n) : data_(n)
     * { rhs_.reserve(n); }"): name.resize( / .reserve( / .assign(; one name for a run of
     * calls on the same member (reserve then resize allocates once) */
    static const char *const methods[] = {".resize(", ".reserve(", ".assign(", 0};
    for (unsigned long i = 1; i < n && found < max; i++) {
        if (line[i] != '.') continue;
        int m = 0;
        while (methods[m] && !starts(line + i, n - i, methods[m])) m++;
        if (!methods[m]) continue;
        unsigned long b = i;
        while (b > 0 && is_ident(line[b - 1])) b--;
        if (b == i) continue;
        char *slot = names + (unsigned long)found * cap;
        if (!copy_out(line + b, i - b, slot, cap)) continue;
        const char *last = found ? slot - cap : 0;
        unsigned long k = 0;
        while (last && last[k] && last[k] == slot[k]) k++;
        if (!last || last[k] != slot[k]) found++;
    }
    if (found) return found;
    return declarators(line, n, names, cap, max);
}

/* Rule 5: a function body on the line, "Mesh(int n) { n_ = n; m_v = Allocate<double>(n); }":
 * the first statement of the body that assigns the result of a call or a new-expression. */
static int from_body(const char *s, unsigned long n, char *out, unsigned long cap) {
    unsigned long i = 0;
    int depth = 0, closed = 0;
    for (; i < n; i++) {
        if (s[i] == '"' || s[i] == '\'') return 0;
        if (s[i] == '(' || s[i] == '[') depth++;
        if (s[i] == ')' || s[i] == ']') {
            depth--;
            closed = depth == 0;
        }
        if (s[i] == '{' && depth == 0 && closed) break;
    }
    if (i >= n) return 0;
    unsigned long end = skip_group(s, n, i) - 1; /* the closing brace, or the line's end */
    for (unsigned long b = i + 1; b < end;) {
        unsigned long e = b;
        depth = 0;
        while (e < end && (s[e] != ';' || depth)) {
            if (s[e] == '(' || s[e] == '[' || s[e] == '{') depth++;
            if (s[e] == ')' || s[e] == ']' || s[e] == '}') depth--;
            e++;
        }
        int assigns = 0, calls = 0;
        for (unsigned long k = b; k < e; k++) {
            if (s[k] == '=' && !assigns)
                assigns = 1;
            else if (assigns && (s[k] == '(' || (starts(s + k, e - k, "new") && k + 3 < e && !is_ident(s[k + 3]))))
                calls = 1;
        }
        if (calls && from_assignment(s + b, e - b, out, cap)) return 1;
        b = e + 1;
    }
    return 0;
}

int cl_srcname_from_line(const char *line, char *out, unsigned long cap) {
    char buf[512];
    unsigned long n = 0, len = str_len(line);
    if (cap) out[0] = 0;
    /* Work on a copy without a trailing // comment and leading blanks. */
    unsigned long i = 0;
    while (i < len && is_space(line[i])) i++;
    for (; i < len && n + 1 < sizeof buf; i++) {
        if (line[i] == '/' && i + 1 < len && (line[i + 1] == '/' || line[i + 1] == '*')) break;
        buf[n++] = line[i];
    }
    buf[n] = 0;
    if (from_assignment(buf, n, out, cap)) return 1;
    if (from_out_argument(buf, n, out, cap)) return 1;
    if (from_body(buf, n, out, cap)) return 1;
    if (from_call_or_declaration(buf, n, out, cap)) return 1;
    if (cap) out[0] = 0;
    return 0;
}

int cl_srcname_from_statement(const char *prev, const char *line, char *out, unsigned long cap) {
    if (cl_srcname_from_line(line, out, cap)) return 1;
    if (!prev) return 0;
    unsigned long n = str_len(prev);
    while (n > 0 && is_space(prev[n - 1])) n--;
    if (n == 0 || (prev[n - 1] != '=' && prev[n - 1] != '(' && prev[n - 1] != ',')) return 0;
    char joined[1024];
    unsigned long k = 0;
    for (unsigned long i = 0; i < n && k + 2 < sizeof joined; i++) joined[k++] = prev[i];
    joined[k++] = ' ';
    for (unsigned long i = 0; line[i] && k + 1 < sizeof joined; i++) joined[k++] = line[i];
    joined[k] = 0;
    return cl_srcname_from_line(joined, out, cap);
}

int cl_srcname_returns(const char *line, const char *name) {
    unsigned long n = str_len(name), i = 0;
    if (n == 0) return 0;
    for (unsigned long k = 0; k < n; k++)
        if (!is_ident(name[k])) return 0; /* a member (s->x) is not a local */
    while (is_space(line[i])) i++;
    if (!(starts(line + i, str_len(line + i), "return") && !is_ident(line[i + 6]))) return 0;
    i += 6;
    /* up to the name: blanks, parentheses, '*', '&', type words (a cast's) and <...>
     * groups; a word before '(' only if it is a cast (static_cast<T *>(p)) */
    for (;;) {
        while (is_space(line[i]) || line[i] == '(' || line[i] == ')' || line[i] == '*' || line[i] == '&') i++;
        if (line[i] == '<') {
            int depth = 0;
            for (; line[i]; i++) {
                if (line[i] == '<') depth++;
                if (line[i] == '>' && --depth == 0) break;
            }
            if (!line[i]) return 0;
            i++;
            continue;
        }
        if (line[i] == ':' && line[i + 1] == ':') {
            i += 2;
            continue;
        }
        if (!is_ident(line[i])) return 0;
        unsigned long b = i;
        while (is_ident(line[i])) i++;
        unsigned long e = i, j = i;
        while (is_space(line[j])) j++;
        if (line[j] == ';' || line[j] == ')') { /* the returned expression's last word */
            if (!(e - b == n && word_eq(line + b, n, name))) return 0;
            while (is_space(line[j]) || line[j] == ')') j++;
            return line[j] == ';';
        }
        if (line[j] == '(' && !(e - b >= 5 && word_eq(line + e - 5, 5, "_cast"))) return 0; /* a call */
        if (line[j] != '(' && line[j] != '<' && line[j] != '*' && line[j] != '&' && line[j] != ':' &&
            !is_ident(line[j]) && line[j] != ')')
            return 0; /* an operator: p + 1 */
    }
}

/* Removes comments from s[b, e) into out (at most cap - 1 characters); returns its length. */
static unsigned long uncommented(const char *s, unsigned long b, unsigned long e, char *out, unsigned long cap) {
    unsigned long k = 0;
    for (unsigned long i = b; i < e && k + 1 < cap; i++) {
        if (s[i] == '/' && i + 1 < e && s[i + 1] == '/') {
            while (i < e && s[i] != '\n') i++;
        } else if (s[i] == '/' && i + 1 < e && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < e && !(s[i] == '*' && s[i + 1] == '/')) i++;
            i++;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = 0;
    return k;
}

/* Is the type t[0, n) an alias ("using T = std::vector<double>;", "typedef double *T;")
 * of a pointer, array or template type? */
static int alias_allocates(const char *text, const char *t, unsigned long n) {
    unsigned long len = str_len(text);
    for (unsigned long p = 0; p + n <= len; p++) {
        unsigned long same = 0;
        while (same < n && text[p + same] == t[same]) same++;
        if (same < n || (p > 0 && is_ident(text[p - 1])) || is_ident(text[p + n])) continue;
        unsigned long a = p + n, b = p;
        while (a < len && is_space(text[a])) a++;
        while (b > 0 && is_space(text[b - 1])) b--;
        unsigned long e = a, s = b;
        if (a < len && text[a] == '=' && b >= 5 && word_eq(text + b - 5, 5, "using")) {
            s = a; /* using T = ...; */
            while (e < len && text[e] != ';') e++;
        } else if (a < len && (text[a] == ';' || text[a] == '[')) {
            while (s > 0 && text[s - 1] != ';' && text[s - 1] != '{' && text[s - 1] != '}') s--;
            while (s < b && is_space(text[s])) s++;
            if (!starts(text + s, b - s, "typedef")) continue; /* typedef ... T; */
            e = a + 1;
        } else {
            continue;
        }
        for (unsigned long i = s; i < e; i++)
            if (text[i] == '<' || text[i] == '*' || text[i] == '[') return 1;
        return 0;
    }
    return 0;
}

int cl_srcname_declared(const char *text, const char *name) {
    unsigned long n = str_len(name), len = str_len(text);
    if (n == 0) return -1;
    for (unsigned long p = 0; p + n <= len; p++) {
        if (!word_eq(text + p, n, name) || (p > 0 && is_ident(text[p - 1])) || is_ident(text[p + n])) continue;
        unsigned long a = p + n;
        while (a < len && is_space(text[a])) a++;
        if (a >= len || (text[a] != ';' && text[a] != ',' && text[a] != '=' && text[a] != '[' && text[a] != '{'))
            continue;
        /* the statement so far: back to ';', '{', '}' or a lone ':' (public:) */
        unsigned long b = p;
        while (b > 0) {
            char c = text[b - 1];
            if (c == ';' || c == '{' || c == '}') break;
            if (c == ':' && !(b >= 2 && text[b - 2] == ':') && !(b < len && text[b] == ':')) break;
            b--;
        }
        if (b > 0) { /* a boundary inside a // comment: the statement begins on the next line */
            unsigned long ls = b - 1;
            while (ls > 0 && text[ls - 1] != '\n') ls--;
            for (unsigned long i = ls; i + 1 < b; i++)
                if (text[i] == '/' && text[i + 1] == '/') {
                    while (b < p && text[b - 1] != '\n') b++;
                    break;
                }
        }
        char head[256];
        unsigned long h = uncommented(text, b, p, head, sizeof head);
        int bad = 0, ident = 0;
        unsigned long comma = h; /* the first declarator ends there */
        for (unsigned long i = 0; i < h; i++) {
            char c = head[i];
            if (c == '(' || c == ')' || c == '=' || c == '.' || c == '#' || c == '"') bad = 1;
            if (c == '-' && i + 1 < h && head[i + 1] == '>') bad = 1;
            if (c == ',' && comma == h) comma = i;
            if (is_ident(c)) ident = 1;
        }
        if (bad || !ident) continue; /* an expression, a call, a preprocessor line */
        /* own part: what stands between the name and the last ',' or, without one, the
         * type ("double a, *b;", "double* b"); base type: the first declarator without its
         * name and own part */
        unsigned long own = h;
        if (comma < h)
            while (own > 0 && head[own - 1] != ',') own--;
        else
            while (own > 0 && (is_space(head[own - 1]) || head[own - 1] == '*' || head[own - 1] == '&')) own--;
        unsigned long be = comma < h ? comma : own;
        if (comma < h) {
            while (be > 0 && is_space(head[be - 1])) be--;
            while (be > 0 && is_ident(head[be - 1])) be--;
        }
        int alloc = 0;
        for (unsigned long i = 0; i < be; i++)
            if (head[i] == '<') alloc = 1;
        for (unsigned long i = own; i < h; i++)
            if (head[i] == '*') alloc = 1;
        if (text[a] == '[') alloc = 1;
        if (!alloc) { /* a type name of the program's: its typedef or using alias, one level */
            unsigned long te = be;
            while (te > 0 && is_space(head[te - 1])) te--;
            unsigned long tb = te;
            while (tb > 0 && is_ident(head[tb - 1])) tb--;
            if (te > tb) alloc = alias_allocates(text, head + tb, te - tb);
        }
        return alloc;
    }
    return -1;
}

int cl_srcname_keep_allocating(const char *text, char *names, unsigned long cap, int k) {
    int kept = 0;
    for (int i = 0; i < k; i++) {
        if (cl_srcname_declared(text, names + (unsigned long)i * cap) == 0) continue;
        if (kept != i)
            for (unsigned long c = 0; c < cap; c++)
                names[(unsigned long)kept * cap + c] = names[(unsigned long)i * cap + c];
        kept++;
    }
    return kept;
}

/* Does s begin (after blanks) an initializer list with a lone ':', or hold ") :"? */
static int opens_list(const char *s) {
    unsigned long n = str_len(s), i = 0;
    while (i < n && is_space(s[i])) i++;
    if (i < n && s[i] == ':' && !(i + 1 < n && s[i + 1] == ':')) return 1;
    for (unsigned long k = 0; k < n; k++) {
        if (s[k] != ')') continue;
        unsigned long j = k + 1;
        while (j < n && is_space(s[j])) j++;
        if (j < n && s[j] == ':' && !(j + 1 < n && s[j + 1] == ':')) return 1;
    }
    return 0;
}

/* The last character of s that is not blank and not in a trailing // comment, or 0. */
static char last_char(const char *s) {
    unsigned long n = str_len(s), e = n;
    for (unsigned long i = 0; i + 1 < n; i++)
        if (s[i] == '/' && s[i + 1] == '/') {
            e = i;
            break;
        }
    while (e > 0 && is_space(s[e - 1])) e--;
    return e ? s[e - 1] : 0;
}

int cl_srcname_list_members(const char *const *prev, int nprev, const char *line, char *names, unsigned long cap,
                            int max) {
    unsigned long i = 0, n = str_len(line);
    while (i < n && is_space(line[i])) i++;
    unsigned long b = i;
    while (i < n && is_ident(line[i])) i++;
    if (i == b || (line[b] >= '0' && line[b] <= '9')) return 0;
    while (i < n && is_space(line[i])) i++;
    if (i >= n || (line[i] != '(' && line[i] != '{')) return 0; /* "name(args)" or "name{args}" */
    int open = 0;
    for (int k = 0; k < nprev && !open; k++) {
        if (!prev[k]) return 0;
        if (opens_list(prev[k])) {
            open = 1;
        } else {
            char c = last_char(prev[k]);
            if (c != ',' && c != 0) return 0; /* not an entry of a list (blank lines pass) */
        }
    }
    if (!open) return 0;
    char joined[1024] = ": ";
    unsigned long k = 2;
    for (unsigned long j = b; j < n && k + 1 < sizeof joined; j++) joined[k++] = line[j];
    joined[k] = 0;
    return cl_srcname_members(joined, names, cap, max);
}

/* Fortran: the text of a line without its '!' comment (outside quotes) and trailing blanks,
 * and without a leading '&' of a continuation; *amp: it ends with '&' (continued). */
static unsigned long fortran_part(const char *s, unsigned long *b_out, int *amp) {
    unsigned long n = str_len(s), e = n, b = 0;
    char quote = 0;
    for (unsigned long i = 0; i < n; i++) {
        if (quote) {
            if (s[i] == quote) quote = 0;
        } else if (s[i] == '\'' || s[i] == '"') {
            quote = s[i];
        } else if (s[i] == '!') {
            e = i;
            break;
        }
    }
    while (e > 0 && is_space(s[e - 1])) e--;
    *amp = e > 0 && s[e - 1] == '&';
    if (*amp) e--;
    while (b < e && is_space(s[b])) b++;
    if (b < e && s[b] == '&') b++;
    *b_out = b;
    return e;
}

int cl_srcname_continued_members(const char *const *prev, int nprev, const char *line, const char *const *next,
                                 int nnext, char *names, unsigned long cap, int max) {
    int amp, first = 0, last = 0;
    unsigned long b, e;
    /* back while the line before ends with '&', forward while this one (then the next) does */
    while (first < nprev && prev[first]) {
        fortran_part(prev[first], &b, &amp);
        if (!amp) break;
        first++;
    }
    fortran_part(line, &b, &amp);
    while (amp && last < nnext && next[last]) fortran_part(next[last++], &b, &amp);
    if (first == 0 && last == 0) return 0; /* not continued */
    char joined[2048];
    unsigned long k = 0;
    for (int i = -first; i <= last; i++) {
        const char *src = i < 0 ? prev[-i - 1] : i == 0 ? line : next[i - 1];
        e = fortran_part(src, &b, &amp);
        for (unsigned long j = b; j < e && k + 2 < sizeof joined; j++) joined[k++] = src[j];
        if (k + 1 < sizeof joined) joined[k++] = ' ';
    }
    joined[k] = 0;
    return fortran_allocate(joined, k, names, cap, max);
}

int cl_srcname_split_members(const char *const *prev, int nprev, const char *line, const char *const *next, int nnext,
                             char *names, unsigned long cap, int max) {
    int k = cl_srcname_list_members(prev, nprev, line, names, cap, max);
    return k ? k : cl_srcname_continued_members(prev, nprev, line, next, nnext, names, cap, max);
}

int cl_srcname_closes(const char *alloc_line, const char *line) {
    unsigned long a = 0, b = 0;
    while (is_space(alloc_line[a]) && alloc_line[a] != '\n') a++;
    while (is_space(line[b]) && line[b] != '\n') b++;
    return line[b] == '}' && b < a;
}
