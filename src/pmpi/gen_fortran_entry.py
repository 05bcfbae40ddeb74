#!/usr/bin/env python3
"""Generate the preload's Fortran entry points from entry_points.tsv.

Usage: gen_fortran_entry.py entry_points.tsv OUT.c

For each call NAME of the table it writes one C function per Fortran ABI and gives it
every symbol name a Fortran compiler may call it by:
- mpif.h and `use mpi`: mpi_name_, mpi_name__, mpi_name, MPI_NAME (integer handles,
  integer status arrays);
- `use mpi_f08`: mpi_name_f08_ (Open MPI; MPICH for calls without a choice buffer) and
  mpi_name_f08ts_ (MPICH: choice buffers as Fortran descriptors, CFI_cdesc_t); the error
  argument is optional, statuses are TYPE(MPI_Status).
Each converts its arguments (fortran_support.h) and calls the C entry point MPI_Name, which
the preload defines when it serves the call (and the MPI otherwise).
"""
import sys

HANDLES = {
    "type": ("MPI_Datatype", "MPI_Type"),
    "comm": ("MPI_Comm", "MPI_Comm"),
    "win": ("MPI_Win", "MPI_Win"),
    "info": ("MPI_Info", "MPI_Info"),
    "group": ("MPI_Group", "MPI_Group"),
    "op": ("MPI_Op", "MPI_Op"),
    "req": ("MPI_Request", "MPI_Request"),
    "msg": ("MPI_Message", "MPI_Message"),
}


def read_table(path):
    calls = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        calls.append((words[0], words[1:]))
    return calls


class Body:
    """The pieces of one wrapper: Fortran parameters, set-up, C arguments, after."""

    def __init__(self, abi):
        self.abi = abi  # "f77", "f08", "f08ts"
        self.params, self.hidden, self.pre, self.args, self.post = [], [], [], [], []


def arg_code(b, i, kind, kinds):
    a = f"a{i + 1}"
    base, _, ref = kind.partition(":")
    n = f"a{ref}" if ref else None
    f08 = b.abi != "f77"
    if base == "buf":
        if b.abi == "f08ts":
            b.params.append(f"CFI_cdesc_t *{a}")
            b.pre.append(f"if (!clampi_f_desc_contiguous({a})) return FORWARD;")
            b.args.append(f"clampi_f08_buf({a}->base_addr)")
        else:
            b.params.append(f"void *{a}")
            b.args.append(f"clampi_f08_buf({a})" if f08 else f"clampi_f_buf({a})")
    elif base == "int":
        b.params.append(f"MPI_Fint *{a}")
        b.args.append(f"(int)*{a}")
    elif base == "aint":
        b.params.append(f"MPI_Aint *{a}")
        b.args.append(f"*{a}")
    elif base == "ints":
        b.params.append(f"MPI_Fint *{a}")
        b.args.append(f"(int *){a}")
    elif base == "logical":
        b.params.append(f"MPI_Fint *{a}")
        b.args.append(f"*{a} != 0")
    elif base == "logicals":
        b.params.append(f"MPI_Fint *{a}")
        b.pre.append(f"int c{a}[CLAMPI_F_MAX_DIMS]; if (*{n} < 0 || *{n} > CLAMPI_F_MAX_DIMS) return FAIL(MPI_ERR_DIMS);")
        b.pre.append(f"for (int k = 0; k < *{n}; k++) c{a}[k] = {a}[k] != 0;")
        b.args.append(f"c{a}")
    elif base == "string":
        b.params.append(f"const char *{a}")
        b.hidden.append(f"size_t {a}_len")
        b.pre.append(f"char c{a}[MPI_MAX_OBJECT_NAME]; clampi_f_string(c{a}, sizeof c{a}, {a}, {a}_len);")
        b.args.append(f"c{a}")
    elif base == "addr_out":
        b.params.append(f"MPI_Aint *{a}")
        b.args.append(f"(void *){a}")
    elif base == "ignored_addr_out":
        b.params.append(f"void *{a}")
        b.pre.append(f"void *c{a} = NULL; (void){a};")
        b.args.append(f"(void *)&c{a}")
    elif base == "int_out":
        b.params.append(f"MPI_Fint *{a}")
        b.args.append(f"(int *){a}")
    elif base == "logical_out":
        b.params.append(f"MPI_Fint *{a}")
        b.pre.append(f"int c{a} = 0;")
        b.args.append(f"&c{a}")
        b.post.append(f"if (rc == MPI_SUCCESS) *{a} = c{a} ? CLAMPI_F_TRUE : 0;")
    elif base == "index_out":
        b.params.append(f"MPI_Fint *{a}")
        b.pre.append(f"int c{a} = MPI_UNDEFINED;")
        b.args.append(f"&c{a}")
        b.post.append(f"if (rc == MPI_SUCCESS) *{a} = c{a} >= 0 ? c{a} + 1 : c{a};")
    elif base == "indices_out":
        b.params.append(f"MPI_Fint *{a}")
        b.args.append(f"(int *){a}")
        b.post.append(f"if (rc == MPI_SUCCESS) for (int k = 0; k < *{n}; k++) {a}[k] += 1;")
    elif base == "reqs_inout":
        b.params.append(f"MPI_Fint *{a}")
        b.pre.append(f"CLAMPI_F_ARRAY(MPI_Request, c{a}, *{n});")
        b.pre.append(f"for (int k = 0; k < *{n}; k++) c{a}[k] = PMPI_Request_f2c({a}[k]);")
        b.args.append(f"c{a}")
        b.post.append(f"for (int k = 0; k < *{n}; k++) {a}[k] = PMPI_Request_c2f(c{a}[k]);")
        b.post.append(f"CLAMPI_F_ARRAY_FREE(c{a});")
    elif base == "status":
        kind_s = "f08" if f08 else "f"
        b.params.append(f"MPI_Fint *{a}")
        b.pre.append(f"MPI_Status c{a}; int ign{a} = clampi_{kind_s}_status_ignored({a});")
        b.args.append(f"ign{a} ? MPI_STATUS_IGNORE : &c{a}")
        b.post.append(f"if (!ign{a}) clampi_{kind_s}_status_out(&c{a}, {a});")
    elif base == "statuses":
        kind_s = "f08" if f08 else "f"
        b.params.append(f"MPI_Fint *{a}")
        b.pre.append(f"int ign{a} = clampi_{kind_s}_statuses_ignored({a});")
        b.pre.append(f"CLAMPI_F_ARRAY(MPI_Status, c{a}, ign{a} ? 0 : *a1);")
        b.args.append(f"ign{a} ? MPI_STATUSES_IGNORE : c{a}")
        b.post.append(f"if (!ign{a}) for (int k = 0; k < *{n}; k++) clampi_{kind_s}_status_out(&c{a}[k], clampi_{kind_s}_status_at({a}, k));")
        b.post.append(f"CLAMPI_F_ARRAY_FREE(c{a});")
    else:
        h, _, mode = base.partition("_")
        if h not in HANDLES:
            raise SystemExit(f"unknown kind {kind}")
        ctype, conv = HANDLES[h]
        b.params.append(f"MPI_Fint *{a}")
        if not mode:
            b.args.append(f"P{conv}_f2c(*{a})")
        else:
            init = f"P{conv}_f2c(*{a})" if mode == "inout" else f"{ctype.upper()}_NULL"
            if ctype == "MPI_Datatype":
                init = f"PMPI_Type_f2c(*{a})" if mode == "inout" else "MPI_DATATYPE_NULL"
            b.pre.append(f"{ctype} c{a} = {init};")
            b.args.append(f"&c{a}")
            cond = "" if mode == "inout" else "if (rc == MPI_SUCCESS) "
            b.post.append(f"{cond}*{a} = P{conv}_c2f(c{a});")


