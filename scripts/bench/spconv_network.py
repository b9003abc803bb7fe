#!/usr/bin/env python3
"""`tilec bench spconv --network spunet`: a SpUNet-style encoder-decoder
(spunet.py: a 5^3 stem, four stride-2 SparseConv3d stages of residual
SubMConv3d blocks, four SparseInverseConv3d back up through their
indice_keys, skips concatenated, a 1^3 head) built from tilec.nn and from
spconv-Triton with the same state_dict, in one process on one GPU, f16,
BatchNorm in training mode:

  check  on a res-64 shell (two batches): the output and every parameter's
         gradient of both peers against the same network in float64
         (spunet.Reference: plain torch over maps found with sorted keys),
         relative error of the norm, in f32 (tf32 off) and f16 with
         BatchNorm in eval mode, judged, and in f16 with BatchNorm in
         training mode beside the float64 network's own float32 copy, not
         judged (batch statistics over the deepest stages' few voxels make
         those gradients ill-conditioned in any precision; see check());
         and tilec's output voxels are the input's (the inverse layers come
         back to them).
  time   per scene (the LiDAR-like street, the res-256 shell): the forward
         and a training step (forward and backward of sum(y * g)), each on
         a new tensor so that every map is built in the timed region,
         medians of --reps after --warmup; best peer / tilec (> 1: tilec
         is faster).
  first  each peer's first forward and backward of a new shape (the res-128
         shell) in a fresh process with cold caches (tilec's stage and
         autotune caches, Triton's cache), and its second on a new tensor;
         tilec twice: tuning on first use, and with TILEC_FIRST_USE=predict
         (the predictions' first and second calls, then, after
         retire_predictions(), the call that tunes and one more).

Prints the tables, writes spconv_network.json to --out; exits 1 when a check
fails. Needs torch with CUDA, spconv-Triton for its column (else noted), the
tilec package (python/ of the checkout or of the GPU bundle) and --lib.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import spconv_frames  # noqa: E402  (puts the tilec package on sys.path)

PEERS = ("tilec", "spconv_triton")
NAMES = {"tilec": "tilec", "spconv_triton": "spconv-Triton"}
# The first call's runs: a peer, or tilec with TILEC_FIRST_USE=predict.
FIRST_RUNS = ("tilec", "tilec_predict", "spconv_triton")
FIRST_NAMES = dict(NAMES, tilec_predict="tilec, first use predicts")
SCENES = ("street", "shell256")
CHECK_SCENE, FIRST_SCENE = "shell64x2", "shell128"
IN_CHANNELS, CLASSES = 4, 13
# The relative error of a deep f16 network against float64: each of its
# 40-odd layers rounds its output; the check asks for spconv-Triton's order.
# (dtype, BatchNorm mode, tolerance of the relative error, raised to ten
# times the float64 network's own float32 error where that is larger;
# None: printed, not judged). See check().
CHECK_ROWS = (("f32", "eval", 1e-4), ("f16", "eval", 5e-2),
              ("f16", "train", None))

torch = None


def scene(name, device):
    """coords (int32 [N, 4] on the device), spatial shape, batch size."""
    import tilec
    if name.startswith("shell"):
        res, _, batches = name[5:].partition("x")
        batches = int(batches or 1)
        coords = tilec.scenes.shell(int(res), batch=batches, device=device)
        return coords, [int(res)] * 3, batches
    if name == "street":
        coords = tilec.scenes.lidar(device=device)
        shape = (coords[:, 1:].max(0).values + 1).tolist()
        return coords, shape, 1
    raise ValueError(name)


def networks(spconv, dtype=None):
    """The peers' networks (`dtype`, f16 by default, train mode) from one
    state_dict, and the float64 reference's."""
    import spunet
    import tilec.nn
    dtype = dtype or torch.float16
    reference = spunet.initialized_reference(IN_CHANNELS, CLASSES)
    state = reference.state_dict()
    nets = {"reference": reference.double().cuda().train()}
    for peer, ns in (("tilec", tilec.nn), ("spconv_triton", spconv)):
        if ns is None:
            continue
        net = spunet.build(ns, IN_CHANNELS, CLASSES)
        net.load_state_dict(state)
        nets[peer] = net.cuda().to(dtype).train()
    return nets


def make_input(peer, spconv, coords, features, shape, batches):
    import spunet
    import tilec
    if peer == "tilec":
        return tilec.SparseTensor(coords, features, spatial_shape=shape,
                                  batch_size=batches)
    if peer == "spconv_triton":
        return spconv.SparseConvTensor(features, coords, shape, batches)
    return spunet.Reference.SparseConvTensor(coords, features, shape, batches)


