// A module as the unfused GPU pipeline leaves it: the serialised kernels in
// gpu.binary @ssd_kernels and the launch description in ssd.launch. The
// "cubin" is a stub that only starts like an ELF file.
module attributes {ssd.launch = {
  derived = [["nc", "ceildiv(L, Q)"], ["work", "b * nc * h"]],
  tensors = [
    {name = "x", dtype = "bf16", shape = ["b", "L", 4, 64]},
    {name = "dt", dtype = "f32", shape = ["b", "L", 4]},
    {name = "A", dtype = "f32", shape = [4]},
    {name = "B", dtype = "bf16", shape = ["b", "L", 1, 128]},
    {name = "C", dtype = "bf16", shape = ["b", "L", 1, 128]},
    {name = "D", dtype = "f32", shape = [4]},
    {name = "dt_bias", dtype = "f32", shape = [4]},
    {name = "y", dtype = "bf16", shape = ["b", "L", 4, 64], output = true},
    {name = "final_states", dtype = "f32", shape = ["b", 4, 64, 128], output = true}],
  workspaces = [
    {name = "dA_cumsum", dtype = "f32", shape = ["b", "h", "nc", "Q"]},
    {name = "ready", size = "4 * b * nc", zero_init = true}],
  kernels = [
    {name = "ssd_chunk_cumsum", grid = ["nc", "b"], block = [128],
     params = [{kind = "tensor", name = "dt"},
               {kind = "workspace", name = "dA_cumsum", abi = "memref"},
               {kind = "scalar", name = "seqlen", type = "i32", value = "L"}]},
    {name = "ssd_chunk_scan", grid = ["work"], block = [128, 1, 1],
     shared_memory = 65536,
     params = [{kind = "tensor", name = "x"}, {kind = "tensor", name = "y"},
               {kind = "workspace", name = "ready"}]}]
}} {
  gpu.binary @ssd_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, bin = "\7FELF\02\01\01\00">]
}
