"""`tilec bench spconv --frames`: a stream of scans of new sizes through the
neighbour maps and an L-layer stack of 3x3x3 submanifold convolutions, in
tilec (libtilec_c.so through the tilec package), FlexGEMM (built from its
fetched source) and spconv-Triton, in one process on one GPU; then the same
kind of stream from a bundle, in a fresh process with the JIT off; and the
map build alone next to FlexGEMM's neighbour cache.

Frames. A frame is a random subset of the LiDAR-like street
(tilec.scenes.lidar()) or of the res-256 shell (tilec.scenes.shell(256)),
alternately, keeping a fraction of its voxels drawn uniformly in [0.4, 1.0],
in their original order. Every frame of the run (warm-up, timed and bundle
frames of every config) has a voxel count of its own: a count met before is
drawn again. The warm-up frames span the range the later frames draw from:
each scene's first warm-up frame keeps 40-45% of it and its second 95-100%,
so that they meet every size class (ceil(log2 N) for tilec, floor for
FlexGEMM) of the frames after them; every third bundle frame has a multiple
of 16 voxels. Configs: L = 1 and 8 layers of C = 64 and 128 channels in and
out, f16, no bias, no nonlinearity; the weights of each layer N(0, 1/(9 C))
and the features N(0, 1), the same for every peer (the weight layout
[Co, 3, 3, 3, Ci] is the three peers' own, docs/bench.md).

A frame's time, per peer: wall time, GPU idle before and synchronized after,
from the frame's coordinates and features on the GPU through a new sparse
tensor and its maps (a tilec.SparseTensor; FlexGEMM's neighbour cache, built
by its sparse_submanifold_conv3d when given none; spconv-Triton's indice
pairs, which its SubMConv3d builds for a new SparseConvTensor and shares
with the later layers through indice_key) and the L layers; releasing them
comes after. --warmup frames first (what each peer tunes and compiles, it
does there), then --frames timed frames: median and worst per peer, and the
best peer over tilec (> 1: tilec is faster). The last timed frame's output of
each peer is checked against a float64 chain computed in torch from the
coordinates (spconv_reference.py), and tilec's against FlexGEMM's (else
spconv-Triton's): ||y - ref|| / ||ref|| <= 1e-2.

Bundle. A child process runs the warm-up frames' tilec calls again with
TILEC_RECORD_WORKLOAD set and a fresh autotune cache; `tilec warmup` on that
workload and `tilec pack` make a bundle of exactly those winners; a fresh
child creates tilec.Runtime(bundle=..., allow_jit=False) with the caches
pointed at nothing and serves --bundle-frames frames of new sizes per
config: frames served and refused (the first refusal's error), median and
worst frame.

Maps. Per scene at full size (street, shell 256, 500k uniform voxels in
512^3): tilec's map build (a new tilec.SparseTensor, then build_maps(3, 1);
rows in the key's order, what the default "auto" gives these channels, and
in lean groups) and FlexGEMM's neighbour cache
(SubMConv3dFunction._compute_neighbor_cache for its default algorithm, the
masked implicit GEMM), then its valid-kernel lists for the block sizes its
tuned kernels use; medians of --map-reps after a warm-up; tilec / FlexGEMM.
Each build's tensor (or cache) is released before the next, as a stream of
frames releases the last frame's: a build then reuses its allocator's
memory. --map-hold keeps every build's until the scene's last (the table
of sessions up to 2026-12-07), which times each allocator's growth too.

Prints the tables; writes bench-spconv-frames.json and .md to --out.

    python3 spconv_frames.py --lib build/lib/libtilec_c.so [--out DIR]
"""

import argparse
import atexit
import glob
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

START = time.monotonic()
HERE = os.path.dirname(os.path.abspath(__file__))


def package_dir():
    """python/ of the checkout (scripts/bench/../../python) or of the GPU
    bundle (share/tilec/bench/../../../python)."""
    for candidate in (os.path.join(HERE, "..", "..", "python"),
                      os.path.join(HERE, "..", "..", "..", "python")):
        if os.path.isfile(os.path.join(candidate, "tilec", "__init__.py")):
            return os.path.abspath(candidate)
    return None


for _path in (package_dir(), HERE):
    if _path and _path not in sys.path:
        sys.path.insert(0, _path)

CONFIGS = ((1, 64), (1, 128), (8, 64), (8, 128))  # (layers, channels)
QUICK_CONFIGS = ((1, 64), (8, 128))
SCENES = ("street", "shell256")
LOW, HIGH = 0.4, 1.0  # the fraction of a scene a frame keeps
# The first warm-up frames of a config: each scene at both ends of the range.
WARMUP_STRATA = (("street", 0.40, 0.45), ("shell256", 0.40, 0.45),
                 ("street", 0.95, 1.0), ("shell256", 0.95, 1.0))
MULTIPLE_OF_16_EVERY = 3  # bundle frames
MAP_SCENES = ("street", "shell256", "uniform500k@512")
# The map table's builds: (name, row order, row block size; None: every
# row block a convolution may use).
MAP_VARIANTS = (("key", "key", None), ("key_rows64", "key", 64),
                ("lean_groups", "lean_groups", None))
KERNEL_SIZE, DILATION = 3, 1
# Weights N(0, 1/(WEIGHT_FAN C)): a voxel with nine neighbours (a surface's)
# keeps its features' scale through a layer, so eight layers stay well
# inside f16's range.
WEIGHT_FAN = 9
RTOL = 1e-2
PEERS = ("tilec", "flexgemm", "spconv_triton")
NAMES = {"tilec": "tilec", "flexgemm": "FlexGEMM",
         "spconv_triton": "spconv-Triton"}
DEVICE = "cuda"
# What a section leaves of --budget-s for the sections after it: a config's
# stream starts while more than this is left, and so on.
RESERVE_S = {"stream": 100.0, "maps": 70.0, "map_scene": 30.0,
             "bundle": 0.0}
# Environment variables of libtilec_c.so that would change what the
# in-process stream measures; the bundle steps set their own.
TILEC_RUN_VARIABLES = ("TILEC_RECORD_WORKLOAD", "TILEC_BUNDLE",
                       "TILEC_BUNDLE_FALLBACK")
# ... and those that would bring winners from elsewhere into the bundle
# stream's processes (a remote autotune cache, pins).
TILEC_FOREIGN_WINNERS = ("TILEC_REDIS", "TILEC_REDIS_NAMESPACE",
                         "TILEC_PIN_CONFIG", "TILEC_PIN_FILE")

torch = None  # imported in main(), so that --help works without it


# --- the plan: every frame's scene, voxel count and seed ------------------

def make_plan(sizes, configs, warmup, frames, bundle_frames, seed):
    """Every frame of the run, as {"scene", "n", "seed"}: per config its
    warm-up, timed and bundle frames, each count different from all
    others."""
    rng = random.Random(seed)
    used = set()

    def draw(scene, low, high, multiple_of_16=False):
        total = sizes[scene]
        floor = math.ceil(LOW * total)
        for _ in range(100000):
            n = min(total, max(1, round(rng.uniform(low, high) * total)))
            if multiple_of_16:
                n -= n % 16
            if n >= floor and n not in used:
                used.add(n)
                return {"scene": scene, "n": n,
                        "seed": rng.randrange(1 << 31)}
        raise RuntimeError(f"no new voxel count left for {scene} in "
                           f"[{low}, {high}]")

    plan = {"seed": seed, "sizes": dict(sizes), "configs": []}
    for layers, channels in configs:
        warm = []
        for i in range(warmup):
            scene, low, high = WARMUP_STRATA[i] if i < len(WARMUP_STRATA) \
                else (SCENES[i % 2], LOW, HIGH)
            warm.append(draw(scene, low, high))
        timed = [draw(SCENES[i % 2], LOW, HIGH) for i in range(frames)]
        served = [draw(SCENES[i % 2], LOW, HIGH,
                       i % MULTIPLE_OF_16_EVERY == MULTIPLE_OF_16_EVERY - 1)
                  for i in range(bundle_frames)]
        plan["configs"].append({"L": layers, "C": channels, "warmup": warm,
                                "timed": timed, "bundle": served})
    return plan


