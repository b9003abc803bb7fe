"""Where a frame of a stream of scans spends its time in tilec, on the GPU
machine: what `tilec bench spconv --frames` times for tilec (a new sparse
tensor over a new random subset of a scene, then L layers of 3x3x3
submanifold convolutions of C channels, f16, the first building the maps),
run two ways in one process:

  package  tilec.SparseTensor and L tilec.nn.SubMConv3d, as the bench runs
  capi     the same calls through the C API alone (libtilec_c.so by ctypes,
           arguments converted outside the frame), the package's
           default row order ("auto")
  package-new-runtime  (--ways) the package on a tilec.Runtime made for
           the way: after `package`, one that did not tune in the process
  capi-alloc  (--ways) capi with each layer's output allocated inside the
           frame by torch.empty, as the package does, instead of before it
  package-tensor  (--ways) the package's tilec.SparseTensor, then the
           layers through the C API on its maps (outputs as capi-alloc)
  package-forward  (--ways) the package's tensor and each layer through
           tilec.sparse._forward (its checks and allocation) without
           tilec.nn's module and submanifold_conv3d's dispatch

For each config, scene and way: the median wall time of --frames frames
(each a 60-100% subset of its own voxel count, the previous frame's tensor
released first), then the same number under torch.profiler: where a
profiled frame's time goes (before the GPU's first work, the GPU idle
between works, busy, after its last work), the host time of its parts (the
new tensor; the first layer, which builds the maps; the other layers), the
driver calls and the GPU work by name. The difference between the two ways
is the package's Python; the capi way's idle GPU is the library's host
path. Writes spconv-frame-profile.json.

    python3 spconv_frame_profile.py --lib lib/libtilec_c.so [--out DIR]
"""

import argparse
import cProfile
import ctypes
import json
import os
import pstats
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_timing import wall_ms  # noqa: E402
from spconv import DEVICE, Tilec  # noqa: E402
from spconv_frames import stack_weights, tilec_layers  # noqa: E402
from spconv_maps_profile import Coordinates, on_gpu, summarize, timeline  # noqa: E402

SCENES = {"street": lambda scenes: scenes.lidar(),
          "shell256": lambda scenes: scenes.shell(256)}
WAYS = ("package", "capi", "package-new-runtime", "capi-alloc",
        "package-tensor", "package-forward")
# The parts of a frame (record_function names).
PARTS = ("tensor", "first_layer", "other_layers")


def package_frame(weights, runtime=None):
    """A frame as the bench runs it for tilec: (run(coords, x) -> what
    holds the frame's maps), on `runtime` (default: the device's default
    runtime, as the bench)."""
    import tilec
    modules = tilec_layers(weights)

    def run(coords, x):
        with record_function("tensor"):
            tensor = tilec.SparseTensor(coords, x, runtime=runtime)
        for index, module in enumerate(modules):
            with record_function("first_layer" if index == 0
                                 else "other_layers"):
                tensor = module(tensor)
        return tensor
    return run


def forward_frame(weights):
    """The package's tensor (tilec.SparseTensor) with each layer through
    the package's body without its wrappers (tilec.sparse._forward: its
    checks and its allocation, no nn.Module, no submanifold_conv3d
    dispatch), to tell where the package's extra time goes."""
    import tilec
    import tilec.sparse

    def run(coords, x):
        with record_function("tensor"):
            tensor = tilec.SparseTensor(coords, x)
        for index, weight in enumerate(weights):
            with record_function("first_layer" if index == 0
                                 else "other_layers"):
                tensor = tensor._with_features(
                    tilec.sparse._forward(tensor, weight, None, (1, 1, 1)))
        return tensor
    return run


