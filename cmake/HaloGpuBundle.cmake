# The `gpu` preset (packaging/gpu-check.sh on the GPU machine): take the headers and libraries
# the machine lacks from the bundle `make gpu-bundle` unpacks (HALO_GPU_BUNDLE/root/usr), ahead
# of the machine's own, and build the CUDA probe of packaging/gpu/probe. Included as
# CMAKE_PROJECT_halo_INCLUDE, so the rest of the build is the headless preset unchanged.
set(HALO_GPU_BUNDLE "${CMAKE_SOURCE_DIR}/.gpu-bundle" CACHE PATH "Folder made by `make gpu-bundle`")
set(_halo_bundle "${HALO_GPU_BUNDLE}/root/usr")
set(_halo_bundle_lib "${_halo_bundle}/lib/x86_64-linux-gnu")
if(NOT EXISTS "${_halo_bundle}/include/nlohmann/json.hpp")
  message(FATAL_ERROR "No GPU bundle in ${HALO_GPU_BUNDLE}: run `make gpu-bundle` (on the Debian machine) first")
endif()
message(STATUS "GPU bundle: ${HALO_GPU_BUNDLE}")
# Packages (CMake configs under lib/<arch>/cmake and share/cmake), headers and libraries;
# CMAKE_LIBRARY_PATH also where the machine's CMake does not search lib/<arch> itself.
list(PREPEND CMAKE_PREFIX_PATH "${_halo_bundle}" "${_halo_bundle_lib}/cmake")
list(PREPEND CMAKE_INCLUDE_PATH "${_halo_bundle}/include")
list(PREPEND CMAKE_LIBRARY_PATH "${_halo_bundle_lib}")
# Debian's split OpenCV packages have no CMake package; never take a machine's full OpenCV.
set(CMAKE_DISABLE_FIND_PACKAGE_OpenCV ON)
# OpenSSL's configuration.h lives in include/<arch>.
if(EXISTS "${_halo_bundle}/include/x86_64-linux-gnu")
  include_directories(SYSTEM "${_halo_bundle}/include/x86_64-linux-gnu")
endif()
# The bundled libraries load one another from the bundle: DT_RPATH (unlike DT_RUNPATH) also
# serves the dependencies of dependencies, so no LD_LIBRARY_PATH reaches the compilers.
string(APPEND CMAKE_EXE_LINKER_FLAGS " -Wl,--disable-new-dtags -Wl,-rpath-link,${_halo_bundle_lib}")
list(APPEND CMAKE_BUILD_RPATH "${_halo_bundle_lib}")
# After the top-level CMakeLists.txt: the probe links core's targets.
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL include "${CMAKE_SOURCE_DIR}/packaging/gpu/probe/GpuProbe.cmake")
