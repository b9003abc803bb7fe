"""`tilec bench spconv --train`: one training step of one submanifold 3x3x3
convolution layer (C channels in and out, with bias): the forward, then dX,
dW and db, in tilec (tilec.submanifold_conv3d's autograd through
libtilec_c.so), FlexGEMM (built from its fetched source), spconv-Triton and
torch's gather-then-GEMM autograd, in one process on one GPU; then each
one's first training step of a new shape in a fresh process with empty
caches.

Rows. scene/C: res-64, 128 and 256 shells (tilec.scenes.shell), the
LiDAR-like street (tilec.scenes.lidar) and 500k uniform voxels in 512^3
(tilec.scenes.uniform; the anchors' random cloud), C from 32 to 256; f16 by
default, --dtypes f16,bf16,f32 runs every row in each (the rows of the
first dtype first). f32 runs on tf32 tensor cores in every peer (torch's
allow_tf32, FlexGEMM's config.allow_tf32, spconv-Triton's
SPCONV_ALLOW_TF32), checked at the tf32 tolerance; --ieee-f32 turns tf32 off
in all four. x, g = dL/dy ~ N(0, 1), weight ~ N(0, 1/(27 C)), bias ~ N(0, 1),
the same values for every peer (the weight layout [Co, 3, 3, 3, Ci] is the
four peers' own: docs/pytorch.md).

The peers, per row:
  tilec          tilec.submanifold_conv3d(tilec.SparseTensor(coords, x), w, b)
                 (the package's defaults; the tensor keeps its maps)
  FlexGEMM       flex_gemm.ops.spconv.sparse_submanifold_conv3d with x
                 requiring grad: the first step builds its neighbour cache
                 with what the backward needs, the later steps reuse it; its
                 default algorithm and its own autotuning
  spconv-Triton  SubMConv3d(C, C, 3, padding=1, indice_key=...) in training
                 mode: the first step generates the indice pairs (forward and
                 backward ones), the later steps reuse them
  torch          spconv_train_check.gather_conv (index_select per offset,
                 a GEMM each, torch's autograd) in the row's dtype over the
                 reference neighbour map

Check. Before it is timed, each peer's first step (its maps, compile and
tuning included, poisoned output blocks in torch's allocator) gives y, dX,
dW and db, compared with float64 autograd of the gather-then-GEMM
convolution on the same (rounded) inputs: ||got - ref|| / ||ref|| against
spconv_train_check.TOLERANCE of the dtype; the last timed step's results
are checked again, and tilec's active pairs against the reference map's. A
failed check marks the peer's row FAILED (the run exits 1 at the end); a
peer's error (an unsupported dtype, ...) is noted in the row and the run
goes on.

Time. Per peer, after the first step: --warmup steps, then --reps steps,
each with the gradients reset to None, three CUDA events per step (before
the forward, between the forward and the backward, after the backward)
and the stream synchronized after it: the medians of forward, backward and
step ms; useful TFLOP/s = 3 * 2 * pairs * C * C / step (pairs: the
reference map's (voxel, offset) pairs with a neighbour); best peer / tilec
over the peers that passed (> 1: tilec is faster).

First step. Per dtype (--quick: the first only), for --first-row: a child
process per peer (tilec, FlexGEMM, spconv-Triton) with empty tilec stage and
autotune caches (TILEC_CACHE_DIR, TILEC_AUTOTUNE_CACHE), an empty Triton
cache (TRITON_CACHE_DIR, which holds spconv-Triton's tuning) and a fresh
FLEX_GEMM_AUTOTUNE_CACHE_PATH, its imports and the CUDA context made first:
the wall time of the first step from the data on the GPU (new sparse tensor,
maps, compile and tuning, forward and backward, synchronized), then of a
second step on a new tensor (maps again, kernels warm), and the check.

Budget. A row starts while more than --row-reserve-s of --budget-s are left
(when the first steps are to run), a row's peer after tilec and a
first-step child while any are; a peer whose first step of a row took
longer than --peer-first-step-budget-s stops for the rows after it; a
FlexGEMM build is not counted.

Prints a table (one line a row: scene, C, dtype, pairs, step ms per peer,
best peer / tilec) and the first steps; writes spconv_train.json and
spconv_train.png (step ms per row and peer; matplotlib where present) to
--out.

    python3 spconv_train.py --lib build/lib/libtilec_c.so [--out DIR]
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

START = time.monotonic()
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
# Torch-free at import: the tilec package's folder goes on sys.path, and its
# FlexGEMM loader and child-process helpers are shared.
import spconv_frames  # noqa: E402

ROWS = ["shell64/32", "shell64/128", "shell128/64", "shell128/128",
        "shell128/256", "shell256/64", "shell256/128", "shell256/256",
        "street/64", "uniform500k@512/128"]
QUICK_ROWS = ["shell64/32", "shell128/128", "shell256/128", "street/64"]
ROW = re.compile(r"^(?P<scene>shell(?P<res>\d+)|street|lidar|"
                 r"uniform(?P<count>\d+)k@(?P<grid>\d+))/(?P<c>\d+)"
                 r"(/(?P<dtype>f16|bf16|f32))?$")
DTYPE_NAMES = ("f16", "bf16", "f32")
FIRST_ROW = "shell128/128"
KERNEL_SIZE, DILATION = 3, 1
PEERS = ("tilec", "flexgemm", "spconv_triton", "torch")
FIRST_PEERS = ("tilec", "flexgemm", "spconv_triton")
NAMES = {"tilec": "tilec", "flexgemm": "FlexGEMM",
         "spconv_triton": "spconv-Triton", "torch": "torch gather-GEMM"}
INDICE_KEY = "train"
DEVICE = "cuda"

torch = None        # imported in main(), so that --help works without it
train_check = None  # spconv_train_check (imports torch and tilec)


# --- rows -----------------------------------------------------------------

def parse_row(text, dtype=None):
    """{"row", "scene", "C", "dtype"} of scene/C[/dtype]."""
    match = ROW.match(text)
    if not match:
        raise ValueError(f"row '{text}': expected shell<res>/<C>, street/<C>"
                         f" or uniform<k>k@<res>/<C>, optionally /<dtype> "
                         f"(f16, bf16 or f32)")
    scene = "street" if match["scene"] == "lidar" else match["scene"]
    dtype = match["dtype"] or dtype
    c = int(match["c"])
    if c < 1:
        raise ValueError(f"row '{text}': C must be at least 1")
    return {"row": f"{scene}/{c}/{dtype}", "scene": scene, "C": c,
            "dtype": dtype}


def coords_spec(scene):
    """The scene in spconv_train_check.coords_of's names."""
    match = ROW.match(scene + "/1")
    if match["res"]:
        return f"shell:{match['res']}"
    if match["count"]:
        return f"random:{int(match['count']) * 1000}/{match['grid']}"
    return "street"


