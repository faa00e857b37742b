# The Oclgrind pass must fail on a report: runs the deliberately faulty
# program through run_checked.cmake and expects a failure naming the fault.
#   cmake -DFAULTY=<oclgrind_faulty> -DFAULT=oob|race|api -DLOG_DIR=<dir>
#         -DRUN_CHECKED=<run_checked.cmake> -P check_harness.cmake
set(want_oob "Invalid write of size 4")
set(want_race "data race")
set(want_api "Oclgrind reported an OpenCL API error")
execute_process(COMMAND ${CMAKE_COMMAND} -DLOG_DIR=${LOG_DIR} -DNAME=faulty_${FAULT}
                        -P ${RUN_CHECKED} -- ${FAULTY} ${FAULT}
                OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE rc)
message("${o}${e}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the ${FAULT} fault passed the Oclgrind harness")
endif()
if(NOT "${o}${e}" MATCHES "faulty ${FAULT}: ran")
  message(FATAL_ERROR "the faulty program did not run to its end")
endif()
if(NOT "${o}${e}" MATCHES "${want_${FAULT}}")
  message(FATAL_ERROR "the failure does not name the ${FAULT} fault ('${want_${FAULT}}')")
endif()
