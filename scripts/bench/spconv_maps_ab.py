"""Two or more builds of libtilec_c.so against each other in one process, on
the GPU machine: each lib's map build (a new sparse tensor, build_maps(3, 1),
rows in the key's order) over the same fresh random subsets of a scene, the
libs in turn (the order alternating per subset), so that the machine's
drift between processes and sessions (10-45% of a build's wall time on the
H200, docs/bench.md) cancels in the paired differences.

With --frame LxC each lib's unit is instead a frame of a stream of scans,
as `tilec bench spconv --frames` times tilec's: a new sparse tensor (the
package's default row order) and L layers of 3x3x3 convolutions of C
channels, f16, the first building the maps, from the tensor's creation to
the GPU's end (scenes: the street and the res-256 shell by default).

Each library is loaded on its own (ctypes, RTLD_LOCAL: the static builds
keep their symbols to themselves) with a runtime of its own and caches of
its own under --cache-root, so that builds of different kernel code never
share a stage or autotune entry. Prints per scene and lib the build's
median, 25th percentile and minimum, the destroy's median, and the paired
difference of every lib after the first against the first; writes JSON.

    python3 spconv_maps_ab.py --libs A/libtilec_c.so,B/libtilec_c.so
    python3 spconv_maps_ab.py --libs A/libtilec_c.so,B/libtilec_c.so --frame 1x64
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spconv_maps_profile import SCENES, Coordinates, coords_of  # noqa: E402
from tilec._library import Library  # noqa: E402


# What the A/B calls of each library: a baseline of another checkout has
# them, whatever it lacks of this package's API.
LIBRARY_CALLS = ("tilec_last_error", "tilec_version", "tilec_runtime_create",
                 "tilec_sparse_tensor_create",
                 "tilec_sparse_tensor_set_row_order",
                 "tilec_sparse_tensor_build_maps",
                 "tilec_sparse_tensor_destroy", "tilec_submanifold_conv3d")
# --frame's scenes.
FRAME_SCENES = [("street", 0), ("shell", 256)]
TILEC_F16, ROW_ORDER_AUTO = 0, 2


class Lib:
    """One libtilec_c.so with its runtime and caches."""

    def __init__(self, path, label, cache_root):
        cache = os.path.join(cache_root, label)
        os.environ["TILEC_CACHE_DIR"] = os.path.join(cache, "stage")
        os.environ["TILEC_AUTOTUNE_CACHE"] = os.path.join(cache,
                                                          "autotune.json")
        self.label = label
        self.library = Library(path, names=LIBRARY_CALLS)
        self.lib = self.library.lib
        self.runtime = ctypes.c_void_p()
        self.library.check(self.lib.tilec_runtime_create(
            ctypes.byref(self.runtime)), "tilec_runtime_create")

    def frame(self, coords, x, weights, ys, stream):
        """(frame ms, destroy ms): a new tensor over `coords` (row order
        "auto", the package's), then each layer's convolution from the
        previous output (`x` first) into `ys`, until the GPU is done."""
        lib, check = self.lib, self.library.check
        torch.cuda.synchronize()
        start = time.perf_counter()
        handle = ctypes.c_void_p()
        check(lib.tilec_sparse_tensor_create(
            self.runtime, ctypes.c_void_p(coords.data_ptr()),
            coords.shape[0], ctypes.byref(handle)),
            "tilec_sparse_tensor_create")
        check(lib.tilec_sparse_tensor_set_row_order(handle, ROW_ORDER_AUTO),
              "tilec_sparse_tensor_set_row_order")
        y = x
        for weight, out in zip(weights, ys):
            check(lib.tilec_submanifold_conv3d(
                handle, ctypes.c_void_p(y.data_ptr()),
                ctypes.c_void_p(weight.data_ptr()), None,
                ctypes.c_void_p(out.data_ptr()), y.shape[1], weight.shape[0],
                3, 1, TILEC_F16, 0, stream), "tilec_submanifold_conv3d")
            y = out
        torch.cuda.synchronize()
        framed = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        lib.tilec_sparse_tensor_destroy(handle)
        return framed, (time.perf_counter() - start) * 1e3

    def build(self, coords, stream):
        """(build ms, destroy ms) of a new tensor over `coords`."""
        handle = ctypes.c_void_p()
        self.library.check(self.lib.tilec_sparse_tensor_create(
            self.runtime, ctypes.c_void_p(coords.data_ptr()),
            coords.shape[0], ctypes.byref(handle)),
            "tilec_sparse_tensor_create")
        self.library.check(self.lib.tilec_sparse_tensor_set_row_order(
            handle, 0), "tilec_sparse_tensor_set_row_order")
        torch.cuda.synchronize()
        start = time.perf_counter()
        self.library.check(self.lib.tilec_sparse_tensor_build_maps(
            handle, 3, 1, stream), "tilec_sparse_tensor_build_maps")
        torch.cuda.synchronize()
        built = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        self.lib.tilec_sparse_tensor_destroy(handle)
        return built, (time.perf_counter() - start) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--libs", required=True,
                        help="comma-separated libtilec_c.so paths")
    parser.add_argument("--scenes", default="",
                        help="comma-separated (default: shell64, shell128, "
                        "shell256, uniform500; with --frame street0, "
                        "shell256)")
    parser.add_argument("--frame", default="",
                        help="LxC: time frames of L layers of C channels "
                        "instead of map builds")
    parser.add_argument("--builds", type=int, default=25,
                        help="fresh subsets per scene")
    parser.add_argument("--cache-root", default="/tmp/tilec-maps-ab")
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    torch.cuda.init()
    torch.empty(1, device="cuda")
    paths = args.libs.split(",")
    # The scenes come from the package's library: the first lib, unless
    # TILEC_LIBRARY names one.
    os.environ.setdefault("TILEC_LIBRARY", os.path.abspath(paths[0]))
    libs = [Lib(path, f"lib{i}", args.cache_root)
            for i, path in enumerate(paths)]
    stream = torch.cuda.current_stream().cuda_stream
    scenes = FRAME_SCENES if args.frame else SCENES
    wanted = (args.scenes.split(",") if args.scenes else
              [f"{name}{size}" for name, size in scenes])
    if args.frame:
        layers, channels = (int(part) for part in args.frame.split("x"))
        torch.manual_seed(0)
        weights = [(torch.randn(channels, 3, 3, 3, channels, device="cuda")
                    / (27 * channels) ** 0.5).half() for _ in range(layers)]
    unit = "frame" if args.frame else "build"
    report = []
    for name, size in scenes + [s for s in SCENES if s not in scenes]:
        scene = f"{name}{size}"
        if scene not in wanted:
            continue
        # A new random 60-100% subset at every call, each of its own size.
        subset = Coordinates(coords_of(name, size), fresh=True)
        total = subset.coords.shape[0]

        def measure(lib, coords):
            if not args.frame:
                return lib.build(coords, stream)
            x = torch.randn(coords.shape[0], channels, device="cuda").half()
            ys = [torch.empty_like(x) for _ in range(layers)]
            return lib.frame(coords, x, weights, ys, stream)
        # Compiles, tunes and plans the buckets (a frame's subsets may span
        # two buckets of its convolution: more of them).
        for lib in libs:
            for _ in range(6 if args.frame else 2):
                measure(lib, subset())
        builds = [[] for _ in libs]
        destroys = [[] for _ in libs]
        for k in range(args.builds):
            coords = subset()
            order = list(range(len(libs)))
            if k % 2:
                order.reverse()
            for i in order:
                built, destroyed = measure(libs[i], coords)
                builds[i].append(built)
                destroys[i].append(destroyed)
        print(f"{scene}: N = {total:,}, {args.builds} fresh subsets "
              f"(60-100%), each {'a frame ' + args.frame if args.frame else 'built'}"
              f" by every lib in turn")
        row = {"scene": scene, "voxels": total, "unit": unit,
               "frame": args.frame, "libs": []}
        for i, path in enumerate(paths):
            walls = sorted(builds[i])
            entry = {"lib": path, f"{unit}_ms": builds[i],
                     "destroy_ms": destroys[i],
                     f"{unit}_ms_median": statistics.median(walls),
                     "destroy_ms_median": statistics.median(destroys[i])}
            if i > 0:
                paired = sorted(b - a for a, b in zip(builds[0], builds[i]))
                entry["paired_ms_median"] = statistics.median(paired)
                entry["paired_ms_p25_p75"] = [paired[len(paired) // 4],
                                              paired[3 * len(paired) // 4]]
            row["libs"].append(entry)
            print(f"  lib{i} {unit} ms median {entry[unit + '_ms_median']:.3f} "
                  f"p25 {walls[len(walls) // 4]:.3f} min {walls[0]:.3f}, "
                  f"destroy ms median {entry['destroy_ms_median']:.3f}"
                  + (f", paired vs lib0 {entry['paired_ms_median']:+.3f} ms "
                     f"(p25 {entry['paired_ms_p25_p75'][0]:+.3f}, p75 "
                     f"{entry['paired_ms_p25_p75'][1]:+.3f})" if i else "")
                  + f"  ({path})")
        report.append(row)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "spconv-maps-ab.json"), "w") as out:
        json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
