# Runs clrt-smi and checks what it prints.
#   cmake -DSMI=<clrt-smi> -DMODE=pocl|stub|none -P check_smi.cmake
# pocl: the host's drivers (a cpu row at least); stub: the stub's two GPUs
# then PoCL; none: no platform; nodevice: PoCL with POCL_DEVICES=bogus (no
# device): the friendly message and exit status 1, JSON with an "error".
# JSON is parsed with CMake's own parser, and also by python3 -m json.tool
# where python3 exists.

function(run_smi out_var rc_var)
  execute_process(COMMAND ${SMI} ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

# expect(what "condition as if() takes it"): fails the test unless it holds.
function(expect what cond)
  cmake_language(EVAL CODE "set(ok OFF)\nif(${cond})\n  set(ok ON)\nendif()")
  if(NOT ok)
    message(FATAL_ERROR "clrt-smi (${MODE}): ${what}\n--- output ---\n${out}")
  endif()
endfunction()

function(expect_match what regex text)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "clrt-smi (${MODE}): ${what}: no match for '${regex}' in\n${text}")
  endif()
endfunction()

# --help and a bad flag, the same in every mode.
run_smi(out rc --help)
expect("--help exits 0" "rc EQUAL 0")
expect_match("--help prints usage" "usage: clrt-smi" "${out}")
expect_match("--help documents the exit status" "Exit status: 0 .*1 when no OpenCL device" "${out}")
run_smi(out rc --bogus)
expect("a bad flag exits 2" "rc EQUAL 2")
expect_match("a bad flag is named" "unknown option '--bogus'" "${out}")
expect_match("a bad flag prints usage" "usage: clrt-smi" "${out}")

# The table.
set(no_device OFF)
if(MODE STREQUAL "none" OR MODE STREQUAL "nodevice")
  set(no_device ON)
endif()
run_smi(table rc)
set(out "${table}")
if(no_device)
  expect("no device: exit 1, so that scripts can tell" "rc EQUAL 1")
  expect_match("says there is no device" "no OpenCL device found" "${table}")
else()
  expect("exit 0" "rc EQUAL 0")
endif()
if(MODE STREQUAL "none")
  expect_match("names the driver to install" "pocl-opencl-icd" "${table}")
elseif(MODE STREQUAL "nodevice")
  expect_match("says what was asked" "Portable Computing Language.*CL_DEVICE_NOT_FOUND"
               "${table}")
  expect_match("names POCL_DEVICES" "POCL_DEVICES='bogus'" "${table}")
else()
  string(CONCAT header "DEVICE +MODEL +TYPE +PLATFORM +DRIVER +MEMORY +MAX ALLOC +CUS +MHZ "
                "+OPENCL C +FP64 +UNIFIED +GEMM +CLBLAST TUNED")
  expect_match("header" "${header}" "${table}")
  expect_match("a cpu row" "\ncpu +[^\n]+ CPU +Portable Computing Language" "${table}")
  expect_match("a GEMM path and CLBlast's tuning"
               "\ncpu [^\n]+(clblast|host-blas) +(device|architecture|defaults)\n" "${table}")
endif()
if(MODE STREQUAL "stub")
  string(CONCAT rows "^DEVICE[^\n]*\n"
         "gpu:0 +Stub GPU 0 +GPU +NVIDIA CUDA +535.104.05 +40.0 GiB +10.0 GiB +108 +1410 +1.2 "
         "+yes +no +clblast +architecture\n" # compute capability 8.0: CLBlast has SM8.0
         "gpu:1 +Stub GPU 1 +GPU [^\n]+ +clblast +defaults\n")            # 8.9: it has not
  expect_match("gpu:0 first, then gpu:1" "${rows}" "${table}")
endif()

# JSON.
run_smi(json rc --json)
set(out "${json}")
if(no_device)
  expect("--json with no device exits 1" "rc EQUAL 1")
else()
  expect("--json exits 0" "rc EQUAL 0")
endif()
string(JSON n ERROR_VARIABLE json_error LENGTH "${json}" devices)
expect("--json is valid JSON with a devices array (${json_error})" "NOT json_error")
find_program(PYTHON3 python3)
if(PYTHON3)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/smi-${MODE}.json "${json}")
  execute_process(COMMAND ${PYTHON3} -m json.tool ${CMAKE_CURRENT_BINARY_DIR}/smi-${MODE}.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE py_error)
  expect("python3 -m json.tool accepts --json (${py_error})" "rc EQUAL 0")
endif()
if(no_device)
  expect("no devices in JSON" "n EQUAL 0")
  string(JSON error GET "${json}" error)
  if(MODE STREQUAL "none")
    expect_match("JSON error" "no OpenCL platform" "${error}")
  else()
    expect_match("JSON error" "no OpenCL device found.*POCL_DEVICES" "${error}")
  endif()
else()
  expect("at least one device in JSON" "n GREATER 0")
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" devices ${i} name)
    string(JSON index GET "${json}" devices ${i} index)
    string(JSON gemm GET "${json}" devices ${i} gemm_path)
    string(JSON mem GET "${json}" devices ${i} global_mem_bytes)
    string(JSON tuning GET "${json}" devices ${i} clblast_tuning)
    expect("index ${i}" "index EQUAL i")
    expect_match("gemm path" "^(clblast|host-blas)$" "${gemm}")
    expect_match("CLBlast tuning" "^(device|architecture|defaults)$" "${tuning}")
    expect("memory of device ${i}" "mem GREATER 0")
  endforeach()
endif()
if(MODE STREQUAL "stub")
  expect("three devices (two stub GPUs and PoCL)" "n EQUAL 3")
  string(JSON name GET "${json}" devices 1 name)
  string(JSON model GET "${json}" devices 1 model)
  string(JSON mem GET "${json}" devices 1 global_mem_bytes)
  string(JSON fp64 GET "${json}" devices 1 fp64)
  string(JSON cpu GET "${json}" devices 2 name)
  expect("gpu:1 named" "name STREQUAL \"gpu:1\"")
  expect("gpu:1 model" "model STREQUAL \"Stub GPU 1\"")
  expect("gpu:1 memory" "mem EQUAL 25769803776")
  expect("gpu:1 fp64" "fp64 STREQUAL \"ON\"")
  string(JSON tuning GET "${json}" devices 0 clblast_tuning)
  expect("gpu:0 tuned for its architecture" "tuning STREQUAL \"architecture\"")
  expect("cpu last" "cpu STREQUAL \"cpu\"")
endif()
