# mpi4py (python3-mpi4py) point-to-point under the preload: pickled send/recv (mpi4py's
# recv uses matched probes), isend/irecv, buffer Send/Recv, Sendrecv, on COMM_WORLD and a
# dup. Prints "result" lines, identical plainly and preloaded (run_preload.sh compares).
import sys

from mpi4py import MPI


def result(line):  # one write per line: the ranks' lines must not interleave
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
peer = (rank + 1) % size
src = (rank - 1) % size
for name, comm in (("world", world), ("dup", world.Dup())):
    comm.send({"from": rank, "data": list(range(rank + 3))}, dest=peer, tag=7)
    got = comm.recv(source=src, tag=7)
    result("result rank=%d comm=%s pickled=%s" % (rank, name, got))
    req = comm.isend(("x" * 5000, rank), dest=peer, tag=8)
    big = comm.irecv(source=MPI.ANY_SOURCE, tag=8).wait()
    req.wait()
    result("result rank=%d comm=%s isend=%d,%d" % (rank, name, len(big[0]), big[1]))
    sbuf = bytearray([rank % 256]) * 100
    rbuf = bytearray(100)
    if rank % 2 == 0:
        comm.Send([sbuf, MPI.BYTE], dest=peer, tag=9)
        comm.Recv([rbuf, MPI.BYTE], source=src, tag=9)
    else:
        tmp = bytearray(100)
        comm.Recv([tmp, MPI.BYTE], source=src, tag=9)
        comm.Send([sbuf, MPI.BYTE], dest=peer, tag=9)
        rbuf = tmp
    st = MPI.Status()
    out = bytearray(64)
    comm.Sendrecv([sbuf[:64], MPI.BYTE], dest=peer, sendtag=10, recvbuf=[out, MPI.BYTE], source=src, recvtag=10,
                  status=st)
    result("result rank=%d comm=%s Send=%d Sendrecv=%d count=%d source=%d" % (rank, name, rbuf[0], out[0],
          st.Get_count(MPI.BYTE), st.Get_source()))
    if comm is not world:
        comm.Free()
