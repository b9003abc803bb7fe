"""A SpUNet-style sparse encoder-decoder (the layout of Pointcept's
SpUNet-v1m1: a 5^3 stem, four stages of a 2^3 stride-2 SparseConv3d and
residual blocks of two 3^3 SubMConv3d, then four SparseInverseConv3d back up
through the strided layers' indice_keys, each concatenated with its skip and
run through blocks, and a 1^3 head), built from any module namespace with
spconv's names: tilec.nn, spconv-Triton's spconv_triton.pytorch, or
`Reference` below, so that all three share one state_dict.

`Reference` is the float64 check: spconv's three layers in plain torch
(gathers and matrix products over neighbour maps found with sorted keys and
searchsorted), independent of tilec and of spconv. `--self-test` checks its
layers against torch's dense conv3d / conv_transpose3d on the CPU.
"""

import itertools
import sys
from collections import OrderedDict

import torch
from torch import nn

CHANNELS = (32, 64, 128, 256, 256, 128, 96, 96)
LAYERS = (2, 3, 4, 6, 2, 2, 2, 2)


def build(ns, in_channels, num_classes, base_channels=32, channels=CHANNELS,
          layers=LAYERS):
    """The network of module namespace `ns` (SubMConv3d, SparseConv3d,
    SparseInverseConv3d, SparseSequential, SparseModule)."""

    def norm(c):
        return nn.BatchNorm1d(c, eps=1e-3, momentum=0.01)

    class BasicBlock(getattr(ns, "SparseModule", nn.Module)):
        def __init__(self, cin, cout, key):
            super().__init__()
            self.proj = nn.Identity() if cin == cout else ns.SparseSequential(
                ns.SubMConv3d(cin, cout, 1, bias=False), norm(cout))
            self.conv1 = ns.SubMConv3d(cin, cout, 3, padding=1, bias=False,
                                       indice_key=key)
            self.bn1 = norm(cout)
            self.conv2 = ns.SubMConv3d(cout, cout, 3, padding=1, bias=False,
                                       indice_key=key)
            self.bn2 = norm(cout)
            self.relu = nn.ReLU()

        def forward(self, x):
            skip = x if isinstance(self.proj, nn.Identity) else self.proj(x)
            out = self.conv1(x)
            out = out.replace_feature(self.relu(self.bn1(out.features)))
            out = self.conv2(out)
            out = out.replace_feature(self.bn2(out.features) + skip.features)
            return out.replace_feature(self.relu(out.features))

    class SpUNet(nn.Module):
        def __init__(self):
            super().__init__()
            stages = len(layers) // 2
            self.stages = stages
            self.conv_input = ns.SparseSequential(
                ns.SubMConv3d(in_channels, base_channels, 5, padding=1,
                              bias=False, indice_key="stem"),
                norm(base_channels), nn.ReLU())
            self.down, self.enc = nn.ModuleList(), nn.ModuleList()
            self.up, self.dec = nn.ModuleList(), nn.ModuleList()
            enc, dec = base_channels, channels[-1]
            for s in range(stages):
                self.down.append(ns.SparseSequential(
                    ns.SparseConv3d(enc, channels[s], 2, stride=2, bias=False,
                                    indice_key=f"spconv{s + 1}"),
                    norm(channels[s]), nn.ReLU()))
                self.enc.append(ns.SparseSequential(OrderedDict(
                    (f"block{i}", BasicBlock(channels[s], channels[s],
                                             f"subm{s + 1}"))
                    for i in range(layers[s]))))
                back = channels[len(channels) - s - 2]
                self.up.append(ns.SparseSequential(
                    ns.SparseInverseConv3d(back, dec, 2, bias=False,
                                           indice_key=f"spconv{s + 1}"),
                    norm(dec), nn.ReLU()))
                self.dec.append(ns.SparseSequential(OrderedDict(
                    (f"block{i}", BasicBlock(dec + enc if i == 0 else dec,
                                             dec, f"subm{s}"))
                    for i in range(layers[len(channels) - s - 1]))))
                enc, dec = channels[s], back
            self.final = ns.SubMConv3d(channels[-1], num_classes, 1,
                                       bias=True)

        def forward(self, x):
            x = self.conv_input(x)
            skips = [x]
            for s in range(self.stages):
                x = self.enc[s](self.down[s](x))
                skips.append(x)
            x = skips.pop(-1)
            for s in reversed(range(self.stages)):
                x = self.up[s](x)
                skip = skips.pop(-1)
                x = x.replace_feature(torch.cat((x.features, skip.features),
                                                dim=1))
                x = self.dec[s](x)
            return self.final(x)

    return SpUNet()


# --- the float64 reference ---------------------------------------------------

def _keys(coords):
    c = coords.long()
    return ((c[:, 0] * 65536 + c[:, 1]) * 65536 + c[:, 2]) * 65536 + c[:, 3]


