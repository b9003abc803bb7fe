"""torch.nn modules over tilec's sparse convolution, named and laid out as
spconv's (2.x, and spconv-Triton) so that a model swaps the import and keeps
its checkpoint:

    import spconv.pytorch as spconv     ->  import tilec.nn as spconv
    spconv.SparseConvTensor(f, i, ...)  ->  tilec.SparseTensor(i, f)

SubMConv3d's parameters are `weight` [Co, Kx, Ky, Kz, Ci] and `bias` [Co], the
layout of spconv 2.x (KRSC) and of FlexGEMM, whose kernel offsets run over
the first, second and third coordinate after the batch in the same order as
ours (docs/pytorch.md gives the evidence). SubMConv3d trains: autograd runs
tilec's backward (dX, dW, db; docs/sparse-conv.md, "Training").
SparseConv3d (strided, any kernel (kx, ky, kz)) and SparseInverseConv3d
(back up through the strided layer's indice_key) take spconv's arguments
and weight layout [Co, Kx, Ky, Kz, Ci] too, and train the same way.
"""

import math
import weakref

import torch
from torch import nn

from . import sparse as _sparse
from ._library import Error, InvalidArgumentError
# SparseTensor stays importable from tilec.nn, as it was.
from .sparse import SparseTensor  # noqa
from .sparse import DTYPES, features_of, submanifold_conv3d, triple
from .strided import sparse_conv3d, sparse_inverse_conv3d

class SparseModule(nn.Module):
    """A module that takes and returns a tilec.SparseTensor; SparseSequential
    hands other modules (ReLU, BatchNorm1d, ...) the features alone."""


def spconv_pointwise_weight(weight):
    """The [Co, 1, 1, 1, Ci] weight of a pointwise (1 x 1 x 1, stride 1)
    layer as spconv 2.x and spconv-Triton compute with it: y = x @
    weight.view(Ci, Co), a raw reinterpretation of the KRSC memory, not its
    transpose (spconv-Triton calls it a parity quirk). The same state_dict
    then gives the same layer here (differentiable)."""
    co, ci = weight.shape[0], weight.shape[-1]
    return weight.reshape(ci, co).t().contiguous().reshape(co, 1, 1, 1, ci)


# Every convolution layer made in this process, in the order made (weak:
# a layer that is gone is skipped).
_LAYERS = []


def compile_ahead(layers, example, training=None):
    """Queues, on tilec's compile workers, the compiles of every kernel
    candidate that the first calls of `layers` (a module, whose tilec.nn
    convolutions are taken in module order, or an iterable of them) would
    tune over tensors like `example` (a tilec.SparseTensor: its voxel
    count, device, and features dtype, or the autocast dtype), forward and,
    when `training` (default: whether autograd records), the input
    gradients (but the first layer's, where the example's features need
    none) and the weight gradients of trainable weights; returns the number
    queued at once, without waiting. A network's first pass then finds each
    layer's candidates compiled on every core while the layers before it
    tune, instead of compiling them layer by layer. Nothing is queued where
    the caches, a bundle or pins answer the first layer's calls (a network
    tuned before). The first forward of any tilec.nn convolution does this
    for every layer made so far that has not run, unless
    tilec.sparse.compile_layers_ahead is False."""
    if isinstance(layers, nn.Module):
        layers = [m for m in layers.modules() if isinstance(m, _KernelConv)]
    layers = list(layers)
    for layer in layers:
        if not isinstance(layer, _KernelConv):
            raise InvalidArgumentError(
                "compile_ahead", f"expected tilec.nn convolutions, got "
                f"{type(layer).__name__}")
    features = features_of("compile_ahead", example)
    dtype = _sparse.run_dtype(features)
    if dtype not in DTYPES:
        raise InvalidArgumentError(
            "compile_ahead", f"the convolutions run in f16, bf16 or f32, "
            f"the features are {dtype}")
    for layer in layers:
        layer._compiled_ahead = True
    if example.voxels == 0 or not layers:
        return 0
    if training is None:
        training = torch.is_grad_enabled()
    plans = []
    for index, layer in enumerate(layers):
        # A downsampling layer builds its maps: its stride and padding plan
        # that build's kernels (an inverse layer reuses its maps).
        steps = (layer.stride, layer.padding) \
            if isinstance(layer, SparseConv3d) else ((0, 0, 0), (0, 0, 0))
        plans.append(_sparse.layer_plan(
            example.voxels, layer.weight, layer.bias is not None,
            getattr(layer, "dilation", (1, 1, 1)), dtype,
            not isinstance(layer, SubMConv3d),
            training and (index > 0 or features.requires_grad),
            training and layer.weight.requires_grad, *steps))
    return _sparse.queue_layer_compiles(example.runtime, plans)


