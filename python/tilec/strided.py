"""Strided and inverse sparse convolutions on torch tensors: spconv's
SparseConv3d (a new, coarser set of voxels) and SparseInverseConv3d (back to
the voxels a strided layer started from, through its indice_key), through
the C API without copies of the features (docs/sparse-conv.md, "Strided and
inverse convolutions").

A strided convolution's output voxels are every grid cell some kernel offset
reads an input voxel from, in ascending (batch, x, y, z) order: the same
voxels in the same order in every process. Its maps are built on the GPU
once per (input voxels, geometry) and kept with the input's voxels, where
the inverse convolution finds them.
"""

import ctypes
from collections import namedtuple

import torch

from ._library import ConvGeometry
from .sparse import (DTYPES, SparseTensor, _fail, autocast_dtype,
                     check_form, check_parameter_devices,
                     check_weight_matches, current_stream, features_of,
                     plan_training_call, triple)

# The kernel's extent per axis that the GPU maps take.
MAX_KERNEL = 7


class Geometry(namedtuple("Geometry", "kernel stride padding dilation")):
    """A convolution's geometry per axis: output voxel o reads, at kernel
    offset k, the input voxel o * stride - padding + k * dilation."""

    def struct(self):
        def ints(values):
            return (ctypes.c_int32 * 3)(*values)
        return ConvGeometry(ints(self.kernel), ints(self.stride),
                            ints(self.padding), ints(self.dilation))


def _shape(values):
    return (ctypes.c_int64 * 3)(*values)


def _check_grid(function, tensor):
    if tensor.spatial_shape is None or tensor.batch_size is None:
        _fail(function, "the tensor has no spatial_shape or batch_size (a "
              "strided convolution needs its grid): give them to "
              "SparseTensor, as spconv's SparseConvTensor takes them")


def strided_maps(tensor, geometry):
    """Builds (or finds) the maps of the strided convolution `geometry` over
    `tensor`'s voxels on torch's current stream and waits for them; returns
    the output voxels' count and the output grid."""
    function = "sparse_conv3d"
    _check_grid(function, tensor)
    maps = tensor._maps
    lib = maps.runtime._lib
    outputs = ctypes.c_int64()
    out_shape = _shape((0, 0, 0))
    with maps.runtime.lock:
        lib.check(lib.lib.tilec_sparse_tensor_strided(
            maps.handle, ctypes.byref(geometry.struct()),
            _shape(tensor.spatial_shape), tensor.batch_size,
            current_stream(maps.device), ctypes.byref(outputs), out_shape),
            "tilec_sparse_tensor_strided")
    return outputs.value, tuple(out_shape)


def _output_tensor(tensor, geometry, outputs, out_shape):
    """A tensor over the output voxels (their coordinates copied into a
    torch tensor of its own), sharing the input's indice_dict."""
    maps = tensor._maps
    lib = maps.runtime._lib
    coords = torch.empty(outputs, 4, dtype=torch.int32, device=tensor.device)
    with maps.runtime.lock:
        lib.check(lib.lib.tilec_sparse_tensor_strided_coords(
            maps.handle, ctypes.byref(geometry.struct()),
            _shape(tensor.spatial_shape), tensor.batch_size,
            coords.data_ptr(), current_stream(maps.device)),
            "tilec_sparse_tensor_strided_coords")
    out = SparseTensor(coords, None, maps.runtime,
                       spatial_shape=out_shape, batch_size=tensor.batch_size)
    out.indice_dict = tensor.indice_dict
    return out


def _bare(tensor):
    """`tensor` without its features and its indice_dict: what indice_dict
    keeps (the dict holding a tensor that holds the dict would be a cycle,
    and keep every level's maps until the garbage collector runs)."""
    bare = tensor._with_features(None)
    bare.indice_dict = {}
    return bare


def _as_run(dtype, *tensors):
    """The tensors as the convolution runs them: in the autocast dtype, or
    as they are."""
    return tuple(t if t is None or dtype is None else t.to(dtype)
                 for t in tensors)


