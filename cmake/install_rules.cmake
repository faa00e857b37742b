# install: headers, library, apps, a CMake package (find_package(clrt) ->
# clrt::clrt) and clrt.pc for pkg-config; with the distributed part,
# libclrt_mpi, clrt/mpi.h, clrt::clrt_mpi and clrt-mpi.pc.
include(CMakePackageConfigHelpers)
set(clrt_libraries clrt)
set(skip_header "")
if(CLRT_HAVE_MPI)
  list(APPEND clrt_libraries clrt_mpi)
else()
  set(skip_header PATTERN mpi.h EXCLUDE)
endif()
install(TARGETS ${clrt_libraries} EXPORT clrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/clrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        ${skip_header})
install(EXPORT clrtTargets NAMESPACE clrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/clrt)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/clrtConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/clrtConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/clrt)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/clrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/clrtConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/clrtConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/clrt)
# clrt.pc finds the prefix from its own place, so that it stays right after
# `cmake --install --prefix <elsewhere>` (pkg-config sets ${pcfiledir}).
file(RELATIVE_PATH CLRT_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" CLRT_PC_TO_PREFIX "${CLRT_PC_TO_PREFIX}")
set(CLRT_PC_MPI no)
if(CLRT_HAVE_MPI)
  set(CLRT_PC_MPI yes)
endif()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/clrt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/clrt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/clrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(CLRT_HAVE_MPI) # MPI's own pkg-config module: OpenMPI's ompi-c, else none
  pkg_check_modules(CLRT_OMPI_C QUIET ompi-c)
  set(CLRT_PC_MPI_MODULE "")
  if(CLRT_OMPI_C_FOUND)
    set(CLRT_PC_MPI_MODULE ompi-c)
  endif()
  configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/clrt-mpi.pc.in
                 ${CMAKE_CURRENT_BINARY_DIR}/clrt-mpi.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/clrt-mpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
