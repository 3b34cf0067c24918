# The cuda-cluster units: which kernels and kernel objects are built, and in
# which units (each from kernels/cluster/unit.cu.in, including only its
# family's header). A kernel object's unit compiles no kernel: it calls the
# family's functions declared in kernel_args.cuh, which the kernel units
# instantiate; a combination a kernel object may launch and no unit builds
# is a link error. What the default build leaves out (HEATWAVE_CLUSTER_3D_*)
# and the units' sizes are measured: docs/performance.md, "What the build
# leaves out" and "The build's units".
#
# Sets heatwave_cluster_units: the generated sources.

set(heatwave_cluster_units)
# A unit `name` of `header`'s `lines` (instantiation macros), about `what`.
function(heatwave_cluster_unit name header what lines)
  set(HEADER ${header})
  set(WHAT "${what}")
  set(INSTANTIATIONS "${lines}")
  set(unit ${HEATWAVE_GENERATED}/cluster/${name}.cu)
  configure_file(${PROJECT_SOURCE_DIR}/kernels/cluster/unit.cu.in ${unit} @ONLY)
  set(heatwave_cluster_units ${heatwave_cluster_units} ${unit} PARENT_SCOPE)
endfunction()
# `macro`(args) once for each value after `args` (radii, equations), @V@
# in args the value.
function(heatwave_each out macro args)
  set(lines "")
  foreach(V ${ARGN})
    string(REPLACE "@V@" "${V}" these "${args}")
    string(APPEND lines "${macro}(${these})\n")
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# Units `name`_r<group> of `macro`(args) for each radius group of ARGN
# ("12": radius 1 and 2 in one unit), @V@ in args the radius.
function(heatwave_radius_units name header what macro args)
  foreach(group ${ARGN})
    string(REGEX MATCHALL "[1-4]" radii "${group}")
    heatwave_each(lines ${macro} "${args}" ${radii})
    heatwave_cluster_unit(${name}_r${group} ${header} "${what}, radius ${radii}" "${lines}")
  endforeach()
  set(heatwave_cluster_units ${heatwave_cluster_units} PARENT_SCOPE)
endfunction()

# The forms an equation's kernels are built for (common.cuh's Form): the
# uniform form for all; the flux form where a flux coefficient varies (the
# heat's alpha; in 2D also its pair tiles from a file), the point form where
# another does (the waves' c and gamma, absorbing faces).
function(heatwave_forms out dims equation)
  set(forms uniform)
  if(equation IN_LIST HEATWAVE_FLUX_EQUATIONS)
    list(APPEND forms flux)
    if(dims EQUAL 2)
      list(APPEND forms flux_tiles)
    endif()
  endif()
  if(equation IN_LIST HEATWAVE_POINT_EQUATIONS)
    list(APPEND forms point)
  endif()
  set(${out} ${forms} PARENT_SCOPE)
endfunction()

# 3D: the pipeline's radii and clusterings, and the deep family (options).
set(pipeline_radii 1 2)
if(HEATWAVE_CLUSTER_3D_HIGH_RADIUS)
  list(APPEND pipeline_radii 3 4)
endif()
set(clusterings false)
if(HEATWAVE_CLUSTER_3D_DSMEM)
  list(APPEND clusterings true)
endif()

