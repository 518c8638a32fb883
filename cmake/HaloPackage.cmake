# `make package`: a .deb (CPack) with halo and halo-workbench in /usr/bin, the LibTorch
# libraries they load (from the wheel: libtorch_cpu, libc10, libgomp, and the CUDA runtime
# pieces libtorch_cpu itself links) in /usr/lib/halo, a desktop entry and an icon.
# The Debian runtime dependencies come from dpkg-shlibdeps. Package a CPU build
# (HALO_CUDA=OFF, the `package` preset): the CUDA engine needs libtorch_cuda and friends,
# several GB that only a CUDA machine can use; those build from source.
include(GNUInstallDirs)
set(HALO_PACKAGE_LIBDIR "lib/halo")

set(_halo_programs halo)
if(HALO_GUI)
  list(APPEND _halo_programs halo-workbench)
endif()
install(TARGETS ${_halo_programs}
  RUNTIME_DEPENDENCIES
    DIRECTORIES "${HALO_TORCH_LIB}"
    PRE_EXCLUDE_REGEXES "^ld-linux" "^linux-vdso"
    POST_INCLUDE_REGEXES "/torch/lib/" "/nvidia/[^/]+/lib/"
    POST_EXCLUDE_REGEXES ".*"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  LIBRARY DESTINATION "${HALO_PACKAGE_LIBDIR}")
# The build links LibTorch with an absolute -rpath into .venv; the installed programs look
# only next to themselves (DT_RUNPATH replaced, not appended to).
# (A program that links only system libraries has no such entry and needs none.)
foreach(p IN LISTS _halo_programs)
  install(CODE "
    set(_f \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${p}\")
    unset(_rpath)
    unset(_runpath)
    file(READ_ELF \"\${_f}\" RPATH _rpath RUNPATH _runpath)
    if(_rpath OR _runpath)
      file(RPATH_SET FILE \"\${_f}\" NEW_RPATH \"\\\$ORIGIN/../${HALO_PACKAGE_LIBDIR}\")
    endif()")
endforeach()
if(HALO_GUI)
  install(FILES "${CMAKE_SOURCE_DIR}/packaging/halo-workbench.desktop" DESTINATION "${CMAKE_INSTALL_DATADIR}/applications")
  install(FILES "${CMAKE_SOURCE_DIR}/resources/halo-workbench.svg"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps")
endif()
install(DIRECTORY "${CMAKE_SOURCE_DIR}/experiments/" DESTINATION "${CMAKE_INSTALL_DATADIR}/halo/experiments")

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "halo")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "Halo maintainers <halo@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Width-sharded (tensor parallel) CNN training workbench")
set(CPACK_PACKAGE_DESCRIPTION "Halo trains ConvNeXt and OpenLane-V2 models with the image width sharded over
several processes (halo exchange), from the halo command line or the halo-workbench window.
Bundles the LibTorch ${HALO_TORCH_VERSION} libraries it needs in /usr/lib/halo.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps resolves the bundled LibTorch libraries inside the package itself.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CMAKE_BINARY_DIR}/_CPack_Packages/Linux/DEB/halo-${PROJECT_VERSION}-Linux/usr/${HALO_PACKAGE_LIBDIR}")
set(CPACK_DEBIAN_COMPRESSION_TYPE "gzip")
set(CPACK_STRIP_FILES ON)
include(CPack)
