/* struct.name of an allocation from its source line (MPI-free; see names.h). */
#include "locality/names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int ident_char(int c) { return isalnum(c) || c == '_'; }

/* The last identifier in s[0..end) (skipping trailing [..] and spaces). */
static int last_ident(const char *s, int end, char *out, size_t n)
{
    int e = end;
    for (;;) {
        while (e > 0 && isspace((unsigned char)s[e - 1]))
            e--;
        if (e > 0 && s[e - 1] == ']') { /* p[i] = malloc: name p */
            int depth = 0;
            while (e > 0) {
                e--;
                if (s[e] == ']')
                    depth++;
                else if (s[e] == '[' && --depth == 0)
                    break;
            }
            continue;
        }
        break;
    }
    int b = e;
    while (b > 0 && ident_char((unsigned char)s[b - 1]))
        b--;
    if (b == e || isdigit((unsigned char)s[b]))
        return 0;
    snprintf(out, n, "%.*s", e - b, s + b);
    return 1;
}

int clampi_locality_name_from_line(const char *s, char *out, size_t n)
{
    const char *p;
    /* posix_memalign((void **)&u, ...) */
    if ((p = strstr(s, "posix_memalign")) && (p = strchr(p, '&'))) {
        p++;
        int k = 0;
        while (ident_char((unsigned char)p[k]))
            k++;
        if (k) {
            snprintf(out, n, "%.*s", k, p);
            return 1;
        }
    }
    /* an assignment: double *u = malloc(...); g->u = new double[n]; */
    for (int i = 0; s[i]; i++) {
        if (s[i] != '=' || s[i + 1] == '=' || (i > 0 && strchr("=<>!+-*/%&|^", s[i - 1])))
            continue;
        if (last_ident(s, i, out, n))
            return 1;
        break;
    }
    /* an allocator's output argument: MPI_Win_allocate_shared(..., &base, &win);
     * MPI_Alloc_mem(n, info, &buf) */
    if (((p = strstr(s, "alloc")) || (p = strstr(s, "Alloc"))) && (p = strchr(p, '(')) && (p = strchr(p, '&')) &&
        p[1] != '&') {
        p++;
        while (*p == ' ' || *p == '(')
            p++;
        int k = 0;
        while (ident_char((unsigned char)p[k]))
            k++;
        if (k && !isdigit((unsigned char)p[0])) {
            snprintf(out, n, "%.*s", k, p);
            return 1;
        }
    }
    /* u.resize(n), u.reserve(n), u.assign(...) */
    static const char *const methods[] = {".resize(", ".reserve(", ".assign(", ".push_back(", ".emplace_back(", ".insert("};
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++)
        if ((p = strstr(s, methods[m])) && last_ident(s, (int)(p - s), out, n))
            return 1;
    /* a declaration with constructor arguments: std::vector<double> u(n); T u{...}; */
    for (int i = 0; s[i]; i++) {
        if (s[i] != '(' && s[i] != '{')
            continue;
        int e = i;
        while (e > 0 && isspace((unsigned char)s[e - 1]))
            e--;
        int b = e;
        while (b > 0 && ident_char((unsigned char)s[b - 1]))
            b--;
        int before = b;
        while (before > 0 && isspace((unsigned char)s[before - 1]))
            before--;
        /* preceded by a type: '>' of a template, '*', '&' or an identifier and a space */
        if (b < e && before > 0 && (s[before - 1] == '>' || s[before - 1] == '*' ||
                                    (before < b && ident_char((unsigned char)s[before - 1])))) {
            snprintf(out, n, "%.*s", e - b, s + b);
            return 1;
        }
        break;
    }
    return 0;
}