def scene_voxels(name):
    """A scene of the C API (tilec.scenes) as int32 [N, 4] on the host."""
    import tilec
    if name == "street":
        return tilec.scenes.lidar()
    if name == "shell256":
        return tilec.scenes.shell(256)
    if name == "uniform500k@512":
        return tilec.scenes.uniform(500000, 512)
    raise ValueError(f"unknown scene {name}")


class Frames:
    """The frames' coordinates and features on the GPU."""

    def __init__(self, names):
        self.hosts = {name: scene_voxels(name) for name in names}
        # The grid FlexGEMM's hash and spconv-Triton's pairs take: the whole
        # scene's extent, the same for all of its frames.
        self.extent = {name: (host[:, 1:].max(0).values + 1).tolist()
                       for name, host in self.hosts.items()}

    def sizes(self):
        return {name: host.shape[0] for name, host in self.hosts.items()}

    def get(self, frame, channels):
        host = self.hosts[frame["scene"]]
        generator = torch.Generator().manual_seed(frame["seed"])
        keep = torch.randperm(host.shape[0], generator=generator)[
            :frame["n"]].sort().values
        coords = host[keep].to(DEVICE).contiguous()
        generator = torch.Generator(device=DEVICE).manual_seed(frame["seed"])
        x = torch.randn(frame["n"], channels, device=DEVICE,
                        generator=generator).to(torch.float16)
        return coords, x


def stack_weights(layers, channels):
    """The stack's weights, [C, 3, 3, 3, C] f16 per layer (also
    spconv_frame_profile.py's, without this module's main)."""
    import torch
    weights = []
    for layer in range(layers):
        generator = torch.Generator(device=DEVICE).manual_seed(
            zlib.crc32(f"frames/L{layers}/C{channels}/{layer}".encode()))
        weight = torch.randn(channels, KERNEL_SIZE, KERNEL_SIZE, KERNEL_SIZE,
                             channels, device=DEVICE, generator=generator)
        weights.append((weight / math.sqrt(WEIGHT_FAN * channels)).to(
            torch.float16).contiguous())
    return weights


# --- the peers: a frame through a new sparse tensor and the stack ---------
# Each runner returns (the last layer's features, what holds the frame's
# maps), so that the caller releases the maps after the timed region.

def tilec_layers(weights):
    """The stack as tilec.nn.SubMConv3d modules holding `weights`
    (spconv_frame_profile.py runs them too)."""
    import torch
    import tilec.nn
    modules = []
    for weight in weights:
        module = tilec.nn.SubMConv3d(weight.shape[4], weight.shape[0],
                                     KERNEL_SIZE, bias=False)
        module = module.to(device=DEVICE, dtype=weight.dtype).eval()
        with torch.no_grad():
            module.weight.copy_(weight)
        modules.append(module)
    return modules


def tilec_runner(weights, runtime=None):
    import tilec
    modules = tilec_layers(weights)

    def run(coords, x, scene):
        tensor = tilec.SparseTensor(coords, x, runtime=runtime)
        for module in modules:
            tensor = module(tensor)
        return tensor.features, tensor
    return run


def flexgemm_runner(flexgemm, weights, frames):
    conv = flexgemm["sparse_submanifold_conv3d"]
    channels = weights[0].shape[4]
    shapes = {name: torch.Size([1, channels] + extent)
              for name, extent in frames.extent.items()}
    dilation = (DILATION,) * 3

    def run(coords, x, scene):
        cache, y = None, x
        for weight in weights:
            y, cache = conv(y, coords, shapes[scene], weight, None, cache,
                            dilation)
        return y, cache
    return run


def spconv_triton_runner(spconv, weights, frames):
    modules = []
    for weight in weights:
        module = spconv.SubMConv3d(weight.shape[4], weight.shape[0],
                                   KERNEL_SIZE, padding=KERNEL_SIZE // 2,
                                   dilation=DILATION, bias=False,
                                   indice_key="frame")
        module = module.to(device=DEVICE, dtype=weight.dtype).eval()
        with torch.no_grad():
            # spconv's KRSC layout [CO, k0, k1, k2, CI] is ours (spconv.py).
            module.weight.copy_(weight)
        modules.append(module)

    def run(coords, x, scene):
        tensor = spconv.SparseConvTensor(x, coords, frames.extent[scene], 1)
        for module in modules:
            tensor = module(tensor)
        return tensor.features, tensor
    return run


def flexgemm_candidates(args):
    if args.flexgemm:
        return [args.flexgemm]
    if os.environ.get("FLEXGEMM_DIR"):
        return [os.environ["FLEXGEMM_DIR"]]
    return [os.path.join(HERE, "..", "..", "peers", "FlexGEMM"),
            os.path.join(os.getcwd(), "peers", "FlexGEMM")]


def flexgemm_built(directory):
    return bool(glob.glob(os.path.join(directory, "flex_gemm", "kernels",
                                       "cuda*.so")))


def add_flexgemm_arguments(parser):
    """The options load_flexgemm reads: where FlexGEMM's source is, and
    whether and how long to build it."""
    parser.add_argument("--flexgemm", default="",
                        help="FlexGEMM's source folder (default: "
                             "$FLEXGEMM_DIR, else peers/FlexGEMM of the "
                             "checkout or of the current folder)")
    parser.add_argument("--no-flexgemm-build", action="store_true",
                        help="do not build FlexGEMM's CUDA extension when "
                             "it is missing")
    parser.add_argument("--flexgemm-build-timeout-s", type=float,
                        default=900)


