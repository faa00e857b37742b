# cmake -DBUILD_DIR= -DWORK_DIR= -DCONSUMER= -DC_COMPILER= -DPKG_CONFIG= -DGENERATOR=
#       -DEXTRA_FLAGS= -DHAVE_MPI=ON|OFF -P run_install_test.cmake
set(prefix ${WORK_DIR}/prefix)

# run(cmd...): runs a command; fails the test with its output if it fails.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "install test: '${cmd}' failed (${rc}):\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# The consumer prints a [2, 3] tensor of ones plus the row [1, 2, 3].
function(check_consumer exe)
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${exe})
  set(want "tensor([[2., 3., 4.],\n        [2., 3., 4.]], device='")
  string(FIND "${run_output}" "${want}" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR
            "install test: ${exe} printed\n${run_output}\nwanted it to start with\n${want}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE lib ${prefix}/*/libclrt.so)
if(NOT lib)
  message(FATAL_ERROR "install test: no libclrt.so under ${prefix}")
endif()
get_filename_component(libdir "${lib}" DIRECTORY)
foreach(file include/clrt/clrt.h include/clrt/tensor.h bin/clrt-smi)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "install test: ${file} was not installed")
  endif()
endforeach()
# Installed programs run from the prefix as they are: their RPATH finds the
# library, with no LD_LIBRARY_PATH (unset, in case the caller set one).
run(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/clrt-smi)
foreach(app clrt-smi clrt-cnn)
  run(readelf -d ${prefix}/bin/${app})
  if(NOT run_output MATCHES "R(UN)?PATH[^\n]*[$]ORIGIN/[.][.]/")
    message(FATAL_ERROR "install test: ${app} has no relative RPATH:\n${run_output}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/clrt-cnn --help)
# ... and still after the whole prefix is moved.
file(COPY ${prefix}/ DESTINATION ${WORK_DIR}/moved)
run(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${WORK_DIR}/moved/bin/clrt-smi)

# find_package(clrt) and clrt::clrt
run(${CMAKE_COMMAND} -S ${CONSUMER} -B ${WORK_DIR}/cmake-build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} "-DCMAKE_C_FLAGS=${EXTRA_FLAGS}"
    -DWITH_MPI=${HAVE_MPI})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
check_consumer(${WORK_DIR}/cmake-build/consumer)

# pkg-config, from the installed clrt.pc alone
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${libdir}/pkgconfig
    ${PKG_CONFIG} --cflags --libs clrt)
separate_arguments(pc_flags UNIX_COMMAND "${run_output}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
run(${C_COMPILER} -std=c11 ${extra} ${CONSUMER}/main.c ${pc_flags} -o ${WORK_DIR}/consumer-pc)
check_consumer(${WORK_DIR}/consumer-pc)

# The distributed part: the package and clrt.pc say whether it is there.
# A singleton MPI process needs no mpirun (as root, OpenMPI wants consent).
# Under the sanitizers, leaks are not checked here: OpenMPI keeps what
# MPI_Init allocates past MPI_Finalize.
function(check_mpi_consumer exe)
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} OMPI_ALLOW_RUN_AS_ROOT=1
      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 ${exe})
  if(NOT run_output MATCHES "clrt-mpi: rank 0 of 1, sum 1.5 2.5")
    message(FATAL_ERROR "install test: ${exe} printed\n${run_output}")
  endif()
endfunction()
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${libdir}/pkgconfig ${PKG_CONFIG} --variable=mpi clrt)
string(STRIP "${run_output}" pc_mpi)
if(HAVE_MPI)
  if(NOT pc_mpi STREQUAL "yes" OR NOT EXISTS ${prefix}/include/clrt/mpi.h)
    message(FATAL_ERROR "install test: built with MPI, but clrt.pc says mpi=${pc_mpi}")
  endif()
  check_mpi_consumer(${WORK_DIR}/cmake-build/consumer_mpi)
  run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${libdir}/pkgconfig
      ${PKG_CONFIG} --cflags --libs clrt-mpi)
  separate_arguments(pc_flags UNIX_COMMAND "${run_output}")
  run(${C_COMPILER} -std=c11 ${extra} ${CONSUMER}/mpi_main.c ${pc_flags} -o ${WORK_DIR}/mpi-pc)
  check_mpi_consumer(${WORK_DIR}/mpi-pc)
elseif(NOT pc_mpi STREQUAL "no" OR EXISTS ${prefix}/include/clrt/mpi.h)
  message(FATAL_ERROR "install test: built without MPI, but clrt.pc says mpi=${pc_mpi} "
                      "or clrt/mpi.h was installed")
endif()
