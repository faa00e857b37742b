# clrt-smi --tune on the test device (CLRT_TEST_DEVICE, else cpu). CLBlast's
# part (--tune-only clblast) with its tuners at a tiny search (3 settings
# each at m=n=k=128, two timed sizes, one round), in this test's own cache
# folder: it says what it measured and stores the tuners' best; then
# clrt-smi lists the device as "tuned here" with exactly those parameters,
# and as "built-in" under CLRT_CLBLAST_TUNED=0. clrt's own kernels
# (--tune-only kernels) on LeNet's step: a line per record and the count.
# And the errors: no such device, no tuners on PATH, bad values, a bad
# model list, --tune-* without --tune.
#   cmake -DSMI=<clrt-smi> -DWORK=<folder> -P check_tune.cmake

find_program(TUNER clblast_tuner_xgemm)
if(NOT TUNER) # configured with the tuners (tests/tune/CMakeLists.txt), run without
  message(FATAL_ERROR "clblast_tuner_xgemm is not on PATH (Debian's clblast-utils; "
                      "scripts/setup.sh installs it)")
endif()
set(device cpu)
if(NOT "$ENV{CLRT_TEST_DEVICE}" STREQUAL "")
  set(device "$ENV{CLRT_TEST_DEVICE}")
endif()

function(run_smi out_var rc_var)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

function(expect_match what regex text)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "clrt-smi --tune: ${what}: no match for '${regex}' in\n${text}")
  endif()
endfunction()

function(expect_rc what want got text)
  if(NOT got EQUAL want)
    message(FATAL_ERROR "clrt-smi --tune: ${what}: exit status ${got}, not ${want}\n${text}")
  endif()
endfunction()

# A fresh start: no records of an earlier run, no tuners' files.
file(GLOB old_records "$ENV{CLRT_CACHE_DIR}/*.tune")
if(old_records)
  file(REMOVE ${old_records})
endif()
file(REMOVE_RECURSE ${WORK})

run_smi(out rc ${SMI} --tune ${device} --tune-only clblast --tune-settings 3 --tune-size 128
        --tune-sizes 64,128 --tune-rounds 1 --tune-dir ${WORK})
expect_rc("a tiny tune" 0 "${rc}" "${out}")
expect_match("the tuners' search" "clblast_tuner_xgemm: [0-9]+ settings in its phases at m=n=k=128"
             "${out}")
expect_match("what it measured, per size"
             "\n +64 +[0-9.]+ +[0-9.]+ +[0-9.]+x\n +128 +[0-9.]+ +[0-9.]+ +[0-9.]+x\n" "${out}")
expect_match("the geometric mean" "tuned/built-in over these sizes \\(geometric mean\\): [0-9.]+x"
             "${out}")
expect_match("the result" "${device}: CLBLAST TUNED: tuned here\n" "${out}")
file(GLOB results "${WORK}/clblast_xgemm*_32.json")
if(NOT results)
  message(FATAL_ERROR "no tuner's result files in ${WORK}\n${out}")
endif()

# What was stored is what the tuners found, and what clrt-smi lists.
run_smi(json rc ${SMI} --json)
expect_rc("--json after the tune" 0 "${rc}" "${json}")
string(JSON n LENGTH "${json}" devices)
math(EXPR last "${n} - 1")
set(at -1)
foreach(i RANGE ${last})
  string(JSON name GET "${json}" devices ${i} name)
  if(name STREQUAL device OR (device STREQUAL "cpu:0" AND name STREQUAL "cpu"))
    set(at ${i})
  endif()
endforeach()
if(at LESS 0)
  message(FATAL_ERROR "${device} is not in clrt-smi --json:\n${json}")
