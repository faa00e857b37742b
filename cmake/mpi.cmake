# libclrt_mpi, clrt's optional distributed part (mpi/, include/clrt/mpi.h):
# a clrt_collective over MPI. CLRT_MPI=AUTO builds it when MPI's C
# development files are found (Debian: libopenmpi-dev), ON requires them,
# OFF leaves it out. CLRT_HAVE_MPI says what was decided; the CMake package
# and pkg-config say it too (install_rules.cmake).
set(CLRT_MPI AUTO CACHE STRING "Build libclrt_mpi: ON, OFF, or AUTO (when MPI is found)")
set_property(CACHE CLRT_MPI PROPERTY STRINGS ON OFF AUTO)
set(CLRT_HAVE_MPI OFF)
if(CLRT_MPI STREQUAL "ON")
  find_package(MPI REQUIRED COMPONENTS C)
elseif(CLRT_MPI STREQUAL "AUTO")
  find_package(MPI COMPONENTS C)
elseif(NOT CLRT_MPI STREQUAL "OFF")
  message(FATAL_ERROR "CLRT_MPI is '${CLRT_MPI}'; give ON, OFF or AUTO")
endif()
if(MPI_C_FOUND AND NOT CLRT_MPI STREQUAL "OFF")
  set(CLRT_HAVE_MPI ON)
endif()
message(STATUS "clrt: MPI part (libclrt_mpi): ${CLRT_HAVE_MPI} (CLRT_MPI=${CLRT_MPI})")

if(CLRT_HAVE_MPI)
  add_library(clrt_mpi SHARED ${CMAKE_CURRENT_SOURCE_DIR}/mpi/collective_mpi.c)
  add_library(clrt::clrt_mpi ALIAS clrt_mpi)
  set_target_properties(clrt_mpi PROPERTIES VERSION ${PROJECT_VERSION}
                                            SOVERSION ${PROJECT_VERSION_MAJOR}
                                            C_VISIBILITY_PRESET hidden)
  target_compile_definitions(clrt_mpi PRIVATE CLRT_BUILDING_LIBRARY)
  target_link_libraries(clrt_mpi PUBLIC clrt MPI::MPI_C)
  clrt_warnings(clrt_mpi)
endif()
