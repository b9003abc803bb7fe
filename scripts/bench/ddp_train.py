#!/usr/bin/env python3
"""Data-parallel training with tilec.nn layers (scripts/ddp-check.sh runs it;
docs/pytorch.md, "Several GPUs").

The network is spconv_train_check's small autoencoder (four SubMConv3d with
BatchNorm and ReLU between them; --norm sync makes the BatchNorms
SyncBatchNorm, so that a rank's statistics are the global batch's), trained
with SGD on a global batch of --ranks clouds: the same res-48 shell with
features and targets drawn per cloud, so that every cloud has as many
voxels and the mean of the ranks' losses is the global batch's.

  --role single   one process, one GPU: the global batch as one tensor of
                  --ranks batches. Writes its losses and final weights.
  --role rank     under torchrun: rank r trains cloud r on its own device
                  (cuda:LOCAL_RANK; --same-device: all on cuda:0) in
                  DistributedDataParallel (NCCL; gloo with --same-device,
                  where NCCL refuses two ranks on one GPU). Writes its
                  losses, its first step's seconds and a digest of its
                  weights after every step.
  --role compare  the single run against the ranks': the mean of the ranks'
                  losses equals the single run's within f32's reduction
                  order (--tolerance), every rank ends with the same
                  weights, bit for bit, as every other; prints the table
                  and exits 1 on a failed check.

Needs torch with CUDA, the tilec package and --lib.
"""

import argparse
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import spconv_frames  # noqa: E402  (puts the tilec package on sys.path)

CHANNELS = (4, 32, 64, 32, 4)

torch = None


def network(norm):
    import tilec.nn
    # The same initial weights in every process.
    torch.manual_seed(7)
    layers = []
    for i, (a, b) in enumerate(zip(CHANNELS, CHANNELS[1:])):
        layers.append(tilec.nn.SubMConv3d(a, b))
        if i < len(CHANNELS) - 2:
            if norm != "none":
                layers.append(torch.nn.BatchNorm1d(b))
            layers.append(torch.nn.ReLU())
    net = tilec.nn.SparseSequential(*layers)
    return net


def clouds(ranks, device):
    """The global batch: per cloud its coordinates (batch 0), features and
    target, drawn from the cloud's own seed."""
    import tilec
    coords = tilec.scenes.shell(48, device=device)
    batch = []
    for r in range(ranks):
        generator = torch.Generator(device="cpu").manual_seed(100 + r)
        x = torch.randn(coords.shape[0], CHANNELS[0], generator=generator)
        target = torch.tanh(x.flip(1)) + \
            0.5 * torch.randn(x.shape, generator=generator)
        batch.append((coords, x.to(device), target.to(device)))
    return batch


def digest(net):
    h = hashlib.sha256()
    for value in net.state_dict().values():
        h.update(value.detach().cpu().contiguous().view(torch.uint8)
                 .numpy().tobytes())
    return h.hexdigest()


