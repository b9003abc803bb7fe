"""libtilec_c.so through ctypes: where it is found, the C API's signatures
(capi/include/tilec/tilec.h), and its statuses as Python exceptions.

Nothing here needs PyTorch or a GPU, so that this layer is what the tests
check on any machine.
"""

import array
import ctypes
import os
import pathlib
import shutil
import sys
import threading

LIBRARY_NAME = "libtilec_c.so"

# The package's version; the library's must be the same (tilec_version):
# the C API has no stable ABI yet.
PACKAGE_VERSION = "0.2.0"


class Error(RuntimeError):
    """A tilec call failed. `status` is the C API's tilec_status (None for a
    check made in Python), `function` the call that failed."""

    status = None

    def __init__(self, function, message, status=None):
        super().__init__(f"{function}: {message}")
        self.function = function
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(Error, ValueError):
    """A wrong dtype, shape, device, layout or size (TILEC_ERROR_INVALID_ARGUMENT,
    or a check in Python)."""

    status = 1


class InvalidInputError(Error, ValueError):
    """The input itself is wrong: duplicate voxels, coordinates out of range
    (TILEC_ERROR_INVALID_INPUT)."""

    status = 2


class DeviceError(Error):
    """No GPU, no CUDA driver, or a driver call failed (TILEC_ERROR_DEVICE)."""

    status = 3


class CompileError(Error):
    """Compiling a kernel failed, or no compiler is available for a miss
    (TILEC_ERROR_COMPILE)."""

    status = 4


class InternalError(Error):
    status = 5


ERRORS = {cls.status: cls for cls in (InvalidArgumentError, InvalidInputError,
                                      DeviceError, CompileError,
                                      InternalError)}


class LibraryNotFoundError(ImportError):
    """libtilec_c.so is not where the package looks, or is not this package's
    version."""


def candidates():
    """Where the library is looked for, in order: $TILEC_LIBRARY alone when it
    is set; else next to the package (an installed copy), <prefix>/lib for a
    package at <prefix>/python/tilec (the GPU bundle, scripts/gpu-bundle.sh),
    and build/lib of the checkout the package is in."""
    explicit = os.environ.get("TILEC_LIBRARY")
    if explicit:
        return [pathlib.Path(explicit)]
    here = pathlib.Path(__file__).resolve().parent
    return [here / LIBRARY_NAME, here.parent.parent / "lib" / LIBRARY_NAME,
            here.parent.parent / "build" / "lib" / LIBRARY_NAME]


_ptr, _i32, _i64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64
_status = ctypes.c_int
_out = ctypes.POINTER


class RuntimeOptions(ctypes.Structure):
    """struct tilec_runtime_options."""

    _fields_ = [("size", ctypes.c_size_t),
                ("device", ctypes.c_int),
                ("bundle_path", ctypes.c_char_p),
                ("embedded_bundle", _ptr),
                ("allow_jit", ctypes.c_int)]


class ConvGeometry(ctypes.Structure):
    """struct tilec_conv_geometry: per axis (x, y, z)."""

    _fields_ = [("kernel", _i32 * 3),
                ("stride", _i32 * 3),
                ("padding", _i32 * 3),
                ("dilation", _i32 * 3)]


class ConvLayerPlan(ctypes.Structure):
    """struct tilec_conv_layer_plan."""

    _fields_ = [("voxels", _i64),
                ("ci", _i32),
                ("co", _i32),
                ("kernel", _i32 * 3),
                ("dilation", _i32 * 3),
                ("dtype", ctypes.c_int),
                ("has_bias", _i32),
                ("allow_tf32", _i32),
                ("strided", _i32),
                ("input_gradient", _i32),
                ("weight_gradient", _i32),
                ("stride", _i32 * 3),
                ("padding", _i32 * 3)]


_shape = ctypes.POINTER(_i64)

