"""CUtensorMaps for the test kernels' TMA copies, encoded on the host with the
driver's cuTensorMapEncodeTiled (run_pipelined_products.py,
run_warp_specialized_ssd.py).

The kernels take each map as a device pointer to its 128 bytes: tensor_map
returns those bytes, and the caller copies them to device memory
(cp.asarray) and passes the device array. The map's dimensions are the
array's shape reversed (innermost first, as the driver takes them) and its
strides the array's own, so a row-major CuPy array describes itself; only
the box, the element type and the swizzle are the caller's.
"""
import ctypes

import numpy as np

# CUtensorMap enums (cuda.h).
FLOAT32, BFLOAT16 = 7, 9
INTERLEAVE_NONE, L2_PROMOTION_NONE, OOB_FILL_NONE = 0, 0, 0
SWIZZLE_NONE, SWIZZLE_128B = 0, 3
# Bytes of one element of each type: the array must hold elements of that
# size (bf16 as its uint16 bit patterns), or the map would read past it.
ELEMENT_BYTES = {FLOAT32: 4, BFLOAT16: 2}


def tensor_map(cuda, device_array, box, data_type=BFLOAT16, swizzle=SWIZZLE_128B):
    """The 128-byte CUtensorMap of device_array (a CuPy array whose innermost
    dimension is contiguous) as a uint8 numpy array. box is innermost first,
    as the dimensions: (64, rows) copies 64 columns of `rows` rows."""
    rank = device_array.ndim
    itemsize = device_array.itemsize
    if itemsize != ELEMENT_BYTES[data_type]:
        raise ValueError(f"a {itemsize}-byte array for a {ELEMENT_BYTES[data_type]}-byte type")
    if len(box) != rank or device_array.strides[-1] != itemsize:
        raise ValueError(f"box {tuple(box)} or strides {device_array.strides} do not fit "
                         f"shape {device_array.shape}")
    storage = ctypes.create_string_buffer(128 + 64)
    address = (ctypes.addressof(storage) + 63) & ~63  # 64-byte aligned
    dims = device_array.shape[::-1]
    # Byte strides of every dimension but the innermost (that one is the
    # element size), innermost first.
    strides = device_array.strides[::-1][1:]
    status = cuda.cuTensorMapEncodeTiled(
        ctypes.c_void_p(address), ctypes.c_int(data_type), ctypes.c_uint32(rank),
        ctypes.c_void_p(device_array.data.ptr),
        (ctypes.c_uint64 * rank)(*dims), (ctypes.c_uint64 * (rank - 1))(*strides),
        (ctypes.c_uint32 * rank)(*box), (ctypes.c_uint32 * rank)(*([1] * rank)),
        ctypes.c_int(INTERLEAVE_NONE), ctypes.c_int(swizzle),
        ctypes.c_int(L2_PROMOTION_NONE), ctypes.c_int(OOB_FILL_NONE))
    if status != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed with CUresult {status}")
    return np.frombuffer(ctypes.string_at(address, 128), dtype=np.uint8).copy()
