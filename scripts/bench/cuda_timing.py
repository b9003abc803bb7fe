"""Helpers the benchmarks share to time and check work on torch's CUDA
stream (spconv.py, pytorch_net.py)."""

import math
import time

import torch


def poison_allocator(shape, dtype, blocks=1, device="cuda"):
    """NaN blocks of `shape` handed back to torch's caching allocator, which
    gives them to the next allocations of that size on this stream: a peer
    that allocates its own output and writes nothing leaves NaN (not an
    earlier call's right answer) behind."""
    poisoned = [torch.full(shape, math.nan, dtype=dtype, device=device)
                for _ in range(blocks)]
    del poisoned


def wall_ms(function):
    """Wall-clock milliseconds of `function()` with the GPU idle before and
    after, and its result."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    result = function()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3, result


def events_by_name(events, per, keep):
    """torch.profiler events that `keep` accepts (it returns the event's
    time in us, or None), by name: count, total and longest time per `per`
    runs, the busiest first (spconv_maps_profile.py, spconv_step_profile.py)."""
    table = {}
    for event in events:
        time_us = keep(event)
        if time_us is not None:
            table.setdefault(event.name, []).append(time_us)
    return sorted(({"name": name, "count": len(times) / per,
                    "total_us": sum(times) / per, "max_us": max(times)}
                   for name, times in table.items()),
                  key=lambda row: -row["total_us"])
