# The GPU pose (gpu_pose.c) takes: under it, clrt-smi --json lists one
# device, gpu:0, an H100 on NVIDIA's platform with NVIDIA's limits and no
# unified memory, so clrt takes its GPU path there.
#   cmake -DSMI=<clrt-smi> -P check_pose.cmake   (OPENCL_LAYERS set by ctest)
execute_process(COMMAND ${SMI} --json OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clrt-smi --json exited ${rc}\n${out}${err}")
endif()
string(JSON n LENGTH "${out}" devices)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one device (PoCL's, posing), got ${n}\n${out}")
endif()
foreach(pair IN ITEMS "name=gpu:0" "model=NVIDIA H100 80GB HBM3" "type=GPU"
                      "platform=NVIDIA CUDA" "local_mem_bytes=49152" "compute_units=132"
                      "max_work_group_size=1024" "unified_memory=OFF" "gemm_path=clblast")
  string(REPLACE "=" ";" kv "${pair}")
  list(GET kv 0 key)
  list(GET kv 1 want)
  string(JSON got GET "${out}" devices 0 ${key})
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "devices[0].${key} is '${got}', not '${want}'\n${out}")
  endif()
endforeach()
