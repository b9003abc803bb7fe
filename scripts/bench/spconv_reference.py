"""The oracle of `tilec bench spconv` (spconv.py): the neighbour map of a voxel
cloud and the submanifold convolution over it in float64, computed in torch
from the coordinates alone, independently of tilec's maps and of the peers'.

The convention is tilec's (kernels/sparse_conv.cpp, tilec.h): offset
v = (kx * K + ky) * K + kz of a K^3 window (K odd, r = K // 2) names the voxel
at p + (kx - r, ky - r, kz - r) * dilation of the same batch, and
weight[co, kx, ky, kz, ci] multiplies it:

    y[i, co] = sum over v with a neighbour j = nb[i, v]:
               sum_ci x[j, ci] * weight[co, v, ci]

`python3 spconv_reference.py` checks both against a hand example; a CPU
build of torch is enough for that.
"""

import math
import sys

import torch

# tilec_sparse_tensor_create takes 0 <= batch, x, y, z < 65536: four 16-bit
# fields pack into one int64 key (batch below 2^15 keeps it positive).
COORD_LIMIT = 1 << 16


def pack(b, x, y, z):
    return ((b * COORD_LIMIT + x) * COORD_LIMIT + y) * COORD_LIMIT + z


def offsets(kernel_size=3, dilation=1, device="cpu"):
    """[V, 3] int64: (dx, dy, dz) of offset v, in tilec's order."""
    r = kernel_size // 2
    steps = torch.arange(-r, r + 1, device=device) * dilation
    dx, dy, dz = torch.meshgrid(steps, steps, steps, indexing="ij")
    return torch.stack([dx.reshape(-1), dy.reshape(-1), dz.reshape(-1)], 1)


def neighbour_map(coords, kernel_size=3, dilation=1):
    """nb[i, v] (int64, [N, V]): the voxel at offset v of voxel i, or -1.

    coords: [N, 4] integers (batch, x, y, z), each voxel once. The keys are
    sorted once and every (voxel, offset) is a binary search.
    """
    c = coords.to(torch.int64)
    n = c.shape[0]
    if (c < 0).any() or (c >= COORD_LIMIT).any() or (c[:, 0] >= 1 << 15).any():
        raise ValueError("coordinates outside [0, 65536) (batch < 32768)")
    keys = pack(c[:, 0], c[:, 1], c[:, 2], c[:, 3])
    sorted_keys, order = torch.sort(keys)
    if n > 1 and (sorted_keys[1:] == sorted_keys[:-1]).any():
        raise ValueError("duplicate voxels")
    q = c[:, None, 1:] + offsets(kernel_size, dilation, c.device)[None]
    # A coordinate past the grid's edge would pack into another voxel's key.
    inside = ((q >= 0) & (q < COORD_LIMIT)).all(-1)
    wanted = pack(c[:, None, 0], q[..., 0], q[..., 1], q[..., 2])
    pos = torch.searchsorted(sorted_keys, wanted).clamp_(max=max(n - 1, 0))
    found = inside & (sorted_keys[pos] == wanted)
    return torch.where(found, order[pos], torch.full_like(pos, -1))


def reference(x, weight, nb):
    """y in float64 ([N, CO]): per offset v, y[i] += x[nb[i, v]] @ W[:, v].T"""
    n, ci = x.shape
    co = weight.shape[0]
    v_count = nb.shape[1]
    w = weight.reshape(co, v_count, ci).double()
    x64 = x.double()
    y = torch.zeros(n, co, dtype=torch.float64, device=x.device)
    for v in range(v_count):
        rows = (nb[:, v] >= 0).nonzero().squeeze(1)
        if rows.numel():
            y.index_add_(0, rows, x64[nb[rows, v]] @ w[:, v, :].T)
    return y


def tolerance(dtype):
    """rtol of a dtype, as `tilec bench gemm` (docs/bench.md): f32 runs as
    tf32 here."""
    return 1e-2 if dtype in ("f16", "bf16") else 1e-3