SIGNATURES = {
    "tilec_last_error": ([], ctypes.c_char_p),
    "tilec_version": ([], ctypes.c_char_p),
    "tilec_runtime_create": ([_out(_ptr)], _status),
    "tilec_runtime_options_init": ([_out(RuntimeOptions)], None),
    "tilec_runtime_create_with_options": ([_out(RuntimeOptions), _out(_ptr)],
                                          _status),
    "tilec_runtime_destroy": ([_ptr], None),
    "tilec_kernel_load": ([_ptr, ctypes.c_char_p, ctypes.c_size_t,
                           ctypes.c_char_p, _out(_ptr)], _status),
    "tilec_kernel_destroy": ([_ptr], None),
    "tilec_kernel_set_pointer": ([_ptr, ctypes.c_size_t, _ptr], _status),
    "tilec_kernel_set_int": ([_ptr, ctypes.c_size_t, _i64], _status),
    "tilec_kernel_set_float": ([_ptr, ctypes.c_size_t, ctypes.c_double],
                               _status),
    "tilec_kernel_launch": ([_ptr, ctypes.c_uint32, ctypes.c_uint32,
                             ctypes.c_uint32, _ptr], _status),
    "tilec_sparse_tensor_create": ([_ptr, _ptr, _i64, _out(_ptr)], _status),
    "tilec_sparse_tensor_destroy": ([_ptr], None),
    "tilec_sparse_tensor_set_row_order": ([_ptr, ctypes.c_int], _status),
    "tilec_sparse_tensor_build_maps": ([_ptr, _i32, _i32, _ptr], _status),
    "tilec_sparse_tensor_build_maps_rows": ([_ptr, _i32, _i32, _i32, _ptr],
                                            _status),
    "tilec_sparse_tensor_active_pairs": ([_ptr, _i32, _i32, _out(_i64)],
                                         _status),
    "tilec_submanifold_conv3d": ([_ptr, _ptr, _ptr, _ptr, _ptr, _i32, _i32,
                                  _i32, _i32, ctypes.c_int, _i32, _ptr],
                                 _status),
    "tilec_submanifold_conv3d_backward": ([_ptr, _ptr, _ptr, _ptr, _ptr, _ptr,
                                           _ptr, _i32, _i32, _i32, _i32,
                                           ctypes.c_int, _i32, _i32, _ptr],
                                          _status),
    "tilec_sparse_tensor_strided": ([_ptr, _out(ConvGeometry), _shape, _i64,
                                     _ptr, _out(_i64), _shape], _status),
    "tilec_sparse_tensor_strided_coords": ([_ptr, _out(ConvGeometry), _shape,
                                            _i64, _ptr, _ptr], _status),
    "tilec_sparse_conv3d": ([_ptr, _out(ConvGeometry), _shape, _i64, _i32,
                             _ptr, _ptr, _ptr, _ptr, _i32, _i32, ctypes.c_int,
                             _i32, _ptr], _status),
    "tilec_sparse_conv3d_backward": ([_ptr, _out(ConvGeometry), _shape, _i64,
                                      _i32, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr,
                                      _i32, _i32, ctypes.c_int, _i32, _i32,
                                      _ptr], _status),
    "tilec_submanifold_conv3d_window": ([_ptr, _ptr, _ptr, _ptr, _ptr, _i32,
                                         _i32, _out(_i32), _out(_i32),
                                         ctypes.c_int, _i32, _ptr], _status),
    "tilec_submanifold_conv3d_window_backward": (
        [_ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _i32, _i32, _out(_i32),
         _out(_i32), ctypes.c_int, _i32, _i32, _ptr], _status),
    "tilec_compile_layers_ahead": ([_ptr, _out(ConvLayerPlan),
                                    ctypes.c_size_t, _out(ctypes.c_size_t)],
                                   _status),
    "tilec_retire_predictions": ([_ptr, _out(ctypes.c_size_t)], _status),
    "tilec_scene_shell": ([_i32, _i32, _out(_out(_i32)), _out(_i64)], _status),
    "tilec_scene_uniform": ([_i64, _i32, _i32, ctypes.c_uint64,
                             _out(_out(_i32)), _out(_i64)], _status),
    "tilec_scene_lidar": ([ctypes.c_uint64, _out(_out(_i32)), _out(_i64)],
                          _status),
    "tilec_free": ([_ptr], None),
}