SPELLINGS = {
    "f77": lambda n: [f"mpi_{n}_", f"mpi_{n}__", f"mpi_{n}", f"MPI_{n.upper()}"],
    "f08": lambda n: [f"mpi_{n}_f08_"],
    "f08ts": lambda n: [f"mpi_{n}_f08ts_"],
}


def wrapper(name, kinds, abi):
    b = Body(abi)
    for i, k in enumerate(kinds):
        arg_code(b, i, k, kinds)
    lower = name.lower()
    fn = f"clampi_{abi}_{lower}"
    params = b.params + ["MPI_Fint *ierr"] + b.hidden
    out = []
    plist = ", ".join(params)
    if abi == "f08ts":
        out.append(f"static void {fn}({plist});")
        out.append(f"typedef void (*{fn}_fn)({plist});")
        call_real = ", ".join([p.split()[-1].lstrip("*") for p in params])
        forward = f"clampi_f_forward_{fn}({call_real})"
        out.append(f"static void clampi_f_forward_{fn}({plist}) {{")
        out.append(f"    static {fn}_fn real;")
        out.append(f"    if (!real) real = ({fn}_fn)clampi_f_next(\"mpi_{lower}_f08ts_\", (void (*)(void)){fn});")
        out.append(f"    if (real) real({call_real});")
        out.append(f"    else if (ierr) *ierr = MPI_ERR_INTERN;")
        out.append("}")
    out.append(f"static void {fn}({plist}) {{")
    fail = "(void)(ierr && (*ierr = (e)))"
    for line in b.pre:
        line = line.replace("return FORWARD;", f"{{ {forward}; return; }}" if abi == "f08ts" else "")
        line = line.replace("return FAIL(MPI_ERR_DIMS);", "{ if (ierr) *ierr = MPI_ERR_DIMS; return; }")
        out.append(f"    {line}")
    out.append(f"    int rc = MPI_{name}({', '.join(b.args)});")
    for line in b.post:
        out.append(f"    {line}")
    out.append("    if (ierr) *ierr = rc;")
    out.append("}")
    for sym in SPELLINGS[abi](lower):
        out.append(f"CLAMPI_F_ALIAS({sym}, {fn})")
    del fail
    return out


def main():
    table, dest = sys.argv[1], sys.argv[2]
    lines = [
        "/* Generated by src/pmpi/gen_fortran_entry.py from src/pmpi/entry_points.tsv: do not edit. */",
        '#include "pmpi/fortran_support.h"',
        "",
    ]
    f77, f08, f08ts = [], [], []
    for name, kinds in read_table(table):
        if kinds == ["special"]:
            continue
        f77 += wrapper(name, kinds, "f77") + [""]
        f08 += wrapper(name, kinds, "f08") + [""]
        if any(k == "buf" for k in kinds):
            f08ts += wrapper(name, kinds, "f08ts") + [""]
    lines += ["/* ---- mpif.h and `use mpi` */"] + f77
    lines += ["/* ---- `use mpi_f08` */", "#if CLAMPI_F08"] + f08 + ["#endif", ""]
    lines += ["/* ---- `use mpi_f08`, MPICH: choice buffers as descriptors */", "#if CLAMPI_F08TS"] + f08ts + ["#endif"]
    with open(dest, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