endif()
string(JSON tuning GET "${json}" devices ${at} clblast_tuning)
expect_match("--json: tuned here" "^tuned here$" "${tuning}")
set(stored 0)
foreach(kernel Xgemm XgemmDirect)
  if(out MATCHES "clrt-smi: ${kernel}: best of [0-9]+ settings that ran[^\n]*\nclrt-smi: ${kernel}: ([^\n]+)\n")
    set(found "${CMAKE_MATCH_1}")
    string(JSON params GET "${json}" devices ${at} clblast_parameters ${kernel})
    if(NOT params STREQUAL found)
      message(FATAL_ERROR "stored ${kernel} parameters '${params}', found '${found}'\n${out}")
    endif()
    math(EXPR stored "${stored} + 1")
  endif()
endforeach()
if(stored EQUAL 0)
  message(FATAL_ERROR "no kernel's parameters were printed as found\n${out}")
endif()
run_smi(table rc ${SMI})
expect_match("the table's column" "\n${device} [^\n]+ tuned here\n" "${table}")
run_smi(json rc ${CMAKE_COMMAND} -E env CLRT_CLBLAST_TUNED=0 ${SMI} --json)
string(JSON tuning GET "${json}" devices ${at} clblast_tuning)
expect_match("CLRT_CLBLAST_TUNED=0: built-in" "^built-in$" "${tuning}")

# clrt's own kernels: LeNet's step at batch 4, one round. A line per
# record (each convolution pass with a choice, the direct kernel's item
# block where it runs), the default and the stored choice with their
# times, and the count.
run_smi(out rc ${SMI} --tune ${device} --tune-only kernels --tune-models lenet:4 --tune-rounds 1)
expect_rc("the kernels' tune" 0 "${rc}" "${out}")
expect_match("a pass's algorithm"
             "\nconv_algo +lenet:4 forward x \\[4, 1, 28, 28\\] w \\[6, 1, 5, 5\\] s1 p2 +(vec|im2col) +[0-9.]+ ms +(vec|im2col) +[0-9.]+ ms"
             "${out}")
expect_match("the count" "clrt-smi: [1-9][0-9]* records stored for " "${out}")
if(out MATCHES "clrt-smi: tuning CLBlast")
  message(FATAL_ERROR "--tune-only kernels tuned CLBlast too\n${out}")
endif()
run_smi(out rc ${SMI} --tune ${device} --tune-only kernels --tune-models lenet)
expect_rc("a model without its batch" 1 "${rc}" "${out}")
expect_match("the entry, named" "'lenet' is not name:batch" "${out}")
run_smi(out rc ${SMI} --tune ${device} --tune-only kernels --tune-models vgg:4)
expect_rc("an unknown model" 1 "${rc}" "${out}")
expect_match("the model, named" "unknown model 'vgg'" "${out}")
run_smi(out rc ${SMI} --tune ${device} --tune-only gemm)
expect_rc("a bad --tune-only" 2 "${rc}" "${out}")
expect_match("the bad value, named" "bad value for option '--tune-only'" "${out}")

# Errors.
run_smi(out rc ${SMI} --tune gpu:99 --tune-dir ${WORK})
expect_rc("no such device" 1 "${rc}" "${out}")
expect_match("no such device, named" "no device gpu:99" "${out}")
run_smi(out rc ${CMAKE_COMMAND} -E env PATH=/nonexistent-clrt-path ${SMI} --tune ${device}
        --tune-dir ${WORK})
expect_rc("no tuners" 1 "${rc}" "${out}")
expect_match("no tuners, named with their package"
             "clblast_tuner_xgemm is not on PATH: [^\n]*clblast-utils" "${out}")
run_smi(out rc ${SMI} --tune ${device} --tune-size 100)
expect_rc("a size that is not a multiple of 128" 2 "${rc}" "${out}")
expect_match("the bad value, named" "bad value for option '--tune-size'" "${out}")
run_smi(out rc ${SMI} --tune-settings 5)
expect_rc("--tune-* without --tune" 2 "${rc}" "${out}")
expect_match("--tune-* without --tune, said" "need --tune" "${out}")
run_smi(out rc ${SMI} --tune ${device} --json)
expect_rc("--tune with --json" 2 "${rc}" "${out}")
