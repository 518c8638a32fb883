# halo_warnings(target): -Wall -Wextra on a Halo target (core modules, gui, programs, tests),
# and -Werror with HALO_WERROR (CI). Third-party headers are SYSTEM includes, so they stay quiet.
function(halo_warnings target)
  # Aggregates are often initialised in part on purpose ({p.key}): no missing-initializer noise.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
  if(HALO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