def row_specs(args):
    names = [r for r in args.rows.split(";") if r] if args.rows else \
        QUICK_ROWS if args.quick else ROWS
    specs = []
    for dtype in args.dtype_list:
        for name in names:
            spec = parse_row(name, dtype)
            if ROW.match(name)["dtype"] and dtype != args.dtype_list[0]:
                continue  # a row that names its dtype runs once
            specs.append(spec)
    return specs


def is_tf32(args, dtype_name):
    return dtype_name == "f32" and not args.ieee_f32


def f32_math(args, dtype_name):
    """set_tf32's argument for a row: None (the defaults) unless f32."""
    return is_tf32(args, dtype_name) if dtype_name == "f32" else None


def tolerance(args, dtype_name):
    return train_check.TOLERANCE["tf32" if is_tf32(args, dtype_name)
                                 else dtype_name]


# --- a row's data and its float64 reference -------------------------------

class Scene:
    """A scene's voxels on the GPU and its reference neighbour map."""

    def __init__(self, name):
        self.name = name
        self.coords = train_check.coords_of(coords_spec(name)).contiguous()
        self.n = self.coords.shape[0]
        self.extent = (self.coords[:, 1:].max(0).values + 1).tolist()
        self.batch = int(self.coords[:, 0].max().item()) + 1
        self._nb = None

    @property
    def nb(self):
        """[27, N] int64 (-1: none), spconv_train_check.neighbour_map."""
        if self._nb is None:
            self._nb = train_check.neighbour_map(self.coords, KERNEL_SIZE,
                                                 DILATION)
        return self._nb

    @property
    def pairs(self):
        return int((self.nb >= 0).sum().item())


class RowData:
    """x, weight, bias and g of a row (the same for every peer), and the
    float64 reference computed on demand."""

    def __init__(self, spec, scene):
        self.spec, self.scene = spec, scene
        self.c = spec["C"]
        self.dtype = train_check.DTYPES[spec["dtype"]]
        generator = torch.Generator(device=DEVICE)
        generator.manual_seed(zlib.crc32(spec["row"].encode()))
        n, c = scene.n, self.c

        def normal(*shape, scale=1.0):
            return (torch.randn(*shape, device=DEVICE, generator=generator) *
                    scale).to(self.dtype).contiguous()
        self.x = normal(n, c)
        self.w = normal(c, KERNEL_SIZE, KERNEL_SIZE, KERNEL_SIZE, c,
                        scale=1.0 / math.sqrt(c * KERNEL_SIZE ** 3))
        self.b = normal(c)
        self.g = normal(n, c)
        self._reference = None

    def leaves(self):
        """Fresh leaves x, w, b (requiring grad) of the row's values."""
        return [t.detach().clone().requires_grad_()
                for t in (self.x, self.w, self.b)]

    def reference(self):
        """y, dx, dw, db in float64: autograd of spconv_train_check's
        gather-then-GEMM convolution on the values the peers see."""
        if self._reference is None:
            x, w, b = (t.double().requires_grad_()
                       for t in (self.x, self.w, self.b))
            y = train_check.gather_conv(x, w, b, self.scene.nb)
            y.backward(self.g.double())
            self._reference = {"y": y.detach(), "dx": x.grad, "dw": w.grad,
                               "db": b.grad}
            del y
        return self._reference


# --- the peers ------------------------------------------------------------
# Each has forward() (y, recorded by autograd), leaves() (the tensors whose
# .grad are dX, dW, db) and grads().

class Peer:
    def leaves(self):
        return (self.x, self.w, self.b)

    def grads(self):
        return dict(zip(("dx", "dw", "db"),
                        (t.grad for t in self.leaves())))


