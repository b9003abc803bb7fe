#!/usr/bin/env python3
"""How well-conditioned the SpUNet's gradients are, on the CPU: the float64
network of spunet.py (spunet.Reference, the check's state_dict of
spconv_network.py) against its own copy in float32 and bfloat16, with
BatchNorm in training and in eval mode, on two shells of --res. Prints the
relative error of the norm of the output and of all gradients together,
and the three parameters whose gradients are furthest off. What a peer's
gradients can be held to in spconv_network.py's check follows from it.

  python3 scripts/bench/spunet_conditioning.py --res 24
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402

import spunet  # noqa: E402
import tilec.scenes  # noqa: E402

IN_CHANNELS, CLASSES = 4, 13


def run(state, dtype, train, coords, res, features, g):
    net = spunet.build(spunet.Reference, IN_CHANNELS, CLASSES)
    net.load_state_dict(state)
    net = net.to(dtype)
    net.train(train)
    x = spunet.Reference.SparseConvTensor(coords, features.to(dtype),
                                          [res] * 3, 2)
    y = net(x)
    (y.features.double() * g.double()).sum().backward()
    return y.features.detach().double(), {
        n: p.grad.double().flatten() for n, p in net.named_parameters()}


def rel(a, b):
    return ((a - b).norm() / b.norm().clamp(min=1e-30)).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--res", type=int, default=24)
    args = parser.parse_args()
    coords = tilec.scenes.shell(args.res, batch=2, device="cpu")
    state = spunet.initialized_reference(IN_CHANNELS, CLASSES).state_dict()
    torch.manual_seed(1)
    features = torch.randn(coords.shape[0], IN_CHANNELS)
    g = torch.randn(coords.shape[0], CLASSES)
    print(f"two res-{args.res} shells, {coords.shape[0]} voxels; "
          "relative error of the norm against float64")
    print("BatchNorm | dtype    | y       | gradients | furthest gradients")
    for train in (True, False):
        y64, g64 = run(state, torch.float64, train, coords, args.res,
                       features, g)
        names = list(g64)
        for dtype in (torch.float32, torch.bfloat16):
            y, grads = run(state, dtype, train, coords, args.res, features,
                           g)
            whole = rel(torch.cat([grads[n] for n in names]),
                        torch.cat([g64[n] for n in names]))
            worst = sorted(((rel(grads[n], g64[n]), n) for n in names),
                           reverse=True)[:3]
            print(f"{'train' if train else 'eval':9} | "
                  f"{str(dtype)[6:]:8} | {rel(y, y64):.1e} | {whole:.1e}   "
                  f"  | " + ", ".join(f"{n} {e:.1e}" for e, n in worst),
                  flush=True)


if __name__ == "__main__":
    main()