def coords_of(peer, tensor):
    return tensor.indices if peer == "spconv_triton" else tensor.coords


def rel_err(got, want):
    got = got.double()
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    return ((got - want).norm() / want.norm().clamp(min=1e-30)).item()


def pass_of(net, peer, spconv, coords, features, shape, batches, g):
    """The output features and every parameter's gradient (by name) of one
    forward and backward of sum(y * g)."""
    x = make_input(peer, spconv, coords, features, shape, batches)
    y = net(x)
    if not torch.equal(coords_of(peer, y).int(), coords):
        raise ValueError("the output's voxels are not the input's")
    (y.features.double() * g.double()).sum().backward()
    return y.features.detach().double(), {
        name: p.grad.double().flatten() for name, p in net.named_parameters()}


def errors_of(got, want):
    """Relative errors of the norm: the output, all gradients together, and
    the three parameters whose gradients are furthest off."""
    (y, grads), (y64, grads64) = got, want
    names = list(grads64)
    cat = lambda d: torch.cat([d[n] for n in names])  # noqa: E731
    worst = sorted(((rel_err(grads[n], grads64[n]), n) for n in names),
                   reverse=True)[:3]
    return {"y": rel_err(y, y64), "grads": rel_err(cat(grads), cat(grads64)),
            "worst": [[n, e] for e, n in worst]}


def check(spconv):
    """Outputs and gradients against float64 on the check scene, per row of
    CHECK_ROWS (dtype, BatchNorm mode). With BatchNorm in training mode the
    batch statistics of the deepest stages (a few hundred voxels, 256
    channels) make the network's gradients ill-conditioned in any
    precision: the row prints the float64 network's own float32 copy
    beside the peers (its gap is the conditioning, not a peer's error) and
    is not judged. In eval mode (BatchNorm an affine map) they are far
    better conditioned, and every peer is held to the row's tolerance or
    ten times what the float32 copy loses, whichever is larger."""
    import spunet
    device = torch.device("cuda")
    coords, shape, batches = scene(CHECK_SCENE, device)
    torch.manual_seed(1)
    features = torch.randn(coords.shape[0], IN_CHANNELS, device=device)
    g = torch.randn(coords.shape[0], CLASSES, device=device)
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    try:
        for dtype_name, mode, tolerance in CHECK_ROWS:
            dtype = getattr(torch, {"f16": "float16", "f32": "float32"}
                            [dtype_name])
            nets = networks(spconv, dtype)
            float32 = spunet.build(spunet.Reference, IN_CHANNELS, CLASSES)
            float32.load_state_dict(nets["reference"].state_dict())
            nets["reference_f32"] = float32.float().cuda()
            row = {"dtype": dtype_name, "batchnorm": mode,
                   "tolerance": tolerance, "peers": {}}
            # The float64 network and its float32 copy first (the limits
            # depend on the copy), then each peer, printed as it ends: a
            # call cut while spconv-Triton tunes keeps tilec's lines.
            order = ["reference", "reference_f32"] + \
                [peer for peer in nets if peer in PEERS]
            want, limits = None, {}
            for peer in order:
                net = nets[peer]
                net.train(mode == "train")
                typed = torch.float64 if peer == "reference" else \
                    torch.float32 if peer == "reference_f32" else dtype
                try:
                    got = pass_of(net, peer if peer in PEERS else
                                  "reference", spconv, coords,
                                  features.to(typed), shape, batches, g)
                except Exception as error:  # a peer's failure is its cell's
                    row["peers"][peer] = {"error": f"{type(error).__name__}: "
                                          f"{error}"[:300], "ok": False}
                    got = None
                if peer == "reference":
                    want = got
                    if got is None:
                        print_check_peer(peer, row["peers"][peer])
                    continue
                errors = errors_of(got, want) if got and want else None
                if peer == "reference_f32":
                    # What float32 itself loses on this network: a peer may
                    # lose ten times as much (another order of its sums)
                    # before it fails.
                    limits = {what: None if tolerance is None else max(
                        tolerance, 10 * errors[what] if errors else 0)
                        for what in ("y", "grads")}
                    row["limits"] = limits
                    print_check_header(row)
                if got is not None:
                    judged = tolerance is not None and peer != "reference_f32"
                    row["peers"][peer] = {"errors": errors, "ok": bool(
                        errors and (not judged or all(
                            errors[w] <= limits[w] for w in limits)))}
                print_check_peer(peer, row["peers"][peer])
            rows.append(row)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    return rows


