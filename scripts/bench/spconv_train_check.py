#!/usr/bin/env python3
"""The sparse convolution's backward on the GPU, through PyTorch (tilec's
autograd): the checks of docs/sparse-conv.md, "Training".

  gradients  dX, dW, db of tilec.submanifold_conv3d against float64
             autograd of a gather-then-GEMM convolution (torch, the same
             neighbour map computed independently here) on shells, the street
             scene, a random cloud, a batch of two, Ci != Co, 3 -> 17
             channels, kernel sizes 3 and 5, dilation 2, one voxel, an empty
             tensor; f16, bf16, f32 (and tf32); f32 weight gradients under
             autocast.
  gradcheck  torch.autograd.gradcheck on a small f32 case, tf32 off.
  processes  dX, dW, db from --processes fresh processes: the same bits.
  training   a 4-layer SubMConv3d + BatchNorm + ReLU autoencoder on shells,
             --steps SGD steps, against the same network in float64 (the
             gather-then-GEMM convolution) and, where spconv-Triton is
             installed, the same network from spconv-Triton's modules (f32,
             IEEE), all from one state_dict: the loss curves side by side.
  torch_compile  torch.compile (inductor, fullgraph: no graph break allowed)
             of SubMConv3d + BatchNorm + ReLU + SubMConv3d, f16, on tensors
             of four new sizes: output and every gradient of the compiled
             and of the eager network against the same network in float64
             (the compiled at most 2x the eager's error, or f16's
             tolerance), and how many graphs dynamo made.
  checkpointing  torch.utils.checkpoint (non-reentrant and reentrant) over
             two layers, f16: every gradient the plain run's, bit for bit.
  timing     one training step (forward + dX + dW) of tilec and of torch's
             gather-then-GEMM autograd (f16), in this process: ms, ratio.

Prints a table per section, writes --json; exits non-zero on a failed
check. Needs torch with CUDA, tilec's package on PYTHONPATH and
TILEC_LIBRARY (scripts/gpu-bundle.sh's bundle has both).
"""

import argparse
import hashlib
import itertools
import json
import os
import subprocess
import sys
import time
import traceback

import torch

import tilec
import tilec.nn
from spunet import gather_conv  # the float64 twin's convolution

DEVICE = torch.device("cuda", 0)
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
# Relative error of a gradient against float64, by dtype (the issue's
# tolerances: fp16/bf16 ~1e-2, tf32 ~1e-3, fp32 ~1e-5, on the norm).
TOLERANCE = {"f16": 1e-2, "bf16": 2e-2, "f32": 1e-5, "tf32": 2e-3}


def coords_of(scene):
    """int32 [N, 4] (batch, x, y, z) on the GPU."""
    kind, _, size = scene.partition(":")
    scenes = tilec.scenes
    if kind == "shell":
        return scenes.shell(int(size), device=DEVICE)
    if kind == "shell2":
        return scenes.shell(int(size), batch=2, device=DEVICE)
    if kind == "street":
        return scenes.lidar(device=DEVICE)
    if kind == "random":
        count, res = (int(v) for v in size.split("/"))
        return scenes.uniform(count, res, device=DEVICE)
    if kind == "one":
        return scenes.uniform(1, 8, device=DEVICE)
    if kind == "empty":
        return torch.zeros(0, 4, dtype=torch.int32, device=DEVICE)
    raise ValueError(scene)


