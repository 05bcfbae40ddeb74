! Blocking calls that the preload serves only by handing the MPI carrier's queue over
! (CLAMPI_MATCH_CARRIER=mpi), called from Fortran while a peer's large send waits: rank 1
! posts a nonblocking receive of 4 MiB from rank 0 and enters the call; rank 0 sends the
! 4 MiB with a blocking MPI_Send first and joins the call after it. With the receive in
! clampi's queue (CLAMPI_MATCH_NATIVE_DEPTH=0), the call must hand it to MPI first, or rank 0
! never leaves its send and both wait for ever. The calls: MPI_Cart_sub,
! MPI_Dist_graph_create_adjacent, MPI_File_open, MPI_File_set_view (a character argument),
! MPI_File_close, MPI_Alltoallw. Then a duplicate named "fdisc" carries one message and is
! left by MPI_Comm_disconnect. Built three ways like fortran_parts.F90: -DBINDING_MPIFH,
! default (use mpi), -DBINDING_F08. Rank 1 prints one "result" line per call, which must not change under
! the preload. Two processes. An argument K runs call K alone.
#if defined(BINDING_F08)
#define HANDLE(t) type(t)
#define STATUS_VAR type(MPI_Status) :: st
#else
#define HANDLE(t) integer
#define STATUS_VAR integer :: st(MPI_STATUS_SIZE)
#endif
program fortran_handover
#include "use_binding.inc"
  integer, parameter :: big = 1048576
  integer, allocatable :: out(:), in(:)
  integer :: me, np, ierr, which, i, tag, dims(2), one(2), got(2), counts(2), displs(2), pid
  integer :: nbr(1), wts(1), first, last
  character(len=8) :: arg
  logical :: periods(2), remain(2)
  integer(kind=MPI_OFFSET_KIND) :: offset
  character(len=64) :: path
  HANDLE(MPI_Comm) :: cart, sub, graph, disc
  HANDLE(MPI_File) :: fh
  HANDLE(MPI_Request) :: req
  HANDLE(MPI_Datatype) :: types(2)
  STATUS_VAR

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (np /= 2) then
    if (me == 0) print '(a)', 'fortran_handover: needs 2 processes'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  allocate(out(big), in(big))
  out = [(me * 7 + mod(i, 1000), i = 1, big)]
  dims = [2, 1]
  periods = [.false., .false.]
  remain = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  pid = getpid()
  call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  write(path, '(a,i0,a)') 'clampi_fortran_handover_', pid, '.tmp'
  offset = me * 8
  nbr(1) = 1 - me
  wts(1) = 1
  one = [10 + me, 20 + me]
  counts = [1, 1]
  displs = [0, 4]
  types = [MPI_INTEGER, MPI_INTEGER]

  first = 1
  last = 6
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read(arg, *) first
    last = first
  end if
  if (first == 4 .or. first == 5) call MPI_File_open(MPI_COMM_WORLD, trim(path), &
      MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh, ierr)
  do which = first, last
    tag = 100 + which
    in = 0
    if (me == 1) call MPI_Irecv(in, big, MPI_INTEGER, 0, tag, MPI_COMM_WORLD, req, ierr)
    if (me == 0) call MPI_Send(out, big, MPI_INTEGER, 1, tag, MPI_COMM_WORLD, ierr)
    got = -1
    select case (which)
    case (1)
      call MPI_Cart_sub(cart, remain, sub, ierr)
      call MPI_Comm_size(sub, got(1), ierr)
      call MPI_Comm_free(sub, ierr)
    case (2)
      call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, nbr, wts, 1, nbr, wts, MPI_INFO_NULL, &
                                          .false., graph, ierr)
      call MPI_Comm_size(graph, got(1), ierr)
      call MPI_Comm_free(graph, ierr)
    case (3)
      call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                         MPI_INFO_NULL, fh, ierr)
      got(1) = ierr
    case (4)
      call MPI_File_set_view(fh, offset, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
      got(1) = ierr
    case (5)
      call MPI_File_close(fh, ierr)
      got(1) = ierr
    case (6)
      call MPI_Alltoallw(one, counts, displs, types, got, counts, displs, types, MPI_COMM_WORLD, ierr)
    end select
    if (me == 1) then
      call MPI_Wait(req, st, ierr)
      print '(a,i0,a,i0,a,i0,a,i0)', 'result case=', which, ' got=', got(1), ',', got(2), ' sum=', sum(int(in, 8))
    end if
  end do

  if (first == 4 .and. last == 4) call MPI_File_close(fh, ierr)
  call MPI_Comm_free(cart, ierr)

  ! A duplicate named "fdisc", one message on it, left by MPI_Comm_disconnect: clampi's stats
  ! line for it is recorded there, as at MPI_Comm_free.
  call MPI_Comm_dup(MPI_COMM_WORLD, disc, ierr)
  call MPI_Comm_set_name(disc, 'fdisc', ierr)
  got(1) = -1
  call MPI_Irecv(got, 1, MPI_INTEGER, 1 - me, 9, disc, req, ierr)
  call MPI_Send(one, 1, MPI_INTEGER, 1 - me, 9, disc, ierr)
  call MPI_Wait(req, st, ierr)
  call MPI_Comm_disconnect(disc, ierr)
  print '(a,i0,a,i0,a,l1)', 'result disconnect rank=', me, ' got=', got(1), ' null=', disc == MPI_COMM_NULL
  call MPI_Finalize(ierr)
end program fortran_handover
