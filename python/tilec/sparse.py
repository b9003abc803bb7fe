"""Sparse tensors and the submanifold convolution on torch tensors, through
the C API without copies: device pointers (data_ptr) and torch's current
stream go to libtilec_c.so as they are.

Every argument is checked here before a pointer reaches the library (a host
pointer given as a device pointer would not fail cleanly), in this order:
type, shape, dtype, layout, then device, so that a tensor on the wrong device
is told apart from one of the wrong shape.
"""

import ctypes
import itertools
import os
import warnings
import weakref
from typing import List, Optional, Tuple

import torch

from ._library import ConvLayerPlan, Error, InvalidArgumentError, release
from .runtime import default_runtime

# enum tilec_dtype
DTYPES = {torch.float16: 0, torch.bfloat16: 1, torch.float32: 2}


# Whether a convolution's first call queues compiles ahead of its tunings:
# the first forward of a tilec.nn layer those of every layer made so far
# that has not run (tilec.nn.compile_ahead), a functional call that autograd
# records its own backward's with its forward's (plan_training_call).
# False (or TILEC_COMPILE_LAYERS_AHEAD=0 at import) leaves each call to
# compile its own kernels when it tunes them.
compile_layers_ahead = os.environ.get("TILEC_COMPILE_LAYERS_AHEAD", "1") != "0"

# The training calls plan_training_call queued, by shape.
_PLANNED_CALLS = set()


def _fail(function, message):
    raise InvalidArgumentError(function, message)


def check_form(function, name, tensor, dims, dtypes, columns=None):
    """A torch tensor of `dims` dimensions (of `columns` = (count, what the
    shape means) columns where given), one of `dtypes`, contiguous."""
    if not isinstance(tensor, torch.Tensor):
        _fail(function, f"{name} must be a torch.Tensor, got "
              f"{type(tensor).__name__}")
    if tensor.dim() != dims or (columns and tensor.shape[1] != columns[0]):
        _fail(function, f"{name} must be " + (
            columns[1] if columns else f"of {dims} dimensions") +
            f", got shape {list(tensor.shape)}")
    if tensor.dtype not in dtypes:
        _fail(function, f"{name} must be " + " or ".join(
            _name(d) for d in dtypes) + f", got {_name(tensor.dtype)}")
    if not tensor.is_contiguous():
        _fail(function, f"{name} must be contiguous (shape "
              f"{list(tensor.shape)}, strides {list(tensor.stride())}): "
              f"call .contiguous()")


def check_device(function, name, tensor, device):
    """`tensor` on `device`, the sparse tensor's (its coordinates')."""
    if tensor.device != device:
        _fail(function, f"{name} must be on {device}, the device of the "
              f"tensor's coordinates, got {tensor.device}")


def coords_device(function, coords):
    """The CUDA device of `coords`: the sparse tensor's and its runtime's."""
    if coords.device.type != "cuda":
        _fail(function, f"coords must be on a CUDA device, got "
              f"{coords.device}")
    return torch.device("cuda", coords.device.index
                        if coords.device.index is not None
                        else torch.cuda.current_device())


def _name(dtype):
    return str(dtype).replace("torch.", "")


# torch's current raw stream by device index, without making a torch
# Stream object per call (a few us a convolution); torch builds without it
# take the public way.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def current_stream(device):
    """torch's current stream on `device` (a CUDA torch.device with its
    index) as a CUstream (0: the legacy default stream)."""
    if _raw_stream is not None:
        return _raw_stream(device.index)
    return torch.cuda.current_stream(device).cuda_stream


# The C API's tilec_row_order, by name.
ROW_ORDERS = {"key": 0, "lean_groups": 1, "auto": 2}


# The maps objects the convolution ops find by their token.
_MAPS = weakref.WeakValueDictionary()
_MAP_IDS = itertools.count(1)


def register_maps(maps):
    """A token for `maps`: an int64 tensor of one element holding its id,
    what the convolution ops (torch.library custom ops) take instead of the
    object. A tensor, so that a compiled graph takes each new tensor's as an
    input instead of recompiling for its value. The token holds its maps:
    autograd saves it for the backward, which needs the maps after the last
    SparseTensor over them may be gone (the maps do not hold the token, so
    no cycle keeps them past their last user)."""
    ident = next(_MAP_IDS)
    _MAPS[ident] = maps
    token = torch.full((1,), ident, dtype=torch.int64)
    token._tilec_maps = maps
    return token


