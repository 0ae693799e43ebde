"""DLPack capsules read by hand: NumPy makes arrays over legacy "dltensor" capsules read-only, torch's are writable."""
import ctypes
import enum


class DLDeviceType(enum.IntEnum):
    """Same as `torch.utils.dlpack.DLDeviceType`."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p))]


_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


class _Owner:
    """Holds a consumed capsule's memory for the array made from it; frees it through the producer's deleter."""

    def __init__(self, managed_ptr, interface):
        self.managed_ptr, self.__array_interface__ = managed_ptr, interface

    def __del__(self):
        managed = _DLManagedTensor.from_address(self.managed_ptr)
        if managed.deleter:
            managed.deleter(self.managed_ptr)


def _array_from_capsule(capsule):
    """A writable NumPy array over a legacy "dltensor" capsule (NumPy itself makes such arrays read-only)."""
    import numpy as np
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if not api.PyCapsule_IsValid(capsule, b"dltensor"):
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                           "only once, so you might have already constructed a tensor from it once.")
    ptr = api.PyCapsule_GetPointer(capsule, b"dltensor")
    t = _DLManagedTensor.from_address(ptr).dl_tensor
    if t.device_type != DLDeviceType.kDLCPU:
        raise RuntimeError(f"from_dlpack: only CPU capsules can be consumed here, got device type {t.device_type}")
    if t.lanes != 1 or (t.code not in _KINDS and t.code != 4):
        raise RuntimeError(f"from_dlpack: unsupported DLPack dtype (code {t.code}, bits {t.bits}, lanes {t.lanes})")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    size = t.bits // 8
    kind = "u" if t.code == 4 else _KINDS[t.code]  # bfloat16 is read as uint16, then viewed
    strides = None if not t.strides else tuple(t.strides[i] * size for i in range(t.ndim))
    interface = {"shape": shape, "typestr": f"|{kind}{size}", "strides": strides, "version": 3,
                 "data": ((t.data or 0) + t.byte_offset, False)}
    api.PyCapsule_SetName(capsule, b"used_dltensor")  # consumed: the capsule no longer frees the memory
    arr = np.asarray(_Owner(ptr, interface))
    if t.code == 4:
        import ml_dtypes
        arr = arr.view(ml_dtypes.bfloat16)
    return arr