class Library:
    """The loaded library with its signatures set: every function of
    SIGNATURES, or those of `names` alone (a tool that compares the
    libraries of other checkouts, such as spconv_maps_ab.py, names the ones
    it calls, so that a library older than this package still loads)."""

    def __init__(self, path, names=None):
        self.path = pathlib.Path(path)
        try:
            self.lib = ctypes.CDLL(str(self.path))
        except OSError as error:
            raise LibraryNotFoundError(
                f"tilec: cannot load {self.path}: {error}") from error
        try:
            for name in names or SIGNATURES:
                argtypes, restype = SIGNATURES[name]
                function = getattr(self.lib, name)
                function.argtypes, function.restype = argtypes, restype
        except AttributeError as error:
            raise LibraryNotFoundError(
                f"tilec: {self.path} lacks {name}: it is older than this "
                f"package ({PACKAGE_VERSION}); rebuild it (scripts/build.sh, "
                f"or scripts/gpu-bundle.sh for the GPU bundle)") from error
        self.version = self.lib.tilec_version().decode()
        if names is None and self.version != PACKAGE_VERSION:
            raise LibraryNotFoundError(
                f"tilec: {self.path} is version {self.version}, this package "
                f"is {PACKAGE_VERSION}: use the library of the same checkout "
                f"(TILEC_LIBRARY=...)")

    def check(self, status, function):
        """Raises the error of a failed call, with tilec_last_error's message
        (read on the calling thread, where the C API keeps it)."""
        if status != 0:
            message = (self.lib.tilec_last_error() or b"").decode(
                errors="replace")
            raise ERRORS.get(status, Error)(function, message or
                                            f"status {status}", status)

    def scene(self, name, *args):
        """A voxel scene of the C API (tilec_scene_<name>) as (array of int32
        (batch, x, y, z) per voxel, voxel count), in Python's memory."""
        data, count = _out(_i32)(), _i64()
        function = f"tilec_scene_{name}"
        self.check(getattr(self.lib, function)(*args, ctypes.byref(data),
                                               ctypes.byref(count)), function)
        try:
            words = array.array("i")
            words.frombytes(ctypes.string_at(data, 16 * count.value))
            return words, count.value
        finally:
            self.lib.tilec_free(data)


def release(destroy, handle, *keep_alive):
    """A C API object's finalizer (weakref.finalize): destroys `handle`,
    while `keep_alive` (its runtime, the memory it reads) lasts until it is
    gone. Only the handle reaches `destroy`, whose ctypes signature refuses
    more."""
    destroy(handle)


_loaded = None
_load_lock = threading.Lock()


# Where the CUDA toolkit's ptxas is looked for before the PyPI package's.
TOOLKIT_PTXAS = pathlib.Path("/usr/local/cuda/bin/ptxas")


def wheel_ptxas():
    """The ptxas of the nvidia-cuda-nvcc package (a dependency of tilec's
    wheel: nvidia/cu13/bin/ptxas on sys.path), or None."""
    for entry in sys.path:
        path = pathlib.Path(entry or ".") / "nvidia" / "cu13" / "bin" / "ptxas"
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def use_ptxas():
    """The ptxas the library's compiles run, set as $TILEC_PTXAS when it is
    the PyPI package's: $TILEC_PTXAS when set; else the CUDA toolkit's (at
    /usr/local/cuda or on PATH), which the library finds itself; else the
    nvidia-cuda-nvcc package's. None when there is none."""
    explicit = os.environ.get("TILEC_PTXAS")
    if explicit:
        return pathlib.Path(explicit)
    if TOOLKIT_PTXAS.is_file():
        return TOOLKIT_PTXAS
    on_path = shutil.which("ptxas")
    if on_path:
        return pathlib.Path(on_path)
    packaged = wheel_ptxas()
    if packaged:
        os.environ["TILEC_PTXAS"] = str(packaged)
    return packaged


def library():
    """The process's Library, loaded on first use from the first of
    candidates() that exists."""
    global _loaded
    with _load_lock:
        if _loaded is None:
            use_ptxas()
            tried = candidates()
            found = next((p for p in tried if p.is_file()), None)
            if found is None:
                raise LibraryNotFoundError(
                    "tilec: no " + LIBRARY_NAME + " at " +
                    ", ".join(str(p) for p in tried) + " (set TILEC_LIBRARY "
                    "to the library: build/lib/ of a build, lib/ of the GPU "
                    "bundle)")
            _loaded = Library(found)
        return _loaded


def library_path():
    """The path of the library the package uses (loading it if needed)."""
    return library().path


def library_version():
    """tilec_version() of the library the package uses."""
    return library().version