# What a strided layer leaves in indice_dict under its indice_key: the
# voxels it started from (with their maps) and its geometry.
StridedLink = namedtuple("StridedLink", "source geometry outputs")


def check_strided_weight(function, features, weight, bias, device):
    """The kernel (kx, ky, kz) of `weight` [Co, Kx, Ky, Kz, Ci] for
    `features` [rows, Ci], after checking them and `bias` [Co] or None."""
    check_form(function, "weight", weight, 5, tuple(DTYPES))
    kernel = tuple(weight.shape[1:4])
    if not all(1 <= k <= MAX_KERNEL for k in kernel):
        _fail(function, f"weight must be [Co, Kx, Ky, Kz, Ci] with each K "
              f"from 1 to {MAX_KERNEL} (spconv's layout), got "
              f"{list(weight.shape)}")
    check_weight_matches(function, features, weight, bias)
    check_parameter_devices(function, weight, bias, device)
    return kernel


def _tf32(features):
    return features.dtype == torch.float32 and \
        torch.backends.cuda.matmul.allow_tf32


def _pointer(tensor):
    return None if tensor is None else tensor.data_ptr()


def _forward(source, geometry, inverse, features, weight, bias, rows):
    """y [rows, Co] of the strided (or inverse) convolution over `source`'s
    maps, without autograd."""
    maps = source._maps
    lib = maps.runtime._lib
    co = weight.shape[0]
    y = torch.empty(rows, co, dtype=features.dtype, device=source.device)
    with maps.runtime.lock:
        status = lib.lib.tilec_sparse_conv3d(
            maps.handle, ctypes.byref(geometry.struct()),
            _shape(source.spatial_shape), source.batch_size,
            1 if inverse else 0, features.data_ptr(), weight.data_ptr(),
            _pointer(bias), y.data_ptr(), features.shape[1], co,
            DTYPES[features.dtype], 1 if _tf32(features) else 0,
            current_stream(maps.device))
    lib.check(status, "tilec_sparse_conv3d")
    return y


def _backward(source, geometry, inverse, features, weight, grad, need,
              weight_grad_dtype):
    """(dx, dw, db) of _forward for grad = dL/dy, each where `need` asks."""
    maps = source._maps
    lib = maps.runtime._lib
    co = weight.shape[0]
    dx = torch.empty_like(features) if need[0] else None
    dw = torch.empty(weight.shape, dtype=weight_grad_dtype,
                     device=source.device) if need[1] else None
    db = torch.empty(co, dtype=weight_grad_dtype, device=source.device) \
        if need[2] else None
    with maps.runtime.lock:
        status = lib.lib.tilec_sparse_conv3d_backward(
            maps.handle, ctypes.byref(geometry.struct()),
            _shape(source.spatial_shape), source.batch_size,
            1 if inverse else 0, features.data_ptr(), weight.data_ptr(),
            grad.data_ptr(), _pointer(dx), _pointer(dw), _pointer(db),
            features.shape[1], co, DTYPES[features.dtype],
            1 if _tf32(features) else 0,
            1 if weight_grad_dtype == torch.float32 else 0,
            current_stream(maps.device))
    lib.check(status, "tilec_sparse_conv3d_backward")
    return dx, dw, db


class _StridedConv3d(torch.autograd.Function):
    """The strided or inverse convolution where autograd records it; as
    tilec.sparse's submanifold one under torch.autocast (the run in the
    autocast dtype, each gradient in its input's dtype, a float32 weight's
    summed in float32) and computing only the gradients autograd needs."""

    @staticmethod
    def forward(ctx, features, weight, bias, source, geometry, inverse, rows):
        x, w, b = _as_run(autocast_dtype(), features, weight, bias)
        ctx.save_for_backward(x, w)
        ctx.source, ctx.geometry, ctx.inverse = source, geometry, inverse
        ctx.dtypes = (features.dtype, weight.dtype,
                      None if bias is None else bias.dtype)
        with torch.autocast("cuda", enabled=False):
            return _forward(source, geometry, inverse, x, w, b, rows)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        x_dtype, w_dtype, b_dtype = ctx.dtypes
        wide = torch.float32 if torch.float32 in (w_dtype, b_dtype) \
            else x.dtype
        dx, dw, db = _backward(ctx.source, ctx.geometry, ctx.inverse, x, w,
                               grad.to(x.dtype).contiguous(),
                               ctx.needs_input_grad[:3], wide)
        return (None if dx is None else dx.to(x_dtype),
                None if dw is None else dw.to(w_dtype),
                None if db is None else db.to(b_dtype), None, None, None,
                None)