def _lookup(coords, queries, valid):
    """The row of each query voxel in `coords`, -1 where it is not there or
    not valid."""
    keys = _keys(coords)
    order = keys.argsort()
    sorted_keys = keys[order]
    n = coords.shape[0]
    qk = _keys(queries.clamp(min=0))
    pos = torch.searchsorted(sorted_keys, qk).clamp(max=max(n - 1, 0))
    found = valid & (sorted_keys[pos] == qk) if n else valid & False
    return torch.where(found, order[pos], torch.full_like(pos, -1))


def _offsets(kernel):
    return list(itertools.product(*(range(k) for k in kernel)))


def gather_conv(x, weight, bias, nb):
    """y [M, Co] = sum_v x[nb[v]] @ weight[:, v, :]^T (+ bias); nb [V, M],
    -1: no row. The gather-then-GEMM convolution, differentiable by torch's
    autograd."""
    co, ci = weight.shape[0], weight.shape[-1]
    w = weight.reshape(co, -1, ci)
    padded = torch.cat([x.new_zeros(1, ci), x])
    y = x.new_zeros(nb.shape[1], co)
    for v in range(nb.shape[0]):
        # index_select: its backward adds with index_add_.
        y = y + padded.index_select(0, nb[v] + 1) @ w[:, v, :].t()
    return y if bias is None else y + bias


class _RefTensor:
    """spconv's SparseConvTensor, as far as the network uses it."""

    def __init__(self, coords, features, spatial_shape, batch_size,
                 indice_dict=None):
        self.coords, self.features = coords, features
        self.spatial_shape, self.batch_size = tuple(spatial_shape), batch_size
        self.indice_dict = {} if indice_dict is None else indice_dict

    def replace_feature(self, features):
        return _RefTensor(self.coords, features, self.spatial_shape,
                          self.batch_size, self.indice_dict)


def _triple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * 3


class _RefModule(nn.Module):
    pass


class _RefConv(_RefModule):
    def __init__(self, cin, cout, kernel_size, bias):
        super().__init__()
        self.kernel = _triple(kernel_size)
        self.weight = nn.Parameter(torch.zeros(cout, *self.kernel, cin))
        self.bias = nn.Parameter(torch.zeros(cout)) if bias else None


def _pointwise(weight):
    """spconv's pointwise (1^3, stride 1) layers compute x @ weight.view(Ci,
    Co), a raw reinterpretation of the KRSC memory (tilec.nn and
    spconv-Triton both do, so that one state_dict gives one network)."""
    co, ci = weight.shape[0], weight.shape[-1]
    return weight.reshape(ci, co).t().contiguous().reshape(co, 1, 1, 1, ci)


