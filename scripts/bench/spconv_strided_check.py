#!/usr/bin/env python3
"""tilec's strided and inverse sparse convolutions on the GPU, through
PyTorch: the checks of docs/sparse-conv.md, "Strided and inverse
convolutions".

  reference  torch's dense conv3d / conv_transpose3d in float64 on the
             voxels' dense grid, restricted to the active cells, is the
             reference of both convolutions and of their gradients (torch's
             autograd): a strided convolution is a dense one whose outputs
             are the cells some kernel offset reads an active input from.
  outputs    tilec's output voxels against that set (and their order:
             ascending (batch, x, y, z), the same from a second tensor) on
             shells, a batch of two and a random cloud, for 2 / 2, 3 / 2
             with padding 1, (3, 1, 1) / (2, 1, 1), 3 / 2 with dilation 2.
  gradients  y, dX, dW, db of tilec.nn.SparseConv3d and of the
             SparseInverseConv3d that comes back through its indice_key,
             f16, bf16, f32 (tf32), 3 -> 17 channels, against float64.
  spconv     the same state_dict through spconv-Triton's SparseConv3d and
             SparseInverseConv3d: its output voxels are tilec's (as a set),
             and its features agree with tilec's row by row (skipped where
             spconv-Triton is not installed).
  processes  y, dX, dW of a fixed case from --processes fresh processes:
             the same bits.

Prints a table per section, writes --json; exits non-zero on a failed
check. `--self-test` checks the dense reference itself against a loop over
the definition, on the CPU (no GPU, no tilec). Needs torch with CUDA,
tilec's package on PYTHONPATH and TILEC_LIBRARY (the GPU bundle has both).
"""

import argparse
import hashlib
import itertools
import json
import subprocess
import sys

import torch
import torch.nn.functional as F

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
TOLERANCE = {"f16": 1e-2, "bf16": 2e-2, "f32": 1e-5, "tf32": 2e-3}
GEOMETRIES = {
    "k2s2": ((2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1)),
    "k3s2p1": ((3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1)),
    "k311s211": ((3, 1, 1), (2, 1, 1), (1, 0, 0), (1, 1, 1)),
    "k3s2p2d2": ((3, 3, 3), (2, 2, 2), (2, 2, 2), (2, 2, 2)),
}


def dense(coords, features, shape, batches):
    """[B, C, X, Y, Z] with the features at their voxels, zeros elsewhere
    (differentiable in the features)."""
    grid = features.new_zeros(batches, *shape, features.shape[1])
    index = coords.long()
    grid = grid.index_put((index[:, 0], index[:, 1], index[:, 2],
                           index[:, 3]), features)
    return grid.permute(0, 4, 1, 2, 3)


def at(grid, coords):
    """The rows of [B, C, X, Y, Z] at coords [N, 4]: [N, C]."""
    index = coords.long()
    return grid.permute(0, 2, 3, 4, 1)[index[:, 0], index[:, 1],
                                        index[:, 2], index[:, 3]]


def output_cells(coords, shape, batches, geometry):
    """The strided convolution's output voxels: the cells of the output grid
    whose window holds an active input, ascending (batch, x, y, z), int32
    [M, 4]; and the output grid."""
    kernel, stride, padding, dilation = geometry
    mask = dense(coords, torch.ones(coords.shape[0], 1, dtype=torch.float64,
                                    device=coords.device), shape, batches)
    ones = torch.ones(1, 1, *kernel, dtype=torch.float64, device=coords.device)
    reached = F.conv3d(mask, ones, stride=stride, padding=padding,
                       dilation=dilation)[:, 0]
    cells = (reached > 0).nonzero().to(torch.int32)
    return cells.contiguous(), tuple(reached.shape[1:])


def conv_reference(coords, x, weight, bias, shape, batches, geometry):
    """y [M, Co] of the strided convolution at output_cells, float64,
    differentiable."""
    kernel, stride, padding, dilation = geometry
    w = weight.permute(0, 4, 1, 2, 3)  # [Co, Ci, kx, ky, kz]
    y = F.conv3d(dense(coords, x, shape, batches), w, bias, stride=stride,
                 padding=padding, dilation=dilation)
    cells, _ = output_cells(coords, shape, batches, geometry)
    return at(y, cells)


