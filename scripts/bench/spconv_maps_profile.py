"""Where tilec's map build spends its time, on the GPU machine: for each scene,
a warm-up build, then builds of fresh tensors over the same coordinates (as
`tilec bench spconv` times them) under torch.profiler, which records the
driver calls libtilec_c.so makes (through CUPTI) and the GPU's kernels,
memsets and copies. Prints per scene and row order (--row-orders, default
both: the key's order alone, and rows moved to lean groups, the default):
the wall time of a build, the GPU's busy time, where a profiled build's
time goes (before the GPU's first work, the GPU idle between works, busy,
after its last work), the driver calls by name
(count, total and longest host time) and the GPU work by name; writes JSON.
With --flexgemm DIR, FlexGEMM's neighbour cache (its default algorithm's,
SubMConv3dFunction._compute_neighbor_cache, as `tilec bench spconv --frames`
times it) is profiled the same way over the same coordinates, after tilec's
rows of each scene: which of its kernels and driver calls a build spends
its time in, next to tilec's.
With --fresh-sizes every build after the first is over a new random subset
(60-100%) of the scene, so that every build has a voxel count of its own,
as a stream of scans does.

    python3 spconv_maps_profile.py --lib lib/libtilec_c.so [--out DIR]
        [--flexgemm peers/FlexGEMM]
"""

import argparse
import itertools
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spconv_frames  # noqa: E402
from cuda_timing import events_by_name, wall_ms  # noqa: E402
from spconv import DEVICE, Tilec  # noqa: E402
from tilec import scenes as tilec_scenes  # noqa: E402

# The res-128 shell's subsets (38k-64k voxels) fall in a recorded bucket
# past 32k, where the replay was not measured apart before
# (MapSequence.cpp, kMaxSequenceVoxels).
SCENES = [("shell", 64), ("shell", 128), ("shell", 256), ("uniform", 500)]


class Coordinates:
    """The scene's coordinates, or (fresh) a new random subset of 60-100%
    of them at every call, each of a voxel count not drawn before."""

    def __init__(self, coords, fresh, seed=0):
        self.coords, self.fresh = coords, fresh
        self.generator = torch.Generator().manual_seed(seed)
        self.seen = set()

    def __call__(self):
        if not self.fresh:
            return self.coords
        total = self.coords.shape[0]
        while True:
            count = int(total * (0.6 + 0.4 * torch.rand(
                1, generator=self.generator).item()))
            if count not in self.seen:
                break
        self.seen.add(count)
        keep = torch.randperm(total, generator=self.generator)[:count]
        return self.coords[keep.sort().values.to(self.coords.device)] \
            .contiguous()


def coords_of(name, size):
    if name == "shell":
        return tilec_scenes.shell(size).to(DEVICE)
    if name == "street":  # the LiDAR-like street (size unused)
        return tilec_scenes.lidar().to(DEVICE)
    return tilec_scenes.uniform(size * 1000, 512).to(DEVICE)


def on_gpu(event):
    """Whether a torch.profiler event is the GPU's work (else the host's)."""
    return "CUDA" in str(event.device_type)


def summarize(events, builds, annotations=("build",)):
    """Driver calls and GPU work by name, per build (`annotations`: the
    record_function names, which are not GPU work)."""
    host = events_by_name(
        events, builds, lambda e: e.cpu_time
        if not on_gpu(e) and e.name.startswith("cu") else None)
    gpu = events_by_name(events, builds, lambda e: e.device_time
                         if on_gpu(e) and e.name not in annotations else None)
    return host, gpu