def maps_of(token):
    # The token made by register_maps holds its maps; one that lost the
    # attribute (a copy) is looked up by its id.
    maps = getattr(token, "_tilec_maps", None)
    if maps is not None:
        return maps
    maps = _MAPS.get(int(token.item()))
    if maps is None:
        raise InvalidArgumentError("submanifold_conv3d", "the sparse tensor "
                                   "of this call no longer exists")
    return maps


def over(maps, features):
    """A SparseTensor over `maps` with `features` (the ops' view of one)."""
    tensor = SparseTensor.__new__(SparseTensor)
    tensor._maps, tensor._features = maps, features
    tensor._spatial_shape = tensor._batch_size = tensor._token = None
    tensor.indice_dict = {}
    return tensor


class _Maps:
    """The C API sparse tensor over one coordinates tensor: it holds the
    neighbour maps it builds, so every SparseTensor over the same coordinates
    (replace_feature) shares them."""

    def __init__(self, runtime, coords, row_order):
        self.device = coords.device
        lib = runtime._lib
        handle = ctypes.c_void_p()
        with runtime.lock:
            lib.check(lib.lib.tilec_sparse_tensor_create(
                runtime.handle, coords.data_ptr(), coords.shape[0],
                ctypes.byref(handle)), "tilec_sparse_tensor_create")
        self.runtime, self.handle, self.coords = runtime, handle.value, coords
        # The runtime and the coordinates it reads outlive it.
        weakref.finalize(self, release, lib.lib.tilec_sparse_tensor_destroy,
                         self.handle, runtime, coords)
        with runtime.lock:
            lib.check(lib.lib.tilec_sparse_tensor_set_row_order(
                self.handle, ROW_ORDERS[row_order]),
                "tilec_sparse_tensor_set_row_order")


