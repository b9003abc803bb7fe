"""tilec's PyTorch package on the GPU (docs/pytorch.md): a small network of
tilec.nn.SubMConv3d layers (k3, ReLU between) on the C API's scenes, in f16
and bf16, checked and timed next to spconv-Triton's SubMConv3d loaded with
the same state_dict, in one process.

Per network (scene x dtype):
- every tilec layer against float64 on its own input (spconv_reference.py's
  oracle and rule: max |y - ref| / (atol + rtol |ref|) <= 1, rtol 1e-2), and
  the whole network against a float64 network from the same input and
  weights (max |y - ref| / max |ref| <= 1e-2);
- the output again on the cached maps, bit for bit, and through a second
  tilec network loaded from the peer's state_dict, bit for bit;
- spconv-Triton's network after load_state_dict(tilec's) against the same
  float64 network (the weights' layout and offsets are the same, or it
  fails), when spconv-Triton is installed;
- forward times (CUDA events around the whole network after an L2 flush,
  warm-up, median): on an input whose maps (pairs) are cached, and on a new
  input tensor each time, which builds them.
Then the error paths on the GPU: each wrong call must raise the documented
exception (and an empty tensor must convolve to no rows). With --bundle the networks run from a bundle (strict: no JIT)
and their outputs must equal --expect's bit for bit, and a shape the bundle
lacks must be refused.

Prints a table; writes <name>.json to --out. Exits 1 when a tilec check or
an expected error fails, or the peer computes another function.
"""

import argparse
import hashlib
import json
import math
import os
import sys
import time
import types
import zlib

START = time.monotonic()

try:
    import torch
except ImportError as error:
    sys.exit(f"pytorch_net: needs python3 with torch ({error}); run it where "
             f"it is, e.g. on the GPU machine")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spconv_reference as oracle  # noqa: E402
from cuda_timing import poison_allocator, wall_ms  # noqa: E402

try:
    import tilec  # noqa: E402
    import tilec.nn  # noqa: E402
except ImportError as error:
    sys.exit(f"pytorch_net: cannot import the tilec package ({error}); put "
             f"its folder (python/ of the checkout or of the GPU bundle) on "
             f"PYTHONPATH")

DEVICE = "cuda"
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
# Channels in, then after each layer: four k3 layers, ReLU between. The
# peer tunes per (Ci, Co, dtype), so two layer shapes keep its tuning short.
CHANNELS = (32, 64, 64, 64, 64)
KERNEL_SIZE = 3
# f16 networks first: spconv-Triton tunes each dtype once, and a run short
# of time loses the last peer runs.
NETWORKS = ["shell128/f16", "lidar/f16", "shell128/bf16", "lidar/bf16"]
NETWORK_RTOL = 1e-2


def build(conv, sequential, dtype):
    layers = []
    for i, (ci, co) in enumerate(zip(CHANNELS, CHANNELS[1:])):
        if i:
            layers.append(torch.nn.ReLU())
        layers.append(conv(ci, co))
    return sequential(*layers).to(device=DEVICE, dtype=dtype).eval()


def tilec_network(dtype):
    return build(lambda ci, co: tilec.nn.SubMConv3d(ci, co, KERNEL_SIZE),
                 tilec.nn.SparseSequential, dtype)


def convs(network):
    return [m for m in network if isinstance(m, tilec.nn.SubMConv3d)]


def initialize(network, generator, active):
    """He-like weights for ReLU over `active` neighbours a voxel (activations
    stay of order 1 through the layers), small biases."""
    with torch.no_grad():
        for conv in convs(network):
            scale = math.sqrt(6.0 / (active * conv.in_channels))
            for parameter, bound in ((conv.weight, scale), (conv.bias, 0.1)):
                values = torch.empty(parameter.shape, device=DEVICE).uniform_(
                    -1, 1, generator=generator) * bound
                parameter.copy_(values)


@torch.no_grad()
def reference_network(x, network, nb):
    """The network in float64 from x, through its weights (cast up)."""
    h = x.double()
    layers = convs(network)
    for i, conv in enumerate(layers):
        h = oracle.reference(h, conv.weight, nb) + conv.bias.double()
        if i + 1 < len(layers):
            h = torch.relu(h)
    return h


def network_error(y, ref):
    """max |y - ref| / max |ref|; inf for any NaN or inf."""
    if not torch.isfinite(y).all():
        return math.inf
    return ((y.double() - ref).abs().max() / ref.abs().max()).item()


