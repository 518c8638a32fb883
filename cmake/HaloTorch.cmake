# Imports LibTorch from the pinned PyPI wheel in .venv (located via torch.utils.cmake_prefix_path).
# Defines halo::torch (CPU: torch_cpu, c10, c10d Gloo) and, where CUDA is present, the CUDA libs.
set(HALO_PYTHON "${CMAKE_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "Python of the project .venv")
if(NOT EXISTS "${HALO_PYTHON}")
  message(FATAL_ERROR "No ${HALO_PYTHON}: run packaging/bootstrap.sh (or 'make deps') first.")
endif()
execute_process(
  COMMAND "${HALO_PYTHON}" -c "import torch.utils, torch; print(torch.utils.cmake_prefix_path); print(torch.__version__)"
  OUTPUT_VARIABLE _halo_torch_out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "The .venv has no working torch: run packaging/bootstrap.sh.")
endif()
string(REPLACE "\n" ";" _halo_torch_out "${_halo_torch_out}")
list(GET _halo_torch_out 0 HALO_TORCH_CMAKE_PREFIX)
list(GET _halo_torch_out 1 HALO_TORCH_VERSION)
get_filename_component(HALO_TORCH_ROOT "${HALO_TORCH_CMAKE_PREFIX}/../.." ABSOLUTE)
set(HALO_TORCH_LIB "${HALO_TORCH_ROOT}/lib")
message(STATUS "LibTorch ${HALO_TORCH_VERSION} from ${HALO_TORCH_ROOT}")

# The wheel ships c10d's headers but not Gloo's; Debian's libgloo-dev provides them
# (header-only use: the Gloo code itself runs inside libtorch_cpu). On every torch user's
# include path: on the GPU machine they come from the bundle (cmake/HaloGpuBundle.cmake).
find_path(HALO_GLOO_INCLUDE gloo/context.h REQUIRED)

add_library(halo_torch INTERFACE)
add_library(halo::torch ALIAS halo_torch)
target_include_directories(halo_torch SYSTEM INTERFACE
  "${HALO_TORCH_ROOT}/include" "${HALO_TORCH_ROOT}/include/torch/csrc/api/include" "${HALO_GLOO_INCLUDE}")
target_compile_definitions(halo_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1 USE_DISTRIBUTED USE_C10D_GLOO FMT_HEADER_ONLY=1)
# LibTorch bundles fmt 12 headers (found before Debian's): all of Halo uses fmt header-only.
target_link_libraries(halo_torch INTERFACE
  "${HALO_TORCH_LIB}/libtorch_cpu.so" "${HALO_TORCH_LIB}/libc10.so")
target_link_options(halo_torch INTERFACE "LINKER:-rpath,${HALO_TORCH_LIB}")

# CUDA: where the toolkit exists and the wheel carries libtorch_cuda, build the NCCL and
# CUDA-memory paths too. The CUDA runtime and NCCL are the wheel's own (the ones
# libtorch_cuda loads), never a second copy.
set(HALO_CUDA "AUTO" CACHE STRING "Build the CUDA/NCCL path: AUTO, ON or OFF")
set(HALO_WITH_CUDA OFF)
if(NOT HALO_CUDA STREQUAL "OFF" AND EXISTS "${HALO_TORCH_LIB}/libtorch_cuda.so")
  find_package(CUDAToolkit QUIET)
  get_filename_component(_nv "${HALO_TORCH_ROOT}/../nvidia" ABSOLUTE)
  file(GLOB _cudart "${_nv}/cu*/lib/libcudart.so.*")
  if(CUDAToolkit_FOUND AND _cudart)
    set(HALO_WITH_CUDA ON)
  elseif(HALO_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HALO_CUDA=ON but no CUDA toolkit (/usr/local/cuda) or CUDA wheel libraries were found.")
  endif()
endif()
if(HALO_WITH_CUDA)
  list(GET _cudart 0 _cudart)
  get_filename_component(_cudart_dir "${_cudart}" DIRECTORY)
  target_include_directories(halo_torch SYSTEM INTERFACE "${_nv}/nccl/include" ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(halo_torch INTERFACE HALO_WITH_CUDA USE_C10D_NCCL USE_CUDA)
  target_link_libraries(halo_torch INTERFACE -Wl,--no-as-needed
    "${HALO_TORCH_LIB}/libtorch_cuda.so" "${HALO_TORCH_LIB}/libc10_cuda.so" "${_cudart}" -Wl,--as-needed)
  target_link_options(halo_torch INTERFACE "LINKER:-rpath,${_cudart_dir}")
  message(STATUS "CUDA path: on (toolkit ${CUDAToolkit_VERSION}, runtime ${_cudart})")
else()
  message(STATUS "CUDA path: off (CPU engine only)")
endif()

# The CUDA runtime alone (no LibTorch) for core modules that only ask about devices (the
# planner's device capacity): the wheel's libcudart, as above. Empty without CUDA.
add_library(halo_cuda_runtime INTERFACE)
add_library(halo::cuda_runtime ALIAS halo_cuda_runtime)
if(HALO_WITH_CUDA)
  target_include_directories(halo_cuda_runtime SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(halo_cuda_runtime INTERFACE HALO_WITH_CUDA)
  target_link_libraries(halo_cuda_runtime INTERFACE "${_cudart}")
  target_link_options(halo_cuda_runtime INTERFACE "LINKER:-rpath,${_cudart_dir}")
endif()
