"""tilec's runtime: device 0's primary context (the one PyTorch uses), the
stage and autotune caches and the JIT compiler, or a bundle of tuned kernels
(docs/deploy.md)."""

import ctypes
import errno
import os
import threading
import weakref

from ._library import InvalidArgumentError, RuntimeOptions, library


class Runtime:
    """A tilec runtime on device 0.

    Runtime() serves kernels from the caches ($TILEC_CACHE_DIR,
    $TILEC_AUTOTUNE_CACHE), tuning and compiling a shape on its first call
    (and honours $TILEC_BUNDLE). Runtime(bundle=path) serves them from a
    bundle made by `tilec pack`; with allow_jit=False (the default for a
    bundle) a call the bundle lacks is an error naming the kernel and key,
    with allow_jit=True it is tuned and compiled as without a bundle. A bundle
    that is corrupt or for another GPU is refused here.

    Sparse tensors keep their runtime alive; the runtime is destroyed when
    the last of them and it are gone. One runtime runs one call at a time
    (calls from several threads take turns)."""

    def __init__(self, bundle=None, allow_jit=None):
        lib = library()
        handle = ctypes.c_void_p()
        if bundle is None:
            if allow_jit is False:
                raise InvalidArgumentError(
                    "Runtime", "allow_jit=False needs a bundle: without one "
                    "every kernel comes from the caches or the JIT")
            lib.check(lib.lib.tilec_runtime_create(ctypes.byref(handle)),
                      "tilec_runtime_create")
            self.bundle, self.allow_jit = None, True
        else:
            path = os.fspath(bundle)
            # The C API would report a missing file only after it has made
            # the device context; this says it first, and without a GPU.
            if not os.path.isfile(path):
                raise FileNotFoundError(errno.ENOENT, "no bundle file", path)
            self.bundle, self.allow_jit = path, bool(allow_jit)
            options = RuntimeOptions(os.fsencode(path), None,
                                     1 if self.allow_jit else 0)
            lib.check(lib.lib.tilec_runtime_create_with_options(
                ctypes.byref(options), ctypes.byref(handle)),
                "tilec_runtime_create_with_options")
        self._lib = lib
        self.handle = handle.value
        self.lock = threading.Lock()
        weakref.finalize(self, lib.lib.tilec_runtime_destroy, self.handle)

    def __repr__(self):
        source = f"bundle={self.bundle!r}, allow_jit={self.allow_jit}" \
            if self.bundle else "caches and JIT"
        return f"tilec.Runtime({source})"


_default = None
_default_lock = threading.Lock()


def default_runtime():
    """The process's default runtime, created on first use: Runtime(), or
    the one given to set_default_runtime. A failed creation (no GPU) raises
    each time it is asked for."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Runtime()
        return _default


def set_default_runtime(runtime):
    """Makes `runtime` the default for sparse tensors made from now on (e.g.
    a Runtime(bundle=...) for a whole program); tensors made before keep
    theirs."""
    global _default
    if not isinstance(runtime, Runtime):
        raise InvalidArgumentError(
            "set_default_runtime",
            f"expected a tilec.Runtime, got {type(runtime).__name__}")
    with _default_lock:
        _default = runtime
