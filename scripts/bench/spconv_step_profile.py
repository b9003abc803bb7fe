"""Where one training step of tilec's submanifold convolution spends its
time, on the GPU machine: for each row (scene/C, f16 by default), the step
of `tilec bench spconv --train` (tilec.submanifold_conv3d of a tensor that
keeps its maps, then backward of y * g, with x, the weight and the bias
requiring grad), warmed up, then timed alone (wall, GPU idle before and
after) and again under torch.profiler, which records the Python-side ops,
the driver calls libtilec_c.so makes (through CUPTI) and the GPU's work.
Prints per row: the step's wall time split into forward and backward (each
from its first op's start to its last's end, from the profile), the same
split without the profiler on the host's clock with the library's two calls
timed alone (host_split), the GPU's
busy time, the driver calls by name (count, total and longest host time a
step), the ops by name (tilec's and torch's, host time a step) and the GPU
work by name; writes JSON.

The training table's small rows are host-bound (shell64/32: a 1.25 ms step
for 0.29 ms of GPU work, H200 2026-12-05): this says what the host does.

    python3 spconv_step_profile.py --lib lib/libtilec_c.so [--out DIR]
        [--rows shell64/32,street/64,shell128/128] [--steps 20]
"""

import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import spconv_train  # noqa: E402  (torch-free at import)
from cuda_timing import events_by_name  # noqa: E402

ROWS = "shell64/32,street/64,shell128/128"


def phase_spans(events, steps):
    """The forward's and the backward's host span a step (microseconds):
    from the first event of the phase's record_function to its end."""
    spans = collections.defaultdict(float)
    for event in events:
        if event.name in ("step.forward", "step.backward"):
            spans[event.name.split(".")[1]] += event.cpu_time_total
    return {name: total / steps for name, total in spans.items()}