def neighbour_map(coords, k, dilation):
    """nb [V, N] int64 (-1: none): the voxel at offset v = (kx * K + ky) * K
    + kz of each voxel, its window ((kx, ky, kz) - K // 2) * dilation away;
    from sorted 64-bit keys and searchsorted, independent of tilec."""
    c = coords.long()
    n = c.shape[0]

    def key(q):
        return ((q[:, 0] * 65536 + q[:, 1]) * 65536 + q[:, 2]) * 65536 + \
            q[:, 3]
    keys = key(c)
    order = keys.argsort()
    sorted_keys = keys[order]
    rows = []
    for kx, ky, kz in itertools.product(range(k), repeat=3):
        d = torch.tensor([0, kx - k // 2, ky - k // 2, kz - k // 2],
                         device=c.device) * dilation
        q = c + d
        inside = ((q[:, 1:] >= 0) & (q[:, 1:] < 65536)).all(1)
        qk = key(q.clamp(min=0))
        pos = torch.searchsorted(sorted_keys, qk).clamp(max=max(n - 1, 0))
        found = inside & (n > 0) & (sorted_keys[pos] == qk) if n else inside
        rows.append(torch.where(found, order[pos], torch.full_like(pos, -1)))
    return torch.stack(rows) if rows else torch.zeros(0, n, dtype=torch.long)


def relative_error(got, want):
    scale = want.norm().item()
    return (got.double() - want).norm().item() / max(scale, 1e-30)


def gradient_case(scene, ci, co, k, dilation, dtype_name, tf32=False,
                  autocast=False, seed=0):
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    coords = coords_of(scene)
    n = coords.shape[0]
    dtype = DTYPES[dtype_name]
    # Under autocast the parameters stay f32 (master weights), the
    # features are f32 and the convolution runs in `dtype`.
    param_dtype = torch.float32 if autocast else dtype
    x = torch.randn(n, ci, device=DEVICE, dtype=param_dtype)
    w = torch.randn(co, k, k, k, ci, device=DEVICE, dtype=param_dtype) / \
        (ci * k ** 3) ** 0.5
    b = torch.randn(co, device=DEVICE, dtype=param_dtype)
    g = torch.randn(n, co, device=DEVICE, dtype=torch.float32)
    xs, ws, bs = (t.clone().requires_grad_() for t in (x, w, b))
    tensor = tilec.SparseTensor(coords, xs)
    with torch.autocast("cuda", dtype=dtype, enabled=autocast):
        y = tilec.submanifold_conv3d(tensor, ws, bs, dilation)
    y.backward(g.to(y.dtype))
    # float64 on the values the kernels saw (rounded to `dtype`).
    seen = [t.to(dtype).double().requires_grad_() for t in (x, w, b)]
    nb = neighbour_map(coords, k, dilation)
    want = gather_conv(seen[0], seen[1], seen[2], nb)
    want.backward(g.to(y.dtype).double())
    errors = {"y": relative_error(y.float(), want.detach())}
    for name, got, ref in zip(("dx", "dw", "db"), (xs, ws, bs), seen):
        errors[name] = relative_error(got.grad, ref.grad)
        if got.grad.dtype != got.dtype:
            errors[name] = float("inf")  # autograd's contract
    tolerance = TOLERANCE["tf32" if tf32 else dtype_name]
    worst = max(errors.values()) if n else 0.0
    return {"scene": scene, "voxels": n, "ci": ci, "co": co, "k": k,
            "dilation": dilation, "dtype": dtype_name + (" tf32" if tf32 else
                                                         "") +
            (" autocast" if autocast else ""),
            "errors": errors, "tolerance": tolerance,
            "ok": worst <= tolerance}


def gradients(args):
    cases = [
        ("shell:64", 64, 64, 3, 1, "f16"),
        ("shell:64", 32, 48, 3, 1, "bf16"),
        ("shell:32", 16, 16, 3, 1, "f32"),
        ("random:20000/64", 3, 17, 3, 1, "f32"),
        ("shell2:48", 64, 128, 3, 1, "f16"),
        ("street", 32, 32, 3, 1, "f16"),
        ("shell:40", 16, 24, 5, 1, "f16"),
        ("shell:48", 32, 32, 3, 2, "bf16"),
        ("one", 16, 16, 3, 1, "f16"),
        ("empty", 16, 16, 3, 1, "f16"),
    ]
    rows = [gradient_case(*case) for case in cases]
    rows.append(gradient_case("shell:32", 32, 32, 3, 1, "f32", tf32=True))
    rows.append(gradient_case("shell:64", 64, 64, 3, 1, "f16", autocast=True))
    rows.append(gradient_case("shell:64", 64, 64, 3, 1, "bf16",
                              autocast=True))
    print("| scene | N | ci->co | k | dil | dtype | y | dx | dw | db | tol |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        e = r["errors"]
        print(f"| {r['scene']} | {r['voxels']} | {r['ci']}->{r['co']} | "
              f"{r['k']} | {r['dilation']} | {r['dtype']} | "
              + " | ".join(f"{e[n]:.1e}" for n in ("y", "dx", "dw", "db")) +
              f" | {r['tolerance']:.0e}{'' if r['ok'] else ' FAIL'} |")
    return rows


def gradcheck(args):
    torch.backends.cuda.matmul.allow_tf32 = False
    coords = coords_of("shell:6")[:40].contiguous()
    torch.manual_seed(1)
    x = torch.randn(coords.shape[0], 2, device=DEVICE, requires_grad=True)
    w = torch.randn(3, 3, 3, 3, 2, device=DEVICE, requires_grad=True)
    b = torch.randn(3, device=DEVICE, requires_grad=True)
    tensor = tilec.SparseTensor(coords, x.detach())

    def conv(features, weight, bias):
        return tilec.submanifold_conv3d(tensor.replace_feature(features),
                                        weight, bias)
    ok = torch.autograd.gradcheck(conv, (x, w, b), eps=1e-2, atol=2e-3,
                                  rtol=1e-2, raise_exception=False)
    print(f"gradcheck (f32, tf32 off, {coords.shape[0]} voxels, 2 -> 3): "
          f"{'passed' if ok else 'FAILED'}")
    return {"voxels": coords.shape[0], "ok": bool(ok)}


def digest_of_gradients():
    """The SHA-256 of dX, dW, db of a fixed case (what --digest prints)."""
    torch.manual_seed(7)
    coords = coords_of("shell:96")
    x = torch.randn(coords.shape[0], 64, device=DEVICE, dtype=torch.float16,
                    requires_grad=True)
    conv = tilec.nn.SubMConv3d(64, 64).to(DEVICE, torch.float16)
    y = conv(tilec.SparseTensor(coords, x))
    g = torch.randn_like(y.features)
    y.features.backward(g)
    torch.cuda.synchronize()
    digest = hashlib.sha256()
    for t in (x.grad, conv.weight.grad, conv.bias.grad):
        digest.update(t.cpu().numpy().tobytes())
    return digest.hexdigest()


def processes(args):
    digests = []
    for _ in range(args.processes):
        result = subprocess.run([sys.executable, __file__, "--digest"],
                                capture_output=True, text=True)
        digests.append(result.stdout.strip().splitlines()[-1]
                       if result.returncode == 0 else
                       "error: " + result.stderr.strip()[-300:])
    same = len(set(digests)) == 1 and not digests[0].startswith("error")
    print(f"{args.processes} processes: {len(set(digests))} distinct digest(s)"
          f" of dX, dW, db ({digests[0][:16]}...): "
          f"{'bit-identical' if same else 'DIFFER'}")
    return {"digests": digests, "ok": same}


class GatherConv(torch.nn.Module):
    """SubMConv3d's parameters over gather_conv (the float64 twin)."""

    def __init__(self, conv, nb):
        super().__init__()
        self.weight, self.bias, self.nb = conv.weight, conv.bias, nb

    def forward(self, x):
        return gather_conv(x, self.weight, self.bias, self.nb)


def gather_forward(network, nb):
    """The forward of `network` (the float64 twin) with each SubMConv3d run
    as GatherConv over the neighbour map `nb`: a function of the features."""
    layers = [GatherConv(m, nb) if isinstance(m, tilec.nn.SubMConv3d) else m
              for m in network]

    def forward(h):
        for layer in layers:
            h = layer(h)
        return h
    return forward


def autoencoder(channels, ns=None):
    """The autoencoder from tilec.nn, or from the namespace `ns` of
    spconv-Triton's modules (the same state_dict keys and weight layout)."""
    layers = []
    for i, (a, b) in enumerate(zip(channels, channels[1:])):
        layers.append(tilec.nn.SubMConv3d(a, b) if ns is None else
                      ns.SubMConv3d(a, b, 3, padding=1, indice_key="ae"))
        if i < len(channels) - 2:
            layers += [torch.nn.BatchNorm1d(b), torch.nn.ReLU()]
    return (tilec.nn if ns is None else ns).SparseSequential(*layers)


def spconv_triton_modules():
    """spconv-Triton's module namespace, or None with why."""
    try:
        import spconv_triton.pytorch as spconv
    except Exception as error:  # not installed, or fails to import
        return None, f"spconv-Triton is unavailable ({error})"
    return spconv, None


class Curve:
    """One network's SGD steps on (x, target): its losses."""

    def __init__(self, net, forward):
        self.net, self.forward, self.losses = net, forward, []
        self.opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

    def step(self, target):
        loss = torch.nn.functional.mse_loss(self.forward(), target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.losses.append(loss.item())


def largest_gap(losses, reference):
    return max(abs(a - b) / b for a, b in zip(losses, reference))


def spconv_triton_curve(args, channels, state, coords, x, target):
    """spconv-Triton's autoencoder from `state` through the same SGD steps:
    its losses, or None with why (its failure is its own)."""
    spconv, why = spconv_triton_modules() if args.training_peer else \
        (None, "left out (--no-training-peer)")
    if spconv is None:
        return None, why
    try:
        peer = autoencoder(channels, spconv).to(DEVICE)
        peer.load_state_dict(state)
        shape = (coords[:, 1:].max(0).values + 1).tolist()
        curve = Curve(peer, lambda: peer(
            spconv.SparseConvTensor(x, coords, shape, 1)).features)
        start = time.perf_counter()
        curve.step(target)
        print(f"  spconv-Triton's first step: {time.perf_counter() - start:.1f}"
              f" s (its tuning)", flush=True)
        for _ in range(args.steps - 1):
            curve.step(target)
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"[:300]
    return curve.losses, None


def training(args):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(3)
    coords = coords_of("shell:48")
    n = coords.shape[0]
    channels = [4, 32, 64, 32, 4]
    net = autoencoder(channels).to(DEVICE)
    # A copy: the training below updates net's parameters in place, and
    # spconv-Triton's curve starts from the same initial state.
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    twin = autoencoder(channels).to(DEVICE).double()
    twin.load_state_dict({k: v.double() for k, v in state.items()})
    twin_gather = gather_forward(twin, neighbour_map(coords, 3, 1))
    x = torch.randn(n, channels[0], device=DEVICE)
    # Noise the network cannot fit: the loss levels off well above 0, so
    # that the curves are compared where they carry information.
    target = torch.tanh(x.flip(1)) + 0.5 * torch.randn_like(x)

    def twin_forward():
        return twin_gather(x.double())
    # SGD with momentum: Adam's normalized steps amplify f32's rounding
    # once the loss is small, and the curves part however exact the
    # gradients are.
    tilec_curve = Curve(net, lambda: net(
        tilec.SparseTensor(coords, x)).features)
    twin_curve = Curve(twin, twin_forward)
    for _ in range(args.steps):
        tilec_curve.step(target)
        twin_curve.step(target.double())
    losses, twin_losses = tilec_curve.losses, twin_curve.losses
    gap = largest_gap(losses, twin_losses)
    # f32 against float64: the gap grows with the steps (1.2e-3 after 200
    # SGD steps on the H200, the loss down 900x); wrong gradients part the
    # curves within a few steps.
    ok = gap < 5e-3 and losses[-1] < 0.1 * losses[0]
    print(f"training ({n} voxels, channels {channels}, {args.steps} SGD "
          f"steps, f32): loss {losses[0]:.4f} -> {losses[-1]:.4f} (float64 "
          f"twin {twin_losses[0]:.4f} -> {twin_losses[-1]:.4f}), largest "
          f"relative gap {gap:.1e}: {'ok' if ok else 'FAIL'}")
    result = {"voxels": n, "channels": channels, "losses": losses,
              "twin_losses": twin_losses, "max_gap": gap, "ok": ok}
    # spconv-Triton's curve after tilec's is printed: its first steps tune
    # (minutes in a fresh process), and a run cut there keeps tilec's.
    peer_losses, why = spconv_triton_curve(args, channels, state, coords, x,
                                           target)
    if peer_losses is None:
        print(f"  spconv-Triton's curve: not run ({why})")
        result["spconv_triton"] = {"skipped": why}
        return result
    # Two f32 networks each within 5e-3 of float64 are within 1e-2 of each
    # other; where spconv-Triton's own curve leaves float64's, the
    # comparison says nothing of tilec's.
    peer_gap = largest_gap(peer_losses, twin_losses)
    between = largest_gap(losses, peer_losses)
    judged = peer_gap < 5e-3
    agree = between < 1e-2 or not judged
    print(f"  spconv-Triton, same state_dict: loss {peer_losses[0]:.4f} -> "
          f"{peer_losses[-1]:.4f}, largest relative gap to float64 "
          f"{peer_gap:.1e}, to tilec {between:.1e}: "
          + ("ok" if agree and judged else "FAIL" if not agree else
             "not judged (spconv-Triton's own curve leaves float64's)"))
    result["spconv_triton"] = {"losses": peer_losses, "max_gap": peer_gap,
                               "max_gap_to_tilec": between, "ok": agree}
    result["ok"] = ok and agree
    return result


def torch_compile(args):
    """torch.compile of a small network: the custom ops trace into one graph
    (fullgraph=True raises at a break), a new voxel count reuses it (at
    most a second graph, with the size dynamic), and the compiled output
    and gradients are as close to a float64 twin of the network as the
    eager network's are (at most twice its error, or f16's tolerance), the
    eager network itself within five times f16's tolerance of the twin.
    Each is judged against float64, not against the other: two f16 runs
    that round differently may each be as close to the truth while apart
    by more than f16's tolerance in a tensor whose true value is near 0.
    """
    import torch._dynamo
    torch._dynamo.reset()
    torch.manual_seed(5)
    # No bias before BatchNorm (as spconv's and Pointcept's networks): in
    # training mode BatchNorm subtracts the batch mean, so that bias's
    # gradient is exactly 0, and f16's rounding noise against float64's
    # ~1e-13 made a relative error of 1e11 that judged nothing.
    def network():
        return tilec.nn.SparseSequential(
            tilec.nn.SubMConv3d(16, 32, bias=False), torch.nn.BatchNorm1d(32),
            torch.nn.ReLU(), tilec.nn.SubMConv3d(32, 8))
    net = network().to(DEVICE, DTYPES["f16"])
    compiled = torch.compile(net, fullgraph=True)
    twin = network().to(DEVICE).double()
    twin.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
    coords = coords_of("shell:64")
    rows, worst = [], 0.0
    for fraction in (1.0, 0.9, 0.75, 0.6):
        count = int(coords.shape[0] * fraction)
        sub = coords[torch.randperm(coords.shape[0], device=DEVICE)[:count]]
        x = torch.randn(count, 16, device=DEVICE, dtype=DTYPES["f16"])
        g = torch.randn(count, 8, device=DEVICE, dtype=DTYPES["f16"])
        twin_gather = gather_forward(twin, neighbour_map(sub, 3, 1))
        results = {}
        for name, run in (("compiled", compiled), ("eager", net),
                          ("float64", None)):
            model = twin if run is None else net
            xs = (x.double() if run is None else x.clone()).requires_grad_()
            model.zero_grad()
            if run is None:
                y = twin_gather(xs)
                y.backward(g.double())
            else:
                y = run(tilec.SparseTensor(sub, xs)).features
                y.backward(g)
            results[name] = [y.detach(), xs.grad] + \
                [p.grad.clone() for p in model.parameters()]
        # Per tensor (the output, the input's gradient, each parameter's):
        # the compiled network's error against float64 and the eager one's.
        errors = [(relative_error(c, w), relative_error(e, w))
                  for c, e, w in zip(results["compiled"], results["eager"],
                                     results["float64"])]
        between = max(relative_error(c, e.double()) for c, e in
                      zip(results["compiled"], results["eager"]))
        # The compiled run may lose at most twice what eager loses, or f16's
        # tolerance where eager is closer than half of it.
        excess = max(c / max(2 * e, TOLERANCE["f16"]) for c, e in errors)
        worst = max(worst, excess)
        rows.append({"voxels": count,
                     "compiled_vs_float64": max(c for c, _ in errors),
                     "eager_vs_float64": max(e for _, e in errors),
                     "compiled_vs_eager": between, "excess": excess})
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    # The eager network itself within a few times f16's tolerance of
    # float64, so that a wrong twin fails instead of excusing anything.
    eager_ok = max(r["eager_vs_float64"] for r in rows) <= 5 * TOLERANCE["f16"]
    ok = worst <= 1 and graphs <= 2 and eager_ok
    print(f"torch.compile (inductor, fullgraph, f16, BatchNorm training; "
          f"voxels {', '.join(str(r['voxels']) for r in rows)}): {graphs} "
          f"graph(s) (at most 2); largest error vs float64, compiled / eager: "
          + ", ".join(f"{r['compiled_vs_float64']:.1e} / "
                      f"{r['eager_vs_float64']:.1e}" for r in rows)
          + f"; compiled vs eager up to "
          f"{max(r['compiled_vs_eager'] for r in rows):.1e}: "
          f"{'ok' if ok else 'FAIL'}")
    return {"rows": rows, "graphs": graphs, "max_excess": worst,
            "eager_ok": eager_ok, "ok": ok}


def checkpointing(args):
    """torch.utils.checkpoint over tilec's layers: the forward runs again
    inside the backward over the same maps, so every gradient must be the
    plain run's, bit for bit (tilec's kernels give the same bits for the
    same inputs), with the non-reentrant and the reentrant checkpoint."""
    from torch.utils.checkpoint import checkpoint
    torch.manual_seed(13)
    net = tilec.nn.SparseSequential(
        tilec.nn.SubMConv3d(16, 32), torch.nn.ReLU(),
        tilec.nn.SubMConv3d(32, 8)).to(DEVICE, DTYPES["f16"])
    coords = coords_of("shell:64")
    x = torch.randn(coords.shape[0], 16, device=DEVICE, dtype=DTYPES["f16"])
    g = torch.randn(coords.shape[0], 8, device=DEVICE, dtype=DTYPES["f16"])
    tensor = tilec.SparseTensor(coords, x)

    def run(features):
        return net(tensor.replace_feature(features)).features
    grads = {}
    for how in ("plain", "non-reentrant", "reentrant"):
        net.zero_grad()
        features = x.clone().requires_grad_()
        y = run(features) if how == "plain" else checkpoint(
            run, features, use_reentrant=how == "reentrant")
        y.backward(g)
        grads[how] = [features.grad] + [p.grad.clone()
                                        for p in net.parameters()]
    same = {how: all(torch.equal(a, b) for a, b in
                     zip(grads[how], grads["plain"]))
            for how in ("non-reentrant", "reentrant")}
    ok = all(same.values())
    print(f"gradient checkpointing ({coords.shape[0]} voxels, f16, "
          f"{len(grads['plain'])} gradients): "
          + ", ".join(f"{how} {'bit-identical' if v else 'DIFFERS'}"
                      for how, v in same.items())
          + f": {'ok' if ok else 'FAIL'}")
    return {"voxels": coords.shape[0], "bit_identical": same, "ok": ok}


def time_ms(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def timing(args):
    rows = []
    for scene, c in (("shell:128", 64), ("shell:128", 128), ("street", 64)):
        torch.manual_seed(0)
        coords = coords_of(scene)
        n = coords.shape[0]
        x = torch.randn(n, c, device=DEVICE, dtype=torch.float16,
                        requires_grad=True)
        conv = tilec.nn.SubMConv3d(c, c).to(DEVICE, torch.float16)
        tensor = tilec.SparseTensor(coords, x)
        g = torch.randn(n, c, device=DEVICE, dtype=torch.float16)
        first = time.perf_counter()
        conv(tensor).features.backward(g)
        torch.cuda.synchronize()
        first = time.perf_counter() - first

        def step():
            conv(tensor).features.backward(g)
        nb = neighbour_map(coords, 3, 1)
        peer = GatherConv(conv, nb)

        def peer_step():
            peer(x).backward(g)

        def forward():
            with torch.no_grad():
                conv(tensor)
        rows.append({"scene": scene, "voxels": n, "channels": c,
                     "pairs": tensor.active_pairs(),
                     "first_step_s": first,
                     "forward_ms": time_ms(forward),
                     "step_ms": time_ms(step),
                     "gather_gemm_step_ms": time_ms(peer_step)})
    # Where a step's GPU time goes (the last row's scene and channels).
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    try:
        print(prof.key_averages().table(sort_by="device_time_total",
                                        row_limit=12))
    except Exception:  # older torch names the column cuda_time_total
        print(prof.key_averages().table(sort_by="cuda_time_total",
                                        row_limit=12))
    print("| scene | N | C | tilec fwd ms | tilec step ms | torch gather-GEMM "
          "step ms | speedup | tilec TFLOP/s | first step s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        flops = 3 * 2 * r["pairs"] * r["channels"] ** 2
        print(f"| {r['scene']} | {r['voxels']} | {r['channels']} | "
              f"{r['forward_ms']:.3f} | {r['step_ms']:.3f} | "
              f"{r['gather_gemm_step_ms']:.3f} | "
              f"{r['gather_gemm_step_ms'] / r['step_ms']:.2f}x | "
              f"{flops / r['step_ms'] / 1e9:.0f} | {r['first_step_s']:.2f} |")
    return rows


SECTIONS = {"gradients": gradients, "gradcheck": gradcheck,
            "processes": processes, "training": training,
            "torch_compile": torch_compile, "checkpointing": checkpointing,
            "timing": timing}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--no-training-peer", dest="training_peer",
                        action="store_false",
                        help="training: leave spconv-Triton's curve out")
    parser.add_argument("--json", default="spconv-train-check.json")
    parser.add_argument("--digest", action="store_true",
                        help="print the digest of a fixed case's gradients")
    args = parser.parse_args()
    if args.digest:
        print(digest_of_gradients())
        return 0
    sections = args.sections.split(",")
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {', '.join(unknown)} (of "
                     f"{', '.join(SECTIONS)})")
    results, failed = {}, []
    for section in sections:
        print(f"== {section}", flush=True)
        try:
            result = SECTIONS[section](args)
        except Exception:  # a section that raises fails; the others run
            traceback.print_exc()
            result = {"ok": False, "error": traceback.format_exc()[-2000:]}
        results[section] = result
        rows = result if isinstance(result, list) else [result]
        if not all(r.get("ok", True) for r in rows):
            failed.append(section)
        # After each section: a run cut at its time limit keeps the others.
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    print("== " + ("all checks passed" if not failed else
                   "FAILED: " + ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