def timeline(events, span="build", annotations=()):
    """Where a build's wall time goes, from the profiler's timestamps (host
    and GPU on one clock), per span (record_function `span`): before
    the GPU's first work (the host planning and queueing its first
    launches), the GPU idle between its works (the host behind the GPU),
    the GPU busy, and after the GPU's last work (the synchronization, the
    copies back, the return); medians over the builds, us."""
    spans = sorted((e.time_range.start, e.time_range.end) for e in events
                   if not on_gpu(e) and e.name == span)
    # The spans' own annotations (`span` and `annotations`, the spans
    # inside it) show on the GPU too, over all their work.
    works = sorted((e.time_range.start, e.time_range.end) for e in events
                   if on_gpu(e) and e.name not in (span, *annotations)
                   and e.time_range.end > e.time_range.start)
    parts = {"before_gpu_us": [], "gpu_idle_between_us": [],
             "gpu_busy_us": [], "after_gpu_us": [], "launches_span_us": []}
    launches = sorted((e.time_range.start, e.time_range.end) for e in events
                      if not on_gpu(e) and e.name == "cuLaunchKernel")
    for start, end in spans:
        inside = [w for w in works if start <= w[0] < end]
        if not inside:
            continue
        busy = idle = 0.0
        reach = inside[0][0]
        for work_start, work_end in inside:
            idle += max(0.0, work_start - reach)
            busy += max(0.0, work_end - max(work_start, reach))
            reach = max(reach, work_end)
        queued = [l for l in launches if start <= l[0] < end]
        parts["before_gpu_us"].append(inside[0][0] - start)
        parts["gpu_idle_between_us"].append(idle)
        parts["gpu_busy_us"].append(busy)
        parts["after_gpu_us"].append(max(0.0, end - reach))
        parts["launches_span_us"].append(
            queued[-1][1] - queued[0][0] if queued else 0.0)
    return {name: sorted(values)[len(values) // 2] if values else None
            for name, values in parts.items()}


def profile_builds(prepare, build, builds):
    """Wall times of `builds` calls build(prepare()) (prepare untimed), then
    as many under torch.profiler: the row's times, timeline and tables."""
    walls = []
    for _ in range(builds):
        argument = prepare()
        walls.append(wall_ms(lambda: build(argument))[0])
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(builds):
            argument = prepare()
            torch.cuda.synchronize()
            with record_function("build"):
                build(argument)
                torch.cuda.synchronize()
    host, gpu = summarize(prof.events(), builds)
    walls.sort()
    return {"wall_ms_median": walls[len(walls) // 2], "wall_ms": walls,
            "gpu_busy_us": sum(row["total_us"] for row in gpu),
            "timeline_us": timeline(prof.events()),
            "driver_calls": host, "gpu_work": gpu}


def print_row(row, title, args):
    spans = row["timeline_us"]
    print(f"\n{title}: N = {row['voxels']:,}"
          f"{' (60-100% subsets)' if args.fresh_sizes else ''}, build "
          f"{row['wall_ms_median']:.3f} ms (median of {args.builds}), GPU "
          f"busy {row['gpu_busy_us']:.1f} us")
    if spans["gpu_busy_us"] is not None:
        print("  timeline (profiled, median us): before the GPU's first "
              f"work {spans['before_gpu_us']:.1f}, GPU idle between "
              f"works {spans['gpu_idle_between_us']:.1f}, GPU busy "
              f"{spans['gpu_busy_us']:.1f}, after its last work "
              f"{spans['after_gpu_us']:.1f}; launches queued over "
              f"{spans['launches_span_us']:.1f}")
    print(f"  {'driver call':34} {'count':>6} {'total us':>10} {'max us':>9}")
    for entry in row["driver_calls"][:12]:
        print(f"  {entry['name'][:34]:34} {entry['count']:6.1f} "
              f"{entry['total_us']:10.1f} {entry['max_us']:9.1f}")
    print(f"  {'GPU work':34} {'count':>6} {'total us':>10} {'max us':>9}")
    for entry in row["gpu_work"][:12]:
        print(f"  {entry['name'][:34]:34} {entry['count']:6.1f} "
              f"{entry['total_us']:10.1f} {entry['max_us']:9.1f}")


def load_flexgemm(args):
    """FlexGEMM's calls (spconv_frames.load_flexgemm), or None: none asked
    for (no --flexgemm), or unavailable (said why)."""
    if not args.flexgemm:
        return None
    spconv_frames.torch = torch  # its loader reads torch from there
    os.makedirs(args.out, exist_ok=True)
    flexgemm, _, reason = spconv_frames.load_flexgemm(args, args.out)
    if reason:
        print(f"FlexGEMM: not profiled: {reason}")
    return flexgemm


def profile_flexgemm(flexgemm, name, size, coordinates, args):
    """FlexGEMM's neighbour cache of a 3^3 window over the scene's
    coordinates (fresh subsets with --fresh-sizes), profiled as tilec's
    builds are; its grid is the scene's extent."""
    function = flexgemm["function"]
    extent = (coordinates.coords[:, 1:].max(0).values + 1).tolist()
    shape = torch.Size([1, 1] + extent)

    def build(coords):
        return function._compute_neighbor_cache(coords, shape, (3, 3, 3),
                                                (1, 1, 1), False)
    build(coordinates())  # its first calls: Triton's compiles, tuning
    row = profile_builds(coordinates, build, args.builds)
    row.update({"scene": f"{name}{size}", "peer": "flexgemm",
                "voxels": coordinates.coords.shape[0],
                "fresh_sizes": args.fresh_sizes})
    print_row(row, f"{row['scene']}, FlexGEMM's neighbour cache", args)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--out", default=".")
    parser.add_argument("--builds", type=int, default=5)
    parser.add_argument("--row-orders", default="key,lean_groups")
    parser.add_argument("--fresh-sizes", action="store_true")
    parser.add_argument("--scenes", default=",".join(
        f"{name}{size}" for name, size in SCENES))
    spconv_frames.add_flexgemm_arguments(parser)
    args = parser.parse_args()
    torch.cuda.init()
    torch.empty(1, device=DEVICE)
    # The package's library (Tilec's) is $TILEC_LIBRARY.
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    tilec = Tilec()
    report = []
    scenes = [(name, size) for name, size in SCENES
              if f"{name}{size}" in args.scenes.split(",")]
    orders = args.row_orders.split(",")
    flexgemm = load_flexgemm(args)
    for (name, size), order in itertools.product(scenes, orders):
        coordinates = Coordinates(coords_of(name, size), args.fresh_sizes)
        held = []  # the tensor being built, with the coordinates it reads

        def new_tensor():
            # The previous tensor's maps go back to the pool first, as in a
            # stream of scans: a build then reuses the pool's memory rather
            # than growing it (which a build of every tensor kept alive
            # would time instead).
            release()
            coords = coordinates()
            held.append((tilec.tensor(coords, order), coords))
            return held[-1][0]

        def release():
            torch.cuda.synchronize()
            while held:
                tilec.destroy(held.pop()[0])
        tilec.build_maps(new_tensor())  # compiles, plans, grows the scratch
        row = profile_builds(new_tensor, tilec.build_maps, args.builds)
        row.update({"scene": f"{name}{size}", "row_order": order,
                    "voxels": coordinates.coords.shape[0],
                    "fresh_sizes": args.fresh_sizes})
        report.append(row)
        print_row(row, f"{row['scene']}, rows in {order} order", args)
        release()
        if flexgemm and order == orders[-1]:
            report.append(profile_flexgemm(flexgemm, name, size, coordinates,
                                           args))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "spconv-maps-profile.json"), "w") as out:
        json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