def profile_row(spec, steps, torch, profiler):
    scene = spconv_train.Scene(spec["scene"])
    data = spconv_train.RowData(spec, scene)
    peer = spconv_train.TilecPeer(data, {})
    g = data.g
    for _ in range(5):  # maps, compiles and tuning, then warm
        spconv_train.training_step(peer, g)
    torch.cuda.synchronize()
    walls = []
    for _ in range(steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        spconv_train.training_step(peer, g)
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - start) * 1e3)
    walls.sort()
    split = host_split(peer, data, steps, torch)

    def step():
        for leaf in peer.leaves():
            leaf.grad = None
        with profiler.record_function("step.forward"):
            y = peer.forward()
        with profiler.record_function("step.backward"):
            y.backward(g)
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU,
                                      profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    events = prof.events()
    cuda = lambda e: e.device_time if "CUDA" in str(e.device_type) else None
    driver = lambda e: (e.cpu_time if "CUDA" not in str(e.device_type) and
                        e.name.startswith("cu") else None)
    ops = lambda e: (e.cpu_time_total if "CUDA" not in str(e.device_type) and
                     (e.name.startswith("tilec::") or
                      e.name.startswith("aten::") or
                      e.name.startswith("autograd::")) else None)
    gpu = events_by_name(events, steps, cuda)
    return {"row": spec["row"], "N": scene.n, "steps": steps,
            "wall_ms_median": walls[len(walls) // 2], "wall_ms": walls,
            "phases_us": phase_spans(events, steps), "host_split_us": split,
            "gpu_busy_us": sum(row["total_us"] for row in gpu),
            "driver_calls": events_by_name(events, steps, driver),
            "ops": events_by_name(events, steps, ops), "gpu_work": gpu}


def host_split(peer, data, steps, torch):
    """Where the step's wall time goes without the profiler, on the host's
    clock (medians, us): the forward call until it returns, the backward
    call until it returns, and the wait for the GPU after it; then, each
    started with the GPU idle: the library's two calls alone (ctypes,
    arguments prepared once: what the C++ side and the driver cost the
    host), the package's forward and backward without autograd
    (torch.no_grad: their checks, allocations and ctypes calls), and the
    backward call after a forward whose GPU work is done (its host cost
    apart from waiting on the forward)."""
    import tilec
    from tilec import sparse
    g = data.g
    median = lambda values: sorted(values)[len(values) // 2] * 1e6

    def reset_grads():
        for leaf in peer.leaves():
            leaf.grad = None

    def fresh_forward():
        reset_grads()
        return peer.forward()

    def idle_start_us(call, before=lambda: None):
        """The median host time of `call(before())`, the GPU idle at its
        start."""
        times = []
        for _ in range(steps):
            argument = before()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            call(argument)
            times.append(time.perf_counter() - t0)
        return median(times)

    forward, backward, wait = [], [], []
    for _ in range(steps):
        reset_grads()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        y = peer.forward()
        t1 = time.perf_counter()
        y.backward(g)
        t2 = time.perf_counter()
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        forward.append(t1 - t0)
        backward.append(t2 - t1)
        wait.append(t3 - t2)
    maps = peer.tensor._maps
    lib = maps.runtime._lib.lib
    x, w, b = (t.detach() for t in peer.leaves())
    n, ci, co = x.shape[0], x.shape[1], w.shape[0]
    kernel, dilation = sparse._window_arrays(((3, 3, 3), (1, 1, 1)))
    dtype = sparse.DTYPES[x.dtype]
    stream = sparse.current_stream(x.device)
    y = torch.empty(n, co, dtype=x.dtype, device=x.device)
    dx, dw = torch.empty_like(x), torch.empty_like(w)
    db = torch.empty_like(b)

    def checked(name, status):
        if status != 0:
            raise RuntimeError(f"{name} failed")
    library = {
        "library forward call": lambda _: checked(
            "tilec_submanifold_conv3d_window",
            lib.tilec_submanifold_conv3d_window(
                maps.handle, x.data_ptr(), w.data_ptr(), b.data_ptr(),
                y.data_ptr(), ci, co, kernel, dilation, dtype, 0, stream)),
        "library backward call (dX, dW, db)": lambda _: checked(
            "tilec_submanifold_conv3d_window_backward",
            lib.tilec_submanifold_conv3d_window_backward(
                maps.handle, x.data_ptr(), w.data_ptr(), g.data_ptr(),
                dx.data_ptr(), dw.data_ptr(), db.data_ptr(), ci, co, kernel,
                dilation, dtype, 0, 0, stream))}
    alone = {name: idle_start_us(call) for name, call in library.items()}
    with torch.no_grad():
        alone["package forward, no autograd"] = idle_start_us(
            lambda _: tilec.submanifold_conv3d(peer.tensor, w, b, 1))
        alone["package backward, no autograd"] = idle_start_us(
            lambda _: sparse.submanifold_conv3d_backward(
                peer.tensor, g, w, 1, input_grad=True, weight_grad=True,
                bias_grad=True))
    alone["backward call, GPU idle at its start"] = idle_start_us(
        lambda y: y.backward(g), before=fresh_forward)
    torch.cuda.synchronize()
    return {"forward call": median(forward), "backward call": median(backward),
            "wait for the GPU": median(wait), **alone}


def print_row(row):
    phases = row["phases_us"]
    print(f"\n{row['row']}: N = {row['N']:,}, step {row['wall_ms_median']:.3f}"
          f" ms (median of {row['steps']}, alone); under the profiler: "
          f"forward {phases.get('forward', 0):.1f} us, backward "
          f"{phases.get('backward', 0):.1f} us of host time, GPU busy "
          f"{row['gpu_busy_us']:.1f} us a step")
    print("  without the profiler, host us (median): " + ", ".join(
        f"{name} {us:.1f}" for name, us in row["host_split_us"].items()))
    for title, table in (("driver call", row["driver_calls"]),
                         ("op (host time with its children)", row["ops"]),
                         ("GPU work", row["gpu_work"])):
        print(f"  {title[:40]:40} {'count':>6} {'total us':>10} {'max us':>9}")
        for entry in table[:14]:
            print(f"  {entry['name'][:40]:40} {entry['count']:6.1f} "
                  f"{entry['total_us']:10.1f} {entry['max_us']:9.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--out", default=".")
    parser.add_argument("--rows", default=ROWS)
    parser.add_argument("--dtype", default="f16")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    import torch
    import torch.profiler as profiler
    import spconv_train_check
    # spconv_train imports torch in its main(), which this script skips.
    spconv_train.torch = torch
    spconv_train.train_check = spconv_train_check
    torch.cuda.init()
    torch.empty(1, device=spconv_train.DEVICE)
    report = []
    for text in args.rows.split(","):
        row = profile_row(spconv_train.parse_row(text, args.dtype),
                          args.steps, torch, profiler)
        print_row(row)
        report.append(row)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "spconv-step-profile.json"), "w") as out:
        json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