class _RefSubMConv3d(_RefConv):
    def __init__(self, cin, cout, kernel_size=3, stride=1, padding=0,
                 dilation=1, bias=True, indice_key=None):
        super().__init__(cin, cout, kernel_size, bias)
        self.dilation = _triple(dilation)

    def forward(self, x):
        c = x.coords.long()
        rows = []
        for k in _offsets(self.kernel):
            d = torch.tensor([0] + [(k[a] - self.kernel[a] // 2) *
                                    self.dilation[a] for a in range(3)],
                             device=c.device)
            q = c + d
            rows.append(_lookup(x.coords, q, (q[:, 1:] >= 0).all(1)))
        weight = _pointwise(self.weight) if self.kernel == (1, 1, 1) \
            else self.weight
        return x.replace_feature(gather_conv(x.features, weight, self.bias,
                                             torch.stack(rows)))


def strided_maps(coords, shape, batches, kernel, stride, padding, dilation):
    """The strided convolution's output voxels (ascending (batch, x, y, z)),
    output grid and map nb [V, M] (output o reads input nb[v, o] at offset
    v, -1: none), in torch."""
    out_shape = [(shape[a] + 2 * padding[a] - dilation[a] * (kernel[a] - 1) -
                  1) // stride[a] + 1 for a in range(3)]
    c = coords.long()
    cells = []
    for k in _offsets(kernel):
        at = [c[:, 1 + a] + padding[a] - k[a] * dilation[a] for a in range(3)]
        ok = torch.ones_like(c[:, 0], dtype=torch.bool)
        for a in range(3):
            ok &= (at[a] >= 0) & (at[a] % stride[a] == 0) & \
                (at[a] // stride[a] < out_shape[a])
        o = torch.stack([c[:, 0]] + [at[a] // stride[a] for a in range(3)], 1)
        cells.append(o[ok])
    out = torch.unique(torch.cat(cells), dim=0) if cells else c[:0]
    out = out[_keys(out).argsort()]
    nb = []
    for k in _offsets(kernel):
        q = torch.stack([out[:, 0]] + [out[:, 1 + a] * stride[a] - padding[a] +
                                       k[a] * dilation[a] for a in range(3)],
                        1)
        nb.append(_lookup(coords, q, (q[:, 1:] >= 0).all(1)))
    return out.to(torch.int32), tuple(out_shape), torch.stack(nb)


class _RefSparseConv3d(_RefConv):
    def __init__(self, cin, cout, kernel_size, stride=1, padding=0,
                 dilation=1, bias=True, indice_key=None):
        super().__init__(cin, cout, kernel_size, bias)
        self.stride, self.padding = _triple(stride), _triple(padding)
        self.dilation, self.indice_key = _triple(dilation), indice_key

    def forward(self, x):
        out, out_shape, nb = strided_maps(x.coords, x.spatial_shape,
                                          x.batch_size, self.kernel,
                                          self.stride, self.padding,
                                          self.dilation)
        if self.indice_key is not None:
            x.indice_dict[self.indice_key] = (x, nb)
        pointwise = self.kernel == (1, 1, 1) and self.stride == (1, 1, 1)
        weight = _pointwise(self.weight) if pointwise else self.weight
        y = gather_conv(x.features, weight, self.bias, nb)
        return _RefTensor(out, y, out_shape, x.batch_size, x.indice_dict)


class _RefSparseInverseConv3d(_RefConv):
    def __init__(self, cin, cout, kernel_size, indice_key=None, bias=True):
        super().__init__(cin, cout, kernel_size, bias)
        self.indice_key = indice_key

    def forward(self, x):
        source, nb = x.indice_dict[self.indice_key]
        # The map the other way: input i is read by output nbi[v, i].
        nbi = torch.full((nb.shape[0], source.coords.shape[0]), -1,
                         dtype=nb.dtype, device=nb.device)
        for v in range(nb.shape[0]):
            hit = nb[v] >= 0
            nbi[v, nb[v][hit]] = hit.nonzero()[:, 0]
        y = gather_conv(x.features, self.weight, self.bias, nbi)
        return source.replace_feature(y)


class _RefSequential(_RefModule, nn.Sequential):
    def forward(self, x):
        for module in self:
            x = module(x) if isinstance(module, _RefModule) else \
                x.replace_feature(module(x.features))
        return x


class Reference:
    """spconv's names over the float64 reference layers."""
    SparseModule = _RefModule
    SubMConv3d = _RefSubMConv3d
    SparseConv3d = _RefSparseConv3d
    SparseInverseConv3d = _RefSparseInverseConv3d
    SparseSequential = _RefSequential
    SparseConvTensor = _RefTensor


def initialized_reference(in_channels, num_classes):
    """The float64 reference network (spunet.Reference) with the convolution
    weights drawn He-normal under a fixed seed: the state_dict that
    spconv_network.py's peers and spunet_conditioning.py all load."""
    torch.manual_seed(0)
    net = build(Reference, in_channels, num_classes)
    for name, p in net.named_parameters():
        if name.endswith("weight") and p.dim() == 5:
            torch.nn.init.normal_(p, std=(2.0 / p[0].numel()) ** 0.5)
    return net


def self_test():
    """Reference's strided and inverse layers against torch's dense
    conv3d / conv_transpose3d (spconv_strided_check's reference) on the
    CPU, and the network's shapes and state_dict on a small cloud."""
    import spconv_strided_check as dense
    torch.manual_seed(2)
    ok = True
    for name, (kernel, stride, padding, dilation) in dense.GEOMETRIES.items():
        shape = (9, 8, 7)
        full = torch.stack(torch.meshgrid(
            torch.arange(2), *(torch.arange(s) for s in shape),
            indexing="ij"), -1).reshape(-1, 4)
        coords = full[torch.randperm(full.shape[0])[:150]].to(torch.int32)
        x = torch.randn(coords.shape[0], 3, dtype=torch.float64)
        down = _RefSparseConv3d(3, 2, kernel, stride, padding, dilation,
                                indice_key="k").double()
        up = _RefSparseInverseConv3d(2, 3, kernel, indice_key="k").double()
        for p in itertools.chain(down.parameters(), up.parameters()):
            nn.init.normal_(p)
        mid = down(_RefTensor(coords, x, shape, 2))
        back = up(mid)
        geometry = (kernel, stride, padding, dilation)
        cells, out_shape = dense.output_cells(coords, shape, 2, geometry)
        want_mid = dense.conv_reference(coords, x, down.weight, down.bias,
                                        shape, 2, geometry)
        want_back = dense.inverse_reference(coords, cells, out_shape,
                                            mid.features, up.weight, up.bias,
                                            shape, 2, geometry)
        good = torch.equal(mid.coords, cells) and \
            torch.allclose(mid.features, want_mid) and \
            torch.allclose(back.features, want_back)
        ok &= good
        print(f"self-test {name}: {'ok' if good else 'FAILED'}")
    net = build(Reference, 4, 13).double()
    grid = torch.stack(torch.meshgrid(
        torch.arange(2), *(torch.arange(32),) * 3, indexing="ij"),
        -1).reshape(-1, 4)
    coords = grid[torch.randperm(grid.shape[0])[:3000]].to(torch.int32)
    y = net(_RefTensor(coords, torch.randn(3000, 4, dtype=torch.float64),
                       (32, 32, 32), 2))
    good = y.features.shape == (3000, 13) and torch.equal(y.coords, coords)
    ok &= good
    print(f"self-test network: {len(net.state_dict())} state_dict entries, "
          f"output {tuple(y.features.shape)}, {'ok' if good else 'FAILED'}")
    return ok


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    sys.exit("usage: spunet.py --self-test (the module is imported by "
             "spconv_network.py)")
