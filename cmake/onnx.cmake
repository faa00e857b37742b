# The ONNX importer's reader (runtime/onnx/): C code generated at build
# time by protoc-c from the onnx.proto Debian's libonnx-dev ships, linked
# with libprotobuf-c (libprotobuf-c-dev, protobuf-c-compiler). No protobuf
# is decoded by hand. CLRT_ONNX_PROTO names another onnx.proto.
find_program(PROTOC_C protoc-c REQUIRED)
pkg_check_modules(PROTOBUF_C REQUIRED IMPORTED_TARGET libprotobuf-c)
set(CLRT_ONNX_PROTO /usr/include/onnx/onnx.proto CACHE FILEPATH "The onnx.proto the reader is generated from")
if(NOT EXISTS ${CLRT_ONNX_PROTO})
  message(FATAL_ERROR "onnx.proto not found at ${CLRT_ONNX_PROTO}: install libonnx-dev")
endif()
get_filename_component(onnx_proto_dir ${CLRT_ONNX_PROTO} DIRECTORY)
set(ONNX_GEN ${CMAKE_CURRENT_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${ONNX_GEN}/onnx.pb-c.c ${ONNX_GEN}/onnx.pb-c.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${ONNX_GEN}
  COMMAND ${PROTOC_C} --c_out=${ONNX_GEN} --proto_path=${onnx_proto_dir} ${CLRT_ONNX_PROTO}
  DEPENDS ${CLRT_ONNX_PROTO}
  COMMENT "Generating the ONNX reader with protoc-c" VERBATIM)
# Generated code is not ours to warn about: its own object library.
add_library(clrt_onnx_proto OBJECT ${ONNX_GEN}/onnx.pb-c.c)
set_target_properties(clrt_onnx_proto PROPERTIES POSITION_INDEPENDENT_CODE ON
                                                 C_VISIBILITY_PRESET hidden)
target_include_directories(clrt_onnx_proto PRIVATE ${ONNX_GEN})
target_link_libraries(clrt_onnx_proto PRIVATE PkgConfig::PROTOBUF_C)