class SparseTensor:
    """Voxels on the GPU: coords int32 [N, 4] (batch, x, y, z), each voxel
    once, 0 <= batch, x, y, z < 65536, and features [N, C] (f16, bf16 or
    f32), both contiguous on one CUDA device (any cuda:N). Neither is
    copied: the tensor keeps references to both. It runs on that device's
    default runtime (tilec.default_runtime(N)) unless given another of the
    same device, on torch's current stream of the device.

    Its neighbour maps are built on the first convolution of each window
    (kernel extents and dilations) and cached; replace_feature gives a tensor with
    the same coordinates and maps and other features (what every layer of a
    network returns), so the layers of a network share them.
    Duplicate voxels and coordinates out of range are found when the maps
    are built: tilec.InvalidInputError, with the voxels named.

    row_order: "lean_groups" moves each row of the convolution's GEMM to
    the leanest group of rows that runs its offsets, less work on surfaces
    and street scenes for a slower map build; "key" keeps the faster build;
    "auto" (the default) takes "lean_groups" where the first convolution
    over the maps has in * out channels >= 256 * 256, else "key"
    (docs/sparse-conv.md, "Rows moved to lean groups").

    spatial_shape (the grid, three ints: every coordinate below them) and
    batch_size (every batch index below it) are what a strided convolution
    and dense() need, as spconv's SparseConvTensor has them; a submanifold
    convolution does not. indice_dict is spconv's: the maps a strided layer
    made, by its indice_key, for the inverse layer that comes back up; the
    tensors a network makes from one input share it.
    """

    def __init__(self, coords, features=None, runtime=None,
                 row_order="auto", spatial_shape=None, batch_size=None):
        if not isinstance(row_order, str) or row_order not in ROW_ORDERS:
            _fail("SparseTensor", "row_order must be one of %s, got %r"
                  % (", ".join(sorted(ROW_ORDERS)), row_order))
        check_form("SparseTensor", "coords", coords, 2, (torch.int32,),
                   columns=(4, "[N, 4] (batch, x, y, z)"))
        if features is not None:
            self._check_features(features, coords.shape[0])
        self._spatial_shape = _grid("SparseTensor", spatial_shape)
        if batch_size is not None and (not isinstance(batch_size, int) or
                                       isinstance(batch_size, bool) or
                                       not 1 <= batch_size <= 65536):
            _fail("SparseTensor", f"batch_size must be an int from 1 to "
                  f"65536, got {batch_size!r}")
        self._batch_size = batch_size
        device = coords_device("SparseTensor", coords)
        if features is not None:
            check_device("SparseTensor", "features", features, device)
        if runtime is None:
            runtime = default_runtime(device.index)
        elif runtime.device != device.index:
            _fail("SparseTensor", f"the runtime runs on cuda:{runtime.device}"
                  f" and the coordinates are on {device}")
        self._maps = _Maps(runtime, coords, row_order)
        self._token = register_maps(self._maps)
        self._features = features
        self.indice_dict = {}

    @classmethod
    def from_spconv(cls, tensor, runtime=None, row_order="auto"):
        """The voxels of a spconv (or spconv-Triton) SparseConvTensor: its
        `indices` ([N, 4] int32, batch first) and `features`, not copied,
        with its spatial_shape and batch_size. The coordinate order is the
        tensor's own, as spconv's weights use it. row_order as for
        SparseTensor."""
        return cls(tensor.indices, tensor.features, runtime, row_order,
                   spatial_shape=list(tensor.spatial_shape),
                   batch_size=int(tensor.batch_size))

    @staticmethod
    def _check_features(features, voxels):
        check_form("SparseTensor", "features", features, 2, tuple(DTYPES))
        if features.shape[0] != voxels:
            _fail("SparseTensor", f"features has {features.shape[0]} rows "
                  f"for {voxels} voxels")

    @property
    def features(self):
        """[N, C], or None; read-only: replace_feature gives other ones."""
        return self._features

    @property
    def coords(self):
        return self._maps.coords

    @property
    def runtime(self):
        return self._maps.runtime

    @property
    def device(self):
        """The tensor's CUDA device (its coordinates')."""
        return self._maps.device

    @property
    def voxels(self):
        return self._maps.coords.shape[0]

    @property
    def indices(self):
        """coords, by spconv's name."""
        return self._maps.coords

    @property
    def spatial_shape(self):
        """The grid (x, y, z), or None."""
        return self._spatial_shape

    @property
    def batch_size(self):
        return self._batch_size

    def replace_feature(self, features):
        """A tensor with these voxels (and their maps, grid, batch size and
        indice_dict) and `features`."""
        self._check_features(features, self.voxels)
        check_device("SparseTensor", "features", features, self.device)
        return self._with_features(features)

    def _with_features(self, features):
        """replace_feature without its checks, for the outputs of this
        package's own convolutions ([N, Co] on the tensor's device)."""
        replaced = SparseTensor.__new__(SparseTensor)
        # Field by field: torch.compile's dynamo (torch 2.11) cannot trace
        # __dict__.update, and this runs inside a compiled network.
        replaced._maps, replaced._features = self._maps, features
        replaced._spatial_shape = self._spatial_shape
        replaced._batch_size = self._batch_size
        replaced.indice_dict, replaced._token = self.indice_dict, self._token
        return replaced

    def dense(self, channels_first=True):
        """The features on the dense grid, zeros where there is no voxel:
        [batch_size, C, X, Y, Z] (channels_first, spconv's default) or
        [batch_size, X, Y, Z, C]."""
        if self.features is None:
            _fail("dense", "the tensor has no features")
        if self.spatial_shape is None or self.batch_size is None:
            _fail("dense", "the tensor has no spatial_shape or batch_size: "
                  "give them to SparseTensor")
        return dense_features(self.coords, self.features, self.spatial_shape,
                              self.batch_size, channels_first)

    @staticmethod
    def _cube(function, kernel_size, dilation):
        """A cubic window's size and dilation (an int, or three equal)."""
        def one(name, value):
            values = tuple(value) if isinstance(value, (tuple, list)) \
                else (value,) * 3
            if len(set(values)) != 1 or not isinstance(values[0], int):
                _fail(function, f"{name} must be an int or three equal ints "
                      f"(a cubic window; a convolution builds its other "
                      f"windows' maps itself), got {value!r}")
            return values[0]
        return one("kernel_size", kernel_size), one("dilation", dilation)

    def build_maps(self, kernel_size=3, dilation=1, block_rows=None):
        """Builds (or finds cached) the maps of a kernel_size^3 window on
        torch's current stream and waits for them: every row block the
        convolution may use, or those of `block_rows` rows alone (what a
        convolution whose winner runs them builds: 64, and 128 above 4,096
        voxels), rows in the key's order unless the tensor's row_order says
        "lean_groups". Optional: a convolution builds what it needs
        itself."""
        kernel_size, dilation = self._cube("build_maps", kernel_size,
                                           dilation)
        maps = self._maps
        lib = maps.runtime._lib
        stream = current_stream(maps.device)
        with maps.runtime.lock:
            if block_rows is None:
                function = "tilec_sparse_tensor_build_maps"
                status = lib.lib.tilec_sparse_tensor_build_maps(
                    maps.handle, kernel_size, dilation, stream)
            else:
                function = "tilec_sparse_tensor_build_maps_rows"
                status = lib.lib.tilec_sparse_tensor_build_maps_rows(
                    maps.handle, kernel_size, dilation, int(block_rows),
                    stream)
            lib.check(status, function)

    def active_pairs(self, kernel_size=3, dilation=1):
        """The (voxel, offset) pairs with a neighbour: a convolution's useful
        FLOPs are 2 * pairs * Ci * Co. Builds the maps first."""
        kernel_size, dilation = self._cube("active_pairs", kernel_size,
                                           dilation)
        self.build_maps(kernel_size, dilation)
        maps = self._maps
        lib = maps.runtime._lib
        pairs = ctypes.c_int64()
        with maps.runtime.lock:
            lib.check(lib.lib.tilec_sparse_tensor_active_pairs(
                maps.handle, kernel_size, dilation, ctypes.byref(pairs)),
                "tilec_sparse_tensor_active_pairs")
        return pairs.value

    def __repr__(self):
        c = None if self.features is None else self.features.shape[1]
        dtype = None if self.features is None else _name(self.features.dtype)
        return f"tilec.SparseTensor(voxels={self.voxels}, channels={c}, " \
               f"dtype={dtype})"


