# clrt-cnn --distributed under mpirun: two ranks print what one process
# prints (the same loss and accuracies each epoch), and a rank that fails
# (a bad device, missing data) ends the whole job with its message instead
# of leaving the other rank waiting; ranks given different options all
# fail at once, naming the option (issue 25: other --epochs hung the job,
# another --lr or --save on one rank ran to exit 0).
#   cmake -DCNN=<clrt-cnn> -DMPIEXEC=<mpirun> -P check_cnn_mpi.cmake

set(small --epochs 2 --limit 2560 --test-limit 500 --seed 3)

function(run)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE r
                  TIMEOUT 300)
  set(out "${o}${e}" PARENT_SCOPE)
  set(rc "${r}" PARENT_SCOPE)
endfunction()

# Each epoch's line without its timings: "epoch N ... test acc X".
function(epoch_results var)
  string(REGEX MATCHALL "epoch +[0-9]+ +lr [0-9.]+ +loss [0-9.]+ +train acc [0-9.]+ +test acc [0-9.]+"
         lines "${out}")
  set(${var} "${lines}" PARENT_SCOPE)
endfunction()

function(expect what regex)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in\n${out}")
  endif()
endfunction()

run(${CNN} ${small})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clrt-cnn alone: exit ${rc}\n${out}")
endif()
epoch_results(alone)

run(${MPIEXEC} -np 2 ${CNN} --distributed ${small})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun -np 2 clrt-cnn --distributed: exit ${rc}\n${out}")
endif()
expect("rank 0 says it is distributed" "distributed: 2 processes")
epoch_results(two)
list(LENGTH two n)
if(NOT n EQUAL 2 OR NOT "${two}" STREQUAL "${alone}")
  message(FATAL_ERROR "two ranks printed\n${two}\nbut one process\n${alone}\n${out}")
endif()

run(${MPIEXEC} -np 1 ${CNN} --distributed ${small} : -np 1 ${CNN} --distributed --device gpu:7 ${small})
if(rc EQUAL 0 OR rc MATCHES "timeout")
  message(FATAL_ERROR "a bad device on rank 1: exit '${rc}'\n${out}")
endif()
expect("the bad device is named" "no device gpu:7")
expect("the failing rank is named" "rank 1 of 2 failed")

run(${MPIEXEC} -np 1 ${CNN} --distributed ${small} : -np 1 ${CNN} --distributed
    --data-dir /nonexistent-clrt-dir ${small})
if(rc EQUAL 0 OR rc MATCHES "timeout")
  message(FATAL_ERROR "missing data on rank 1: exit '${rc}'\n${out}")
endif()
expect("the missing file is named" "/nonexistent-clrt-dir/train-images-idx3-ubyte")
expect("the failing rank is named" "rank 1 of 2 failed")

# Options that differ between the ranks: every rank refuses at the start.
foreach(case "--epochs;3" "--lr;0.2" "--optimizer;adam" "--schedule;constant" "--save;${CMAKE_CURRENT_BINARY_DIR}/rank1.safetensors")
  list(GET case 0 flag)
  list(GET case 1 value)
  run(${MPIEXEC} -np 1 ${CNN} --distributed ${small} : -np 1 ${CNN} --distributed ${small}
      ${flag} ${value})
  if(rc EQUAL 0 OR rc MATCHES "timeout")
    message(FATAL_ERROR "${flag} ${value} on rank 1 only: exit '${rc}'\n${out}")
  endif()
  expect("${flag} named" "clrt-cnn --distributed: rank 1 of 2 has ${flag} ")
  if(out MATCHES "epoch +1 +lr")
    message(FATAL_ERROR "${flag} ${value} on rank 1 only: refused after training\n${out}")
  endif()
endforeach()