def capi_frame(weights, capi, allocate=False, package_tensor=False):
    """The same frame through the C API: a tensor, then each layer's
    tilec_submanifold_conv3d into outputs allocated before the frame (and
    the features of the next frame's size: `prepare`), or with `allocate`
    inside it by torch.empty, as the package allocates them. With
    `package_tensor` the tensor is the package's (tilec.SparseTensor, whose
    maps the C API calls use), and run() returns it instead of a handle."""
    import tilec
    channels = weights[0].shape[0]
    held = {}

    def prepare(n):
        held["ys"] = [None if allocate else
                      torch.empty(n, channels, dtype=torch.float16,
                                  device=DEVICE) for _ in weights]

    def run(coords, x):
        with record_function("tensor"):
            if package_tensor:
                tensor = tilec.SparseTensor(coords, x)
                handle = ctypes.c_void_p(tensor._maps.handle)
            else:
                # The package's default row order, decided by the library.
                tensor = handle = capi.tensor(coords, "auto")
        y = x
        for index, (weight, out) in enumerate(zip(weights, held["ys"])):
            with record_function("first_layer" if index == 0
                                 else "other_layers"):
                if out is None:
                    out = torch.empty(x.shape[0], channels,
                                      dtype=torch.float16, device=DEVICE)
                capi.conv(handle, y, weight, out, "f16")()
            y = out
        held["last"] = y
        return tensor
    return run, prepare


def parts_us(events, frames):
    """Median host time of each part of a frame (summed over its layers),
    us."""
    per_frame = {part: [] for part in PARTS}
    spans = sorted((e.time_range.start, e.time_range.end) for e in events
                   if not on_gpu(e) and e.name == "frame")
    for start, end in spans:
        for part in PARTS:
            per_frame[part].append(sum(
                e.time_range.end - e.time_range.start for e in events
                if not on_gpu(e) and e.name == part
                and start <= e.time_range.start < end))
    return {part: statistics.median(values) if values else None
            for part, values in per_frame.items()}


def profile_way(way, run, coordinates, channels, frames, release,
                prepare=None):
    held = []

    def new_frame():
        release(held)
        coords = coordinates()
        if prepare:
            prepare(coords.shape[0])
        x = torch.randn(coords.shape[0], channels, device=DEVICE,
                        dtype=torch.float16)
        return coords, x

    def one(coords, x):
        held.append((run(coords, x), coords, x))
    with torch.no_grad():
        # First frames: a new size bucket tunes and compiles (a 60-100%
        # subset may fall in either of two).
        for _ in range(3):
            one(*new_frame())
        walls = []
        for _ in range(frames):
            coords, x = new_frame()
            walls.append(wall_ms(lambda: one(coords, x))[0])
        with profile(activities=[ProfilerActivity.CPU,
                                 ProfilerActivity.CUDA]) as prof:
            for _ in range(frames):
                coords, x = new_frame()
                torch.cuda.synchronize()
                with record_function("frame"):
                    one(coords, x)
                    torch.cuda.synchronize()
        release(held)
        # The same frames under cProfile: the Python functions' own time
        # (a ctypes call's time is its caller's).
        profiler = cProfile.Profile()
        for _ in range(frames):
            coords, x = new_frame()
            torch.cuda.synchronize()
            profiler.enable()
            one(coords, x)
            torch.cuda.synchronize()
            profiler.disable()
        release(held)
    stats = pstats.Stats(profiler)
    python_us = sorted(
        ({"function": f"{os.path.basename(file)}:{line}({name})",
          "calls": calls / frames, "own_us": own * 1e6 / frames,
          "cumulative_us": cumulative * 1e6 / frames}
         for (file, line, name), (_, calls, own, cumulative, _)
         in stats.stats.items()),
        key=lambda row: -row["own_us"])[:15]
    events = prof.events()
    host, gpu = summarize(events, frames, ("frame",) + PARTS)
    return {"way": way, "wall_ms_median": statistics.median(walls),
            "wall_ms": walls, "python_us": python_us,
            "timeline_us": timeline(events, "frame", PARTS),
            "parts_host_us": parts_us(events, frames),
            "gpu_busy_us": sum(row["total_us"] for row in gpu),
            "driver_calls": host, "gpu_work": gpu}