def _grid(function, shape):
    """A spatial shape as three positive ints, or None."""
    if shape is None:
        return None
    try:
        values = tuple(shape)
    except TypeError:
        values = ()
    if len(values) != 3 or not all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 65536
            for v in values):
        _fail(function, "spatial_shape must be three ints from 1 to 65536 "
              f"(x, y, z), got {shape!r}")
    return values


def dense_features(coords, features, spatial_shape, batch_size,
                   channels_first=True):
    """features [N, C] scattered into zeros of [batch_size, X, Y, Z, C] at
    coords [N, 4] (batch, x, y, z), channels moved first if asked."""
    x, y, z = spatial_shape
    grid = features.new_zeros(batch_size, x, y, z, features.shape[1])
    index = coords.long()
    grid[index[:, 0], index[:, 1], index[:, 2], index[:, 3]] = features
    return grid.permute(0, 4, 1, 2, 3).contiguous() if channels_first \
        else grid


def triple(function, name, value, minimum):
    """An int, or three ints (x, y, z), each at least `minimum`: a
    window's extents, strides, paddings and dilations."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * 3
    if len(values) != 3 or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= minimum
            for v in values):
        _fail(function, f"{name} must be an int or three ints >= {minimum}, "
              f"got {value!r}")
    return values


def features_of(function, tensor):
    """The features of `tensor`, after checking it is a tilec.SparseTensor
    that has them."""
    if not isinstance(tensor, SparseTensor):
        _fail(function, "expected a tilec.SparseTensor (from a spconv "
              "tensor: tilec.SparseTensor.from_spconv), got "
              f"{type(tensor).__name__}")
    if tensor.features is None:
        _fail(function, "the tensor has no features")
    return tensor.features


def check_weight_matches(function, features, weight, bias):
    """Checks that `weight` [Co, ..., Ci] takes the channels and dtype of
    `features` [rows, Ci] and that `bias` is None or [Co] of that dtype."""
    if features.shape[1] != weight.shape[4]:
        _fail(function, f"the features have {features.shape[1]} channels, "
              f"the weight takes {weight.shape[4]} (its last dimension)")
    if features.dtype != weight.dtype:
        _fail(function, f"the features are {_name(features.dtype)} and the "
              f"weight {_name(weight.dtype)}: convert one (e.g. the "
              f"module's .to(dtype))")
    if bias is not None:
        check_form(function, "bias", bias, 1, (weight.dtype,))
        if bias.shape[0] != weight.shape[0]:
            _fail(function, f"bias has {bias.shape[0]} entries for "
                  f"{weight.shape[0]} output channels")


def check_parameter_devices(function, weight, bias, device):
    """Checks that `weight` and `bias` (or None) are on `device`."""
    check_device(function, "weight", weight, device)
    if bias is not None:
        check_device(function, "bias", bias, device)


def autocast_dtype():
    """The dtype a convolution runs in under torch.autocast, else None."""
    return torch.get_autocast_dtype("cuda") \
        if torch.is_autocast_enabled("cuda") else None


def run_dtype(features):
    """The dtype a convolution of `features` runs in: the autocast dtype
    under torch.autocast, else the features'."""
    return autocast_dtype() or features.dtype


