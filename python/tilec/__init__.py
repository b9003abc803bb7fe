"""tilec from Python: tilec's sparse submanifold convolution on PyTorch
tensors, through libtilec_c.so (ctypes; no build against torch).

    import tilec, tilec.nn
    x = tilec.SparseTensor(coords, features)  # int32 [N, 4], [N, C] on cuda:N
    conv = tilec.nn.SubMConv3d(32, 64, 3).cuda().half()
    y = conv(x)                                # a tilec.SparseTensor on cuda:N

and any kernel `tilec compile --dump-dir` wrote, launched by the runtime:

    kernel = tilec.Kernel.from_dump("out", "matmul").set(a_ptr=a, ...)
    kernel.launch((blocks,), stream=torch.cuda.current_stream())

The library is found through $TILEC_LIBRARY, next to the package, in the lib/
beside the package's folder (the GPU bundle), or in build/lib of the checkout
(tilec.library_path() says which). Importing the package needs neither
PyTorch nor a GPU; SparseTensor and tilec.nn need PyTorch. docs/pytorch.md
is the guide.
"""

import importlib

from ._library import (PACKAGE_VERSION as __version__, CompileError,
                       DeviceError, Error, InternalError, InvalidArgumentError,
                       InvalidInputError, LibraryNotFoundError, library_path,
                       library_version)
from .runtime import Runtime, default_runtime, set_default_runtime
from .kernel import Kernel
from . import scenes

# What needs PyTorch is imported on first use, so that `import tilec` works
# (and says what is missing) where torch is not installed.
_NEEDS_TORCH = {"SparseTensor": "sparse", "submanifold_conv3d": "sparse",
                "sparse_conv3d": "strided",
                "sparse_inverse_conv3d": "strided", "nn": None}


def __getattr__(name):
    if name not in _NEEDS_TORCH:
        raise AttributeError(f"module 'tilec' has no attribute '{name}'")
    try:
        module = importlib.import_module(f".{_NEEDS_TORCH[name] or name}",
                                         __name__)
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
        raise ImportError(f"tilec.{name} needs PyTorch ({error})") from error
    return module if _NEEDS_TORCH[name] is None else getattr(module, name)


__all__ = ["__version__", "CompileError", "DeviceError", "Error",
           "InternalError", "InvalidArgumentError", "InvalidInputError",
           "Kernel", "LibraryNotFoundError", "Runtime", "SparseTensor",
           "default_runtime", "library_path", "library_version", "nn",
           "scenes", "set_default_runtime", "sparse_conv3d",
           "sparse_inverse_conv3d", "submanifold_conv3d"]