def load_flexgemm(args, out_dir):
    """FlexGEMM's calls (a dict) and None, or None and why it is
    unavailable; builds its CUDA extension in place when it is missing."""
    info = {}
    directory = next((os.path.abspath(d) for d in flexgemm_candidates(args)
                      if os.path.isfile(os.path.join(d, "setup.py"))), None)
    if directory is None:
        return None, info, (
            "no FlexGEMM source at " + " or ".join(
                os.path.abspath(d) for d in flexgemm_candidates(args)) +
            ": scripts/fetch-flexgemm-peer.sh puts it in peers/FlexGEMM, "
            "which the GPU machine gets when it is carried")
    info["dir"] = directory
    commit_file = os.path.join(directory, ".peer-commit")
    if os.path.isfile(commit_file):
        with open(commit_file) as f:
            info["commit"] = f.read().strip()
    # Its autotune results go to a fresh file (they persist by default in
    # ~/.flex_gemm), so that its tuning is cold like the other peers'.
    if "FLEX_GEMM_AUTOTUNE_CACHE_PATH" not in os.environ:
        os.environ["FLEX_GEMM_AUTOTUNE_CACHE_PATH"] = os.path.join(
            tempfile.mkdtemp(prefix="flexgemm-autotune."),
            "autotune_cache.json")
    info["autotune_cache"] = os.environ["FLEX_GEMM_AUTOTUNE_CACHE_PATH"]
    if not flexgemm_built(directory):
        if args.no_flexgemm_build:
            return None, info, (f"{directory} is not built and "
                                f"--no-flexgemm-build was given")
        log_path = os.path.join(out_dir, "flexgemm-build.log")
        major, minor = torch.cuda.get_device_capability()
        env = dict(os.environ)
        env.setdefault("TORCH_CUDA_ARCH_LIST", f"{major}.{minor}")
        env.setdefault("MAX_JOBS", str(os.cpu_count() or 4))
        print(f"FlexGEMM: building its CUDA extension in {directory} "
              f"(TORCH_CUDA_ARCH_LIST={env['TORCH_CUDA_ARCH_LIST']}; log: "
              f"{log_path})", flush=True)
        started = time.monotonic()
        try:
            with open(log_path, "w") as log:
                done = subprocess.run(
                    [sys.executable, "setup.py", "build_ext", "--inplace"],
                    cwd=directory, env=env, stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=args.flexgemm_build_timeout_s)
        except subprocess.TimeoutExpired:
            return None, info, (f"its build took over "
                                f"{args.flexgemm_build_timeout_s:.0f} s "
                                f"({log_path})")
        info["build_s"] = time.monotonic() - started
        if done.returncode != 0 or not flexgemm_built(directory):
            return None, info, (f"its build failed with status "
                                f"{done.returncode}: {last_line(log_path)} "
                                f"({log_path})")
        print(f"FlexGEMM: built in {info['build_s']:.0f} s", flush=True)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        import flex_gemm
        import flex_gemm.ops.spconv as flexgemm_spconv
        from flex_gemm.ops.spconv import (SubMConv3dFunction,
                                          sparse_submanifold_conv3d)
    except Exception as error:  # an import error, or its CUDA extension's
        return None, info, (f"cannot import it from {directory}: "
                            f"{type(error).__name__}: {error}")
    info["algorithm"] = str(flexgemm_spconv.ALGORITHM)
    # It loads its tuning at import and saves it only when asked: saved at
    # exit, a later process given the same FLEX_GEMM_AUTOTUNE_CACHE_PATH
    # (a cache carried from an earlier run) times its steps without tuning.
    atexit.register(save_flexgemm_tuning, flex_gemm)
    return {"module": flex_gemm, "spconv": flexgemm_spconv,
            "function": SubMConv3dFunction,
            "sparse_submanifold_conv3d": sparse_submanifold_conv3d}, info, None


def save_flexgemm_tuning(flex_gemm):
    try:
        flex_gemm.utils.save_autotune_cache()
    except Exception as error:  # a read-only or full disk: say so, go on
        print(f"FlexGEMM: its tuning was not saved: "
              f"{type(error).__name__}: {error}", file=sys.stderr)


def flexgemm_block_sizes(flexgemm):
    """The row block sizes (B1) of the configs FlexGEMM's autotuners chose in
    this process, most used first, else those of its candidates."""
    counts = {}
    try:
        from flex_gemm.kernels.triton.spconv import config as candidates
        from flex_gemm.kernels.triton.spconv import \
            sparse_submanifold_conv_fwd_masked_implicit_gemm as masked
        from flex_gemm.kernels.triton.spconv import \
            sparse_submanifold_conv_fwd_masked_implicit_gemm_splitk as splitk
        tuners = {id(getattr(module, name)): getattr(module, name)
                  for module in (masked, splitk) for name in dir(module)
                  if name.endswith("_kernel")}
        for tuner in tuners.values():
            for config in getattr(tuner, "cache", {}).values():
                b1 = getattr(config, "kwargs", {}).get("B1")
                if b1:
                    counts[b1] = counts.get(b1, 0) + 1
        if not counts:
            for config in candidates.autotune_config:
                counts.setdefault(config.kwargs["B1"], 0)
    except Exception:  # its internals moved: the usual sizes
        counts = {64: 0, 128: 0}
    return sorted(counts, key=lambda b1: (-counts[b1], b1))


def load_spconv_triton():
    try:
        import spconv_triton.pytorch as spconv
    except ImportError as error:
        return None, f"spconv-triton is not installed ({error})"
    return spconv, None


# --- measurements ---------------------------------------------------------

def rel_err(y, ref):
    """||y - ref|| / ||ref|| in float64; inf when y has a NaN or inf."""
    y = y.double()
    if not bool(torch.isfinite(y).all()):
        return math.inf
    return float((y - ref).norm() / ref.norm().clamp_min(1e-300))


def reference_stack(coords, x, weights):
    import spconv_reference as oracle
    nb = oracle.neighbour_map(coords, KERNEL_SIZE, DILATION)
    y = x
    for weight in weights:
        y = oracle.reference(y, weight, nb)
    return y


def timed(run, *args):
    """(ms, result) of run(*args): wall time, GPU idle before, synchronized
    after (cuda_timing.wall_ms)."""
    from cuda_timing import wall_ms
    return wall_ms(lambda: run(*args))


def median(values):
    return statistics.median(values) if values else None


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


