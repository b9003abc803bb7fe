"""One compiled kernel (a cubin and its compile json, as `tilec compile
--dump-dir` writes them) launched by tilec's runtime through the C API's
tilec_kernel_*: the runtime checks each argument against the kernel's
signature and specialization and encodes the TMA tensor maps the kernel
takes, so that no caller builds cuLaunchKernel's parameters itself.

    kernel = tilec.Kernel.from_dump("out", "matmul")
    kernel.set(a_ptr=a, b_ptr=b, c_ptr=c, M=4096, ...)   # tensors or ints
    kernel.launch((grid_x,), stream=torch.cuda.current_stream())
"""

import ctypes
import json
import os
import pathlib
import weakref

from ._library import InvalidArgumentError, library, release
from .runtime import default_runtime


def _parse_metadata(metadata):
    """The compile json as a dict; its signature is what set() checks
    names against before the library sees them."""
    if isinstance(metadata, (bytes, str)):
        try:
            metadata = json.loads(metadata)
        except ValueError as error:
            raise InvalidArgumentError(
                "Kernel", f"the compile json is not JSON: {error}") from None
    if not isinstance(metadata, dict) or not isinstance(
            metadata.get("signature"), list) or not all(
            isinstance(arg, dict) and "name" in arg and "type" in arg
            for arg in metadata["signature"]):
        raise InvalidArgumentError(
            "Kernel", "the compile json has no signature (a list of "
            "{name, type}): pass the .json `tilec compile --dump-dir` wrote")
    return metadata


def _address(value):
    """A device address from an int or an object with data_ptr() (a torch
    tensor)."""
    if hasattr(value, "data_ptr"):
        return value.data_ptr()
    if isinstance(value, int):
        return value
    raise TypeError(f"expected a device address (int) or a tensor, got "
                    f"{type(value).__name__}")


def _stream_handle(stream):
    """A CUstream from None (the legacy default stream), an int, or an
    object with cuda_stream (a torch.cuda.Stream)."""
    if stream is None:
        return None
    return getattr(stream, "cuda_stream", stream)


class Kernel:
    """A cubin loaded on a runtime's device with its compile json. Arguments
    keep their values across launches; one kernel is not to be set or
    launched from two threads at once."""

    def __init__(self, cubin, metadata, runtime=None):
        self.metadata = _parse_metadata(metadata)
        self.signature = self.metadata["signature"]
        self._index = {arg["name"]: i for i, arg in enumerate(self.signature)}
        # The kernel holds its runtime (and so the device context) alive.
        self.runtime = runtime if runtime is not None else default_runtime()
        self._lib = library()
        cubin = bytes(cubin)
        handle = ctypes.c_void_p()
        self._lib.check(self._lib.lib.tilec_kernel_load(
            self.runtime.handle, cubin, len(cubin),
            json.dumps(self.metadata).encode(), ctypes.byref(handle)),
            "tilec_kernel_load")
        self.handle = handle.value
        # The runtime (the device context the kernel lives in) outlives it.
        self._finalizer = weakref.finalize(
            self, release, self._lib.lib.tilec_kernel_destroy, self.handle,
            self.runtime)

    @classmethod
    def from_dump(cls, directory, name, runtime=None):
        """The kernel `tilec compile --dump-dir directory` wrote as
        name.cubin and name.json."""
        directory = pathlib.Path(os.fspath(directory))
        cubin = (directory / f"{name}.cubin").read_bytes()
        metadata = (directory / f"{name}.json").read_text()
        return cls(cubin, metadata, runtime)

    def __repr__(self):
        return (f"tilec.Kernel({self.metadata.get('name')!r}, "
                f"{self.metadata.get('target')!r}, "
                f"{self.metadata.get('config')!r})")

    def close(self):
        """Unloads the kernel now (else when it is collected); a second
        close does nothing, and a closed kernel is not to be used."""
        self._finalizer()

    def set(self, **values):
        """Sets arguments by name: a pointer from a tensor or an int address,
        an integer or a float by the signature's type. The runtime refuses a
        value that does not fit or breaks the specialization."""
        for name, value in values.items():
            index = self._index.get(name)
            if index is None:
                raise InvalidArgumentError(
                    "Kernel.set", f"{self.metadata.get('name')} has no "
                    f"argument '{name}' (it has "
                    f"{', '.join(self._index)})")
            kind = self.signature[index]["type"]
            if kind.startswith("ptr"):
                function, converted = "tilec_kernel_set_pointer", \
                    _address(value)
            elif kind.startswith("f"):
                function, converted = "tilec_kernel_set_float", float(value)
            else:
                function, converted = "tilec_kernel_set_int", int(value)
            self._lib.check(getattr(self._lib.lib, function)(
                self.handle, index, converted), f"{function} ({name})")
        return self

    def launch(self, grid, stream=None):
        """Launches a grid (1 to 3 block counts) on `stream` with the
        arguments set so far; refused if one is not set."""
        grid = tuple(int(g) for g in grid)
        if not 1 <= len(grid) <= 3 or any(g < 1 for g in grid):
            raise InvalidArgumentError(
                "Kernel.launch", f"a grid is 1 to 3 positive block counts, "
                f"got {grid}")
        grid += (1,) * (3 - len(grid))
        self._lib.check(self._lib.lib.tilec_kernel_launch(
            self.handle, *grid, _stream_handle(stream)),
            "tilec_kernel_launch")
