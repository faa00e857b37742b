# install: headers, library, apps, a CMake package (find_package(clrt) ->
# clrt::clrt) and clrt.pc for pkg-config.
include(CMakePackageConfigHelpers)
install(TARGETS clrt EXPORT clrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/clrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT clrtTargets NAMESPACE clrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/clrt)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/clrtConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/clrtConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/clrt)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/clrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/clrtConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/clrtConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/clrt)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/clrt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/clrt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/clrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