def queue_layer_compiles(runtime, plans):
    """tilec_compile_layers_ahead over `plans` (ConvLayerPlan) on
    `runtime`: the number of compiles queued."""
    lib = runtime._lib
    queued = ctypes.c_size_t()
    array = (ConvLayerPlan * len(plans))(*plans)
    with runtime.lock:
        lib.check(lib.lib.tilec_compile_layers_ahead(
            runtime.handle, array, len(plans), ctypes.byref(queued)),
            "tilec_compile_layers_ahead")
    return queued.value


def layer_plan(voxels, weight, bias, dilation, dtype, strided, input_grad,
               weight_grad, stride=(0, 0, 0), padding=(0, 0, 0)):
    """The ConvLayerPlan of a convolution with `weight` [Co, Kx, Ky, Kz,
    Ci] (and a bias where `bias`) run in `dtype` over `voxels` voxels; a
    strided layer that builds its maps gives its `stride` and `padding`
    (zeros: not given)."""
    tf32 = dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32
    return ConvLayerPlan(
        voxels, weight.shape[4], weight.shape[0],
        (ctypes.c_int32 * 3)(*weight.shape[1:4]),
        (ctypes.c_int32 * 3)(*dilation), DTYPES[dtype], bias, tf32, strided,
        input_grad, weight_grad, (ctypes.c_int32 * 3)(*stride),
        (ctypes.c_int32 * 3)(*padding))


def warn_unplanned(error):
    """A plan the library refused: only the compiles ahead are lost (each
    call still compiles its own kernels, where a real error shows)."""
    warnings.warn(f"tilec: the compiles were not queued ahead: {error}",
                  RuntimeWarning, stacklevel=4)


def plan_training_call(tensor, features, weight, bias, dilation, strided):
    """Where autograd records a convolution of a shape (its channels,
    window, dtype, bias, voxel count bucket, the gradients it will need)
    for the first time in the process, queues its backward's compiles with
    its forward's (tilec_compile_layers_ahead over this one layer): dX and
    dW then compile while the forward tunes, instead of after it."""
    if not compile_layers_ahead or torch.compiler.is_compiling() or \
            not torch.is_grad_enabled() or tensor.voxels == 0:
        return
    need_dx = features.requires_grad
    need_dw = weight.requires_grad
    dtype = run_dtype(features)
    if not (need_dx or need_dw) or dtype not in DTYPES:
        return
    shape = (tensor.device, dtype, tuple(weight.shape), tuple(dilation),
             bias is not None, strided, tensor.voxels.bit_length(), need_dx,
             need_dw)
    if shape in _PLANNED_CALLS:
        return
    _PLANNED_CALLS.add(shape)
    try:
        queue_layer_compiles(tensor.runtime, [layer_plan(
            tensor.voxels, weight, bias is not None, dilation, dtype, strided,
            need_dx, need_dw)])
    except Error as error:
        warn_unplanned(error)