def print_row(config, scene, row):
    spans, parts = row["timeline_us"], row["parts_host_us"]
    print(f"\n{config} {scene}, {row['way']}: frame "
          f"{row['wall_ms_median']:.3f} ms (median), GPU busy "
          f"{row['gpu_busy_us']:.1f} us")
    if spans["gpu_busy_us"] is not None:
        print(f"  timeline (profiled, median us): before the GPU's first "
              f"work {spans['before_gpu_us']:.1f}, GPU idle between "
              f"{spans['gpu_idle_between_us']:.1f}, busy "
              f"{spans['gpu_busy_us']:.1f}, after "
              f"{spans['after_gpu_us']:.1f}")
    print("  host us (profiled): " + ", ".join(
        f"{part} {value:.1f}" for part, value in parts.items()
        if value is not None))
    print(f"  {'driver call':30} {'count':>6} {'total us':>9} | "
          f"{'GPU work':30} {'count':>6} {'total us':>9}")
    for index in range(10):
        left = row["driver_calls"][index] \
            if index < len(row["driver_calls"]) else None
        right = row["gpu_work"][index] if index < len(row["gpu_work"]) \
            else None
        cells = []
        for entry in (left, right):
            cells.append(f"{entry['name'][:30]:30} {entry['count']:6.1f} "
                         f"{entry['total_us']:9.1f}" if entry
                         else " " * 47)
        print("  " + " | ".join(cells))
    print(f"  {'Python function (cProfile, per frame)':60} {'calls':>6} "
          f"{'own us':>8} {'cum us':>8}")
    for entry in row["python_us"][:10]:
        print(f"  {entry['function'][-60:]:60} {entry['calls']:6.1f} "
              f"{entry['own_us']:8.1f} {entry['cumulative_us']:8.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--out", default=".")
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--configs", default="1x64,8x128",
                        help="LxC, comma-separated")
    parser.add_argument("--scenes", default="street,shell256")
    parser.add_argument("--ways", default="package,capi",
                        help="package, capi, package-new-runtime, capi-alloc, "
                        "package-tensor, package-forward; "
                        "comma-separated, run in this order")
    args = parser.parse_args()
    unknown = set(args.ways.split(",")) - set(WAYS)
    if unknown:
        parser.error(f"--ways: no way {', '.join(sorted(unknown))} (the "
                     f"ways: {', '.join(WAYS)})")
    torch.cuda.init()
    torch.empty(1, device=DEVICE)
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    import tilec.scenes
    capi = Tilec()
    report = []
    for config in args.configs.split(","):
        layers, channels = (int(part) for part in config.split("x"))
        weights = stack_weights(layers, channels)
        for scene in args.scenes.split(","):
            coords = SCENES[scene](tilec.scenes).to(DEVICE)
            for way in args.ways.split(","):
                coordinates = Coordinates(coords, fresh=True)
                prepare = None
                if way in ("package", "package-new-runtime"):
                    # package-new-runtime: a runtime made for this way,
                    # which finds the winners the default runtime tuned in
                    # the autotune cache instead of tuning them itself.
                    run = package_frame(
                        weights, tilec.Runtime()
                        if way == "package-new-runtime" else None)

                    def release(held):
                        torch.cuda.synchronize()
                        held.clear()
                elif way == "package-forward":
                    run = forward_frame(weights)

                    def release(held):
                        torch.cuda.synchronize()
                        held.clear()
                else:
                    package_tensor = way == "package-tensor"
                    run, prepare = capi_frame(
                        weights, capi, allocate=way != "capi",
                        package_tensor=package_tensor)

                    def release(held, destroy=not package_tensor):
                        torch.cuda.synchronize()
                        while held:
                            tensor = held.pop()[0]
                            if destroy:
                                capi.destroy(tensor)
                row = profile_way(way, run, coordinates, channels,
                                  args.frames, release, prepare)
                row.update(config=f"L{layers}/C{channels}", scene=scene)
                report.append(row)
                print_row(row["config"], scene, row)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "spconv-frame-profile.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