class TilecPeer(Peer):
    def __init__(self, data, runtimes):
        import tilec
        self.x, self.w, self.b = data.leaves()
        self.tensor = tilec.SparseTensor(data.scene.coords, self.x)
        self.conv = tilec.submanifold_conv3d

    def forward(self):
        # The first call builds the maps the tensor keeps for the others.
        return self.conv(self.tensor, self.w, self.b, DILATION)


class FlexGemmPeer(Peer):
    def __init__(self, data, runtimes):
        self.conv = runtimes["flexgemm"]["sparse_submanifold_conv3d"]
        self.x, self.w, self.b = data.leaves()
        self.coords = data.scene.coords
        self.shape = torch.Size([data.scene.batch, data.c] +
                                data.scene.extent)
        self.cache = None

    def forward(self):
        # With no cache (the first step) it builds one, with the backward's
        # lists since x requires grad; the later steps pass it back.
        y, self.cache = self.conv(self.x, self.coords, self.shape, self.w,
                                  self.b, self.cache, (DILATION,) * 3)
        return y


class SpconvTritonPeer(Peer):
    def __init__(self, data, runtimes):
        spconv = runtimes["spconv_triton"]["pytorch"]
        self.x = data.leaves()[0]
        module = spconv.SubMConv3d(data.c, data.c, KERNEL_SIZE,
                                   padding=KERNEL_SIZE // 2,
                                   dilation=DILATION, bias=True,
                                   indice_key=INDICE_KEY)
        module = module.to(device=DEVICE, dtype=data.dtype).train()
        with torch.no_grad():
            # spconv's KRSC layout [CO, k0, k1, k2, CI] is ours (spconv.py).
            module.weight.copy_(data.w)
            module.bias.copy_(data.b)
        self.module = module
        self.w, self.b = module.weight, module.bias
        self.tensor = spconv.SparseConvTensor(
            self.x, data.scene.coords, data.scene.extent, data.scene.batch)
        self.paired = False

    def forward(self):
        out = self.module(self.tensor)
        if not self.paired:
            # The pairs the first step generated travel with the output's
            # indice_dict: later steps take them from there.
            self.tensor = out.replace_feature(self.x)
            self.paired = True
        return out.features


class TorchPeer(Peer):
    def __init__(self, data, runtimes):
        self.x, self.w, self.b = data.leaves()
        self.nb = data.scene.nb

    def forward(self):
        return train_check.gather_conv(self.x, self.w, self.b, self.nb)


PEER_CLASSES = {"tilec": TilecPeer, "flexgemm": FlexGemmPeer,
                "spconv_triton": SpconvTritonPeer, "torch": TorchPeer}


def set_tf32(runtimes, on):
    """tf32 for f32 in every peer, or not: torch's flag (tilec's f32 and
    torch's GEMMs), FlexGEMM's and spconv-Triton's; None: each one's own
    default (the f16 and bf16 rows, where FlexGEMM keys its tuning on it)."""
    defaults = runtimes["defaults"]
    torch.backends.cuda.matmul.allow_tf32 = \
        defaults["torch"] if on is None else on
    flexgemm = runtimes.get("flexgemm")
    if flexgemm:
        flexgemm["config"].allow_tf32 = \
            defaults["flexgemm"] if on is None else on
    spconv = runtimes.get("spconv_triton")
    if spconv:
        spconv["constants"].SPCONV_ALLOW_TF32 = \
            defaults["spconv_triton"] if on is None else on


def training_step(peer, g):
    for leaf in peer.leaves():
        leaf.grad = None
    y = peer.forward()
    y.backward(g)
    return y


def errors_of(y, grads, reference):
    """||got - ref|| / ||ref|| per result; inf where a result is missing or
    not finite."""
    errors = {}
    for name, got in [("y", y)] + list(grads.items()):
        want = reference[name]
        if got is None:
            errors[name] = math.inf
            continue
        error = train_check.relative_error(
            got.detach().reshape(want.shape), want)
        errors[name] = error if math.isfinite(error) else math.inf
    return errors


def passes(errors, tol):
    return all(e <= tol for e in errors.values())


def time_steps(peer, g, warmup, reps):
    """Medians of forward, backward and step ms over `reps` steps after
    `warmup`, and the last step's y."""
    start, middle, end = (torch.cuda.Event(enable_timing=True)
                          for _ in range(3))
    forward, backward, step = [], [], []
    torch.cuda.synchronize()
    y = None
    for i in range(warmup + reps):
        for leaf in peer.leaves():
            leaf.grad = None
        y = None
        start.record()
        y = peer.forward()
        middle.record()
        y.backward(g)
        end.record()
        end.synchronize()
        if i >= warmup:
            forward.append(start.elapsed_time(middle))
            backward.append(middle.elapsed_time(end))
            step.append(start.elapsed_time(end))
    return {"forward_ms": statistics.median(forward),
            "backward_ms": statistics.median(backward),
            "step_ms": statistics.median(step), "step_ms_all": step}, y


# --- the in-process rows --------------------------------------------------