def check_conv_arguments(features, weight, bias, dilation, device):
    """The window ((kx, ky, kz), (dx, dy, dz)) of a convolution of `features`
    ([N, Ci]) with `weight` ([Co, Kx, Ky, Kz, Ci]) dilated by `dilation` (an
    int or three) and `bias` ([Co] or None) on `device`, after checking them
    (the features' own form and device are checked by SparseTensor)."""
    function = "submanifold_conv3d"
    check_form(function, "weight", weight, 5, tuple(DTYPES))
    kernel = tuple(weight.shape[1:4])
    if not all(k % 2 == 1 and k <= 7 for k in kernel):
        _fail(function, "weight must be [Co, Kx, Ky, Kz, Ci] with each K "
              "odd, 1 to 7 (the layout of spconv and FlexGEMM), got "
              f"{list(weight.shape)}")
    check_weight_matches(function, features, weight, bias)
    window = (kernel, triple(function, "dilation", dilation, 1))
    check_parameter_devices(function, weight, bias, device)
    return window


# The C API's int32[3] pairs by window: the library only reads them, so one
# pair serves every call of a window (a process meets a few windows; the
# table is bounded all the same).
_WINDOW_ARRAYS = {}


def _window_arrays(window):
    arrays = _WINDOW_ARRAYS.get(window)
    if arrays is None:
        if len(_WINDOW_ARRAYS) >= 256:
            _WINDOW_ARRAYS.clear()
        kernel, dilation = window
        arrays = _WINDOW_ARRAYS[window] = (
            (ctypes.c_int32 * 3)(*kernel), (ctypes.c_int32 * 3)(*dilation))
    return arrays


def submanifold_conv3d(tensor, weight, bias=None, dilation=1):
    """y [N, Co] = the submanifold convolution of tensor.features [N, Ci] with
    weight [Co, Kx, Ky, Kz, Ci] (each K odd; offset (kx, ky, kz) of the
    window reads the voxel at (x, y, z) + ((kx, ky, kz) - K // 2) *
    dilation, the dilation an int or three) plus bias [Co],
    on torch's current stream. Differentiable in the features, weight and
    bias (tilec's backward: submanifold_conv3d_backward); under
    torch.autocast it runs in the autocast dtype. f32 runs on tf32 tensor
    cores when torch.backends.cuda.matmul.allow_tf32 is set. A torch.library
    custom op (tilec::submanifold_conv3d): torch.compile traces it into its
    graph, a new tensor's maps as one of the graph's inputs."""
    features = features_of("submanifold_conv3d", tensor)
    dilation = triple("submanifold_conv3d", "dilation", dilation, 1)
    plan_training_call(tensor, features, weight, bias, dilation, False)
    # Outside torch.compile the same computation and autograd run without
    # torch.library's dispatch (_EagerConv), and without autograd's
    # Function where nothing is to be differentiated (inference).
    if torch.compiler.is_compiling():
        conv = _conv_op
    elif torch.is_grad_enabled() and (
            features.requires_grad or weight.requires_grad or
            (bias is not None and bias.requires_grad)):
        conv = _EagerConv.apply
    else:
        # Inference: the body over the tensor's own maps, no token needed.
        return _conv_over(tensor._maps, features, weight, bias, dilation,
                          autocast_dtype())
    return conv(features, weight, bias, tensor._token, list(dilation),
                autocast_dtype())


def _forward(tensor, weight, bias, dilation):
    """submanifold_conv3d without autograd."""
    if not isinstance(tensor, SparseTensor):
        _fail("submanifold_conv3d", "expected a tilec.SparseTensor (from a "
              "spconv tensor: tilec.SparseTensor.from_spconv), got "
              f"{type(tensor).__name__}")
    features = tensor.features
    if features is None:
        _fail("submanifold_conv3d", "the tensor has no features")
    window = check_conv_arguments(features, weight, bias, dilation,
                                  tensor.device)
    kernel, dilation_xyz = _window_arrays(window)
    # The convolution builds the maps it needs on first use (the row block
    # its tuned winner runs, the row order its channels call for) and
    # reports a wrong input (duplicate voxels, coordinates out of range) as
    # tilec.InvalidInputError.
    maps = tensor._maps
    co = weight.shape[0]
    y = torch.empty(tensor.voxels, co, dtype=features.dtype,
                    device=tensor.device)
    tf32 = features.dtype == torch.float32 and \
        torch.backends.cuda.matmul.allow_tf32
    lib = maps.runtime._lib
    with maps.runtime.lock:
        status = lib.lib.tilec_submanifold_conv3d_window(
            maps.handle, features.data_ptr(), weight.data_ptr(),
            None if bias is None else bias.data_ptr(), y.data_ptr(),
            features.shape[1], co, kernel, dilation_xyz,
            DTYPES[features.dtype], 1 if tf32 else 0,
            current_stream(maps.device))
    lib.check(status, "tilec_submanifold_conv3d")
    return y


