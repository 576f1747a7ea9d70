module attributes {ssd.launch = {tensors = [], workspaces = [], kernels = []}} {
  gpu.binary @ssd_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = ".version 8.0">]
}