def inverse_reference(coords, cells, out_shape, x_out, weight, bias, shape,
                      batches, geometry):
    """y [N, Co] at the input voxels `coords` of the inverse convolution of
    x_out [M, Ci] on the output voxels `cells`: the adjoint of the dense
    convolution (conv_transpose3d), float64, differentiable."""
    kernel, stride, padding, dilation = geometry
    w = weight.permute(4, 0, 1, 2, 3)  # [Ci, Co, kx, ky, kz]
    # The input grid is larger than conv_transpose3d's own output by what
    # the strided convolution's floor division dropped (0 to stride - 1
    # per axis): output_padding gives it back, with the cells there that
    # outputs read.
    extra = [shape[a] - ((out_shape[a] - 1) * stride[a] - 2 * padding[a] +
                         dilation[a] * (kernel[a] - 1) + 1) for a in range(3)]
    y = F.conv_transpose3d(dense(cells, x_out, out_shape, batches), w, None,
                           stride=stride, padding=padding,
                           output_padding=extra, dilation=dilation)
    y = at(y, coords)
    return y if bias is None else y + bias


def loop_reference(coords, x, weight, shape, geometry, inverse_x=None):
    """The definition, one output and offset at a time (for --self-test):
    output o reads o * stride - padding + k * dilation."""
    kernel, stride, padding, dilation = geometry
    cells, out_shape = output_cells(coords, shape, 1 + int(coords[:, 0].max()),
                                    geometry)
    where = {tuple(c.tolist()): i for i, c in enumerate(coords)}
    co = weight.shape[0]
    y = torch.zeros(cells.shape[0], co, dtype=torch.float64)
    back = torch.zeros(coords.shape[0], co, dtype=torch.float64)
    for o, cell in enumerate(cells.tolist()):
        for k in itertools.product(*(range(s) for s in kernel)):
            source = [cell[0]] + [cell[1 + a] * stride[a] - padding[a] +
                                  k[a] * dilation[a] for a in range(3)]
            i = where.get(tuple(source))
            if i is None:
                continue
            w = weight[:, k[0], k[1], k[2], :]  # [Co, Ci]
            y[o] += w @ x[i]
            if inverse_x is not None:
                back[i] += w @ inverse_x[o]
    return cells, y, back


def self_test():
    """The dense references against loop_reference on the CPU."""
    torch.manual_seed(3)
    failures = 0
    for name, geometry in GEOMETRIES.items():
        shape = (9, 8, 7)
        full = torch.stack(torch.meshgrid(
            torch.arange(2), *(torch.arange(s) for s in shape),
            indexing="ij"), -1).reshape(-1, 4)
        coords = full[torch.randperm(full.shape[0])[:150]].to(torch.int32)
        ci, co = 3, 2
        x = torch.randn(coords.shape[0], ci, dtype=torch.float64)
        weight = torch.randn(co, *geometry[0], ci, dtype=torch.float64)
        cells, out_shape = output_cells(coords, shape, 2, geometry)
        x_out = torch.randn(cells.shape[0], ci, dtype=torch.float64)
        loop_cells, want_y, want_back = loop_reference(coords, x, weight,
                                                       shape, geometry, x_out)
        got_y = conv_reference(coords, x, weight, None, shape, 2, geometry)
        got_back = inverse_reference(coords, cells, out_shape, x_out, weight,
                                     None, shape, 2, geometry)
        ok = torch.equal(cells, loop_cells) and \
            torch.allclose(got_y, want_y) and \
            torch.allclose(got_back, want_back)
        failures += not ok
        print(f"self-test {name}: {cells.shape[0]} outputs, "
              f"{'ok' if ok else 'FAILED'}")
    return failures == 0


# --- on the GPU ---------------------------------------------------------------

def scene(name, device):
    import tilec
    if name == "shell64":
        return tilec.scenes.shell(64, device=device), (64, 64, 64), 1
    if name == "shell2x48":
        return tilec.scenes.shell(48, batch=2, device=device), (48, 48, 48), 2
    if name == "random45":
        return (tilec.scenes.uniform(6000, 45, batch=2, device=device),
                (45, 45, 45), 2)
    raise ValueError(name)


def relative_error(got, want):
    scale = want.norm().item()
    return (got.double() - want).norm().item() / max(scale, 1e-30)


