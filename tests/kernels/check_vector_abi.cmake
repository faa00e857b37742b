# No fixed-width vload8/16 or vstore8/16 in clkernels/ (cmake -P, KERNELS
# the folder). On PoCL they are calls into the driver's library, and a CPU
# target narrower than the vector rejects passing it by value under -Werror
# ("AVX vector argument of type 'float16' without 'avx512f' enabled changes
# the ABI": every conv_vec, pool and reduce program failed to build on an
# AMD EPYC with AVX2 after being written on a Xeon with AVX-512). The
# tests build for this machine's target only, so this finds such a call on
# any machine. Kernels use LOAD8/LOAD16/STORE8/STORE16 (clkernels/common.cl)
# or a width the host took from the device (VW, PV).
file(GLOB sources ${KERNELS}/*.cl)
if(NOT sources)
  message(FATAL_ERROR "no kernels in '${KERNELS}'")
endif()
set(found "")
foreach(src IN LISTS sources)
  file(STRINGS ${src} lines REGEX "v(load|store)(8|16)[ ]*([(]|$)")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    get_filename_component(name ${src} NAME)
    string(APPEND found "  ${name}: ${line}\n")
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "fixed-width vector loads or stores (use LOAD8/LOAD16/STORE8/STORE16 "
                      "from clkernels/common.cl):\n${found}")
endif()
list(LENGTH sources n)
message("kernels_vector_abi: ${n} kernel files, no vload8/16 or vstore8/16")
