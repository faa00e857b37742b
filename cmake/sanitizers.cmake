# CLRT_SANITIZE=ON: every target built with ASan and UBSan; UBSan findings abort
# the test that hit them so that CI sees them.
if(CLRT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
# CLRT_TSAN=ON: every target built with ThreadSanitizer, for the threading
# tests (label "threads"). The OpenCL drivers and the BLAS are not
# instrumented; tests/tsan.supp names what they do out of its sight.
if(CLRT_TSAN)
  if(CLRT_SANITIZE)
    message(FATAL_ERROR "CLRT_TSAN and CLRT_SANITIZE cannot be combined: use two build trees")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