def gradient_case(scene_name, geometry_name, ci, co, dtype_name, tf32=False,
                  seed=0):
    """y, dx, dw, db of SparseConv3d and of the SparseInverseConv3d back
    through its indice_key against float64; the output voxels against the
    reference set."""
    import tilec
    import tilec.nn
    device = torch.device("cuda", 0)
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    coords, shape, batches = scene(scene_name, device)
    geometry = GEOMETRIES[geometry_name]
    dtype = DTYPES[dtype_name]
    down = tilec.nn.SparseConv3d(ci, co, geometry[0], stride=geometry[1],
                                 padding=geometry[2], dilation=geometry[3],
                                 indice_key="d").to(device, dtype)
    up = tilec.nn.SparseInverseConv3d(co, ci, geometry[0],
                                      indice_key="d").to(device, dtype)
    x = torch.randn(coords.shape[0], ci, device=device, dtype=dtype)
    xs = x.clone().requires_grad_()
    tensor = tilec.SparseTensor(coords, xs, spatial_shape=list(shape),
                                batch_size=batches)
    middle = down(tensor)
    back = up(middle)
    g_mid = torch.randn_like(middle.features)
    g_back = torch.randn_like(back.features)
    torch.autograd.backward([middle.features, back.features],
                            [g_mid, g_back])

    cells, out_shape = output_cells(coords, shape, batches, geometry)
    errors = {"outputs": 0.0 if torch.equal(middle.coords, cells) else
              float("inf")}
    again = down(tilec.SparseTensor(coords, x, spatial_shape=list(shape),
                                    batch_size=batches))
    if not torch.equal(again.coords, middle.coords):
        errors["outputs"] = float("inf")
    # float64 of the same values, the same graph.
    x64 = x.double().requires_grad_()
    params = [p.detach().double().requires_grad_() for p in
              (down.weight, down.bias, up.weight, up.bias)]
    y64 = conv_reference(coords, x64, params[0], params[1], shape, batches,
                         geometry)
    back64 = inverse_reference(coords, cells, out_shape, y64, params[2],
                               params[3], shape, batches, geometry)
    torch.autograd.backward([y64, back64], [g_mid.double(), g_back.double()])
    errors["y"] = relative_error(middle.features.float(), y64.detach())
    errors["y_inverse"] = relative_error(back.features.float(),
                                         back64.detach())
    errors["dx"] = relative_error(xs.grad, x64.grad)
    for name, got, want in zip(("dw", "db", "dw_inverse", "db_inverse"),
                               (down.weight, down.bias, up.weight, up.bias),
                               params):
        errors[name] = relative_error(got.grad, want.grad)
    tolerance = TOLERANCE["tf32" if tf32 else dtype_name]
    # The inverse reads the strided layer's rounded output: its error is
    # the strided layer's and its own.
    limit = {k: (2 * tolerance if "inverse" in k or k == "dx" else tolerance)
             for k in errors}
    ok = all(errors[k] <= limit[k] for k in errors)
    return {"scene": scene_name, "geometry": geometry_name,
            "voxels": coords.shape[0], "outputs": middle.voxels,
            "ci": ci, "co": co,
            "dtype": dtype_name + (" tf32" if tf32 else ""),
            "errors": errors, "tolerance": tolerance, "ok": ok}


def gradients(args):
    cases = [("shell64", "k2s2", 32, 64, "f16"),
             ("shell64", "k3s2p1", 64, 64, "f16"),
             ("shell2x48", "k3s2p1", 32, 48, "bf16"),
             ("random45", "k311s211", 3, 17, "f32"),
             ("shell2x48", "k3s2p2d2", 16, 32, "f16")]
    rows = [gradient_case(*case) for case in cases]
    rows.append(gradient_case("shell64", "k3s2p1", 32, 32, "f32", tf32=True))
    names = ("outputs", "y", "dx", "dw", "db", "y_inverse", "dw_inverse",
             "db_inverse")
    print("| scene | geometry | N -> M | ci->co | dtype | " +
          " | ".join(names) + " | tol |")
    print("| --- " * (6 + len(names)) + "|")
    for r in rows:
        e = r["errors"]
        print(f"| {r['scene']} | {r['geometry']} | {r['voxels']} -> "
              f"{r['outputs']} | {r['ci']}->{r['co']} | {r['dtype']} | " +
              " | ".join(f"{e[n]:.1e}" for n in names) +
              f" | {r['tolerance']:.0e}{'' if r['ok'] else ' FAIL'} |")
    return rows