foreach(REAL float double)
  # The kernel objects, a unit a dimension and precision (host code: a unit
  # an equation took 12-17 s in CI's build, most of it the headers).
  foreach(DIMS 2 3)
    heatwave_each(lines HEATWAVE_CLUSTER_OBJECTS "${DIMS}, ${REAL}, @V@" ${HEATWAVE_EQUATIONS})
    heatwave_cluster_unit(objects_${DIMS}d_${REAL} kernel_${DIMS}d_object.cuh
                          "the ${DIMS}D kernel objects of ${REAL}, every equation" "${lines}")
  endforeach()
  foreach(EQUATION ${HEATWAVE_EQUATIONS})
    set(case "${REAL} ${EQUATION}")

    # 2D tiles (kernel_2d.cuh): streaming and resident, a unit a form and
    # radius pair; the point form, the costliest, a unit a radius.
    heatwave_forms(forms 2 ${EQUATION})
    foreach(FORM ${forms})
      set(groups 12 34)
      if(FORM STREQUAL "point")
        set(groups 1 2 3 4)
      endif()
      heatwave_radius_units(tiles_2d_${REAL}_${EQUATION}_${FORM} kernel_2d.cuh "the 2D tiles' kernels of ${case}, ${FORM} form"
                            HEATWAVE_TILES_2D "@V@, ${REAL}, ${EQUATION}, Form::${FORM}" ${groups})
    endforeach()

    # 2D columns (kernel_2d_columns.cuh): a unit a form and events (none,
    # sources, receivers); in fp32 radius 1 (the most levels) in one and 2-4
    # in another (together up to 56 s in CI's build), in fp64 all four.
    list(REMOVE_ITEM forms flux_tiles)  # (the streaming tiles run a file's alpha)
    set(groups 1 234)
    if(REAL STREQUAL "double")
      set(groups 1234)
    endif()
    foreach(FORM ${forms})
      foreach(EVENTS none sources receivers)
        heatwave_radius_units(columns_2d_${REAL}_${EQUATION}_${FORM}_${EVENTS} kernel_2d_columns.cuh
                              "the 2D columns kernels of ${case}, ${FORM} form, events ${EVENTS}" HEATWAVE_COLUMNS_2D
                              "@V@, ${REAL}, ${EQUATION}, Form::${FORM}, ColumnEvents::${EVENTS}" ${groups})
      endforeach()
    endforeach()

    # 3D pipeline (kernel_3d_pipeline.cuh): the uniform form with events
    # (sources, receivers) and without in a unit, the media's forms (with
    # events) a unit a radius; a clustering each.
    heatwave_forms(forms 3 ${EQUATION})
    list(REMOVE_ITEM forms uniform)
    foreach(CLUSTERED ${clusterings})
      set(suffix "")
      if(CLUSTERED)
        set(suffix _clustered)
      endif()
      heatwave_each(lines HEATWAVE_PIPELINE_3D "@V@, ${REAL}, ${EQUATION}, Form::uniform, ${CLUSTERED}, true"
                    ${pipeline_radii})
      heatwave_each(plain HEATWAVE_PIPELINE_3D "@V@, ${REAL}, ${EQUATION}, Form::uniform, ${CLUSTERED}, false"
                    ${pipeline_radii})
      heatwave_cluster_unit(pipeline_3d_${REAL}_${EQUATION}_uniform${suffix} kernel_3d_pipeline.cuh
                            "the 3D pipeline's kernels of ${case}, uniform form, clustered ${CLUSTERED}"
                            "${lines}${plain}")
      foreach(FORM ${forms})
        foreach(R ${pipeline_radii})
          heatwave_cluster_unit(pipeline_3d_${REAL}_${EQUATION}_${FORM}_r${R}${suffix} kernel_3d_pipeline.cuh
                                "the 3D pipeline's kernels of ${case}, ${FORM} form, radius ${R}, clustered ${CLUSTERED}"
                                "HEATWAVE_PIPELINE_3D(${R}, ${REAL}, ${EQUATION}, Form::${FORM}, ${CLUSTERED}, true)\n")
        endforeach()
      endforeach()
    endforeach()

    # 3D deep family (HEATWAVE_CLUSTER_3D_DEEP; kernel_3d_deep.cuh): its
    # object, and a unit a radius of its shapes (kernel_shapes.hpp's
    # deep_built: the heat r 1 and 2, the waves r 1), and the kernels with
    # events (deep_events_built: fp32 r 1, the waves' in the point form) a
    # unit of their own.
    if(HEATWAVE_CLUSTER_3D_DEEP)
      heatwave_cluster_unit(deep_3d_${REAL}_${EQUATION}_object kernel_3d_deep_object.cuh
                            "the 3D deep family's kernel object of ${case}"
                            "HEATWAVE_DEEP_OBJECT_3D(${REAL}, ${EQUATION})\n")
      set(deep_radii 1)
      if(EQUATION STREQUAL "Heat")
        set(deep_radii 1 2)
      endif()
      foreach(R ${deep_radii})
        heatwave_cluster_unit(deep_3d_${REAL}_${EQUATION}_r${R} kernel_3d_deep.cuh
                              "the 3D deep family's kernel of ${case}, radius ${R}"
                              "HEATWAVE_DEEP_3D(${R}, ${REAL}, ${EQUATION}, false, false)\n")
      endforeach()
      if(REAL STREQUAL "float")
        heatwave_cluster_unit(deep_3d_${REAL}_${EQUATION}_r1_events kernel_3d_deep.cuh
                              "the 3D deep family's kernel of ${case} with events, radius 1"
                              "HEATWAVE_DEEP_3D(1, ${REAL}, ${EQUATION}, false, true)\n")
        if(EQUATION IN_LIST HEATWAVE_POINT_EQUATIONS)
          heatwave_cluster_unit(deep_3d_${REAL}_${EQUATION}_r1_point kernel_3d_deep.cuh
                                "the 3D deep family's point-form kernel of ${case} with events, radius 1"
                                "HEATWAVE_DEEP_3D(1, ${REAL}, ${EQUATION}, true, true)\n")
        endif()
      endif()
    endif()
  endforeach()
endforeach()