class Bench:
    def __init__(self, args, runtimes, unavailable):
        self.args = args
        self.runtimes = runtimes
        self.unavailable = dict(unavailable)  # peer -> why
        self.scenes = {}
        self.budget_start = time.monotonic()

    def left_s(self):
        return self.args.budget_s - (time.monotonic() - self.budget_start)

    def scene(self, name):
        if name not in self.scenes:
            self.scenes.clear()  # one scene's map on the GPU at a time
            torch.cuda.empty_cache()
            self.scenes[name] = Scene(name)
        return self.scenes[name]

    def run_row(self, spec):
        from cuda_timing import wall_ms
        scene = self.scene(spec["scene"])
        data = RowData(spec, scene)
        tf32 = is_tf32(self.args, spec["dtype"])
        row = {"row": spec["row"], "scene": spec["scene"], "C": spec["C"],
               "dtype": spec["dtype"], "tf32": tf32, "N": scene.n,
               "pairs": scene.pairs, "tolerance": tolerance(
                   self.args, spec["dtype"]), "peers": {}}
        row["flop"] = 3 * 2 * row["pairs"] * spec["C"] * spec["C"]
        row["reference_ms"] = wall_ms(data.reference)[0]
        set_tf32(self.runtimes, f32_math(self.args, spec["dtype"]))
        try:
            for peer in self.args.peers:
                if peer in self.unavailable:
                    row["peers"][peer] = {"skipped": self.unavailable[peer]}
                    continue
                if peer != "tilec" and self.left_s() <= 0:
                    # A row's peers (their first steps tune) can outlast
                    # the budget: the rest of the row is not run.
                    row["peers"][peer] = {"skipped": "budget"}
                    continue
                entry = row["peers"][peer] = self.run_peer(peer, data, row)
                # A peer's first step includes its compile and tuning (tens
                # of seconds for the Triton peers): say where the time went
                # before the row's line, in case the call is cut short.
                first = entry.get("first_step_ms")
                print(f"    {spec['row']} {NAMES[peer]}: first step "
                      + (f"{first / 1e3:.1f} s" if first is not None
                         else "-")
                      + (f", step {entry['step_ms']:.3f} ms"
                         if "step_ms" in entry else "")
                      + (f", {entry['error']}" if "error" in entry else "")
                      + f" | {time.monotonic() - START:.0f} s", flush=True)
                torch.cuda.empty_cache()
        finally:
            set_tf32(self.runtimes, None)
        compare(row)
        return row

    def run_peer(self, peer, data, row):
        from cuda_timing import poison_allocator, wall_ms
        result = {}
        made = []
        n, c = data.scene.n, data.c
        try:
            # NaN blocks of y's and dX's size, and of dW's, for the
            # allocator: a peer that writes nothing leaves NaN behind.
            poison_allocator((n, c), data.dtype, blocks=4)
            poison_allocator((c, KERNEL_SIZE ** 3 * c), data.dtype, blocks=2)

            def first():
                made.append(PEER_CLASSES[peer](data, self.runtimes))
                return training_step(made[0], data.g)
            result["first_step_ms"], y = wall_ms(first)
            instance = made[0]
            reference = data.reference()
            result["errors"] = errors_of(y, instance.grads(), reference)
            del y
            if peer != "tilec" and result["first_step_ms"] > \
                    self.args.peer_first_step_budget_s * 1e3:
                self.unavailable[peer] = (
                    f"its first step of {row['row']} took "
                    f"{result['first_step_ms'] / 1e3:.0f} s, over "
                    f"--peer-first-step-budget-s "
                    f"{self.args.peer_first_step_budget_s:.0f}")
                result["stopped"] = self.unavailable[peer]
            timing, y = time_steps(instance, data.g, self.args.warmup,
                                   self.args.reps)
            result.update(timing)
            result["tflops"] = row["flop"] / result["step_ms"] / 1e9
            result["errors_after"] = errors_of(y, instance.grads(),
                                               reference)
            del y
            correct = passes(result["errors"], row["tolerance"]) and \
                passes(result["errors_after"], row["tolerance"])
            if peer == "tilec":
                result["pairs"] = instance.tensor.active_pairs(KERNEL_SIZE,
                                                               DILATION)
                result["pairs_match_reference"] = \
                    result["pairs"] == row["pairs"]
                correct = correct and result["pairs_match_reference"]
            result["correct"] = correct
        except Exception as error:  # a peer's failure is a result
            result["error"] = f"{type(error).__name__}: {error}"
            if result.get("errors"):
                result["correct"] = passes(result["errors"],
                                           row["tolerance"])
        finally:
            made.clear()
        return result


def compare(row):
    """best peer / tilec of the step's median (> 1: tilec is faster), over
    the peers that were timed and passed."""
    tilec = row["peers"].get("tilec", {})
    rivals = {p: e["step_ms"] for p, e in row["peers"].items()
              if p != "tilec" and "step_ms" in e and e.get("correct")}
    if "step_ms" not in tilec or not rivals:
        return
    best = min(rivals, key=rivals.get)
    row["best_peer"] = best
    row["best_peer_over_tilec"] = rivals[best] / tilec["step_ms"]


# --- first steps in fresh processes ---------------------------------------

