"""tilec's runtimes: one per CUDA device, on its primary context (the one
PyTorch uses), with the stage and autotune caches and the JIT compiler, or a
bundle of tuned kernels (docs/deploy.md)."""

import ctypes
import errno
import os
import sys
import threading
import weakref

from ._library import InvalidArgumentError, RuntimeOptions, library


class Runtime:
    """A tilec runtime on one CUDA device (an ordinal among those
    CUDA_VISIBLE_DEVICES leaves, as cuda:N in PyTorch), on its primary
    context, the one PyTorch uses.

    Runtime() serves kernels from the caches ($TILEC_CACHE_DIR,
    $TILEC_AUTOTUNE_CACHE), tuning and compiling a shape on its first call
    (and honours $TILEC_BUNDLE). Runtime(bundle=path) serves them from a
    bundle made by `tilec pack`; with allow_jit=False (the default for a
    bundle) a call the bundle lacks is an error naming the kernel and key,
    with allow_jit=True it is tuned and compiled as without a bundle. A bundle
    that is corrupt or for another GPU is refused here.

    Sparse tensors keep their runtime alive; the runtime is destroyed when
    the last of them and it are gone. One runtime runs one call at a time
    (calls from several threads take turns); runtimes of several devices, or
    several of one, run side by side."""

    def __init__(self, bundle=None, allow_jit=None, *, device=0):
        device = device_index(device)
        if bundle is None and allow_jit is False:
            raise InvalidArgumentError(
                "Runtime", "allow_jit=False needs a bundle: without one "
                "every kernel comes from the caches or the JIT")
        lib = library()
        options = RuntimeOptions()
        lib.lib.tilec_runtime_options_init(ctypes.byref(options))
        options.device = device
        self.device, self.bundle, self.allow_jit = device, None, True
        if bundle is not None:
            path = os.fspath(bundle)
            # The C API would report a missing file only after it has made
            # the device context; this says it first, and without a GPU.
            if not os.path.isfile(path):
                raise FileNotFoundError(errno.ENOENT, "no bundle file", path)
            self.bundle, self.allow_jit = path, bool(allow_jit)
            options.bundle_path = os.fsencode(path)
            options.allow_jit = 1 if self.allow_jit else 0
        handle = ctypes.c_void_p()
        lib.check(lib.lib.tilec_runtime_create_with_options(
            ctypes.byref(options), ctypes.byref(handle)),
            "tilec_runtime_create_with_options")
        self._lib = lib
        self.handle = handle.value
        self.lock = threading.Lock()
        weakref.finalize(self, lib.lib.tilec_runtime_destroy, self.handle)

    def retire_predictions(self):
        """Under TILEC_FIRST_USE=predict a shape's first call runs each
        kernel's predicted config, compiled alone and not benchmarked. This
        ends that: from the next call on every shape is tuned on its first
        use (the predicted ones included), as under TILEC_FIRST_USE=tune.
        Returns how many predictions were dropped."""
        retired = ctypes.c_size_t()
        with self.lock:
            self._lib.check(self._lib.lib.tilec_retire_predictions(
                self.handle, ctypes.byref(retired)),
                "tilec_retire_predictions")
        return retired.value

    def __repr__(self):
        source = f"bundle={self.bundle!r}, allow_jit={self.allow_jit}" \
            if self.bundle else "caches and JIT"
        return f"tilec.Runtime(device={self.device}, {source})"


def device_index(device):
    """The CUDA ordinal of `device`: an int, "cuda:N" or a torch.device of
    type cuda; "cuda" alone is torch's current device, as in torch."""
    if isinstance(device, bool):
        raise InvalidArgumentError("Runtime", f"device must be a CUDA device "
                                   f"ordinal, got {device!r}")
    if isinstance(device, int):
        index = device
    else:
        text = str(device)
        if text == "cuda":
            torch = sys.modules.get("torch")
            index = torch.cuda.current_device() \
                if torch is not None and torch.cuda.is_available() else 0
        elif text.startswith("cuda:") and text[5:].isdigit():
            index = int(text[5:])
        else:
            raise InvalidArgumentError(
                "Runtime", f"device must be a CUDA device (an ordinal, "
                f"'cuda:N' or a torch.device), got {device!r}")
    if index < 0:
        raise InvalidArgumentError("Runtime", f"device {index} is not a "
                                   f"device ordinal")
    return index


_defaults = {}
_default_lock = threading.Lock()


def default_runtime(device=0):
    """The process's default runtime of `device` (an ordinal, "cuda:N" or a
    torch.device), created on first use: Runtime(device), or the one given to
    set_default_runtime. A failed creation (no GPU, no such device) raises
    each time it is asked for."""
    index = device_index(device)
    with _default_lock:
        if index not in _defaults:
            _defaults[index] = Runtime(device=index)
        return _defaults[index]


def set_default_runtime(runtime):
    """Makes `runtime` the default of its device for sparse tensors made from
    now on (e.g. a Runtime(bundle=...) for a whole program); tensors made
    before keep theirs."""
    if not isinstance(runtime, Runtime):
        raise InvalidArgumentError(
            "set_default_runtime",
            f"expected a tilec.Runtime, got {type(runtime).__name__}")
    with _default_lock:
        _defaults[runtime.device] = runtime