def run_single(args):
    import tilec
    device = torch.device("cuda", 0)
    net = network(args.norm).to(device)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    batch = clouds(args.ranks, device)
    # One tensor of --ranks batches: cloud r's voxels at batch index r.
    coords = torch.cat([c.clone() for c, _, _ in batch])
    for r, (c, _, _) in enumerate(batch):
        coords[r * c.shape[0]:(r + 1) * c.shape[0], 0] = r
    x = torch.cat([x for _, x, _ in batch])
    target = torch.cat([t for _, _, t in batch])
    losses, seconds = [], []
    for _ in range(args.steps):
        start = time.perf_counter()
        y = net(tilec.SparseTensor(coords, x)).features
        loss = torch.nn.functional.mse_loss(y, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
        losses.append(loss.item())
    spconv_frames.write_json(args.result, {
        "losses": losses, "first_step_s": seconds[0],
        "steps_per_s": (len(seconds) - 1) / max(sum(seconds[1:]), 1e-9),
        "digest": digest(net)})


def run_rank(args):
    import tilec
    import torch.distributed as dist
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    device = torch.device("cuda", 0 if args.same_device else local)
    torch.cuda.set_device(device)
    dist.init_process_group("gloo" if args.same_device else "nccl")
    net = network(args.norm)
    if args.norm == "sync":
        net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    net = net.to(device)
    # The tilec layers' parameters are plain tensors: DDP all-reduces their
    # gradients like any module's.
    model = torch.nn.parallel.DistributedDataParallel(
        net, device_ids=None if args.same_device else [device.index])
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    coords, x, target = clouds(world, device)[rank]
    runtime = tilec.default_runtime(device.index)
    losses, digests, seconds = [], [], []
    for _ in range(args.steps):
        start = time.perf_counter()
        y = model(tilec.SparseTensor(coords, x, runtime=runtime)).features
        loss = torch.nn.functional.mse_loss(y, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.cuda.synchronize(device)
        seconds.append(time.perf_counter() - start)
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / world)
        digests.append(digest(net))
    spconv_frames.write_json(f"{args.result}.rank{rank}", {
        "rank": rank, "device": str(device), "losses": losses,
        "digests": digests, "first_step_s": seconds[0],
        "steps_per_s": (len(seconds) - 1) / max(sum(seconds[1:]), 1e-9)})
    dist.destroy_process_group()


def compare(args):
    with open(args.single) as f:
        single = json.load(f)
    ranks = []
    for r in range(args.ranks):
        with open(f"{args.result}.rank{r}") as f:
            ranks.append(json.load(f))
    gaps = [abs(a - b) / max(abs(b), 1e-30)
            for a, b in zip(ranks[0]["losses"], single["losses"])]
    same_weights = all(r["digests"] == ranks[0]["digests"] for r in ranks)
    falling = ranks[0]["losses"][-1] < 0.5 * ranks[0]["losses"][0]
    ok = max(gaps) <= args.tolerance and same_weights and falling
    print(f"\n{args.ranks} ranks against one process, {len(gaps)} SGD "
          f"steps, norm {args.norm}:")
    print(f"  loss {single['losses'][0]:.4f} -> {single['losses'][-1]:.4f} "
          f"(one process), {ranks[0]['losses'][0]:.4f} -> "
          f"{ranks[0]['losses'][-1]:.4f} (mean of the ranks); largest "
          f"relative gap {max(gaps):.1e} (tolerance {args.tolerance:g})")
    print(f"  weights identical on every rank after every step: "
          f"{same_weights}")
    print("  | run | device | first step s | steps/s |")
    print("  | --- | --- | --- | --- |")
    print(f"  | one process | cuda:0 | {single['first_step_s']:.3f} | "
          f"{single['steps_per_s']:.1f} |")
    for r in ranks:
        print(f"  | rank {r['rank']} | {r['device']} | "
              f"{r['first_step_s']:.3f} | {r['steps_per_s']:.1f} |")
    # Strong scaling: the same global batch, split over the ranks.
    speedup = ranks[0]["steps_per_s"] / single["steps_per_s"]
    efficiency = speedup / args.ranks
    print(f"  scaling (the same global batch): {speedup:.2f}x the one "
          f"process's steps/s on {args.ranks} ranks, efficiency "
          f"{efficiency:.2f}")
    print("all checks passed" if ok else "CHECKS FAILED")
    spconv_frames.write_json(args.result + ".summary", {
        "max_gap": max(gaps), "same_weights": same_weights,
        "falling": falling, "speedup": speedup, "efficiency": efficiency,
        "ok": ok})
    sys.exit(0 if ok else 1)


def main():
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", choices=("single", "rank", "compare"),
                        required=True)
    parser.add_argument("--lib", help="libtilec_c.so")
    parser.add_argument("--result", required=True,
                        help="JSON path (the ranks add .rankN)")
    parser.add_argument("--single", help="the single run's JSON (compare)")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--norm", choices=("sync", "none"), default="sync")
    parser.add_argument("--same-device", action="store_true")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args()
    import torch as torch_module
    torch = torch_module
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.role == "compare":
        return compare(args)
    if args.lib:
        os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    if args.role == "single":
        return run_single(args)
    return run_rank(args)


if __name__ == "__main__":
    main()
