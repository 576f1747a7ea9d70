# The installed CMake package: `cmake --install BUILD --prefix PREFIX` lays
# out the libraries, headers (with the generated .inc files) and tools, and
# PREFIX/lib/cmake/SSD/SSDConfig.cmake gives the targets to another project:
#
#   find_package(SSD REQUIRED CONFIG)   # also finds the MLIR 22 it was built on
#   target_link_libraries(app PRIVATE SSD::SSDRegistration)
#
# Included by the top-level CMakeLists.txt once every target exists.
include(CMakePackageConfigHelpers)

set(SSD_INSTALL_CMAKE_DIR lib/cmake/SSD)

# The libraries an embedder links. SSDArtifact and SSDRuntime install
# themselves (they are built in the runtime-only configuration too) into the
# same export set.
set(SSD_EXPORTED_LIBRARIES
  SSDDialect         # the ssd dialect and its ops
  SSDTransforms      # ssd-decompose, ssd-fuse
  SSDToLinalg        # convert-ssd-to-linalg
  SSDCPUPipeline     # the CPU code generation passes and ssd-cpu-pipeline
  SSDToGPU           # the unfused GPU lowering and its pipelines
  SSDToGPUWarpSpecialized # the warp-specialised kernel of the fused lowering
  SSDToGPUFused      # the fused (persistent kernel) GPU lowering
  SSDRegistration    # all of the above, for ssd/InitAll*.h
  SSDCompile         # the AOT compiler behind ssd-compile
  SSDCpuJit          # layers JIT-compiled for the host CPU (ssd-run, C API)
  SSDSupport         # .npy files, case folders, layer specifications
  SSDReference       # the independent reference recurrence
  SSDCAPI            # libSSDCAPI.so: the C API with the upstream MLIR C API
  SSDCAPIStatic      # libSSDCAPIStatic.a: the project's C API alone
)
set(SSD_EXPORTED_TOOLS ssd-opt ssd-run ssd-compile ssd-make-case)

# Headers come from include/ in the build and from PREFIX/include installed.
foreach(library IN LISTS SSD_EXPORTED_LIBRARIES)
  get_target_property(type ${library} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  else()
    set(scope PUBLIC)
  endif()
  target_include_directories(${library} ${scope}
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
endforeach()

set(ssd_installed_binaries ${SSD_EXPORTED_LIBRARIES} ${SSD_EXPORTED_TOOLS})
if(TARGET SSDPlugin)
  list(APPEND ssd_installed_binaries SSDPlugin)
endif()
# Installed binaries find the project's shared libraries beside them and
# MLIR's where the build found it.
foreach(target IN LISTS ssd_installed_binaries)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "STATIC_LIBRARY|INTERFACE_LIBRARY")
    set_target_properties(${target} PROPERTIES
      INSTALL_RPATH "$ORIGIN/../lib"
      INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
endforeach()

install(TARGETS ${ssd_installed_binaries}
  EXPORT SSDTargets
  RUNTIME DESTINATION bin
  LIBRARY DESTINATION lib
  ARCHIVE DESTINATION lib)

# Public headers: the sources and the tablegen output of the build.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/
  DESTINATION include
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/
  DESTINATION include
  FILES_MATCHING PATTERN "*.h.inc" PATTERN "*.cpp.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(EXPORT SSDTargets
  NAMESPACE SSD::
  DESTINATION ${SSD_INSTALL_CMAKE_DIR})

# The config names the MLIR the project was built with, as a hint: the
# package works only with that MLIR's libMLIR.so.
set(SSD_MLIR_DIR_HINT "${MLIR_DIR}")
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/SSDConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/SSDConfig.cmake
  INSTALL_DESTINATION ${SSD_INSTALL_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/SSDConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/SSDConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/SSDConfigVersion.cmake
  DESTINATION ${SSD_INSTALL_CMAKE_DIR})
