# scripts/nvptx.sh on one fixture log (fixtures/*.log, kernels from
# fixtures/): EXPECT=fail wants exit status 1 and a FAIL line naming the
# fixture's fault (the log's "# expect:" line); EXPECT=pass wants exit
# status 0 and no FAIL line. SAVED: a table to put in OUT first, checked
# with --strict.
#   cmake -DSCRIPT=scripts/nvptx.sh -DLOG=... -DKERNELS=... -DOUT=... \
#         -DPTXAS=... -DEXPECT=pass|fail [-DSAVED=...] -P check_fixture.cmake
file(REMOVE_RECURSE ${OUT})
set(strict "")
if(SAVED)
  file(MAKE_DIRECTORY ${OUT})
  configure_file(${SAVED} ${OUT}/sm_90.tsv COPYONLY)
  set(strict --strict)
endif()
set(ENV{PTXAS} ${PTXAS})
execute_process(COMMAND bash ${SCRIPT} --log ${LOG} --kernel-dir ${KERNELS} --archs sm_90
                        --out ${OUT} --no-render ${strict}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(all "${out}${err}")
file(STRINGS ${LOG} wanted REGEX "^# expect: ")
string(REGEX REPLACE "^# expect: " "" wanted "${wanted}")
if(EXPECT STREQUAL "fail")
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "nvptx.sh exited ${rc}, not 1, on ${LOG}\n${all}")
  endif()
  if(NOT all MATCHES "nvptx: FAIL sm_90[^\n]*${wanted}")
    message(FATAL_ERROR "no FAIL line with '${wanted}' for ${LOG}\n${all}")
  endif()
else()
  if(NOT rc EQUAL 0 OR all MATCHES "FAIL")
    message(FATAL_ERROR "nvptx.sh exited ${rc} on ${LOG}, which should pass\n${all}")
  endif()
endif()
if(NOT EXISTS ${OUT}/sm_90.tsv OR NOT EXISTS ${OUT}/summary.json)
  message(FATAL_ERROR "nvptx.sh wrote no table to ${OUT}\n${all}")
endif()
message(STATUS "${all}")
