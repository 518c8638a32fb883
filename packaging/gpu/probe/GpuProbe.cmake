# halo_gpu_probe (packaging/gpu-check.sh, stage b): CUDA checks that need no ranks. Built
# only by the `gpu` preset: cmake/HaloGpuBundle.cmake includes this file once the top-level
# CMakeLists.txt has defined every core target.
add_executable(halo_gpu_probe "${CMAKE_SOURCE_DIR}/packaging/gpu/probe/GpuProbe.cpp")
target_link_libraries(halo_gpu_probe PRIVATE halo::model halo::train halo::parallel nlohmann_json::nlohmann_json)
halo_use_torch_pch(halo_gpu_probe)
if(COMMAND halo_warnings)
  halo_warnings(halo_gpu_probe)
endif()
