#!/usr/bin/env python3
"""Where the SpUNet's first call goes: the first forward and backward of the
res-128 shell (spconv_network.py's `first` section: the same network,
scene and input) in this process, with a host timeline of it, then a
second call on a new tensor.

Run it in a fresh process with cold caches and TILEC_DUMP_DIR set (every
compile writes its stages there: their files' times say when each compile
ran); TILEC_FIRST_USE picks tuning or predictions. The timeline is each
tilec.nn convolution's forward start and end (module hooks, host time: a
layer that waits for a compile starts late) and each compile's first and
last stage file. Prints one line (the first call's forward and backward
wall times, the second call's, the compiles), writes the timeline to --out
as JSON.

  TILEC_FIRST_USE=predict TILEC_CACHE_DIR=$W/c TILEC_AUTOTUNE_CACHE=$W/at.json \\
    TRITON_CACHE_DIR=$W/tr TILEC_DUMP_DIR=$W/dump \\
    python3 scripts/bench/spconv_first_timeline.py --lib lib/libtilec_c.so \\
    --out timeline.json --label predict
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def compiles(dump, origin):
    """{compile folder: (first stage file's time, last's)}, seconds after
    `origin`."""
    spans = {}
    for folder in sorted(os.listdir(dump)):
        times = [os.path.getmtime(os.path.join(dump, folder, name)) - origin
                 for name in os.listdir(os.path.join(dump, folder))]
        if times:
            spans[folder] = (min(times), max(times))
    return spans


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", required=True, help="libtilec_c.so")
    parser.add_argument("--out", required=True, help="the timeline's JSON")
    parser.add_argument("--label", default="tilec")
    args = parser.parse_args()
    import torch
    if not torch.cuda.is_available():
        sys.exit("spconv_first_timeline: torch sees no GPU")
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context, before tilec's
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    import spconv_network as network
    network.torch = torch
    import tilec.nn

    origin = time.time()
    events = []

    def mark(what):
        events.append((time.time() - origin, what))

    device = torch.device("cuda")
    coords, shape, batches = network.scene(network.FIRST_SCENE, device)
    torch.manual_seed(3)
    features = torch.randn(coords.shape[0], network.IN_CHANNELS,
                           device=device, dtype=torch.float16)
    net = network.networks(None)["tilec"]
    for name, module in net.named_modules():
        if isinstance(module, tilec.nn._KernelConv):
            module.register_forward_pre_hook(
                lambda m, x, name=name: mark("forward> " + name))
            module.register_forward_hook(
                lambda m, x, y, name=name: mark("forward< " + name))

    def step(call):
        mark(call + " start")
        y = net(network.make_input("tilec", None, coords, features, shape,
                                   batches))
        mark(call + " forward")
        y.features.float().sum().backward()
        torch.cuda.synchronize()
        mark(call + " end")

    step("first")
    step("second")
    at = {what: t for t, what in events}
    dump = os.environ.get("TILEC_DUMP_DIR")
    spans = compiles(dump, origin) if dump and os.path.isdir(dump) else {}
    result = {"label": args.label,
              "first_s": at["first end"] - at["first start"],
              "first_forward_s": at["first forward"] - at["first start"],
              "second_s": at["second end"] - at["second start"],
              "events": [[t - at["first start"], what] for t, what in events],
              "compiles": {folder: [a - at["first start"], b - at["first start"]]
                           for folder, (a, b) in spans.items()}}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"{args.label}: first {result['first_s']:.2f} s (forward "
          f"{result['first_forward_s']:.2f}, backward "
          f"{result['first_s'] - result['first_forward_s']:.2f}), second "
          f"{result['second_s']:.3f} s, {len(spans)} compiles", flush=True)


if __name__ == "__main__":
    main()