def print_check_header(row):
    limits = row.get("limits") or {}
    tf32 = " (tf32 off)" if row["dtype"] == "f32" else ""
    judged = row["tolerance"] is not None and limits.get("y") is not None
    print(f"\ncheck: {CHECK_SCENE}, {row['dtype']}{tf32}, BatchNorm in "
          f"{row['batchnorm']} mode, against float64 (relative error of the "
          f"norm; " + (f"tolerance y {limits['y']:.1e}, gradients "
                       f"{limits['grads']:.1e})" if judged
                       else "not judged)"), flush=True)


def print_check_peer(peer, result):
    name = NAMES.get(peer, {"reference": "float64 network"}.get(
        peer, "float64 network in float32"))
    errors = result.get("errors")
    if not errors:
        print(f"  {name}: {result.get('error', 'no float64 reference')}"
              "  FAIL", flush=True)
        return
    worst = ", ".join(f"{n} {e:.1e}" for n, e in errors["worst"])
    print(f"  {name}: y {errors['y']:.1e}, gradients {errors['grads']:.1e}"
          f" (furthest: {worst}){'' if result['ok'] else '  FAIL'}",
          flush=True)


def median_ms(run, warmup, reps):
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def timing(spconv, args):
    device = torch.device("cuda")
    nets = networks(spconv)
    rows = []
    for name in SCENES:
        coords, shape, batches = scene(name, device)
        torch.manual_seed(2)
        features = torch.randn(coords.shape[0], IN_CHANNELS, device=device,
                               dtype=torch.float16)
        g = torch.randn(coords.shape[0], CLASSES, device=device,
                        dtype=torch.float16)
        row = {"scene": name, "voxels": coords.shape[0], "peers": {}}
        for peer in PEERS:
            net = nets.get(peer)
            if net is None:
                row["peers"][peer] = {"error": "unavailable"}
                continue

            def forward():
                with torch.no_grad():
                    net(make_input(peer, spconv, coords, features, shape,
                                   batches))

            def step():
                net.zero_grad(set_to_none=True)
                y = net(make_input(peer, spconv, coords, features, shape,
                                   batches))
                (y.features * g).sum().backward()
            try:
                row["peers"][peer] = {
                    "forward_ms": median_ms(forward, args.warmup, args.reps),
                    "step_ms": median_ms(step, args.warmup, args.reps)}
            except Exception as error:  # a peer's failure is its cell's
                row["peers"][peer] = {"error": f"{type(error).__name__}: "
                                      f"{error}"[:300]}
            print(f"  {name} {NAMES[peer]}: {row['peers'][peer]}",
                  flush=True)
        rows.append(row)
    return rows


def first_call(args, run):
    """A child process: the first forward and backward of FIRST_SCENE with
    cold caches, then a second on a new tensor (FIRST_RUNS: tilec_predict
    is tilec with TILEC_FIRST_USE=predict, see child_first)."""
    work = tempfile.mkdtemp(prefix="tilec-network-first-")
    env = dict(os.environ, TILEC_CACHE_DIR=os.path.join(work, "cache"),
               TILEC_AUTOTUNE_CACHE=os.path.join(work, "autotune.json"),
               TRITON_CACHE_DIR=os.path.join(work, "triton"),
               TILEC_FIRST_USE="predict" if run == "tilec_predict" else "tune")
    peer = "tilec" if run == "tilec_predict" else run
    result_path = os.path.join(work, "result.json")
    command = [sys.executable, os.path.abspath(__file__), "--lib", args.lib,
               "--role", "first", "--peer", peer, "--result", result_path]
    try:
        done = subprocess.run(command, env=env, capture_output=True,
                              text=True, timeout=args.first_timeout_s)
        if done.returncode != 0:
            result = {"error": (done.stderr or done.stdout)[-400:]}
        else:
            with open(result_path) as f:
                result = json.load(f)
    except subprocess.TimeoutExpired:
        result = {"error": f"over {args.first_timeout_s:.0f} s"}
    tuned = os.path.join(work, "autotune.json")
    if peer == "tilec" and os.path.isfile(tuned):
        # Kept: what the first call tuned (keys, candidates by status, the
        # span of their tunings).
        kept = os.path.join(args.out, f"first-{run}-autotune.json")
        shutil.copyfile(tuned, kept)
        result["tuning"] = spconv_frames.tuning_summary(kept)
    shutil.rmtree(work, ignore_errors=True)
    return result


def child_first(args, spconv):
    device = torch.device("cuda")
    coords, shape, batches = scene(FIRST_SCENE, device)
    torch.manual_seed(3)
    features = torch.randn(coords.shape[0], IN_CHANNELS, device=device,
                           dtype=torch.float16)
    net = networks(spconv)[args.peer]

    def step():
        start = time.perf_counter()
        y = net(make_input(args.peer, spconv, coords, features, shape,
                           batches))
        y.features.float().sum().backward()
        torch.cuda.synchronize()
        return time.perf_counter() - start

    result = {"first_s": step(), "second_s": step()}
    if os.environ.get("TILEC_FIRST_USE") == "predict" and args.peer == "tilec":
        # The first two ran on predictions; from here on every key tunes.
        import tilec
        result["retired"] = tilec.default_runtime().retire_predictions()
        result["tuning_s"] = step()
        result["tuned_s"] = step()
    spconv_frames.write_json(args.result, result)


