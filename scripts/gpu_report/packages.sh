# The Debian 12 packages scripts/gpu_report.sh carries to a GPU machine that
# has NVIDIA's driver but no package registry and no OpenCL loader, by what
# they are for (sourced by gather.sh and setup.sh).

# Shared libraries clrt's programs load at run time: their folder goes on
# LD_LIBRARY_PATH (through links in the prefix's lib/, nothing else).
runtime_packages=(ocl-icd-libopencl1 libclblast1 libopenblas0-pthread libgfortran5 libquadmath0
                  libsubunit0)
# Headers, link-time files and build tools: found through CMake hints,
# PKG_CONFIG_PATH and wrappers in the prefix's bin/.
build_packages=(ocl-icd-opencl-dev opencl-c-headers libclblast-dev libopenblas-pthread-dev
                check libsubunit-dev zlib1g zlib1g-dev pkgconf pkgconf-bin libpkgconf3 make)
# Tools the stages run: OpenCL's device list and CLBlast's tuners.
tool_packages=(clinfo clblast-utils)
# The data the test suite and the LeNet comparison read (30 MB).
data_packages=(dataset-fashion-mnist)

# Stand-ins for NVIDIA's OpenCL library, for testing the script on a machine
# without a GPU; their dependencies come along (those that a host with a C
# compiler and python3 lacks). PoCL runs clang in-process: clang-15's own
# binary is left out.
standin_pocl=(pocl-opencl-icd libpocl2)
standin_pocl_skip=(clang-15)
standin_oclgrind=(oclgrind)
standin_oclgrind_skip=()
# What such a host is assumed to have already.
baseline_packages=(gcc python3)
