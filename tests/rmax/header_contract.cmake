# rmax_header_contract: include/clampi/rmax.h must describe what src/rmax/rrequest.c does for
# the remote-completion calls on an MPI-backend window (flush in the call, request returned
# complete, MPI_SUCCESS), not an MPI_ERR_WIN that no code raises. cmake -DHEADER=... -P this
file(READ "${HEADER}" h)
string(REGEX MATCH "remote-completion[^.]*MPI_ERR_WIN" wrong "${h}")
if(wrong)
  message(FATAL_ERROR "rmax.h still says the remote-completion calls raise MPI_ERR_WIN: '${wrong}'")
endif()
string(FIND "${h}" "remote-completion calls" a)
string(FIND "${h}" "work on every window" b)
if(a EQUAL -1 OR b EQUAL -1)
  message(FATAL_ERROR "rmax.h does not say that the remote-completion calls work on every window")
endif()
