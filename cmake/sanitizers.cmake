# CLRT_SANITIZE=ON: every target built with ASan and UBSan; UBSan findings abort
# the test that hit them so that CI sees them.
if(CLRT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
# CLRT_TSAN=ON: every target built with ThreadSanitizer, for the threading
# tests (label "threads"). The OpenCL drivers and the BLAS are not
# instrumented, so it sees clrt's own memory only and needs no
# suppressions; what a driver does with a kernel's arguments the test
# checks in the values (README: the threading pass).
if(CLRT_TSAN)
  if(CLRT_SANITIZE)
    message(FATAL_ERROR "CLRT_TSAN and CLRT_SANITIZE cannot be combined: use two build trees")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