def print_tables(report):
    lines = []
    for row in report["time"]:
        cells = [row["scene"], f"{row['voxels']:,}"]
        tilec_entry = row["peers"].get("tilec", {})
        for what in ("forward_ms", "step_ms"):
            values = {p: e.get(what) for p, e in row["peers"].items()}
            cells += [spconv_frames.cell(values.get(p)) for p in PEERS]
            peers = [v for p, v in values.items() if p != "tilec" and v]
            best = min(peers) if peers else None
            cells.append(spconv_frames.cell(
                best / tilec_entry[what] if best and tilec_entry.get(what)
                else None, ".2f"))
        lines.append(cells)
    spconv_frames.print_table(
        "SpUNet, f16, maps included (ms, medians)",
        ["scene", "N"] + [f"forward {NAMES[p]}" for p in PEERS] +
        ["best peer / tilec"] + [f"step {NAMES[p]}" for p in PEERS] +
        ["best peer / tilec"], lines)
    first = [[FIRST_NAMES[p], spconv_frames.cell(e.get("first_s"), ".2f"),
              spconv_frames.cell(e.get("second_s"), ".3f"),
              spconv_frames.cell(e.get("tuning_s"), ".2f"),
              spconv_frames.cell(e.get("tuned_s"), ".3f"),
              e.get("error", "")[:80]] for p, e in report["first"].items()]
    spconv_frames.print_table(
        f"First forward + backward of {FIRST_SCENE}, cold caches (s)",
        ["run", "first s", "second s", "tuning s (after retiring)",
         "tuned s", "error"], first)


def main():
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", required=True, help="libtilec_c.so")
    parser.add_argument("--out", default=".")
    parser.add_argument("--network", default="spunet", choices=("spunet",))
    parser.add_argument("--sections", default="check,time,first")
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help="the peers to run (tilec always runs): "
                        "--peers tilec leaves spconv-Triton and its "
                        "tuning of every layer shape out")
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--first-timeout-s", type=float, default=240)
    parser.add_argument("--budget-s", type=float, default=None,
                        help="accepted for tilec bench; the sections are "
                        "short")
    parser.add_argument("--role", choices=("main", "first"), default="main",
                        help=argparse.SUPPRESS)
    parser.add_argument("--peer", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.warmup = args.warmup if args.warmup is not None else \
        (1 if args.quick else 3)
    args.reps = args.reps if args.reps is not None else \
        (5 if args.quick else 20)
    import torch as torch_module
    torch = torch_module
    if not torch.cuda.is_available():
        sys.exit("tilec bench spconv --network: torch sees no GPU")
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context, before tilec's
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    spconv, why = spconv_frames.load_spconv_triton()
    if "spconv_triton" not in args.peers.split(","):
        spconv, why = None, "left out (--peers)"
    if args.role == "first":
        return child_first(args, spconv)
    import tilec
    report = {"network": args.network, "device": torch.cuda.get_device_name(),
              "torch": torch.__version__,
              "tilec_version": tilec.library_version(),
              "spconv_triton": None if spconv else why,
              "check": [], "time": [], "first": {}}
    if spconv is None:
        print(f"spconv-Triton: unavailable ({why})", flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "spconv_network.json")
    sections = args.sections.split(",")
    if "check" in sections:
        report["check"] = check(spconv)
        spconv_frames.write_json(path, report)
    if "time" in sections:
        report["time"] = timing(spconv, args)
        spconv_frames.write_json(path, report)
    if "first" in sections:
        for run in FIRST_RUNS:
            if run == "spconv_triton" and spconv is None:
                continue
            report["first"][run] = first_call(args, run)
            first = report["first"][run]
            tuning = first.get("tuning")
            print(f"  first {FIRST_NAMES[run]}: "
                  f"{ {k: v for k, v in first.items() if k != 'tuning'} }"
                  f"{'; ' + tuning['text'] if tuning else ''}", flush=True)
            spconv_frames.write_json(path, report)
    print_tables(report)
    failed = sorted({f"{NAMES[p]} ({row['dtype']}, BatchNorm {row['batchnorm']})"
                     for row in report["check"] for p, r in row["peers"].items()
                     if p in NAMES and not r["ok"]})
    if failed:
        print("check FAILED: " + ", ".join(failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
