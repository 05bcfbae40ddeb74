! A plain Fortran MPI program (no clampi calls) that touches every part the preload
! serves: a window named "fwin" read with repeated MPI_Get (the get cache by window name),
! a window cached by its info key (clampi_mode),
! MPI_Alloc_mem buffers with MPI_Alltoall and MPI_Allgather (MPI_IN_PLACE too; the shared
! heap), point-to-point with requests and statuses (CLAMPI_MATCH), and blocking calls on
! strided array sections (with `use mpi_f08` on MPICH-family MPIs these pass the compiler's
! array descriptor, not a copy), and (-DHAS_ISENDRECV, an MPI-4 library) MPI_Isendrecv on
! one side against MPI_Irecv + MPI_Send on the other, and the flavor of an allocated window.
! Built three ways:
! -DBINDING_MPIFH (include 'mpif.h'), default (use mpi), -DBINDING_F08 (use mpi_f08).
! Prints "result" lines that must not change under the preload.
#if defined(BINDING_F08)
#define HANDLE(t) type(t)
#define STATUS_ARRAY(n) type(MPI_Status) :: st(n)
#define SOURCE_OF(k) st(k)%MPI_SOURCE
#define ERROR_OF(k) st(k)%MPI_ERROR
#define STATUS_K(k) st(k)
#define TAG_OF(k) st(k)%MPI_TAG
#define BASEPTR type(c_ptr)
#define AS_CPTR(p) p
#else
#define HANDLE(t) integer
#define STATUS_ARRAY(n) integer :: st(MPI_STATUS_SIZE, n)
#define SOURCE_OF(k) st(MPI_SOURCE, k)
#define ERROR_OF(k) st(MPI_ERROR, k)
#define STATUS_K(k) st(:, k)
#define TAG_OF(k) st(MPI_TAG, k)
#define BASEPTR integer(kind=MPI_ADDRESS_KIND)
#define AS_CPTR(p) transfer(p, c_null_ptr)
#endif
program fortran_parts
  use, intrinsic :: iso_c_binding
