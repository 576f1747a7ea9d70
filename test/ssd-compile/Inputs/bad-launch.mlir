// A kernel parameter naming no tensor: the runtime's parser rejects it.
module attributes {ssd.launch = {
  tensors = [{name = "x", dtype = "f32", shape = ["b", "L", 4, 64]}],
  workspaces = [],
  kernels = [{name = "ssd_bmm", grid = [1], block = [32],
              params = [{kind = "tensor", name = "nope"}]}]}} {
  gpu.binary @ssd_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, bin = "\7FELF\02\01\01\00">]
}