def spconv_case(scene_name, geometry_name, ci, co):
    """spconv-Triton's SparseConv3d and SparseInverseConv3d with tilec's
    state_dict: the same output voxels, features within f16's tolerance."""
    import tilec
    import tilec.nn
    import spconv_triton.pytorch as spconv
    device = torch.device("cuda", 0)
    torch.manual_seed(5)
    coords, shape, batches = scene(scene_name, device)
    kernel, stride, padding, dilation = GEOMETRIES[geometry_name]
    ours = tilec.nn.SparseSequential(
        tilec.nn.SparseConv3d(ci, co, kernel, stride=stride, padding=padding,
                              dilation=dilation, indice_key="d"),
        tilec.nn.SparseInverseConv3d(co, ci, kernel,
                                     indice_key="d")).to(device).half()
    theirs = spconv.SparseSequential(
        spconv.SparseConv3d(ci, co, kernel, stride=stride, padding=padding,
                            dilation=dilation, indice_key="d"),
        spconv.SparseInverseConv3d(co, ci, kernel,
                                   indice_key="d")).to(device).half()
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(coords.shape[0], ci, device=device, dtype=torch.float16)
    mine = tilec.SparseTensor(coords, x, spatial_shape=list(shape),
                              batch_size=batches)
    mid = ours[0](mine)
    out = ours[1](mid)
    t_in = spconv.SparseConvTensor(x, coords, list(shape), batches)
    t_mid = theirs[0](t_in)
    t_out = theirs[1](t_mid)

    def by_cell(c, f):
        key = ((c[:, 0].long() * 65536 + c[:, 1]) * 65536 + c[:, 2]) * \
            65536 + c[:, 3]
        order = key.argsort()
        return c[order], f[order]
    mc, mf = by_cell(mid.coords, mid.features)
    tc, tf = by_cell(t_mid.indices.int(), t_mid.features)
    same_cells = torch.equal(mc, tc)
    errors = {"y": relative_error(mf.float(), tf.double()) if same_cells
              else float("inf")}
    oc, of = by_cell(out.coords, out.features)
    uc, uf = by_cell(t_out.indices.int(), t_out.features)
    errors["y_inverse"] = relative_error(of.float(), uf.double()) \
        if torch.equal(oc, uc) else float("inf")
    ok = same_cells and max(errors.values()) <= 2 * TOLERANCE["f16"]
    return {"scene": scene_name, "geometry": geometry_name,
            "outputs": mid.voxels, "spconv_outputs": t_mid.indices.shape[0],
            "same_cells": same_cells, "errors": errors, "ok": ok}


def against_spconv(args):
    try:
        import spconv_triton.pytorch  # noqa: F401
    except ImportError as error:
        print(f"spconv: skipped (spconv-Triton is not installed: {error})")
        return [{"skipped": str(error), "ok": True}]
    rows = [spconv_case("shell64", name, 32, 32) for name in GEOMETRIES]
    print("| scene | geometry | outputs: tilec / spconv-Triton | same set | "
          "y | y_inverse |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        e = r["errors"]
        print(f"| {r['scene']} | {r['geometry']} | {r['outputs']} / "
              f"{r['spconv_outputs']} | {r['same_cells']} | {e['y']:.1e} | "
              f"{e['y_inverse']:.1e}{'' if r['ok'] else ' FAIL'} |")
    return rows


def digest():
    """SHA-256 of y, dx, dw of a fixed case (what --digest prints)."""
    import tilec
    import tilec.nn
    device = torch.device("cuda", 0)
    torch.manual_seed(11)
    coords, shape, batches = scene("shell2x48", device)
    down = tilec.nn.SparseConv3d(32, 64, 3, stride=2, padding=1).to(
        device).half()
    x = torch.randn(coords.shape[0], 32, device=device,
                    dtype=torch.float16).requires_grad_()
    y = down(tilec.SparseTensor(coords, x, spatial_shape=list(shape),
                                batch_size=batches))
    y.features.backward(torch.ones_like(y.features))
    h = hashlib.sha256()
    for t in (y.coords, y.features, x.grad, down.weight.grad):
        h.update(t.detach().cpu().contiguous().view(torch.uint8).numpy()
                 .tobytes())
    return h.hexdigest()


def processes(args):
    digests = []
    for _ in range(args.processes):
        run = subprocess.run([sys.executable, __file__, "--digest"],
                             capture_output=True, text=True, check=False)
        digests.append(run.stdout.strip() or f"failed: {run.stderr[-300:]}")
    same = len(set(digests)) == 1 and not digests[0].startswith("failed")
    print(f"processes: {args.processes} fresh processes, "
          f"{'the same bits' if same else 'DIFFER'} ({digests[0][:16]})")
    return {"digests": digests, "ok": same}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", default="gradients,spconv,processes")
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--json", default="spconv-strided-check.json")
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--digest", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        sys.exit(0 if self_test() else 1)
    if args.digest:
        print(digest())
        return
    sections = {"gradients": gradients, "spconv": against_spconv,
                "processes": processes}
    results, ok = {}, True
    for name in args.sections.split(","):
        result = sections[name](args)
        results[name] = result
        rows = result if isinstance(result, list) else [result]
        ok = ok and all(r["ok"] for r in rows)
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1, default=str)
    print("all checks passed" if ok else "CHECKS FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
