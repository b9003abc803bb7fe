"""The C API's voxel scenes (the same voxels in every process) as torch int32
[N, 4] (batch, x, y, z) tensors, for tests and benchmarks."""

from ._library import library

# The seed of tilec bench spconv's uniform and LiDAR-like scenes.
SEED = 1


def _tensor(words, count, device):
    import torch
    # frombuffer shares the array's memory (and keeps it alive); it refuses
    # an empty one.
    coords = torch.frombuffer(words, dtype=torch.int32).view(count, 4) \
        if count else torch.empty(0, 4, dtype=torch.int32)
    return coords.to(device) if device is not None else coords


def shell(res, batch=1, device=None):
    """A thin spherical shell in a res^3 grid (15,192 voxels at res 64,
    64,160 at res 128), per batch."""
    return _tensor(*library().scene("shell", res, batch), device)


def uniform(count, res, batch=1, seed=SEED, device=None):
    """`count` distinct voxels drawn uniformly from a res^3 grid per batch."""
    return _tensor(*library().scene("uniform", count, res, batch, seed),
                   device)


def lidar(seed=SEED, device=None):
    """A LiDAR-like street scene voxelized at 0.1 m (106,860 voxels with the
    default seed)."""
    return _tensor(*library().scene("lidar", seed), device)