class Bench:
    def __init__(self, args, frames, flexgemm, spconv):
        self.args = args
        self.frames = frames
        self.flexgemm = flexgemm
        self.spconv = spconv
        self.unavailable = {}  # peer -> why
        self.budget_start = time.monotonic()

    def left_s(self):
        return self.args.budget_s - (time.monotonic() - self.budget_start)

    def runner(self, peer, weights):
        if peer == "tilec":
            return tilec_runner(weights)
        if peer == "flexgemm":
            return flexgemm_runner(self.flexgemm, weights, self.frames)
        return spconv_triton_runner(self.spconv, weights, self.frames)

    def stream(self, config):
        """The warm-up and timed frames of one config, every peer."""
        layers, channels = config["L"], config["C"]
        weights = stack_weights(layers, channels)
        result = {"config": f"L{layers}/C{channels}", "L": layers,
                  "C": channels, "peers": {}, "frames": []}
        runners = {}
        for peer in self.args.peers:
            if peer in self.unavailable:
                result["peers"][peer] = {"skipped": self.unavailable[peer]}
                continue
            try:
                runners[peer] = self.runner(peer, weights)
            except Exception as error:
                result["peers"][peer] = {
                    "error": f"setting up: {type(error).__name__}: {error}"}
                continue
            result["peers"][peer] = {"warmup_ms": [], "frame_ms": [],
                                     "release_ms": []}
        plan = [("warmup", f) for f in config["warmup"]] + \
            [("timed", f) for f in config["timed"]]
        outputs, last = {}, len(plan) - 1
        check_input = None
        for index, (kind, frame) in enumerate(plan):
            coords, x = self.frames.get(frame, channels)
            record = {"kind": kind, "scene": frame["scene"], "N": frame["n"],
                      "ms": {}}
            order = list(runners)
            order = order[index % len(order):] + order[:index % len(order)] \
                if order else order
            for peer in order:
                entry = result["peers"][peer]
                if index == last:
                    # NaN blocks of the output's size for the allocator: a
                    # peer that writes nothing leaves NaN, not another's.
                    from cuda_timing import poison_allocator
                    poison_allocator((frame["n"], channels), torch.float16,
                                     blocks=2)
                try:
                    with torch.no_grad():
                        ms, (y, held) = timed(runners[peer], coords, x,
                                              frame["scene"])
                except Exception as error:
                    entry["error"] = (f"frame {index} ({frame['scene']}, N "
                                      f"{frame['n']:,}): "
                                      f"{type(error).__name__}: {error}")
                    del runners[peer]
                    continue
                entry["warmup_ms" if kind == "warmup" else "frame_ms"].append(
                    ms)
                record["ms"][peer] = ms
                if index == last:
                    outputs[peer] = y
                del y
                # The frame's maps go when their last reference does.
                box = [held]
                del held
                entry["release_ms"].append(timed(box.clear)[0])
                if peer != "tilec" and \
                        ms > self.args.peer_frame_budget_s * 1e3:
                    self.unavailable[peer] = (
                        f"a frame took {ms / 1e3:.0f} s, over "
                        f"--peer-frame-budget-s "
                        f"{self.args.peer_frame_budget_s:.0f}")
                    entry["stopped"] = self.unavailable[peer]
                    del runners[peer]
            result["frames"].append(record)
            if index == last:
                check_input = (coords, x)
            del coords, x
        for peer, entry in result["peers"].items():
            times = entry.get("frame_ms")
            if times:
                entry["median_ms"] = median(times)
                entry["worst_ms"] = max(times)
                entry["release_median_ms"] = median(entry["release_ms"])
        if check_input is not None and outputs:
            result["check"] = self.check(check_input, weights, outputs)
            for peer, err in result["check"]["err_vs_f64"].items():
                result["peers"][peer]["correct"] = err <= RTOL
        self.compare(result)
        torch.cuda.empty_cache()
        return result

    def check(self, check_input, weights, outputs):
        coords, x = check_input
        with torch.no_grad():
            reference = reference_stack(coords, x, weights)
        check = {"N": coords.shape[0], "rtol": RTOL,
                 "err_vs_f64": {peer: rel_err(y, reference)
                                for peer, y in outputs.items()}}
        other = next((p for p in ("flexgemm", "spconv_triton")
                      if p in outputs), None)
        if "tilec" in outputs and other:
            check["tilec_vs"] = other
            check["tilec_vs_err"] = rel_err(outputs["tilec"],
                                            outputs[other].double())
        return check

    @staticmethod
    def compare(result):
        """best peer / tilec for the median and the worst frame (> 1: tilec
        is faster), over the peers that ran and did not fail the check."""
        tilec = result["peers"].get("tilec", {})
        rivals = {p: e for p, e in result["peers"].items()
                  if p != "tilec" and "median_ms" in e and
                  e.get("correct", True) and "error" not in e}
        if "median_ms" not in tilec or not rivals:
            return
        best = min(rivals, key=lambda p: rivals[p]["median_ms"])
        result["best_peer_median"] = best
        result["best_peer_over_tilec_median"] = \
            rivals[best]["median_ms"] / tilec["median_ms"]
        best = min(rivals, key=lambda p: rivals[p]["worst_ms"])
        result["best_peer_worst"] = best
        result["best_peer_over_tilec_worst"] = \
            rivals[best]["worst_ms"] / tilec["worst_ms"]

    def maps(self):
        """tilec's map build and FlexGEMM's neighbour cache per scene."""
        import tilec

        def release_unless_held(built):
            # The last build's outputs go before the next build, unless
            # --map-hold keeps them all; the GPU is idle between builds.
            if not self.args.map_hold:
                built.clear()
        rows = []
        reps = self.args.map_reps
        block_sizes = flexgemm_block_sizes(self.flexgemm) \
            if self.flexgemm else []
        for name in MAP_SCENES:
            if self.left_s() <= RESERVE_S["map_scene"]:
                rows.append({"scene": name, "skipped": "budget"})
                continue
            host = scene_voxels(name)
            coords = host.to(DEVICE).contiguous()
            row = {"scene": name, "N": host.shape[0]}
            # Every row block's lists (build_maps' default), or those of the
            # 64-row blocks alone: what a frame's convolution whose winner
            # runs them builds, against FlexGEMM's cache and its lists of
            # one block size.
            for variant, order, block_rows in MAP_VARIANTS:
                held = []

                def build():
                    release_unless_held(held)
                    tensor = tilec.SparseTensor(coords, row_order=order)
                    tensor.build_maps(KERNEL_SIZE, DILATION, block_rows)
                    held.append(tensor)
                try:
                    timed(build)  # the map kernels' first launches
                    times = [timed(build)[0] for _ in range(reps)]
                    row[f"tilec_{variant}_ms"] = median(times)
                    row[f"tilec_{variant}_ms_all"] = times
                except Exception as error:
                    row[f"tilec_{variant}_error"] = \
                        f"{type(error).__name__}: {error}"
                held.clear()  # the tensors and their maps go
            if self.flexgemm:
                function = self.flexgemm["function"]
                shape = torch.Size([1, 1] + (host[:, 1:].max(0).values +
                                             1).tolist())

                # The caches built, the only references to them (a timed
                # run's result is not kept: it would hold its cache).
                caches = []

                def cache():
                    release_unless_held(caches)
                    caches.append(function._compute_neighbor_cache(
                        coords, shape, (KERNEL_SIZE,) * 3, (DILATION,) * 3,
                        False))
                try:
                    timed(cache)
                    times = [timed(cache)[0] for _ in range(reps)]
                    row["flexgemm_cache_ms"] = median(times)
                    row["flexgemm_cache_ms_all"] = times
                    built = caches[-1]
                    caches.clear()
                    lists = {}
                    for b1 in block_sizes:
                        timed(built.compute_kernel_idx, b1)
                        lists[b1] = median([
                            timed(built.compute_kernel_idx, b1)[0]
                            for _ in range(reps)])
                    row["flexgemm_lists_ms"] = lists
                    if block_sizes:
                        row["flexgemm_lists_b1"] = block_sizes[0]
                    del built
                except Exception as error:
                    row["flexgemm_error"] = f"{type(error).__name__}: {error}"
            key = row.get("tilec_key_ms")
            one_block = row.get("tilec_key_rows64_ms")
            fg = row.get("flexgemm_cache_ms")
            if key and fg:
                row["tilec_over_flexgemm_cache"] = key / fg
            lists = row.get("flexgemm_lists_ms", {}).get(
                row.get("flexgemm_lists_b1"))
            if one_block and fg and lists is not None:
                row["tilec_rows64_over_flexgemm_cache_lists"] = \
                    one_block / (fg + lists)
            rows.append(row)
            torch.cuda.empty_cache()
        return rows


# --- the bundle stream ----------------------------------------------------

def child_env(**overrides):
    env = {k: v for k, v in os.environ.items()
           if k not in TILEC_RUN_VARIABLES + TILEC_FOREIGN_WINNERS}
    env.update(overrides)
    return env


def run_step(name, command, env, log_path, timeout):
    """A step's (status, seconds, last line of its output), output to
    log_path."""
    started = time.monotonic()
    try:
        with open(log_path, "w") as log:
            done = subprocess.run(command, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, timeout=timeout)
        status = done.returncode
    except subprocess.TimeoutExpired:
        status = f"timed out after {timeout:.0f} s"
    except OSError as error:
        status = f"cannot run: {error}"
    seconds = time.monotonic() - started
    line = last_line(log_path)
    print(f"  bundle: {name}: status {status}, {seconds:.1f} s: {line}",
          flush=True)
    return {"status": status, "seconds": seconds, "last_line": line,
            "log": log_path, "command": command}