def worst_error(y, ref, nb, ci, dtype):
    """max |y - ref| / (atol + rtol |ref|), atol = rtol sqrt(terms) with terms
    the products summed into the voxel (ci per neighbour): <= 1 passes. Any
    NaN (the poison) or inf fails."""
    if not torch.isfinite(y).all():
        return math.inf
    rtol = tolerance(dtype)
    terms = (nb >= 0).sum(1, keepdim=True).double() * ci
    atol = rtol * terms.sqrt()
    return ((y.double() - ref).abs() / (atol + rtol * ref.abs())).max().item()


def _self_check():
    # Four voxels of batch 0 around (1, 1, 1), one of batch 1 at the same
    # place, and (0, 0, 0, 65535), whose key a query at z = -1 from
    # (0, 0, 1, 0) would hit without the edge test.
    coords = torch.tensor([[0, 1, 1, 1], [0, 2, 1, 1], [0, 1, 1, 2],
                           [1, 1, 1, 1], [0, 0, 1, 0], [0, 0, 0, 65535]])
    nb = neighbour_map(coords)
    centre = 13  # (kx, ky, kz) = (1, 1, 1)
    plus_x = (2 * 3 + 1) * 3 + 1  # (+1, 0, 0)
    minus_x = (0 * 3 + 1) * 3 + 1  # (-1, 0, 0)
    plus_z = (1 * 3 + 1) * 3 + 2  # (0, 0, +1)
    expected = {(0, centre): 0, (0, plus_x): 1, (0, plus_z): 2,
                (1, centre): 1, (1, minus_x): 0, (2, centre): 2,
                (2, (1 * 3 + 1) * 3 + 0): 0, (3, centre): 3, (4, centre): 4,
                (5, centre): 5,
                # (0, 1, 1, 1) is (0, 0, 1, 0) + (+1, 0, +1)
                (4, (2 * 3 + 1) * 3 + 2): 0, (0, (0 * 3 + 1) * 3 + 0): 4,
                # (0, 1, 1, 2) and (0, 2, 1, 1) are (0, 1, 1, 1) + ...
                (1, (0 * 3 + 1) * 3 + 2): 2, (2, (2 * 3 + 1) * 3 + 0): 1}
    for i in range(coords.shape[0]):
        for v in range(27):
            want = expected.get((i, v), -1)
            assert nb[i, v].item() == want, (i, v, nb[i, v].item(), want)
    # Dilation 2: (0, 5, 5, 5) sees (0, 7, 5, 5) at (+1, 0, 0) only.
    nb2 = neighbour_map(torch.tensor([[0, 5, 5, 5], [0, 7, 5, 5],
                                      [0, 6, 5, 5]]), dilation=2)
    assert nb2[0].tolist() == [-1] * 13 + [0] + [-1] * 8 + [1] + [-1] * 4
    # One channel, weight[v] = v + 1: y[0] = 14 x0 + 23 x1 + 15 x2 + 4 x4.
    x = torch.tensor([[1.0], [10.0], [100.0], [1000.0], [10000.0], [7.0]])
    weight = torch.arange(1, 28, dtype=torch.float64).reshape(1, 3, 3, 3, 1)
    y = reference(x, weight, nb)
    assert y[0, 0].item() == 14 * 1 + 23 * 10 + 15 * 100 + 4 * 10000
    assert y[3, 0].item() == 14 * 1000 and y[5, 0].item() == 14 * 7
    # Two channels in and out against an explicit loop.
    torch.manual_seed(0)
    x = torch.randn(6, 2, dtype=torch.float64)
    weight = torch.randn(3, 3, 3, 3, 2, dtype=torch.float64)
    w = weight.reshape(3, 27, 2)
    loop = torch.zeros(6, 3, dtype=torch.float64)
    for i in range(6):
        for v in range(27):
            if nb[i, v] >= 0:
                loop[i] += w[:, v, :] @ x[nb[i, v]]
    assert torch.allclose(reference(x, weight, nb), loop)
    err = worst_error(loop.half(), loop, nb, 2, "f16")
    assert err <= 1.0, err
    assert worst_error(torch.full_like(loop, math.nan), loop, nb, 2,
                       "f16") == math.inf
    try:
        neighbour_map(torch.tensor([[0, 1, 1, 1], [0, 1, 1, 1]]))
    except ValueError:
        pass
    else:
        raise AssertionError("duplicate voxels were accepted")
    print("spconv_reference: self-check passed")


if __name__ == "__main__":
    _self_check()
    sys.exit(0)
