module {
  gpu.binary @ssd_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, bin = "\7FELF\02\01\01\00">]
}
