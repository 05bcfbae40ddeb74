! A plain Fortran program (use mpi_f08, no clampi calls) that caches an inner communicator in
! a communicator attribute, as libraries do: the copy callback duplicates the inner
! communicator, names it and uses it, the delete callback frees it, so MPI calls run inside
! callbacks the MPI library makes while clampi is inside MPI_Comm_dup / MPI_Comm_free. Around
! that, a periodic 1-D heat stencil whose halos alternate between MPI_Sendrecv and MPI_Get
! between fences, a residual by MPI_Allreduce and a transpose by MPI_Alltoall.
! Prints "result" lines that must not change under the preload (tests/pmpi/run_preload.sh).
module inner_comm_callbacks
  use mpi_f08
  implicit none
contains
  subroutine copy_inner(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    type(MPI_Comm) :: inner, copy
    integer :: one, total
    inner%MPI_VAL = int(attribute_val_in)
    call MPI_Comm_dup(inner, copy, ierror)
    if (ierror /= MPI_SUCCESS) return
    call MPI_Comm_set_name(copy, 'finner_copy')
    one = 1
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, copy, ierror)
    attribute_val_out = int(copy%MPI_VAL, MPI_ADDRESS_KIND)
    flag = .true.
  end subroutine

  subroutine delete_inner(comm, keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    type(MPI_Comm) :: inner
    inner%MPI_VAL = int(attribute_val)
    call MPI_Comm_free(inner, ierror)
  end subroutine
end module

program fortran_inner_comm
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use inner_comm_callbacks
  implicit none
  integer, parameter :: n = 4096, steps = 200
  integer :: rank, nprocs, left, right, i, s, j, keyval, token, got
  real(8), allocatable :: u(:), v(:), sendt(:), recvt(:)
  real(8), pointer :: edges(:)
  real(8) :: res, gres, local_sum, gsum
  type(MPI_Win) :: win
  type(MPI_Comm) :: work, work2, inner, inner_copy
  integer(kind=MPI_ADDRESS_KIND) :: val, winsize
  logical :: found
  type(c_ptr) :: base
  integer :: nbad

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  allocate(u(0:n+1), v(0:n+1), sendt(nprocs*8), recvt(nprocs*8))
  do i = 1, n
    u(i) = real(rank*n + i, 8)
  end do
  nbad = 0

  ! work carries the inner communicator; duplicating work runs copy_inner
  call MPI_Comm_create_keyval(copy_inner, delete_inner, keyval, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, work)
  call MPI_Comm_dup(work, inner)
  call MPI_Comm_set_attr(work, keyval, int(inner%MPI_VAL, MPI_ADDRESS_KIND))
  call MPI_Comm_dup(work, work2)
  call MPI_Comm_set_name(work2, 'fwork2')
  call MPI_Comm_get_attr(work2, keyval, val, found)
  if (.not. found) nbad = nbad + 1
  if (found) then
    inner_copy%MPI_VAL = int(val)
    token = rank
    call MPI_Sendrecv(token, 1, MPI_INTEGER, right, 7, got, 1, MPI_INTEGER, left, 7, inner_copy, MPI_STATUS_IGNORE)
    if (got /= left) nbad = nbad + 1
  end if

  ! each rank's two edge values, read by its neighbours with MPI_Get
  winsize = 2 * 8
  call MPI_Win_allocate(winsize, 8, MPI_INFO_NULL, work2, base, win)
  call c_f_pointer(base, edges, [2])

  do s = 1, steps
    if (mod(s, 2) == 0) then
      call MPI_Sendrecv(u(n), 1, MPI_DOUBLE_PRECISION, right, 1, u(0), 1, MPI_DOUBLE_PRECISION, left, 1, &
                        work2, MPI_STATUS_IGNORE)
      call MPI_Sendrecv(u(1), 1, MPI_DOUBLE_PRECISION, left, 2, u(n+1), 1, MPI_DOUBLE_PRECISION, right, 2, &
                        work2, MPI_STATUS_IGNORE)
    else
      call MPI_Win_fence(0, win)
      edges(1) = u(1)
      edges(2) = u(n)
      call MPI_Win_fence(0, win)
      call MPI_Get(u(0), 1, MPI_DOUBLE_PRECISION, left, 1_MPI_ADDRESS_KIND, 1, MPI_DOUBLE_PRECISION, win)
      call MPI_Get(u(n+1), 1, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, 1, MPI_DOUBLE_PRECISION, win)
      call MPI_Win_fence(0, win)
    end if
    res = 0
    do i = 1, n
      v(i) = u(i) + 0.25d0 * (u(i-1) - 2*u(i) + u(i+1))
      res = res + abs(v(i) - u(i))
    end do
    u(1:n) = v(1:n)
    call MPI_Allreduce(res, gres, 1, MPI_DOUBLE_PRECISION, MPI_SUM, work2)
  end do

  ! block j of rank r holds r*1000+j
  do j = 0, nprocs-1
    sendt(j*8+1:j*8+8) = real(rank*1000 + j, 8)
  end do
  call MPI_Alltoall(sendt, 8, MPI_DOUBLE_PRECISION, recvt, 8, MPI_DOUBLE_PRECISION, work)
  do j = 0, nprocs-1
    if (any(recvt(j*8+1:j*8+8) /= real(j*1000 + rank, 8))) nbad = nbad + 1
  end do

  local_sum = sum(u(1:n))
  call MPI_Allreduce(local_sum, gsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Win_free(win)
  call MPI_Comm_free(work2)
  call MPI_Comm_free(work)
  call MPI_Comm_free_keyval(keyval)
  call MPI_Allreduce(MPI_IN_PLACE, nbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    print '(a,es22.15)', 'result residual ', gres
    print '(a,es22.15)', 'result sum ', gsum
    print '(a,i0)', 'result errors ', nbad
  end if
  call MPI_Finalize()
end program
