# CLRT_SANITIZE=ON: every target built with ASan and UBSan; UBSan findings abort
# the test that hit them so that CI sees them.
if(CLRT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