def bundle_stream(args, plan_path, out_dir):
    """Records the warm-up frames' tilec calls, warms up and packs them, and
    serves the bundle frames from the bundle in a fresh process."""
    work = os.path.join(out_dir, "frames-bundle")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    workload = os.path.join(work, "workload.json")
    autotune = os.path.join(work, "autotune_cache.json")
    bundle = os.path.join(work, "frames.bundle")
    result = {"workload": workload, "bundle": bundle, "steps": {}}
    tilec_bin = args.tilec or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(args.lib))), "bin",
        "tilec")
    result["tilec"] = tilec_bin
    if not os.access(tilec_bin, os.X_OK):
        result["error"] = f"no tilec binary at {tilec_bin} (--tilec)"
        return result
    me = [sys.executable, os.path.abspath(__file__), "--lib",
          os.path.abspath(args.lib), "--plan", plan_path]
    lib = {"TILEC_LIBRARY": os.path.abspath(args.lib)}
    # The stage cache is the in-process run's (cubins only); the autotune
    # cache is new, so that it holds the warm-up frames' winners alone.
    tune = child_env(TILEC_AUTOTUNE_CACHE=autotune, **lib)
    record_result = os.path.join(work, "record.json")
    steps = result["steps"]
    steps["record"] = run_step(
        "record the warm-up frames",
        me + ["--role", "record", "--result", record_result],
        dict(tune, TILEC_RECORD_WORKLOAD=workload),
        os.path.join(work, "record.log"), args.child_timeout_s)
    if steps["record"]["status"] != 0 or not os.path.isfile(workload):
        result["error"] = "recording the warm-up frames failed"
        return result
    with open(workload) as f:
        calls = json.load(f).get("calls", [])
    result["workload_calls"] = len(calls)
    result["workload_ops"] = sum(1 for call in calls if "op" in call)
    steps["warmup"] = run_step(
        "tilec warmup", [tilec_bin, "warmup", workload, "--quiet", "--json",
                         os.path.join(work, "warmup.json")],
        tune, os.path.join(work, "warmup.log"), args.child_timeout_s)
    steps["pack"] = run_step(
        "tilec pack", [tilec_bin, "pack", "-o", bundle], tune,
        os.path.join(work, "pack.log"), args.child_timeout_s)
    if steps["pack"]["status"] != 0 or not os.path.isfile(bundle):
        result["error"] = "tilec pack failed"
        return result
    result["bundle_bytes"] = os.path.getsize(bundle)
    # A fresh process with the caches pointed at nothing: every kernel comes
    # from the bundle, or the call is refused.
    none = os.path.join(work, "none")
    serve_result = os.path.join(work, "serve.json")
    steps["serve"] = run_step(
        "serve the bundle frames from the bundle (JIT off)",
        me + ["--role", "serve", "--bundle", bundle, "--result",
              serve_result],
        child_env(TILEC_CACHE_DIR=none,
                  TILEC_AUTOTUNE_CACHE=os.path.join(none, "autotune.json"),
                  **lib),
        os.path.join(work, "serve.log"), args.child_timeout_s)
    if os.path.isfile(serve_result):
        with open(serve_result) as f:
            result["serve"] = json.load(f)
    else:
        result["error"] = "the serving process wrote no result"
    if os.path.exists(none):
        result["caches_written_while_serving"] = sorted(os.listdir(none))
    return result


def child_record(args):
    """--role record: the tilec calls of every config's warm-up frames, in
    a process whose TILEC_RECORD_WORKLOAD the parent set."""
    with open(args.plan) as f:
        plan = json.load(f)
    frames = Frames(SCENES)
    check_sizes(plan, frames)
    times = []
    for config in plan["configs"]:
        run = tilec_runner(stack_weights(config["L"], config["C"]))
        for frame in config["warmup"]:
            coords, x = frames.get(frame, config["C"])
            with torch.no_grad():
                times.append(timed(run, coords, x, frame["scene"])[0])
    write_json(args.result, {"frames": len(times), "frame_ms": times})
    print(f"recorded {len(times)} warm-up frames into "
          f"{os.environ.get('TILEC_RECORD_WORKLOAD')}")
    return 0


def child_serve(args):
    """--role serve: the bundle frames of every config from the bundle alone,
    in a fresh process."""
    import tilec
    with open(args.plan) as f:
        plan = json.load(f)
    frames = Frames(SCENES)
    check_sizes(plan, frames)
    result = {"bundle": args.bundle, "configs": []}
    try:
        started = time.perf_counter()
        runtime = tilec.Runtime(bundle=args.bundle, allow_jit=False)
        result["runtime_create_ms"] = (time.perf_counter() - started) * 1e3
    except Exception as error:
        result["error"] = f"{type(error).__name__}: {error}"
        write_json(args.result, result)
        print(f"cannot create the runtime: {result['error']}")
        return 1
    for config in plan["configs"]:
        weights = stack_weights(config["L"], config["C"])
        run = tilec_runner(weights, runtime)
        entry = {"config": f"L{config['L']}/C{config['C']}",
                 "frames": len(config["bundle"]),
                 "multiples_of_16": sum(1 for f in config["bundle"]
                                        if f["n"] % 16 == 0),
                 "served": 0, "refused": 0, "frame_ms": [], "refusals": []}
        last = None
        for index, frame in enumerate(config["bundle"]):
            coords, x = frames.get(frame, config["C"])
            try:
                with torch.no_grad():
                    ms, (y, held) = timed(run, coords, x, frame["scene"])
            except tilec.Error as error:
                torch.cuda.synchronize()
                entry["refused"] += 1
                entry["refusals"].append({
                    "frame": index, "scene": frame["scene"], "N": frame["n"],
                    "error": f"{type(error).__name__}: {error}"})
                continue
            entry["served"] += 1
            entry["frame_ms"].append(ms)
            last = (coords, x, y)
            del held
        if entry["frame_ms"]:
            entry["first_ms"] = entry["frame_ms"][0]
            entry["median_ms"] = median(entry["frame_ms"])
            entry["worst_ms"] = max(entry["frame_ms"])
        if entry["refusals"]:
            entry["first_refusal"] = entry["refusals"][0]["error"]
        if last is not None:
            coords, x, y = last
            with torch.no_grad():
                entry["err_vs_f64_last"] = rel_err(
                    y, reference_stack(coords, x, weights))
            entry["correct_last"] = entry["err_vs_f64_last"] <= RTOL
        del last
        result["configs"].append(entry)
        print(f"{entry['config']}: served {entry['served']} of "
              f"{entry['frames']}, refused {entry['refused']}", flush=True)
        torch.cuda.empty_cache()
    write_json(args.result, result)
    return 0


def check_sizes(plan, frames):
    for name, size in frames.sizes().items():
        if plan["sizes"].get(name) != size:
            sys.exit(f"spconv_frames: scene {name} has {size} voxels here, "
                     f"the plan says {plan['sizes'].get(name)}")


