# CLRT_PROGRAM_LOG: clrt-bench peak on the host's device writes one build
# line per program and one launch line per kernel and work-group shape, in
# the tab-separated form scripts/nvptx.sh reads, each line once.
#   cmake -DBENCH=<clrt-bench> -DLOG=<file> -P check_program_log.cmake
file(REMOVE ${LOG})
set(ENV{CLRT_PROGRAM_LOG} ${LOG})
execute_process(COMMAND ${BENCH} peak --kib 64 --items 1024 --launches 5 --repeats 1 --min-ms 1
                        --widths 1,2
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clrt-bench peak exited ${rc}\n${out}${err}")
endif()
file(STRINGS ${LOG} lines)
set(tab "\t")
foreach(want IN ITEMS "^build${tab}[^${tab}]+${tab}peak${tab}-cl-std=CL1.2[^${tab}]* -DVT=float -DVW=1$"
                      "^build${tab}[^${tab}]+${tab}peak${tab}-cl-std=CL1.2[^${tab}]* -DVT=float2 -DVW=2$"
                      "^launch${tab}[^${tab}]+${tab}peak${tab}[^${tab}]* -DVW=1${tab}peak_fma${tab}[0-9]+${tab}0$"
                      "^launch${tab}[^${tab}]+${tab}peak${tab}[^${tab}]* -DVW=2${tab}peak_triad${tab}[0-9]+${tab}0$")
  set(found OFF)
  foreach(line IN LISTS lines)
    if(line MATCHES "${want}")
      set(found ON)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "no line matching '${want}' in ${LOG}:\n${lines}")
  endif()
endforeach()
list(LENGTH lines n)
list(REMOVE_DUPLICATES lines)
list(LENGTH lines distinct)
if(NOT n EQUAL distinct)
  message(FATAL_ERROR "${LOG} repeats lines (${n} lines, ${distinct} distinct)")
endif()