def first_steps(args, out_dir, flexgemm_dir, unavailable, left_s):
    """Per dtype and peer, a child process with empty caches: its first
    training step of --first-row."""
    dtypes = args.dtype_list[:1] if args.quick else args.dtype_list
    logs = os.path.join(out_dir, "train-first-steps")
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    results = []
    for dtype in dtypes:
        row = parse_row(args.first_row, dtype)["row"]
        for peer in FIRST_PEERS:
            if peer not in args.peers:
                continue
            entry = {"row": row, "dtype": dtype, "peer": peer}
            results.append(entry)
            if peer in unavailable:
                entry["skipped"] = unavailable[peer]
                continue
            left = left_s()
            if left <= 0:
                entry["skipped"] = "budget"
                continue
            timeout = max(30.0, min(args.child_timeout_s, left))
            caches = tempfile.mkdtemp(prefix=f"spconv-train-{peer}-{dtype}.")
            for folder in ("tilec", "triton", "flexgemm"):
                os.makedirs(os.path.join(caches, folder))
            env = spconv_frames.child_env(
                TILEC_LIBRARY=os.path.abspath(args.lib),
                TILEC_CACHE_DIR=os.path.join(caches, "tilec"),
                TILEC_AUTOTUNE_CACHE=os.path.join(caches, "tilec",
                                                  "autotune_cache.json"),
                TRITON_CACHE_DIR=os.path.join(caches, "triton"),
                FLEX_GEMM_AUTOTUNE_CACHE_PATH=os.path.join(
                    caches, "flexgemm", "autotune_cache.json"))
            result_path = os.path.join(logs, f"{peer}-{dtype}.json")
            log_path = os.path.join(logs, f"{peer}-{dtype}.log")
            command = [sys.executable, os.path.abspath(__file__), "--lib",
                       os.path.abspath(args.lib), "--out", out_dir,
                       "--role", "first", "--peer", peer, "--rows", row,
                       "--result", result_path, "--no-flexgemm-build"]
            if flexgemm_dir:
                command += ["--flexgemm", flexgemm_dir]
            if args.ieee_f32:
                command.append("--ieee-f32")
            started = time.monotonic()
            try:
                with open(log_path, "w") as log:
                    status = subprocess.run(
                        command, env=env, stdout=log,
                        stderr=subprocess.STDOUT, timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                status = f"timed out after {timeout:.0f} s"
            entry["status"] = status
            entry["process_s"] = time.monotonic() - started
            entry["log"] = log_path
            if os.path.isfile(result_path):
                try:  # a child cut short while writing leaves half of it
                    with open(result_path) as f:
                        entry.update(json.load(f))
                except ValueError as error:
                    entry["error"] = (f"status {status}: its result "
                                      f"{result_path}: {error}")
            elif status != 0:
                entry["error"] = (f"status {status}: "
                                  f"{spconv_frames.last_line(log_path)}")
            tuned = os.path.join(caches, "tilec", "autotune_cache.json")
            if peer == "tilec" and os.path.isfile(tuned):
                # Kept: where the first step's tuning went (the entries'
                # compile times and benchmark repetitions).
                kept = os.path.join(logs, f"{peer}-{dtype}-autotune.json")
                shutil.copyfile(tuned, kept)
                entry["tuning"] = spconv_frames.tuning_summary(kept)
            shutil.rmtree(caches, ignore_errors=True)
            tuning = entry.get("tuning")
            print(f"  first step {row} {NAMES[peer]}: "
                  f"{first_cell(entry)} s ({entry['process_s']:.0f} s "
                  f"process{'; ' + tuning['text'] if tuning else ''}) | "
                  f"{time.monotonic() - START:.0f} s", flush=True)
    return results


def child_first(args, runtimes):
    """--role first: the first and a second training step of one peer, in
    this fresh process, then the check."""
    from cuda_timing import wall_ms
    import tilec
    spec = parse_row(args.rows, args.dtype_list[0])
    result = {"row": spec["row"], "peer": args.peer}
    try:
        if args.peer == "tilec":
            result["runtime_ms"] = wall_ms(lambda: tilec.default_runtime(0))[0]
        scene = Scene(spec["scene"])
        data = RowData(spec, scene)
        set_tf32(runtimes, f32_math(args, spec["dtype"]))
        made = []

        def step():
            made.append(PEER_CLASSES[args.peer](data, runtimes))
            return training_step(made[-1], data.g)
        result["first_step_ms"], y = wall_ms(step)
        # A new sparse tensor of the same voxels: its maps again, the
        # kernels compiled and tuned.
        result["second_step_ms"], y = wall_ms(step)
        result["N"], result["pairs"] = scene.n, scene.pairs
        result["tolerance"] = tolerance(args, spec["dtype"])
        result["errors"] = errors_of(y, made[-1].grads(), data.reference())
        result["correct"] = passes(result["errors"], result["tolerance"])
    except Exception as error:
        result["error"] = f"{type(error).__name__}: {error}"
    spconv_frames.write_json(args.result, result)
    print(json.dumps({k: v for k, v in result.items() if k != "errors"}))
    return 0


# --- tables ---------------------------------------------------------------

def result_cell(entry, key, text_of):
    """A peer's entry in a table: text_of(its `key`), marked FAIL where it
    failed the float64 check; ERR, n/a (skipped) or - without one."""
    if key in entry:
        text = text_of(entry[key])
        return text if entry.get("correct") else text + " FAIL"
    if "error" in entry:
        return "ERR"
    return "n/a" if "skipped" in entry else "-"


def peer_cell(entry):
    return result_cell(entry, "step_ms", lambda ms: f"{ms:.3f}")


def first_cell(entry):
    return result_cell(entry, "first_step_ms", lambda ms: f"{ms / 1e3:.2f}")


def row_table(rows, peers):
    header = ["scene", "C", "dtype", "N", "pairs"] + \
        [f"{NAMES[p]} step ms" for p in peers] + ["best peer / tilec"]
    lines = []
    for r in rows:
        if "skipped" in r:
            lines.append([r["scene"], str(r["C"]), r["dtype"],
                          "not run: " + r["skipped"]] +
                         [""] * (len(header) - 4))
            continue
        ratio = "-"
        if "best_peer_over_tilec" in r:
            ratio = (f"{r['best_peer_over_tilec']:.2f} "
                     f"({NAMES[r['best_peer']]})")
        lines.append([r["scene"], str(r["C"]),
                      r["dtype"] + (" tf32" if r.get("tf32") else ""),
                      f"{r['N']:,}", f"{r['pairs']:,}"] +
                     [peer_cell(r["peers"].get(p, {})) for p in peers] +
                     [ratio])
    return header, lines


def first_table(entries, peers):
    header = ["first step of", "dtype"] + \
        [f"{NAMES[p]} s (second ms)" for p in FIRST_PEERS if p in peers]
    by_dtype = {}
    for e in entries:
        by_dtype.setdefault((e["row"], e["dtype"]), {})[e["peer"]] = e
    lines = []
    for (row, dtype), found in by_dtype.items():
        line = [row.rsplit("/", 1)[0], dtype]
        for peer in FIRST_PEERS:
            if peer not in peers:
                continue
            e = found.get(peer, {})
            text = first_cell(e)
            if "second_step_ms" in e:
                text += f" ({e['second_step_ms']:.1f})"
            line.append(text)
        lines.append(line)
    return header, lines


def notes(report):
    lines = [f"{NAMES[p]}: unavailable ({why})"
             for p, why in report["unavailable_at_start"].items()]
    for r in report["rows"]:
        for peer, e in r.get("peers", {}).items():
            name = f"{r['row']}: {NAMES[peer]}"
            if "error" in e:
                lines.append(f"{name} failed: {e['error']}")
            if e.get("stopped"):
                lines.append(f"{name}: stopped: {e['stopped']}")
            if e.get("correct") is False:
                worst = {k: v for k, v in e.get("errors", {}).items()
                         if not v <= r["tolerance"]}
                worst.update({k + " (after timing)": v for k, v in
                              e.get("errors_after", {}).items()
                              if not v <= r["tolerance"]})
                extra = "" if e.get("pairs_match_reference", True) else \
                    f", pairs {e['pairs']:,} != {r['pairs']:,}"
                lines.append(f"{name} FAILED the check (tolerance "
                             f"{r['tolerance']:.0e}: " + ", ".join(
                                 f"{k} {v:.3g}" for k, v in worst.items()) +
                             extra + ")")
    for e in report["first_steps"]:
        name = f"first step {e['row']}: {NAMES[e['peer']]}"
        if "error" in e:
            lines.append(f"{name} failed: {e['error']} ({e.get('log')})")
        elif e.get("correct") is False:
            lines.append(f"{name} FAILED the check: " + ", ".join(
                f"{k} {v:.3g}" for k, v in e.get("errors", {}).items()))
        elif e.get("skipped") == "budget":
            lines.append(f"{name}: not run (the budget was spent)")
    for row in report["skipped_rows"]:
        lines.append(f"{row}: not run (the {report['budget_s']:.0f} s "
                     f"budget was spent)")
    return lines


def failed(report):
    """A peer failed a check, or tilec failed."""
    for r in report["rows"]:
        peers = r.get("peers", {})
        if "error" in peers.get("tilec", {}) or any(
                e.get("correct") is False for e in peers.values()):
            return True
    return any(e.get("correct") is False or
               (e["peer"] == "tilec" and "error" in e)
               for e in report["first_steps"])


def plot(report, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: no matplotlib: no plot written")
        return
    rows = [r for r in report["rows"] if "peers" in r]
    peers = report["peers_run"]
    width = 0.8 / max(len(peers), 1)
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.9), 4.5))
    for i, peer in enumerate(peers):
        entries = [r["peers"].get(peer, {}) for r in rows]
        values = [e.get("step_ms", math.nan) for e in entries]
        bars = ax.bar([k + (i - (len(peers) - 1) / 2) * width
                       for k in range(len(rows))], values, width,
                      label=NAMES[peer])
        for bar, e in zip(bars, entries):
            if "step_ms" in e and not e.get("correct"):
                bar.set_hatch("//")
                bar.set_edgecolor("red")
    ax.set_xticks(list(range(len(rows))))
    ax.set_xticklabels([r["row"] for r in rows], fontsize=7, rotation=45,
                       ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("training step ms (forward + dX, dW, db), median")
    ax.set_title(f"submanifold conv 3x3x3, one layer, on {report['device']}"
                 f" (one process; hatched: failed check)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


# --- main -----------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="Run through `tilec bench spconv --train` or "
               "scripts/bench-spconv.sh --train (fresh caches, "
               "spconv-Triton's wheel). FlexGEMM: "
               "scripts/fetch-flexgemm-peer.sh fetches it into "
               "peers/FlexGEMM; the bench builds it there on first use.")
    parser.add_argument("--lib", required=True, help="libtilec_c.so")
    parser.add_argument("--out", default=".", help="where spconv_train.json"
                        ", spconv_train.png and the first steps' logs go")
    parser.add_argument("--rows", default="", help="rows scene/C separated "
                        "by ';', e.g. shell128/64;street/64;"
                        "uniform500k@512/128 (a row may name its dtype: "
                        "shell128/64/bf16); default: " + " ".join(ROWS))
    parser.add_argument("--dtypes", default="f16", help="every row in each "
                        "of these, e.g. f16,bf16,f32 (default f16)")
    parser.add_argument("--quick", action="store_true", help="rows " +
                        " ".join(QUICK_ROWS) + ", 2 warm-up and 10 timed "
                        "steps, the first steps of the first dtype only")
    parser.add_argument("--warmup", type=int, default=None,
                        help="steps before the timed ones (default 3; "
                        "--quick 2)")
    parser.add_argument("--reps", type=int, default=None,
                        help="timed steps per peer and row (default 20; "
                        "--quick 10)")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help="the peers to run (tilec always runs)")
    parser.add_argument("--sections", default="rows,first",
                        help="what to run, of rows,first")
    parser.add_argument("--first-row", default=FIRST_ROW,
                        help=f"scene/C of the first steps in fresh "
                        f"processes (default {FIRST_ROW})")
    parser.add_argument("--ieee-f32", action="store_true",
                        help="f32 rows without tf32 in every peer, checked "
                        "at the f32 tolerance")
    parser.add_argument("--budget-s", type=float, default=420,
                        help="a row starts while more than --row-reserve-s "
                        "of it are left, a first-step process while any "
                        "are; a FlexGEMM build is not counted (default 420)")
    parser.add_argument("--row-reserve-s", type=float, default=120,
                        help="what the rows leave of --budget-s for the "
                        "first steps (default 120)")
    parser.add_argument("--peer-first-step-budget-s", type=float,
                        default=120, help="a peer whose first step of a row "
                        "took longer stops")
    parser.add_argument("--child-timeout-s", type=float, default=180,
                        help="the limit of each first-step process")
    spconv_frames.add_flexgemm_arguments(parser)
    # The first-step child processes.
    parser.add_argument("--role", choices=("main", "first"), default="main",
                        help=argparse.SUPPRESS)
    parser.add_argument("--peer", choices=FIRST_PEERS,
                        help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.dtype_list = [d for d in args.dtypes.split(",") if d]
    for dtype in args.dtype_list:
        if dtype not in DTYPE_NAMES:
            parser.error(f"--dtypes: unknown dtype {dtype} (known: "
                         f"{', '.join(DTYPE_NAMES)})")
    if not args.dtype_list:
        parser.error("--dtypes: no dtype")
    try:
        args.specs = row_specs(args)
        parse_row(args.first_row, "f16")
    except ValueError as error:
        parser.error(str(error))
    if args.warmup is None:
        args.warmup = 2 if args.quick else 3
    if args.reps is None:
        args.reps = 10 if args.quick else 20
    if args.warmup < 0 or args.reps < 1:
        parser.error("--warmup >= 0 and --reps >= 1")
    args.peers = ["tilec"] + [p for p in args.peers.split(",")
                              if p and p != "tilec"]
    for peer in args.peers:
        if peer not in PEERS:
            parser.error(f"--peers: unknown peer {peer} (known: "
                         f"{', '.join(PEERS)})")
    args.sections = [s for s in args.sections.split(",") if s]
    for section in args.sections:
        if section not in ("rows", "first"):
            parser.error(f"--sections: unknown section {section}")
    if args.role == "first" and not (args.peer and args.result):
        parser.error("--role first needs --peer and --result")
    return args


def load_peers(args, out_dir, report):
    """The peers' modules (runtimes) and why each missing one is."""
    runtimes, unavailable = {"defaults": {
        "torch": torch.backends.cuda.matmul.allow_tf32}}, {}
    wanted = [args.peer] if args.role == "first" else args.peers
    if "flexgemm" in wanted:
        spconv_frames.torch = torch  # its loader reads torch from there
        flexgemm, info, reason = spconv_frames.load_flexgemm(args, out_dir)
        report["flexgemm"] = info
        if reason:
            unavailable["flexgemm"] = reason
        else:
            import importlib
            flexgemm["config"] = importlib.import_module(
                "flex_gemm.kernels.triton.spconv.config")
            runtimes["flexgemm"] = flexgemm
            runtimes["defaults"]["flexgemm"] = flexgemm["config"].allow_tf32
    if "spconv_triton" in wanted:
        try:
            import spconv_triton.constants as constants
            import spconv_triton.pytorch as spconv
            runtimes["spconv_triton"] = {"pytorch": spconv,
                                         "constants": constants}
            runtimes["defaults"]["spconv_triton"] = \
                constants.SPCONV_ALLOW_TF32
            from importlib import metadata
            try:
                report["spconv_triton"] = metadata.version("spconv-triton")
            except metadata.PackageNotFoundError:
                report["spconv_triton"] = None
        except ImportError as error:
            unavailable["spconv_triton"] = \
                f"spconv-triton is not installed ({error})"
    return runtimes, unavailable


def main(argv=None):
    global torch, train_check
    args = parse_args(argv)
    try:
        import torch as torch_module
    except ImportError as error:
        sys.exit(f"tilec bench spconv --train: needs python3 with torch "
                 f"({error}); run it where it is, e.g. on the GPU machine")
    torch = torch_module
    if not torch.cuda.is_available():
        sys.exit("tilec bench spconv --train: torch sees no GPU")
    if not os.path.exists(args.lib):
        sys.exit(f"tilec bench spconv --train: no {args.lib} (--lib)")
    if spconv_frames.package_dir() is None:
        sys.exit(f"tilec bench spconv --train: no tilec package beside "
                 f"{HERE} (python/ of the checkout or of the GPU bundle)")
    torch.cuda.init()
    torch.empty(1, device=DEVICE)  # the primary context, before tilec's
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    dropped = {k: os.environ.pop(k) for k in
               spconv_frames.TILEC_RUN_VARIABLES if k in os.environ}
    import spconv_train_check
    train_check = spconv_train_check
    import tilec
    os.makedirs(args.out, exist_ok=True)
    out_dir = os.path.abspath(args.out)
    report = {}
    runtimes, unavailable = load_peers(args, out_dir, report)
    if args.role == "first":
        if args.peer in unavailable:
            result = {"peer": args.peer, "error": unavailable[args.peer]}
            spconv_frames.write_json(args.result, result)
            return 0
        return child_first(args, runtimes)

    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    report.update({
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "triton": triton_version, "lib": os.path.abspath(args.lib),
        "tilec_version": tilec.library_version(),
        "caches": {k: os.environ.get(k) for k in (
            "TILEC_CACHE_DIR", "TILEC_AUTOTUNE_CACHE", "TRITON_CACHE_DIR",
            "FLEX_GEMM_AUTOTUNE_CACHE_PATH")},
        "dropped_environment": dropped, "budget_s": args.budget_s,
        "quick": args.quick, "warmup": args.warmup, "reps": args.reps,
        "ieee_f32": args.ieee_f32, "weight_std": "1/sqrt(27 C)",
        "peers_run": args.peers,
        "unavailable_at_start": {p: why for p, why in unavailable.items()
                                 if p in args.peers},
        "rows": [], "skipped_rows": [], "first_steps": []})
    for peer, why in report["unavailable_at_start"].items():
        print(f"{NAMES[peer]}: unavailable ({why})", flush=True)
    bench = Bench(args, runtimes, unavailable)
    json_path = os.path.join(out_dir, "spconv_train.json")

    def save():
        report["unavailable"] = dict(bench.unavailable)
        report["wall_s"] = time.monotonic() - START
        spconv_frames.write_json(json_path, report)

    reserve = args.row_reserve_s if "first" in args.sections else 0.0
    if "rows" in args.sections:
        for spec in args.specs:
            if bench.left_s() <= reserve:
                report["skipped_rows"].append(spec["row"])
                report["rows"].append({"row": spec["row"],
                                       "scene": spec["scene"],
                                       "C": spec["C"],
                                       "dtype": spec["dtype"],
                                       "skipped": "budget"})
                continue
            row = bench.run_row(spec)
            report["rows"].append(row)
            print(f"  {row['row']}: N {row['N']:,} pairs {row['pairs']:,} | "
                  + " | ".join(
                      f"{NAMES[p]} " + (
                          f"fwd {e['forward_ms']:.3f} bwd "
                          f"{e['backward_ms']:.3f} step {peer_cell(e)} ms "
                          f"{e['tflops']:.1f} TFLOP/s" if "step_ms" in e
                          else peer_cell(e))
                      for p, e in row["peers"].items()) +
                  f" | {time.monotonic() - START:.0f} s", flush=True)
            save()  # a run cut short keeps its rows
        bench.scenes.clear()
        torch.cuda.empty_cache()
    if "first" in args.sections:
        print(f"first steps in fresh processes | "
              f"{time.monotonic() - START:.0f} s", flush=True)
        report["first_steps"] = first_steps(
            args, out_dir, report.get("flexgemm", {}).get("dir"),
            unavailable, bench.left_s)
    save()
    if report["rows"]:
        spconv_frames.print_table(
            "One training step (forward + dX, dW, db), median ms "
            "(FAIL: failed the float64 check)",
            *row_table(report["rows"], args.peers))
    if report["first_steps"]:
        spconv_frames.print_table(
            "First training step of a new shape in a fresh process, "
            "empty caches (the second step's ms)",
            *first_table(report["first_steps"], args.peers))
    print()
    for line in notes(report):
        print(f"note: {line}")
    if any("peers" in r for r in report["rows"]):
        plot(report, os.path.join(out_dir, "spconv_train.png"))
    print(f"wall {time.monotonic() - START:.0f} s; json: {json_path}")
    ran = any("peers" in r for r in report["rows"])
    return 1 if failed(report) or not ran and "rows" in args.sections \
        else 0


if __name__ == "__main__":
    sys.exit(main())