def sparse_conv3d(tensor, weight, bias=None, stride=1, padding=0, dilation=1,
                  indice_key=None):
    """spconv's SparseConv3d as a function: a tensor over the output voxels
    (every cell of the output grid that a kernel offset reads an input voxel
    from, in ascending (batch, x, y, z) order; spatial_shape the output
    grid) with features [outputs, Co] = the convolution of tensor.features
    [N, Ci] with weight [Co, Kx, Ky, Kz, Ci] plus bias [Co]. With
    indice_key, the maps are kept in the tensors' indice_dict for
    sparse_inverse_conv3d. Differentiable; on torch's current stream."""
    function = "sparse_conv3d"
    features = features_of(function, tensor)
    _check_grid(function, tensor)
    # Under autocast the layer runs in its dtype (the weights may be f32
    # masters, the features f16): checked as they will run.
    kernel = check_strided_weight(
        function, *_as_run(autocast_dtype(), features, weight, bias),
        tensor.device)
    geometry = Geometry(kernel, triple(function, "stride", stride, 1),
                        triple(function, "padding", padding, 0),
                        triple(function, "dilation", dilation, 1))
    plan_training_call(tensor, features, weight, bias, geometry.dilation,
                       True)
    outputs, out_shape = strided_maps(tensor, geometry)
    out = _output_tensor(tensor, geometry, outputs, out_shape)
    y = _StridedConv3d.apply(features, weight, bias, _bare(tensor), geometry,
                             False, outputs)
    # Recorded once the layer ran: a failed call leaves no link behind.
    if indice_key is not None:
        tensor.indice_dict[indice_key] = StridedLink(_bare(tensor), geometry,
                                                     outputs)
    return out.replace_feature(y)


def sparse_inverse_conv3d(tensor, weight, bias=None, indice_key=None):
    """spconv's SparseInverseConv3d as a function: back from the output
    voxels of the strided layer that recorded `indice_key` to the voxels it
    started from: features [N, Co] = the inverse convolution of
    tensor.features [outputs, Ci] with weight [Co, Kx, Ky, Kz, Ci] (the
    strided layer's kernel) plus bias. Differentiable."""
    function = "sparse_inverse_conv3d"
    features = features_of(function, tensor)
    link = tensor.indice_dict.get(indice_key)
    if link is None:
        known = ", ".join(repr(k) for k in tensor.indice_dict) or "none"
        _fail(function, f"no strided layer recorded indice_key "
              f"{indice_key!r} for this tensor (known: {known})")
    kernel = check_strided_weight(
        function, *_as_run(autocast_dtype(), features, weight, bias),
        tensor.device)
    if kernel != tuple(link.geometry.kernel):
        _fail(function, f"the weight's kernel is {kernel}, the strided "
              f"layer of indice_key {indice_key!r} had {link.geometry.kernel}")
    if tensor.voxels != link.outputs:
        _fail(function, f"the tensor has {tensor.voxels} voxels, the strided "
              f"layer of indice_key {indice_key!r} made {link.outputs}")
    source = link.source
    plan_training_call(tensor, features, weight, bias, link.geometry.dilation,
                       True)
    y = _StridedConv3d.apply(features, weight, bias, source, link.geometry,
                             True, source.voxels)
    out = source.replace_feature(y)
    out.indice_dict = tensor.indice_dict
    return out