#include "use_binding.inc"
  integer, parameter :: n = 1024, blk = 4, rounds = 300
  integer, target :: winbuf(n)
  integer :: fetched(16), me, np, ierr, i, k, peer, flag_count, err_changed
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp, flavor
  integer(kind=8) :: total
  HANDLE(MPI_Win) :: win
  HANDLE(MPI_Info) :: info
  HANDLE(MPI_Request) :: reqs(2)
  HANDLE(MPI_Message) :: msg
  STATUS_ARRAY(2)
  BASEPTR :: sptr, rptr
  integer, pointer :: sendv(:), recvv(:)
  integer :: sendbuf(8), recvbuf(8), inbuf(8), sect(16), rsect(16)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! ---- the get cache: the same 300 reads of a neighbour's window
  do i = 1, n
    winbuf(i) = me * 100000 + i
  end do
  winsize = n * 4
  call MPI_Win_create(winbuf, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_set_name(win, 'fwin', ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  peer = mod(me + 1, np)
  total = 0
  call MPI_Win_lock_all(0, win, ierr)
  do k = 1, rounds
    disp = mod(k, 10) * 16
    call MPI_Get(fetched, 16, MPI_INTEGER, peer, disp, 16, MPI_INTEGER, win, ierr)
    call MPI_Win_flush(peer, win, ierr)
    total = total + sum(int(fetched, 8)) * k
  end do
  call MPI_Win_unlock_all(win, ierr)
  call MPI_Win_free(win, ierr)
  write (*, '(a,i0,a,i0)') 'result get rank=', me, ' sum=', total

  ! ---- the RMA info keys: a window cached by its info (clampi_mode), 50 reads
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'clampi_mode', 'always_cache', ierr)
  call MPI_Win_create(winbuf, winsize, 4, info, MPI_COMM_WORLD, win, ierr)
  call MPI_Info_free(info, ierr)
  call MPI_Win_set_name(win, 'finfo', ierr)
  total = 0
  call MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win, ierr)
  do k = 1, 50
    disp = mod(k, 5) * 16
    call MPI_Get(fetched, 16, MPI_INTEGER, peer, disp, 16, MPI_INTEGER, win, ierr)
    call MPI_Win_flush(peer, win, ierr)
    total = total + sum(int(fetched, 8)) * k
  end do
  call MPI_Win_unlock(peer, win, ierr)
  call MPI_Win_free(win, ierr)
  write (*, '(a,i0,a,i0)') 'result info rank=', me, ' sum=', total

  ! ---- a window the program allocates says so in MPI_WIN_CREATE_FLAVOR (with
  ! CLAMPI_BACKEND=ucx the preload makes it with MPI_Win_create over UCX's memory)
  call MPI_Win_allocate(int(64, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, sptr, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, flavor, flag, ierr)
  write (*, '(a,i0,a,i0,a,l1)') 'result flavor rank=', me, ' flavor=', flavor, ' flag=', flag
  call MPI_Win_free(win, ierr)

  ! ---- the shared heap: MPI_Alloc_mem buffers, MPI_Alltoall, MPI_Allgather in place
  call MPI_Alloc_mem(int(blk * np * 4, MPI_ADDRESS_KIND), MPI_INFO_NULL, sptr, ierr)
  call MPI_Alloc_mem(int(blk * np * 4, MPI_ADDRESS_KIND), MPI_INFO_NULL, rptr, ierr)
  call c_f_pointer(AS_CPTR(sptr), sendv, [blk * np])
  call c_f_pointer(AS_CPTR(rptr), recvv, [blk * np])
  total = 0
  do k = 1, 5
    do i = 1, blk * np
      sendv(i) = me * 1000 + i * 7 + k
    end do
    call MPI_Alltoall(sendv, blk, MPI_INTEGER, recvv, blk, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    total = total + sum(int(recvv, 8) * [(i, i = 1, blk * np)])
    recvv(me * blk + 1:me * blk + blk) = me + k
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvv, blk, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    total = total + sum(int(recvv, 8) * [(i, i = 1, blk * np)])
  end do
  call MPI_Free_mem(sendv, ierr)
  call MPI_Free_mem(recvv, ierr)
  write (*, '(a,i0,a,i0)') 'result coll rank=', me, ' sum=', total

  ! ---- point-to-point: a ring with requests and statuses, blocking calls, probes; a matched
  ! probe and its receive (message handles), whose statuses keep MPI_ERROR (not theirs to set)
  total = 0
  flag_count = 0
  err_changed = 0
  do k = 1, 50
    sendbuf = [(me * 10 + i + k, i = 1, 8)]
    call MPI_Irecv(recvbuf, 8, MPI_INTEGER, MPI_ANY_SOURCE, k, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(sendbuf, 8, MPI_INTEGER, peer, k, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, st, ierr)
    total = total + sum(int(recvbuf, 8)) + SOURCE_OF(1) * 7 + TAG_OF(1)
    call MPI_Send(sendbuf, 8, MPI_INTEGER, peer, 1000 + k, MPI_COMM_WORLD, ierr)
    call MPI_Iprobe(MPI_ANY_SOURCE, 1000 + k, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
    if (flag) flag_count = flag_count + 1
    call MPI_Recv(inbuf, 8, MPI_INTEGER, mod(me - 1 + np, np), 1000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    total = total + sum(int(inbuf, 8))
    call MPI_Sendrecv(sendbuf, 8, MPI_INTEGER, peer, 2000 + k, inbuf, 8, MPI_INTEGER, MPI_ANY_SOURCE, &
                      2000 + k, MPI_COMM_WORLD, STATUS_K(1), ierr)
    total = total + sum(int(inbuf, 8)) + TAG_OF(1)
    call MPI_Irecv(inbuf, 8, MPI_INTEGER, MPI_ANY_SOURCE, 3000 + k, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Send(sendbuf, 8, MPI_INTEGER, peer, 3000 + k, MPI_COMM_WORLD, ierr)
    call MPI_Wait(reqs(1), STATUS_K(2), ierr)
    total = total + sum(int(inbuf, 8)) + SOURCE_OF(2)
    call MPI_Send(sendbuf, 8, MPI_INTEGER, peer, 4000 + k, MPI_COMM_WORLD, ierr)
    ERROR_OF(1) = MPI_ERR_DIMS
    ERROR_OF(2) = MPI_ERR_OTHER
    call MPI_Mprobe(MPI_ANY_SOURCE, 4000 + k, MPI_COMM_WORLD, msg, STATUS_K(1), ierr)
    call MPI_Mrecv(inbuf, 8, MPI_INTEGER, msg, STATUS_K(2), ierr)
    if (ERROR_OF(1) /= MPI_ERR_DIMS .or. ERROR_OF(2) /= MPI_ERR_OTHER) err_changed = err_changed + 1
    total = total + sum(int(inbuf, 8)) + SOURCE_OF(1) + TAG_OF(2)
  end do
  write (*, '(a,i0,a,i0,a,l1,a,i0)') 'result p2p rank=', me, ' sum=', total, ' ierr_ok=', ierr == MPI_SUCCESS, &
    ' status_error_changed=', err_changed

  ! ---- strided sections in blocking calls: every other element out, into every other in
  sect = [(me * 100 + i, i = 1, 16)]
  rsect = -1
  call MPI_Sendrecv(sect(2:16:2), 8, MPI_INTEGER, peer, 5000, rsect(1:16:2), 8, MPI_INTEGER, &
                    mod(me - 1 + np, np), 5000, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Send(sect(1:16:2), 8, MPI_INTEGER, peer, 5001, MPI_COMM_WORLD, ierr)
  call MPI_Recv(rsect(2:16:2), 8, MPI_INTEGER, mod(me - 1 + np, np), 5001, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  write (*, '(a,i0,a,16(1x,i0))') 'result sections rank=', me, ' got', rsect

#ifdef HAS_ISENDRECV
  ! ---- MPI_Isendrecv (MPI-4) against the int-count calls on the other side, roles swapped
  ! every round (2 ranks): 20 more messages each rank receives
  total = 0
  do k = 1, 20
    sendbuf = [(me * 10 + i + k, i = 1, 8)]
    if (mod(me + k, 2) == 0) then
      call MPI_Isendrecv(sendbuf, 8, MPI_INTEGER, peer, 6000 + k, inbuf, 8, MPI_INTEGER, mod(me - 1 + np, np), &
                         7000 + k, MPI_COMM_WORLD, reqs(1), ierr)
      call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Irecv(inbuf, 8, MPI_INTEGER, mod(me - 1 + np, np), 6000 + k, MPI_COMM_WORLD, reqs(1), ierr)
      call MPI_Send(sendbuf, 8, MPI_INTEGER, peer, 7000 + k, MPI_COMM_WORLD, ierr)
      call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
    end if
    total = total + sum(int(inbuf, 8))
  end do
  write (*, '(a,i0,a,i0)') 'result isendrecv rank=', me, ' sum=', total
#endif
  call MPI_Finalize(ierr)
end program fortran_parts
