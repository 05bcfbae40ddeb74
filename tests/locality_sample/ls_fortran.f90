! Fortran allocations named as the program names them: three objects of one allocate
! statement (a derived type's component among them) told apart, a single one, and two of a
! statement continued over lines. Sizes differ so that each name is checked against its own
! allocation.
program ls_fortran
  implicit none
  type grid
    real(8), allocatable :: x(:)
  end type grid
  integer, parameter :: n = 16 * 512   ! 16 pages of doubles
  real(8), allocatable :: a(:), b(:), u(:, :), v(:), w(:)
  type(grid) :: dom
  integer :: i, ierr
  allocate(a(n), b(2 * n), dom%x(3 * n), stat=ierr)   ! @LIST
  if (ierr /= 0) stop 1
  ALLOCATE (u(512, 20))   ! @SINGLE
  allocate(v(5 * n), &     ! @CONT_FIRST
           w(6 * n))       ! @CONT_LAST
  v = 5
  w = 6
  do i = 1, n
    a(i) = i
  end do
  do i = 1, 2 * n
    b(i) = 2 * i
  end do
  do i = 1, 3 * n
    dom%x(i) = 3 * i
  end do
  u = 1
  print *, sum(a) + sum(b) + sum(dom%x) + sum(u) + sum(v) + sum(w)
end program ls_fortran
