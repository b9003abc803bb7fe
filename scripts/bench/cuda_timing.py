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
