# oclgrind_run(NAME name COMMAND cmd...): runs cmd with Oclgrind's reports
# going to ${LOG_DIR}/<name>.log (OCLGRIND_LOG), echoes its output, and
# stops the script with an error if cmd failed or Oclgrind reported anything:
# a kernel's invalid access or data race (the log file is not empty) or an
# OpenCL API misuse (OCLGRIND_CHECK_API prints those to stderr, not the log).
# Sets `out` (stdout and stderr) in the caller's scope.
function(oclgrind_run)
  cmake_parse_arguments(R "" "NAME" "COMMAND" ${ARGN})
  set(log ${LOG_DIR}/${R_NAME}.log)
  file(MAKE_DIRECTORY ${LOG_DIR})
  file(REMOVE ${log})
  set(ENV{OCLGRIND_LOG} ${log})
  if(NOT DEFINED ENV{CLRT_TEST_SIZE})
    set(ENV{CLRT_TEST_SIZE} small)
  endif()
  if(NOT DEFINED ENV{CK_TIMEOUT_MULTIPLIER}) # Check's per-test limits, for a simulator
    set(ENV{CK_TIMEOUT_MULTIPLIER} 20)
  endif()
  execute_process(COMMAND ${R_COMMAND} OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE rc)
  message("${o}${e}")
  set(report "")
  if(EXISTS ${log})
    file(READ ${log} report)
  endif()
  if(NOT report STREQUAL "")
    message(FATAL_ERROR "${R_NAME}: Oclgrind reported (${log}):\n${report}")
  endif()
  if("${o}${e}" MATCHES "Oclgrind - OpenCL runtime error detected")
    message(FATAL_ERROR "${R_NAME}: Oclgrind reported an OpenCL API error (above)")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${R_NAME}: exit status ${rc}")
  endif()
  set(out "${o}${e}" PARENT_SCOPE)
endfunction()
