# clrt_warnings(target): the project's warning set; -Werror with CLRT_WERROR.
function(clrt_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                           -Wstrict-prototypes -Wmissing-prototypes)
  if(CLRT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