def digest(y):
    """SHA-256 (first 16) of y's bits."""
    bits = y.contiguous().view(torch.int16).cpu().numpy().tobytes()
    return hashlib.sha256(bits).hexdigest()[:16]


class Timer:
    def __init__(self, warmup, reps):
        self.warmup, self.reps = warmup, reps
        # Larger than the H200's 60 MB L2: zeroed before each timed forward.
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device=DEVICE)

    def median_ms(self, forward):
        """Median of CUDA-event times around forward(), each after an L2
        flush; forward's own host work between the events counts."""
        times = []
        for i in range(self.warmup + self.reps):
            self.flush.zero_()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            forward()
            end.record()
            end.synchronize()
            if i >= self.warmup:
                times.append(start.elapsed_time(end))
        return sorted(times)[len(times) // 2]


def scene_coords(scene):
    return (tilec.scenes.shell(128) if scene == "shell128" else
            tilec.scenes.lidar()).to(DEVICE)


def load_peer():
    """spconv-Triton's modules, or None with the reason."""
    try:
        import spconv_triton.pytorch as spconv
    except ImportError as error:
        return None, f"spconv-Triton is not installed ({error})"
    return spconv, None


def peer_network(spconv, dtype):
    return build(lambda ci, co: spconv.SubMConv3d(
        ci, co, KERNEL_SIZE, padding=KERNEL_SIZE // 2, indice_key="net"),
        spconv.SparseSequential, dtype)


class Run:
    def __init__(self, args):
        self.args = args
        self.peer, self.peer_missing = load_peer() if not args.no_peer \
            else (None, "spconv-Triton not run (--no-peer)")
        self.peer_skips = []
        self.peer_keys = set()  # the (Ci, Co, dtype) spconv-Triton has tuned
        self.timer = Timer(*((2, 10) if args.quick else (5, 30)))
        self.expected = {}
        if args.expect:
            with open(args.expect) as f:
                self.expected = {r["network"]: r["tilec"].get("sha256")
                                 for r in json.load(f)["networks"]}

    def network(self, name):
        scene, dtype_name = name.split("/")
        dtype = DTYPES[dtype_name]
        coords = scene_coords(scene)
        nb = oracle.neighbour_map(coords, KERNEL_SIZE)
        pairs = int((nb >= 0).sum().item())
        n = coords.shape[0]
        row = {"network": name, "N": n, "act": pairs / n,
               "channels": list(CHANNELS), "dtype": dtype_name,
               "flops": 2.0 * pairs * sum(
                   a * b for a, b in zip(CHANNELS, CHANNELS[1:]))}
        generator = torch.Generator(device=DEVICE)
        generator.manual_seed(zlib.crc32(name.encode()))
        x = torch.empty(n, CHANNELS[0], device=DEVICE).uniform_(
            -1, 1, generator=generator).to(dtype)
        net = tilec_network(dtype)
        initialize(net, generator, pairs / n)
        ref = reference_network(x, net, nb)
        row["tilec"] = self.run_tilec(name, net, coords, x, nb, ref,
                                      dtype_name)
        y = row["tilec"].pop("y", None)
        peer = self.run_peer(name, net, coords, x, ref, dtype, y)
        if peer is not None:
            row["spconv_triton"] = peer
        return row

    def run_tilec(self, name, net, coords, x, nb, ref, dtype_name):
        result = {}
        try:
            with torch.no_grad():
                source = tilec.SparseTensor(coords, x)
                first_ms, out = wall_ms(lambda: net(source))
                result["first_call_ms"] = first_ms  # maps, compile, tuning
                y = out.features
                result["network_err"] = network_error(y, ref)
                result["layer_errs"] = self.layer_errors(net, source, nb,
                                                         dtype_name)
                result["pairs_match_oracle"] = source.active_pairs(
                    KERNEL_SIZE) == int((nb >= 0).sum().item())
                poison_allocator(y.shape, y.dtype, blocks=8)
                again = net(source).features
                result["repeat_bitwise"] = bool(torch.equal(again, y))
                result["sha256"] = digest(y)
                if self.args.expect:
                    result["matches_expected"] = \
                        self.expected.get(name) == result["sha256"]
                result["ms"] = self.timer.median_ms(lambda: net(source))
                result["new_coords_ms"] = self.timer.median_ms(
                    lambda: net(tilec.SparseTensor(coords, x)))
            checks = [result["network_err"] <= NETWORK_RTOL,
                      max(result["layer_errs"]) <= 1.0,
                      result["pairs_match_oracle"], result["repeat_bitwise"],
                      result.get("matches_expected", True)]
            result["correct"] = all(checks)
            result["y"] = y
        except Exception as failure:  # a failure is a result, and fails
            result["error"] = f"{type(failure).__name__}: {failure}"
            result["correct"] = False
        return result

    def layer_errors(self, net, source, nb, dtype_name):
        """Each conv against float64 on the input tilec gave it."""
        errors, h = [], source
        for module in net:
            if isinstance(module, tilec.nn.SubMConv3d):
                out = module(h)
                ref = oracle.reference(h.features, module.weight, nb) + \
                    module.bias.double()
                errors.append(oracle.worst_error(
                    out.features, ref, nb, module.in_channels, dtype_name))
                h = out
            else:
                h = h.replace_feature(module(h.features))
        return errors

    def run_peer(self, name, net, coords, x, ref, dtype, y):
        if self.peer is None:
            return None
        # spconv-Triton tunes per (Ci, Co, dtype), 20-35 s each on the H200.
        keys = {(ci, co, dtype) for ci, co in zip(CHANNELS, CHANNELS[1:])}
        if keys - self.peer_keys and \
                time.monotonic() - START > self.args.peer_deadline_s:
            self.peer_skips.append(
                f"{name}: spconv-Triton not run: it would tune new layer "
                f"shapes (20-35 s each) past --peer-deadline-s "
                f"({self.args.peer_deadline_s:.0f} s)")
            return None
        self.peer_keys |= keys
        spconv = self.peer
        peer = peer_network(spconv, dtype)
        # The checkpoint swap: tilec's state_dict as it is, strict. A failure
        # here is the layouts' disagreement, not the peer's.
        try:
            peer.load_state_dict(net.state_dict())
        except RuntimeError as failure:
            return {"error": f"load_state_dict: {failure}", "correct": False}
        result = {}
        try:
            spatial = (coords[:, 1:].max(0).values + 1).tolist()
            batch = int(coords[:, 0].max().item()) + 1

            def fresh():
                return spconv.SparseConvTensor(x, coords, spatial, batch)
            with torch.no_grad():
                first_ms, out = wall_ms(lambda: peer(fresh()))
                result["first_call_ms"] = first_ms  # pairs, compile, tuning
                result["network_err"] = network_error(out.features, ref)
                if y is not None:
                    result["tilec_diff"] = network_error(y, out.features
                                                         .double())
                    # And back: tilec's modules from the peer's state_dict.
                    back = tilec_network(dtype)
                    back.load_state_dict(peer.state_dict())
                    result["tilec_from_peer_state_bitwise"] = bool(
                        torch.equal(back(tilec.SparseTensor(coords, x))
                                    .features, y))
                cached = out.replace_feature(x)  # the pairs travel with it
                result["ms"] = self.timer.median_ms(lambda: peer(cached))
                result["new_coords_ms"] = self.timer.median_ms(
                    lambda: peer(fresh()))
            result["correct"] = result["network_err"] <= NETWORK_RTOL and \
                result.get("tilec_from_peer_state_bitwise", True)
        except Exception as failure:  # the peer's failure is its result
            result["error"] = f"{type(failure).__name__}: {failure}"
        return result

    def error_paths(self, network):
        """Each wrong call and the exception it must raise (and an edge
        that must not raise), on the scene and dtype of `network` (the
        first: from a bundle, its kernels are there)."""
        scene, dtype_name = network.split("/")
        dtype = DTYPES[dtype_name]
        coords = scene_coords(scene)
        n = coords.shape[0]
        x = torch.randn(n, CHANNELS[0], device=DEVICE, dtype=dtype)
        conv = tilec.nn.SubMConv3d(CHANNELS[0], CHANNELS[1]).to(
            DEVICE, dtype).eval()
        duplicate = torch.cat([coords, coords[:1]])
        outside = coords.clone()
        outside[0, 1] = -1
        narrow = x[:, :CHANNELS[0] // 2].contiguous()

        def empty(y):
            if y.features.shape != (0, CHANNELS[1]):
                raise AssertionError(f"{list(y.features.shape)} rows")

        # Stands in for a runtime of the next device (there may be none).
        elsewhere = types.SimpleNamespace(device=coords.device.index + 1)

        def second_runtime():
            # Another runtime of the same device (its own session over the
            # same caches or bundle) gives the same bits.
            device = coords.device.index
            other = tilec.Runtime(device=device, bundle=self.args.bundle,
                                  allow_jit=False) if self.args.bundle \
                else tilec.Runtime(device=device)
            first = conv(tilec.SparseTensor(coords, x)).features
            second = conv(tilec.SparseTensor(coords, x, runtime=other))
            if not torch.equal(first, second.features):
                raise AssertionError("two runtimes of one device differ")

        def backward():
            with torch.enable_grad():
                source = tilec.SparseTensor(coords, x.clone().requires_grad_())
                conv(source).features.float().sum().backward()
        cases = [
            ("non-contiguous features", tilec.InvalidArgumentError,
             "contiguous", lambda: tilec.SparseTensor(coords, x.t()
                                                      .contiguous().t())),
            ("features on the host", tilec.InvalidArgumentError, "cuda:0",
             lambda: tilec.SparseTensor(coords, x.cpu())),
            ("a runtime of another device", tilec.InvalidArgumentError,
             "the runtime runs on cuda:",
             lambda: tilec.SparseTensor(coords, x, runtime=elsewhere)),
            ("a device the driver lacks", tilec.DeviceError,
             "does not exist",
             lambda: tilec.Runtime(device=torch.cuda.device_count())),
            ("a second runtime of the device", None, "", second_runtime),
            ("int64 coordinates", tilec.InvalidArgumentError, "int32",
             lambda: tilec.SparseTensor(coords.long(), x)),
            ("channel mismatch", tilec.InvalidArgumentError, "channels",
             lambda: conv(tilec.SparseTensor(coords, narrow))),
            (f"f32 features, {dtype_name} layer", tilec.InvalidArgumentError,
             "float32",
             lambda: conv(tilec.SparseTensor(coords, x.float()))),
            ("duplicate voxels", tilec.InvalidInputError, "",
             lambda: conv(tilec.SparseTensor(duplicate, torch.cat(
                 [x, x[:1]])))),
            ("coordinate out of range", tilec.InvalidInputError, "",
             lambda: conv(tilec.SparseTensor(outside, x))),
            # Trains (tilec's backward); a bundle packed from inference
            # lacks the gradients' kernels and says so.
            ("backward", tilec.CompileError if self.args.bundle else None,
             "bundle" if self.args.bundle else "", backward),
            # Not an error: an empty tensor convolves to no rows.
            ("an empty tensor", None, "", lambda: empty(conv(
                tilec.SparseTensor(coords[:0], x[:0])))),
        ]
        if self.args.bundle:
            wide = tilec.nn.SubMConv3d(CHANNELS[0], 48).to(DEVICE, dtype)
            cases.append(("a layer shape the bundle lacks", tilec.CompileError,
                          "bundle", lambda: wide(tilec.SparseTensor(coords,
                                                                    x))))
        results = []
        for case, expected, text, call in cases:
            entry = {"case": case,
                     "expected": expected.__name__ if expected else "no error"}
            try:
                with torch.no_grad():
                    call()
                torch.cuda.synchronize()
                entry["got"] = "no error"
                entry["ok"] = expected is None
            except Exception as error:
                entry["got"] = type(error).__name__
                entry["message"] = str(error)
                entry["ok"] = expected is not None and \
                    isinstance(error, expected) and text in str(error)
            results.append(entry)
        return results


def cell(value, form):
    return "-" if value is None else format(value, form)


def verdict(result):
    if result is None:
        return "skip"
    if "error" in result:
        return "ERR"
    return "y" if result.get("correct") else "NO"


def print_table(rows):
    header = ["network", "N", "act", "tilec ms", "spconv-Triton ms",
              "tilec speedup", "tilec ms, new coords",
              "spconv-Triton ms, new coords", "tilec speedup", "first call s: tilec / spconv-Triton",
              "network err: tilec / spconv-Triton", "correct (t/s)"]
    lines = []
    for r in rows:
        t, s = r["tilec"], r.get("spconv_triton") or {}
        ratio = (s["ms"] / t["ms"]) if "ms" in s and "ms" in t else None
        ratio_new = (s["new_coords_ms"] / t["new_coords_ms"]) \
            if "new_coords_ms" in s and "new_coords_ms" in t else None
        first = [cell(p.get("first_call_ms") and p["first_call_ms"] / 1e3,
                      ".2f") for p in (t, s)]
        lines.append([
            r["network"], f"{r['N']:,}", f"{r['act']:.1f}",
            cell(t.get("ms"), ".3f"), cell(s.get("ms"), ".3f"),
            cell(ratio, ".2f"), cell(t.get("new_coords_ms"), ".3f"),
            cell(s.get("new_coords_ms"), ".3f"), cell(ratio_new, ".2f"),
            " / ".join(first),
            f"{cell(t.get('network_err'), '.1e')} / "
            f"{cell(s.get('network_err'), '.1e')}",
            f"{verdict(t)}/{verdict(r.get('spconv_triton'))}"])
    widths = [max([len(h)] + [len(line[i]) for line in lines])
              for i, h in enumerate(header)]
    for line in [header] + lines:
        print(" | ".join(text.rjust(w) for text, w in zip(line, widths)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=".", help="where <name>.json goes")
    parser.add_argument("--name", default="pytorch-net",
                        help="the JSON's name")
    parser.add_argument("--networks", default=",".join(NETWORKS),
                        help="scene/dtype, comma-separated (scenes shell128, "
                        "lidar; dtypes f16, bf16)")
    parser.add_argument("--bundle", help="run tilec from this bundle, "
                        "strict (tilec.Runtime(bundle=..., allow_jit=False))")
    parser.add_argument("--expect", help="a previous run's JSON: each "
                        "network's output must have its bits")
    parser.add_argument("--no-peer", action="store_true",
                        help="without spconv-Triton")
    parser.add_argument("--quick", action="store_true",
                        help="fewer timed repetitions")
    parser.add_argument("--peer-deadline-s", type=float, default=120,
                        help="no spconv-Triton network that tunes a new "
                        "layer shape starts after this many seconds since "
                        "the start")
    args = parser.parse_args()
    for name in args.networks.split(","):
        scene, _, dtype = name.partition("/")
        if scene not in ("shell128", "lidar") or dtype not in DTYPES:
            sys.exit(f"pytorch_net: network '{name}': expected "
                     f"shell128|lidar/f16|bf16")
    if not torch.cuda.is_available():
        sys.exit("pytorch_net: torch sees no GPU")
    torch.empty(1, device=DEVICE)  # torch's context first, as a program has
    if args.bundle:
        tilec.set_default_runtime(tilec.Runtime(bundle=args.bundle,
                                                allow_jit=False))
    created_ms, runtime = wall_ms(tilec.default_runtime)
    run = Run(args)
    rows = []
    for name in args.networks.split(","):
        rows.append(run.network(name))
        r = rows[-1]
        print(f"  {name}: tilec {cell(r['tilec'].get('ms'), '.3f')} ms "
              f"({verdict(r['tilec'])}), spconv-Triton "
              f"{cell((r.get('spconv_triton') or {}).get('ms'), '.3f')} ms "
              f"({verdict(r.get('spconv_triton'))}) | "
              f"{time.monotonic() - START:.0f} s", flush=True)
    errors = run.error_paths(args.networks.split(",")[0])
    from importlib import metadata
    try:
        peer_version = metadata.version("spconv-triton")
    except metadata.PackageNotFoundError:
        peer_version = None
    notes = ([run.peer_missing] if run.peer_missing else []) + run.peer_skips
    for r in rows:
        for peer in ("tilec", "spconv_triton"):
            if "error" in (r.get(peer) or {}):
                notes.append(f"{r['network']}: {peer} failed: "
                             f"{r[peer]['error']}")
    result = {"device": torch.cuda.get_device_name(),
              "torch": torch.__version__, "tilec": tilec.__version__,
              "library": str(tilec.library_path()),
              "runtime": repr(runtime), "runtime_create_ms": created_ms,
              "spconv_triton": peer_version, "channels": list(CHANNELS),
              "kernel_size": KERNEL_SIZE, "networks": rows,
              "error_paths": errors, "notes": notes,
              "wall_s": time.monotonic() - START}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.name}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"tilec {tilec.__version__} ({runtime!r}, created in "
          f"{created_ms:.0f} ms), torch {torch.__version__}, spconv-Triton "
          f"{peer_version}; layers {'-'.join(map(str, CHANNELS))}, k3; ms "
          f"per forward of the network (median, L2 flushed)")
    print_table(rows)
    passed = sum(e["ok"] for e in errors)
    print(f"error paths: {passed}/{len(errors)} as documented")
    for e in errors:
        if not e["ok"]:
            print(f"  FAILED: {e['case']}: expected {e['expected']}, got "
                  f"{e['got']}: {e.get('message', '')}")
    for note in notes:
        print(f"note: {note}")
    print(f"wall {time.monotonic() - START:.0f} s; json: {path}")
    failed = [r for r in rows if not r["tilec"].get("correct") or
              ("correct" in (r.get("spconv_triton") or {}) and
               not r["spconv_triton"]["correct"])]
    return 1 if failed or passed < len(errors) else 0


if __name__ == "__main__":
    sys.exit(main())