def tuning_summary(path):
    """What a tilec autotune cache says of the tuning that filled it: the
    keys tuned (more than one candidate) and adopted, the candidates by
    status (ok: timed in full or alone; screened: on the screening budget
    only), their compile time (summed; the compiles overlap), the GPU time
    of their recorded benchmark repetitions (reps x median; a candidate
    timed in both rounds shows its full round only) and the span of the
    keys' tuned_at stamps (1 s resolution). Entries that keep their
    tuning's wall times (`tuning`) add them up: the tunings' whole time,
    their compiles' spans (first submitted to last finished) and their
    benchmarking, which overlap, and the span from the first tuning's start
    to the last one's end (ms resolution)."""
    try:
        with open(path) as f:
            devices = json.load(f)
    except (OSError, ValueError) as error:
        return {"error": str(error), "text": f"autotune cache: {error}"}
    tuned = adopted = 0
    statuses = {}
    compile_ms = benchmark_ms = 0.0
    walls = {"total_ms": 0.0, "compile_ms": 0.0, "benchmark_ms": 0.0}
    stamps, spans = [], []
    for kernels in devices.values():
        for entries in kernels.values():
            for entry in entries.values():
                timings = entry.get("timings", [])
                if len(timings) > 1:
                    tuned += 1
                    if entry.get("tuned_at"):
                        stamps.append(entry["tuned_at"])
                else:
                    adopted += 1
                for timing in timings:
                    status = timing.get("status", "ok")
                    statuses[status] = statuses.get(status, 0) + 1
                    compile_ms += timing.get("compile_ms") or 0.0
                    benchmark_ms += ((timing.get("reps") or 0) *
                                     (timing.get("median_us") or 0.0) / 1e3)
                tuning = entry.get("tuning") or {}
                if tuning.get("total_ms"):
                    for name in walls:
                        walls[name] += tuning.get(name) or 0.0
                    start = tuning.get("started_unix_ms") or 0.0
                    spans.append((start, start + tuning["total_ms"]))
    span_s = None
    if stamps:
        parse = lambda s: time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
        span_s = parse(max(stamps)) - parse(min(stamps))
    counts = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    summary = {"keys_tuned": tuned, "keys_adopted": adopted,
               "candidates": statuses, "compile_ms": compile_ms,
               "benchmark_ms": benchmark_ms, "tuned_span_s": span_s,
               "text": f"{tuned} keys tuned ({counts}), {adopted} adopted, "
                       f"compiles {compile_ms / 1e3:.1f} s summed, benchmark "
                       f"repetitions {benchmark_ms / 1e3:.2f} s"
                       + (f", tunings over {span_s:.0f} s"
                          if span_s is not None else "")}
    if spans:
        first = min(start for start, _ in spans)
        last = max(end for _, end in spans)
        summary["tuning_walls_ms"] = dict(walls, span_ms=last - first)
        summary["text"] += (
            f"; the tunings' wall time {walls['total_ms'] / 1e3:.2f} s "
            f"(compile spans {walls['compile_ms'] / 1e3:.2f} s, "
            f"benchmarking {walls['benchmark_ms'] / 1e3:.2f} s, "
            f"overlapping), from the "
            f"first start to the last end {(last - first) / 1e3:.2f} s")
    return summary


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1)


# --- tables ---------------------------------------------------------------

def cell(value, form=".3f"):
    return "-" if value is None else format(value, form)


def peer_cell(entry, peer):
    if "median_ms" in entry:
        text = f"{entry['median_ms']:.3f} / {entry['worst_ms']:.3f}"
        return text if entry.get("correct", True) else text + " (WRONG)"
    if "error" in entry:
        return "ERR"
    if peer == "flexgemm" and "skipped" in entry:
        return "unavailable"
    return "skipped" if "skipped" in entry else "-"


def n_range(frames, scene):
    counts = [f["N"] for f in frames if f["kind"] == "timed" and
              f["scene"] == scene]
    return f"{min(counts):,}-{max(counts):,}" if counts else "-"


def stream_table(streams):
    header = ["config", "timed N: street / shell256",
              "tilec ms median / worst", "FlexGEMM ms median / worst",
              "spconv-Triton ms median / worst",
              "best peer / tilec: median, worst",
              "rel err vs f64: tilec / FlexGEMM / spconv-Triton",
              "tilec vs peer"]
    lines = []
    for s in streams:
        if "skipped" in s:
            lines.append([s["config"], "not run: " + s["skipped"]] +
                         [""] * (len(header) - 2))
            continue
        peers = s["peers"]
        check = s.get("check", {})
        errs = check.get("err_vs_f64", {})
        versus = "-"
        if "tilec_vs" in check:
            versus = (f"{check['tilec_vs_err']:.1e} "
                      f"({NAMES[check['tilec_vs']]})")
        ratio = "-"
        if "best_peer_over_tilec_median" in s:
            ratio = (f"{s['best_peer_over_tilec_median']:.2f} "
                     f"({NAMES[s['best_peer_median']]}), "
                     f"{s['best_peer_over_tilec_worst']:.2f} "
                     f"({NAMES[s['best_peer_worst']]})")
        lines.append([
            s["config"], f"{n_range(s['frames'], 'street')} / "
                         f"{n_range(s['frames'], 'shell256')}"] +
            [peer_cell(peers.get(p, {}), p) for p in PEERS] +
            [ratio, " / ".join(cell(errs.get(p), ".1e") for p in PEERS),
             versus])
    return header, lines


def scene_table(streams):
    """Per config and scene, the timed frames' medians (and range) of each
    peer, and each frame's best peer over tilec (timed by both in turn):
    a stream's median over two scenes lies between their modes."""
    header = ["config, scene", "timed N", "tilec ms median (range)",
              "FlexGEMM ms median (range)", "spconv-Triton ms median (range)",
              "best peer / tilec per frame"]
    lines = []
    for s in streams:
        if "skipped" in s:
            continue
        for scene in dict.fromkeys(f["scene"] for f in s["frames"]):
            timed = [f for f in s["frames"]
                     if f["kind"] == "timed" and f["scene"] == scene]
            if not timed:
                continue
            cells = []
            for peer in PEERS:
                times = [f["ms"][peer] for f in timed if peer in f["ms"]]
                cells.append(f"{median(times):.3f} ({min(times):.3f}-"
                             f"{max(times):.3f})" if times else "-")
            ratios = [min(f["ms"][p] for p in PEERS[1:] if p in f["ms"]) /
                      f["ms"]["tilec"] for f in timed if "tilec" in f["ms"]
                      and any(p in f["ms"] for p in PEERS[1:])]
            lines.append([f"{s['config']} {scene}", n_range(timed, scene)] +
                         cells + [f"{min(ratios):.2f}-{max(ratios):.2f}"
                                  if ratios else "-"])
    return header, lines


def bundle_table(bundle):
    header = ["config", "frames (N % 16 == 0)", "served", "refused",
              "median ms", "worst ms", "first frame ms",
              "rel err vs f64 (last served)"]
    lines = []
    for c in bundle.get("serve", {}).get("configs", []):
        lines.append([c["config"], f"{c['frames']} ({c['multiples_of_16']})",
                      str(c["served"]), str(c["refused"]),
                      cell(c.get("median_ms")), cell(c.get("worst_ms")),
                      cell(c.get("first_ms")),
                      cell(c.get("err_vs_f64_last"), ".1e")])
    return header, lines


def maps_table(rows, flexgemm_reason):
    header = ["scene", "N", "tilec maps ms (key, both row blocks)",
              "tilec maps ms (key, 64-row blocks)",
              "tilec maps ms (lean_groups)", "FlexGEMM neighbour cache ms",
              "FlexGEMM valid-kernel lists ms",
              "tilec (both) / FlexGEMM cache",
              "tilec (64-row blocks) / FlexGEMM cache + lists"]
    lines = []
    for r in rows:
        if "skipped" in r:
            lines.append([r["scene"], "not run: budget"] +
                         [""] * (len(header) - 2))
            continue
        if flexgemm_reason:
            fg = lists = "unavailable"
        else:
            fg = "ERR" if "flexgemm_error" in r else \
                cell(r.get("flexgemm_cache_ms"))
            lists = ", ".join(f"{ms:.3f} (B1 {b1})" for b1, ms in
                              r.get("flexgemm_lists_ms", {}).items()) or "-"
        lines.append([r["scene"], f"{r['N']:,}",
                      cell(r.get("tilec_key_ms")),
                      cell(r.get("tilec_key_rows64_ms")),
                      cell(r.get("tilec_lean_groups_ms")), fg, lists,
                      cell(r.get("tilec_over_flexgemm_cache"), ".2f"),
                      cell(r.get("tilec_rows64_over_flexgemm_cache_lists"),
                           ".2f")])
    return header, lines


