# halo_core_module(): one static library per core/ module, with its allowed dependencies.
# The build enforces the dependency direction: a source that includes a module it did not
# declare (directly or through a declared one), or any Qt header, fails the configure step.
set(HALO_CORE_MODULES "" CACHE INTERNAL "")

function(halo_core_module name)
  cmake_parse_arguments(M "TORCH" "" "DEPS;LIBS" ${ARGN})
  file(GLOB _src CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  file(GLOB _hdr CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.h")
  set(_allowed ${name})
  foreach(d IN LISTS M_DEPS)
    list(APPEND _allowed ${d} ${HALO_MODULE_CLOSURE_${d}})
  endforeach()
  list(REMOVE_DUPLICATES _allowed)
  set(HALO_MODULE_CLOSURE_${name} ${_allowed} CACHE INTERNAL "")
  foreach(f IN LISTS _src _hdr)
    file(STRINGS "${f}" _incs REGEX "^#include [<\"]")
    foreach(line IN LISTS _incs)
      if(line MATCHES "^#include [<\"](Q[A-Za-z]+|Qt[A-Za-z]+/)")
        message(FATAL_ERROR "${f}: core/ must not include Qt (${line})")
      endif()
      if(line MATCHES "^#include \"([a-z]+)/")
        set(_m "${CMAKE_MATCH_1}")
        if(_m IN_LIST HALO_ALL_CORE_MODULES AND NOT _m IN_LIST _allowed)
          message(FATAL_ERROR "${f}: module '${name}' may not include '${_m}' "
                              "(allowed: ${_allowed}); fix the include or the module's DEPS")
        endif()
      endif()
    endforeach()
  endforeach()
  add_library(halo_${name} STATIC ${_src})
  add_library(halo::${name} ALIAS halo_${name})
  halo_warnings(halo_${name})
  target_include_directories(halo_${name} PUBLIC "${CMAKE_SOURCE_DIR}/core")
  foreach(d IN LISTS M_DEPS)
    target_link_libraries(halo_${name} PUBLIC halo::${d})
  endforeach()
  target_link_libraries(halo_${name} PUBLIC ${M_LIBS})
  if(M_TORCH)
    target_link_libraries(halo_${name} PUBLIC halo::torch)
    halo_use_torch_pch(halo_${name})
  else()
    set_target_properties(halo_${name} PROPERTIES UNITY_BUILD OFF)  # cheap to compile one by one
  endif()
  set(HALO_CORE_MODULES ${HALO_CORE_MODULES} ${name} CACHE INTERNAL "")
endfunction()

# Every target that includes LibTorch reuses one precompiled header of it.
function(halo_use_torch_pch target)
  if(HALO_PCH)
    target_precompile_headers(${target} REUSE_FROM halo_torch_pch)
  endif()
endfunction()

# Kernels whose bits are pinned (the same for any thread count and on every CPU kind) compile
# without contracting a * b + c into fused multiply-add: HALO_TARGET_CLONES' avx512f clone has
# FMA at 512 bits, so GCC would fuse there and not on AVX2 hosts, nor in narrower tails. Each
# file compiles on its own (no unity batch, no PCH), so the flag reaches it alone.
function(halo_pinned_bits)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS -ffp-contract=off SKIP_UNITY_BUILD_INCLUSION ON
                                                 SKIP_PRECOMPILE_HEADERS ON)
endfunction()