def submanifold_conv3d_backward(tensor, grad, weight, dilation=1,
                                input_grad=True, weight_grad=True,
                                bias_grad=False, weight_grad_dtype=None):
    """The gradients of y = submanifold_conv3d(tensor, weight, bias,
    dilation) for grad = dL/dy [N, Co]: (dx [N, Ci], dw [Co, Kx, Ky, Kz, Ci],
    db [Co]), each None unless asked for. dx is of the features' dtype; dw
    and db of weight_grad_dtype (the features' dtype, or torch.float32: fp16
    weight gradients overflow in mixed-precision training). Every sum runs in
    an order fixed by the call, so the same inputs give the same bits in
    every process. Runs on torch's current stream."""
    function = "submanifold_conv3d_backward"
    if not isinstance(tensor, SparseTensor):
        _fail(function, "expected a tilec.SparseTensor, got "
              f"{type(tensor).__name__}")
    features = tensor.features
    if features is None:
        _fail(function, "the tensor has no features")
    window = check_conv_arguments(features, weight, None, dilation,
                                  tensor.device)
    kernel, dilation_xyz = _window_arrays(window)
    co = weight.shape[0]
    check_form(function, "grad", grad, 2, (features.dtype,),
               columns=(co, f"[N, {co}] (the output's shape)"))
    if grad.shape[0] != tensor.voxels:
        _fail(function, f"grad has {grad.shape[0]} rows for {tensor.voxels} "
              f"voxels")
    check_device(function, "grad", grad, tensor.device)
    grad_dtype = weight_grad_dtype or features.dtype
    if grad_dtype not in (features.dtype, torch.float32):
        _fail(function, f"weight_grad_dtype must be {_name(features.dtype)} "
              f"or float32, got {_name(grad_dtype)}")
    dx = torch.empty_like(features) if input_grad else None
    dw = torch.empty(weight.shape, dtype=grad_dtype, device=tensor.device) \
        if weight_grad else None
    db = torch.empty(co, dtype=grad_dtype, device=tensor.device) \
        if bias_grad else None
    tf32 = features.dtype == torch.float32 and \
        torch.backends.cuda.matmul.allow_tf32
    maps = tensor._maps
    lib = maps.runtime._lib

    def pointer(t):
        return None if t is None else t.data_ptr()
    with maps.runtime.lock:
        status = lib.lib.tilec_submanifold_conv3d_window_backward(
            maps.handle, features.data_ptr(), weight.data_ptr(),
            grad.data_ptr(), pointer(dx), pointer(dw), pointer(db),
            features.shape[1], co, kernel, dilation_xyz,
            DTYPES[features.dtype], 1 if tf32 else 0,
            1 if grad_dtype == torch.float32 else 0,
            current_stream(maps.device))
    lib.check(status, "tilec_submanifold_conv3d_backward")
    return dx, dw, db


def _conv_over(maps, features, weight, bias, dilation, dtype):
    """submanifold_conv3d in `dtype` (the autocast dtype; None: the
    features') over `maps`."""
    if dtype is not None:  # autocast; else a mismatch is the caller's error
        features, weight = features.to(dtype), weight.to(dtype)
        bias = None if bias is None else bias.to(dtype)
    return _forward(over(maps, features), weight, bias, dilation)


def _conv(features, weight, bias, token, dilation, dtype):
    """_conv_over over the maps of `token`: the custom op's body."""
    return _conv_over(maps_of(token), features, weight, bias, dilation,
                      dtype)


@torch.library.custom_op("tilec::submanifold_conv3d", mutates_args=())
def _conv_op(features: torch.Tensor, weight: torch.Tensor,
             bias: Optional[torch.Tensor], token: torch.Tensor,
             dilation: List[int],
             dtype: Optional[torch.dtype]) -> torch.Tensor:
    """_conv as an op that torch.compile traces."""
    return _conv(features, weight, bias, token, dilation, dtype)