def print_table(title, header, lines):
    print(f"\n{title}")
    widths = [max([len(h)] + [len(line[i]) for line in lines])
              for i, h in enumerate(header)]
    for line in [header] + lines:
        print(" | ".join(text.rjust(w) for text, w in zip(line, widths)))


def markdown_table(title, header, lines):
    text = f"\n### {title}\n\n| " + " | ".join(header) + " |\n|" + \
        " --- |" * len(header) + "\n"
    for line in lines:
        text += "| " + " | ".join(line) + " |\n"
    return text


def notes(report):
    lines = []
    reason = report["peers"].get("flexgemm", {}).get("unavailable")
    if reason:
        lines.append(f"FlexGEMM: unavailable ({reason})")
    reason = report["peers"].get("spconv_triton", {}).get("unavailable")
    if reason:
        lines.append(f"spconv-Triton: unavailable ({reason})")
    for s in report["streams"]:
        for peer, entry in s.get("peers", {}).items():
            if "error" in entry:
                lines.append(f"{s['config']}: {NAMES[peer]} failed: "
                             f"{entry['error']}")
            if entry.get("stopped"):
                lines.append(f"{s['config']}: {NAMES[peer]} stopped: "
                             f"{entry['stopped']}")
            if entry.get("correct") is False:
                lines.append(f"{s['config']}: {NAMES[peer]} FAILED the check "
                             f"(rel err {s['check']['err_vs_f64'][peer]:.3g} "
                             f"> {RTOL})")
        check = s.get("check", {})
        if check.get("tilec_vs_err", 0) > RTOL:
            lines.append(f"{s['config']}: tilec and "
                         f"{NAMES[check['tilec_vs']]} differ by "
                         f"{check['tilec_vs_err']:.3g} (> {RTOL})")
    bundle = report.get("bundle", {})
    if bundle.get("error"):
        lines.append(f"bundle stream: {bundle['error']}")
    serve = bundle.get("serve", {})
    if serve.get("error"):
        lines.append(f"bundle stream: {serve['error']}")
    for c in serve.get("configs", []):
        if c.get("first_refusal"):
            lines.append(f"bundle stream {c['config']}: {c['refused']} "
                         f"refused; the first: {c['first_refusal']}")
        if c.get("correct_last") is False:
            lines.append(f"bundle stream {c['config']}: the last served "
                         f"frame FAILED the check (rel err "
                         f"{c['err_vs_f64_last']:.3g})")
    if bundle.get("caches_written_while_serving"):
        lines.append("bundle stream: the serving process wrote into the "
                     "caches it was pointed at: " +
                     ", ".join(bundle["caches_written_while_serving"]))
    for section in report.get("skipped_sections", []):
        lines.append(f"not run: {section} (the {report['budget_s']:.0f} s "
                     f"budget was spent)")
    return lines


def summary_lines(report):
    bundle = report.get("bundle", {})
    lines = []
    if "workload_calls" in bundle:
        lines.append(f"bundle: {bundle['workload_calls']} calls recorded "
                     f"({bundle['workload_ops']} layers) from the warm-up "
                     f"frames; {bundle.get('bundle_bytes', 0):,} bytes "
                     f"packed; runtime from it in "
                     f"{cell(bundle.get('serve', {}).get('runtime_create_ms'), '.1f')}"
                     f" ms")
    for name, step in bundle.get("steps", {}).items():
        lines.append(f"bundle step {name}: status {step['status']}, "
                     f"{step['seconds']:.1f} s: {step['last_line']}")
    return lines


def report_text(report, markdown):
    sections = [("Frames in one process (after the warm-up frames)",
                 stream_table(report["streams"])),
                ("The same frames per scene",
                 scene_table(report["streams"]))]
    if report.get("bundle", {}).get("serve"):
        sections.append(("The same stream from a bundle, fresh process, JIT "
                         "off", bundle_table(report["bundle"])))
    if report.get("maps"):
        held = report.get("map_hold")
        sections.append(("Map build per scene (medians; " +
                         ("every build's outputs held to the scene's end"
                          if held else "each build's outputs released "
                          "before the next") + ")",
                         maps_table(report["maps"], report["peers"].get(
                             "flexgemm", {}).get("unavailable"))))
    text = ""
    for title, (header, lines) in sections:
        if markdown:
            text += markdown_table(title, header, lines)
        else:
            print_table(title, header, lines)
    tail = summary_lines(report) + [f"note: {n}" for n in notes(report)]
    if markdown:
        text += "\n" + "".join(f"- {line}\n" for line in tail)
    else:
        print()
        for line in tail:
            print(line)
    return text


