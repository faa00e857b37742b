# Two batches of LeNet training on Oclgrind against PoCL: clrt-cnn trains
# one epoch of 32 Fashion-MNIST images in batches of 16 from seed 1, then
# evaluates 16 test images (a LeNet step takes minutes on the simulator with
# its checks on), first on PoCL's CPU device (the reference), then on
# Oclgrind's gpu:0 with Oclgrind the only platform and its checks on. The
# printed loss, training accuracy and test accuracy must agree to 4 digits
# (a last-digit difference of 1 is allowed: the two devices sum in
# different orders, CLBlast and im2col there, OpenBLAS and direct kernels
# here, and a value near a rounding boundary may print either way).
#   cmake -DCNN=<clrt-cnn> -DVENDORS=<folder holding oclgrind.icd> -DLOG_DIR=<dir>
#         -P check_lenet.cmake
include(${CMAKE_CURRENT_LIST_DIR}/oclgrind_run.cmake)
set(args --limit 32 --test-limit 16 --batch-size 16 --epochs 1 --seed 1)
set(pattern "loss ([0-9.]+)  train acc ([0-9.]+)  test acc ([0-9.]+)")

# The three figures of an epoch line, as integers in units of 1e-4.
function(figures text var)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "no epoch line (${pattern}) in:\n${text}")
  endif()
  set(values "")
  foreach(i 1 2 3)
    string(REPLACE "." "" v "${CMAKE_MATCH_${i}}")
    math(EXPR v "${v}") # drops leading zeros
    list(APPEND values ${v})
  endforeach()
  set(${var} ${values} PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${CNN} ${args} --device cpu OUTPUT_VARIABLE o ERROR_VARIABLE e
                RESULT_VARIABLE rc)
message("PoCL (reference):\n${o}${e}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the PoCL reference run failed (exit ${rc})")
endif()
figures("${o}" want)

set(ENV{OCL_ICD_VENDORS} ${VENDORS})
oclgrind_run(NAME lenet_two_batches COMMAND ${CNN} ${args} --device gpu:0)
if(NOT out MATCHES "gpu:0 +epoch +1 ")
  message(FATAL_ERROR "no epoch line on gpu:0")
endif()
figures("${out}" got)
foreach(i 0 1 2)
  list(GET want ${i} w)
  list(GET got ${i} g)
  math(EXPR diff "${g} - ${w}")
  if(diff GREATER 1 OR diff LESS -1)
    message(FATAL_ERROR "Oclgrind's loss and accuracies (${got}) differ from PoCL's (${want}), "
                        "in units of 1e-4")
  endif()
endforeach()
message("Oclgrind matches PoCL: ${got} (loss, train acc, test acc in units of 1e-4)")
