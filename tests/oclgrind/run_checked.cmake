# Runs one program on Oclgrind and fails on any Oclgrind report:
#   cmake -DLOG_DIR=dir -DNAME=name -P run_checked.cmake -- program args...
include(${CMAKE_CURRENT_LIST_DIR}/oclgrind_run.cmake)
set(cmd "")
set(after_dashes FALSE)
foreach(i RANGE ${CMAKE_ARGC})
  if(after_dashes AND DEFINED CMAKE_ARGV${i})
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
oclgrind_run(NAME ${NAME} COMMAND ${cmd})