# --- main -----------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="Run through `tilec bench spconv --frames` or "
               "scripts/bench-spconv.sh --frames (fresh caches, "
               "spconv-Triton's wheel). FlexGEMM: "
               "scripts/fetch-flexgemm-peer.sh fetches it into "
               "peers/FlexGEMM; the bench builds it there on first use.")
    parser.add_argument("--lib", required=True, help="libtilec_c.so")
    parser.add_argument("--out", default=".", help="where the JSON, the "
                        "Markdown and the bundle stream's files go")
    parser.add_argument("--tilec", default="", help="the tilec binary for "
                        "warmup and pack (default: bin/tilec beside the "
                        "library's lib/ folder)")
    parser.add_argument("--warmup", type=int, default=5,
                        help="warm-up frames per config (default 5)")
    parser.add_argument("--frames", type=int, default=20,
                        help="timed frames per config (default 20)")
    parser.add_argument("--bundle-frames", type=int, default=100,
                        help="frames per config served from the bundle "
                             "(default 100)")
    parser.add_argument("--configs", default="",
                        help="layers x channels, e.g. 1x64,8x128 (default "
                             "1x64,1x128,8x64,8x128)")
    parser.add_argument("--quick", action="store_true",
                        help="configs 1x64 and 8x128, 10 timed and 40 "
                             "bundle frames")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help="the peers to run (tilec always runs)")
    parser.add_argument("--sections", default="streams,maps,bundle",
                        help="what to run, of streams,maps,bundle")
    parser.add_argument("--seed", type=int, default=1,
                        help="the frames' seed")
    parser.add_argument("--map-reps", type=int, default=10,
                        help="timed builds per scene and peer (default 10)")
    parser.add_argument("--map-hold", action="store_true",
                        help="the map table keeps every build's tensor "
                             "(cache) until the scene's last, instead of "
                             "releasing each before the next build")
    parser.add_argument("--budget-s", type=float, default=300,
                        help="a config's stream starts while more than "
                             f"{RESERVE_S['stream']:.0f} s of it are left, "
                             f"the map table while {RESERVE_S['maps']:.0f} "
                             "s are, the bundle stream while any are; a "
                             "FlexGEMM build is not counted (default 300)")
    parser.add_argument("--peer-frame-budget-s", type=float, default=120,
                        help="a peer whose frame took longer stops")
    parser.add_argument("--child-timeout-s", type=float, default=300,
                        help="the limit of each bundle step")
    add_flexgemm_arguments(parser)
    # The child processes of the bundle stream.
    parser.add_argument("--role", choices=("main", "record", "serve"),
                        default="main", help=argparse.SUPPRESS)
    parser.add_argument("--plan", help=argparse.SUPPRESS)
    parser.add_argument("--bundle", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.frames = min(args.frames, 10)
        args.bundle_frames = min(args.bundle_frames, 40)
    configs = QUICK_CONFIGS if args.quick else CONFIGS
    if args.configs:
        try:
            configs = tuple(tuple(int(v) for v in item.split("x"))
                            for item in args.configs.split(","))
            assert all(len(c) == 2 and c[0] > 0 and c[1] > 0
                       for c in configs)
        except (ValueError, AssertionError):
            parser.error(f"--configs {args.configs}: expected LxC,... e.g. "
                         f"1x64,8x128")
    args.config_list = configs
    args.peers = ["tilec"] + [p for p in args.peers.split(",")
                              if p and p != "tilec"]
    for peer in args.peers:
        if peer not in PEERS:
            parser.error(f"--peers: unknown peer {peer} (known: "
                         f"{', '.join(PEERS)})")
    args.sections = [s for s in args.sections.split(",") if s]
    for section in args.sections:
        if section not in ("streams", "maps", "bundle"):
            parser.error(f"--sections: unknown section {section}")
    if args.warmup < 0 or args.frames < 1 or args.bundle_frames < 1:
        parser.error("--warmup >= 0, --frames and --bundle-frames >= 1")
    return args


def main(argv=None):
    global torch
    args = parse_args(argv)
    try:
        import torch as torch_module
    except ImportError as error:
        sys.exit(f"tilec bench spconv --frames: needs python3 with torch "
                 f"({error}); run it where it is, e.g. on the GPU machine")
    torch = torch_module
    if not torch.cuda.is_available():
        sys.exit("tilec bench spconv --frames: torch sees no GPU")
    if not os.path.exists(args.lib):
        sys.exit(f"tilec bench spconv --frames: no {args.lib} (--lib)")
    if package_dir() is None:
        sys.exit(f"tilec bench spconv --frames: no tilec package beside "
                 f"{HERE} (python/ of the checkout or of the GPU bundle)")
    torch.cuda.init()
    torch.empty(1, device=DEVICE)  # the primary context, before tilec's
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    if args.role == "record":
        return child_record(args)
    if args.role == "serve":
        return child_serve(args)

    dropped = {k: os.environ.pop(k) for k in TILEC_RUN_VARIABLES
               if k in os.environ}
    import tilec
    os.makedirs(args.out, exist_ok=True)
    out_dir = os.path.abspath(args.out)
    frames = Frames(SCENES)
    plan = make_plan(frames.sizes(), args.config_list, args.warmup,
                     args.frames, args.bundle_frames, args.seed)
    plan_path = os.path.join(out_dir, "frames-plan.json")
    write_json(plan_path, plan)

    report = {"device": torch.cuda.get_device_name(),
              "map_hold": args.map_hold,
              "torch": torch.__version__, "lib": os.path.abspath(args.lib),
              "tilec_version": tilec.library_version(),
              "caches": {k: os.environ.get(k) for k in (
                  "TILEC_CACHE_DIR", "TILEC_AUTOTUNE_CACHE",
                  "TRITON_CACHE_DIR")},
              # Set for this process, left out of the bundle stream's.
              "foreign_winners": {k: os.environ[k]
                                  for k in TILEC_FOREIGN_WINNERS
                                  if k in os.environ},
              "dropped_environment": dropped, "budget_s": args.budget_s,
              "seed": args.seed, "warmup": args.warmup,
              "frames": args.frames, "bundle_frames": args.bundle_frames,
              "weight_std": f"1/sqrt({WEIGHT_FAN} C)", "rtol": RTOL,
              "peers": {}, "streams": [], "maps": [], "bundle": {},
              "skipped_sections": [], "plan": plan_path}
    if dropped:
        print(f"note: {', '.join(dropped)} left out of this process (the "
              f"bundle stream sets its own)")
    flexgemm = spconv = None
    if "flexgemm" in args.peers:
        flexgemm, info, reason = load_flexgemm(args, out_dir)
        report["peers"]["flexgemm"] = dict(info)
        if reason:
            report["peers"]["flexgemm"]["unavailable"] = reason
            print(f"FlexGEMM: unavailable ({reason})", flush=True)
    if "spconv_triton" in args.peers:
        spconv, reason = load_spconv_triton()
        report["peers"]["spconv_triton"] = {}
        if reason:
            report["peers"]["spconv_triton"]["unavailable"] = reason
        else:
            from importlib import metadata
            try:
                report["peers"]["spconv_triton"]["version"] = \
                    metadata.version("spconv-triton")
            except metadata.PackageNotFoundError:
                pass
    try:
        import triton
        report["triton"] = triton.__version__
    except ImportError:
        report["triton"] = None
    bench = Bench(args, frames, flexgemm, spconv)
    for peer in ("flexgemm", "spconv_triton"):
        reason = report["peers"].get(peer, {}).get("unavailable")
        if reason:
            bench.unavailable[peer] = reason
    json_path = os.path.join(out_dir, "bench-spconv-frames.json")

    def save():
        report["unavailable"] = dict(bench.unavailable)
        report["wall_s"] = time.monotonic() - START
        write_json(json_path, report)

    if "streams" in args.sections:
        for config in plan["configs"]:
            name = f"L{config['L']}/C{config['C']}"
            if bench.left_s() <= RESERVE_S["stream"]:
                report["streams"].append({"config": name,
                                          "skipped": "budget"})
                report["skipped_sections"].append(f"stream {name}")
                continue
            print(f"stream {name}: {len(config['warmup'])} warm-up + "
                  f"{len(config['timed'])} timed frames | "
                  f"{time.monotonic() - START:.0f} s", flush=True)
            stream = bench.stream(config)
            report["streams"].append(stream)
            print("  " + "; ".join(
                f"{NAMES[p]} {peer_cell(e, p)}"
                for p, e in stream["peers"].items()) + " ms (median / worst)",
                flush=True)
            save()
    if "maps" in args.sections:
        if bench.left_s() > RESERVE_S["maps"]:
            print(f"map build table | {time.monotonic() - START:.0f} s",
                  flush=True)
            report["maps"] = bench.maps()
            save()
        else:
            report["skipped_sections"].append("the map build table")
    if "bundle" in args.sections:
        if bench.left_s() > RESERVE_S["bundle"]:
            print(f"bundle stream | {time.monotonic() - START:.0f} s",
                  flush=True)
            report["bundle"] = bundle_stream(args, plan_path, out_dir)
        else:
            report["skipped_sections"].append("the bundle stream")
    save()
    report_text(report, markdown=False)
    with open(os.path.join(out_dir, "bench-spconv-frames.md"), "w") as f:
        f.write(f"`tilec bench spconv --frames` on {report['device']}, "
                f"torch {report['torch']}, Triton {report['triton']}, "
                f"wall {report['wall_s']:.0f} s.\n")
        f.write(report_text(report, markdown=True))
    print(f"wall {time.monotonic() - START:.0f} s; json: {json_path}")
    return 1 if failed(report) else 0


def failed(report):
    """tilec failed, a peer computed another function, or the bundle
    stream did not serve every frame correctly."""
    for s in report["streams"]:
        peers = s.get("peers", {})
        if "error" in peers.get("tilec", {}) or any(
                e.get("correct") is False for e in peers.values()):
            return True
    bundle = report.get("bundle")
    if bundle:
        if bundle.get("error") or bundle.get("serve", {}).get("error"):
            return True
        for c in bundle.get("serve", {}).get("configs", []):
            if c["refused"] or c.get("correct_last") is False:
                return True
    return False


if __name__ == "__main__":
    sys.exit(main())
