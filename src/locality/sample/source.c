/* The program's source files as resolving and naming at exit read them (resolve.c): each
 * file read once and kept with the start of every line, so checking an addr2line line
 * against its file's length, and naming an allocation (its line, the lines around a split
 * statement, the rest of its function, the declarations of a class's members), open no file
 * again. Runs at exit, outside any signal handler; allocates with glibc. At most
 * SOURCE_FILES files are kept (the oldest goes), each up to 8 MiB. */
#include "locality/sample/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOURCE_FILES 64
#define SOURCE_MAX (8u << 20)

struct ls_source {
    char *path;
    char *text;    /* NUL-terminated */
    size_t *start; /* start[i]: offset of line i + 1; start[nlines]: the text's length */
    int nlines;
};

static ls_source files[SOURCE_FILES];
static int next_slot;

static void drop(ls_source *s) {
    free(s->path);
    free(s->text);
    free(s->start);
    memset(s, 0, sizeof *s);
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 1 << 16;
    char *t = malloc(cap + 1);
    *len = 0;
    while (t) {
        *len += fread(t + *len, 1, cap - *len, f);
        if (*len < cap || cap >= SOURCE_MAX) break;
        char *bigger = realloc(t, 2 * cap + 1);
        if (!bigger) break;
        t = bigger;
        cap *= 2;
    }
    fclose(f);
    if (t) t[*len] = 0;
    return t;
}

const ls_source *ls_source_open(const char *path) {
    for (int i = 0; i < SOURCE_FILES; i++)
        if (files[i].path && strcmp(files[i].path, path) == 0) return &files[i];
    size_t len;
    char *text = read_all(path, &len);
    if (!text) return NULL;
    int n = 0;
    for (size_t i = 0; i < len; i++) n += text[i] == '\n';
    if (len && text[len - 1] != '\n') n++; /* a last line without its newline */
    size_t *start = malloc(sizeof *start * ((size_t)n + 1));
    char *copy = strdup(path);
    if (!start || !copy) {
        free(text), free(start), free(copy);
        return NULL;
    }
    int k = 0;
    start[0] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n' && ++k < n) start[k] = i + 1;
    start[n] = len;
    ls_source *s = &files[next_slot];
    next_slot = (next_slot + 1) % SOURCE_FILES;
    drop(s);
    *s = (ls_source){copy, text, start, n};
    return s;
}

int ls_source_line(const ls_source *s, int line, char *buf, size_t n) {
    if (!s || line < 1 || line > s->nlines || n == 0) return 0;
    size_t from = s->start[line - 1], len = s->start[line] - from;
    if (len > n - 1) len = n - 1;
    memcpy(buf, s->text + from, len);
    buf[len] = 0;
    return 1;
}

const char *ls_source_text(const ls_source *s) { return s ? s->text : NULL; }

int ls_source_lines(const ls_source *s) { return s ? s->nlines : 0; }