@_conv_op.register_fake
def _(features, weight, bias, token, dilation, dtype):
    return features.new_empty(features.shape[0], weight.shape[0],
                              dtype=dtype or features.dtype)


def _conv_backward(features, weight, grad, token, dilation, dtype,
                   input_grad, weight_grad, bias_grad, wide):
    """(dx, dw, db) of _conv, empty where not asked for: dx in the
    features' dtype, dw and db in f32 when `wide` (summed in f32), else in
    the run's dtype: the backward op's body."""
    run = dtype or features.dtype
    dx, dw, db = submanifold_conv3d_backward(
        over(maps_of(token), features.to(run)), grad.to(run).contiguous(),
        weight.to(run), dilation, input_grad=input_grad,
        weight_grad=weight_grad, bias_grad=bias_grad,
        weight_grad_dtype=torch.float32 if wide else None)
    # A custom op's outputs may not alias each other: an empty tensor each.
    return (features.new_empty(0) if dx is None else dx.to(features.dtype),
            features.new_empty(0) if dw is None else dw,
            features.new_empty(0) if db is None else db)


@torch.library.custom_op("tilec::submanifold_conv3d_backward",
                         mutates_args=())
def _conv_backward_op(features: torch.Tensor, weight: torch.Tensor,
                      grad: torch.Tensor, token: torch.Tensor,
                      dilation: List[int],
                      dtype: Optional[torch.dtype], input_grad: bool,
                      weight_grad: bool, bias_grad: bool,
                      wide: bool) -> Tuple[torch.Tensor, torch.Tensor,
                                           torch.Tensor]:
    """_conv_backward as an op that torch.compile traces."""
    return _conv_backward(features, weight, grad, token, dilation, dtype,
                          input_grad, weight_grad, bias_grad, wide)


@_conv_backward_op.register_fake
def _(features, weight, grad, token, dilation, dtype, input_grad,
      weight_grad, bias_grad, wide):
    sums = torch.float32 if wide else (dtype or features.dtype)
    return (features.new_empty(features.shape) if input_grad
            else features.new_empty(0),
            weight.new_empty(weight.shape, dtype=sums) if weight_grad
            else features.new_empty(0),
            weight.new_empty(weight.shape[0], dtype=sums) if bias_grad
            else features.new_empty(0))


def _setup_backward(ctx, inputs, output):
    features, weight, bias, token, dilation, dtype = inputs
    ctx.save_for_backward(features, weight, token)
    ctx.dilation, ctx.dtype = dilation, dtype
    ctx.has_bias = bias is not None
    ctx.w_dtype, ctx.b_dtype = weight.dtype, \
        None if bias is None else bias.dtype
    # A float32 master weight (under autocast) gets its gradient summed in
    # float32, never rounded through fp16.
    ctx.wide = torch.float32 in (weight.dtype, ctx.b_dtype)


def _backward_through(backward, ctx, grad):
    """dX, dW and db through `backward` (the op, or its body), each only
    where autograd needs it, each in its input's own dtype."""
    features, weight, token = ctx.saved_tensors
    need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
    need_db = need_db and ctx.has_bias
    dx, dw, db = backward(features, weight, grad, token, ctx.dilation,
                          ctx.dtype, need_dx, need_dw, need_db, ctx.wide)
    return (dx if need_dx else None,
            dw.to(ctx.w_dtype) if need_dw else None,
            db.to(ctx.b_dtype) if need_db else None, None, None, None)


def _backward(ctx, grad):
    return _backward_through(_conv_backward_op, ctx, grad)


_conv_op.register_autograd(_backward, setup_context=_setup_backward)


class _EagerConv(torch.autograd.Function):
    """_conv_op's computation and autograd (the same body, context and
    backward) where torch.compile is not tracing: torch.library's dispatch
    of the op and of its backward is most of the Python time of a small
    layer's training step (82-87 us against 28-34 us a step with stand-ins
    for the library: scripts/bench/python_overhead.py)."""

    @staticmethod
    def forward(ctx, features, weight, bias, token, dilation, dtype):
        y = _conv(features, weight, bias, token, dilation, dtype)
        _setup_backward(ctx, (features, weight, bias, token, dilation, dtype),
                        y)
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        return _backward_through(_conv_backward, ctx, grad)