class _KernelConv(SparseModule):
    """The parameters of a convolution of a (kx, ky, kz) kernel in spconv's
    layout, weight [Co, Kx, Ky, Kz, Ci] and bias [Co], their initialization
    and the checks of a layer's input. `odd` asks for an odd extent per
    axis (a submanifold window has a centre)."""

    # Whether compile_ahead planned the layer (or it ran): a class default,
    # so that a layer unpickled from before the attribute has it.
    _compiled_ahead = False

    def __init__(self, name, in_channels, out_channels, kernel_size, bias,
                 groups, device, dtype, odd=False):
        super().__init__()
        if groups != 1:
            raise InvalidArgumentError(name, f"groups must be 1, got {groups}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = triple(name, "kernel_size", kernel_size, 1)
        if odd and not all(k % 2 == 1 and k <= 7 for k in self.kernel_size):
            raise InvalidArgumentError(
                name, f"kernel_size must be odd, 1 to 7 per axis, got "
                f"{kernel_size!r}")
        if max(self.kernel_size) > 7:
            raise InvalidArgumentError(
                name, f"kernel_size must be 1 to 7 per axis, got "
                f"{kernel_size!r}")
        _LAYERS.append(weakref.ref(self))
        factory = {"device": device, "dtype": dtype}
        self.weight = nn.Parameter(torch.empty(
            out_channels, *self.kernel_size, in_channels, **factory))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _compile_layers_ahead(self, x):
        """compile_ahead for every layer made so far, on x's device, that
        has not run: this one's first call, then the rest in the order they
        were made."""
        _LAYERS[:] = [ref for ref in _LAYERS if ref() is not None]
        layers = [self] + [
            layer for layer in (ref() for ref in _LAYERS)
            if layer is not None and layer is not self and
            not layer._compiled_ahead and layer.weight.device == x.device]
        try:
            compile_ahead(layers, x)
        except Error as error:
            for layer in layers:
                layer._compiled_ahead = True
            _sparse.warn_unplanned(error)

    def reset_parameters(self):
        """spconv's initialization: kaiming_uniform_(a=sqrt(5)) with the
        fan-in of the layout, Ci * Kx * Ky * Kz, which is U(-b, b) with
        b = 1 / sqrt(fan_in), for the weight and the bias."""
        kx, ky, kz = self.kernel_size
        bound = 1.0 / math.sqrt(self.in_channels * kx * ky * kz)
        with torch.no_grad():
            self.weight.uniform_(-bound, bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)

    def _features(self, name, x):
        features = features_of(name, x)
        if _sparse.compile_layers_ahead and not self._compiled_ahead and \
                not torch.compiler.is_compiling() and x.voxels > 0 and \
                _sparse.run_dtype(features) in DTYPES:
            self._compile_layers_ahead(x)
        if features.shape[1] != self.in_channels:
            raise InvalidArgumentError(
                name, f"the layer takes {self.in_channels} input channels, "
                f"the features have {features.shape[1]}")
        return features


class SubMConv3d(_KernelConv):
    """Submanifold 3-D convolution: y at each voxel of x from the voxels of
    its kernel window (an odd extent per axis: an int, or three, as (3, 1, 3)
    in Cylinder3D; dilated per axis), at the same voxels.

    spconv's arguments are taken where they mean the same: `stride` and
    `padding` are accepted and, as in spconv's submanifold convolution,
    unused (the output voxels are the input's); `indice_key` is accepted
    and unused, since a tilec.SparseTensor caches its maps for every layer
    over its coordinates; groups must be 1. `device` and `dtype` are the
    parameters', as in torch.nn. kernel_size and dilation are kept as three
    ints each, as spconv keeps them.
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1,
                 padding=0, dilation=1, groups=1, bias=True, indice_key=None,
                 device=None, dtype=None):
        super().__init__("SubMConv3d", in_channels, out_channels,
                         kernel_size, bias, groups, device, dtype, odd=True)
        self.dilation = triple("SubMConv3d", "dilation", dilation, 1)
        self.indice_key = indice_key

    # tilec::submanifold_conv3d is a torch.library custom op: torch.compile
    # traces this layer into its graph.
    def forward(self, x):
        self._features("SubMConv3d", x)
        weight = spconv_pointwise_weight(self.weight) \
            if self.kernel_size == (1, 1, 1) else self.weight
        # The convolution's output is [N, Co] on x's device: replaced
        # without replace_feature's checks.
        return x._with_features(
            submanifold_conv3d(x, weight, self.bias, self.dilation))

    def extra_repr(self):
        text = f"{self.in_channels}, {self.out_channels}, " \
               f"kernel_size={self.kernel_size}"
        if self.dilation != (1, 1, 1):
            text += f", dilation={self.dilation}"
        if self.bias is None:
            text += ", bias=False"
        return text


class SparseConv3d(_KernelConv):
    """Strided sparse 3-D convolution (spconv's SparseConv3d): the output
    voxels are the cells of the output grid that some kernel offset reads an
    input voxel from (output o reads o * stride - padding + k * dilation),
    in ascending (batch, x, y, z) order; the input needs its spatial_shape
    and batch_size. With `indice_key`, SparseInverseConv3d of the same key
    comes back to this layer's input voxels. `algo` is accepted and unused.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, dilation=1, groups=1, bias=True, indice_key=None,
                 algo=None, device=None, dtype=None):
        super().__init__("SparseConv3d", in_channels, out_channels,
                         kernel_size, bias, groups, device, dtype)
        self.stride = triple("SparseConv3d", "stride", stride, 1)
        self.padding = triple("SparseConv3d", "padding", padding, 0)
        self.dilation = triple("SparseConv3d", "dilation", dilation, 1)
        self.indice_key = indice_key

    @torch.compiler.disable  # ctypes calls: nothing for a compiler to trace
    def forward(self, x):
        self._features("SparseConv3d", x)
        pointwise = self.kernel_size == (1, 1, 1) and self.stride == (1, 1, 1)
        weight = spconv_pointwise_weight(self.weight) if pointwise \
            else self.weight
        return sparse_conv3d(x, weight, self.bias, self.stride,
                             self.padding, self.dilation, self.indice_key)

    def extra_repr(self):
        text = f"{self.in_channels}, {self.out_channels}, " \
               f"kernel_size={self.kernel_size}, stride={self.stride}"
        if any(self.padding):
            text += f", padding={self.padding}"
        if self.dilation != (1, 1, 1):
            text += f", dilation={self.dilation}"
        if self.bias is None:
            text += ", bias=False"
        return text


class SparseInverseConv3d(_KernelConv):
    """The inverse of the SparseConv3d that recorded `indice_key` (spconv's
    SparseInverseConv3d): from that layer's output voxels back to its input
    voxels, over the same maps; kernel_size must be that layer's."""

    def __init__(self, in_channels, out_channels, kernel_size,
                 indice_key=None, bias=True, algo=None, device=None,
                 dtype=None):
        super().__init__("SparseInverseConv3d", in_channels, out_channels,
                         kernel_size, bias, 1, device, dtype)
        if indice_key is None:
            raise InvalidArgumentError(
                "SparseInverseConv3d", "indice_key must name the "
                "SparseConv3d to come back from")
        self.indice_key = indice_key

    @torch.compiler.disable  # ctypes calls: nothing for a compiler to trace
    def forward(self, x):
        self._features("SparseInverseConv3d", x)
        return sparse_inverse_conv3d(x, self.weight, self.bias,
                                     self.indice_key)

    def extra_repr(self):
        return f"{self.in_channels}, {self.out_channels}, " \
               f"kernel_size={self.kernel_size}, " \
               f"indice_key={self.indice_key!r}"


class SparseSequential(SparseModule, nn.Sequential):
    """nn.Sequential over a tilec.SparseTensor, as spconv's: a SparseModule
    gets the tensor, any other module its features (the result replaces
    them). Its state_dict keys are spconv's SparseSequential's."""

    def forward(self, x):
        for module in self:
            if isinstance(module, SparseModule):
                x = module(x)
            else:
                x = x.replace_feature(module(x.features))
        return x
