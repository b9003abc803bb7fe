"""`tilec bench spconv`: tilec's submanifold 3x3x3 convolution (forward)
through libtilec_c.so, spconv-Triton's (the same algorithm family: a gather
GEMM over a sorted neighbour bitmask, in Triton) and torch's gather-then-GEMM,
in one process, on one GPU, on the voxel scenes of the C API (the same voxels
in every process). Every result is checked against a float64 reference
computed in torch from the coordinates (spconv_reference.py), with the output
poisoned (NaN) first; times are triton.testing.do_bench medians with the L2
flushed; the table goes to stdout, every row to JSON (and a Markdown table),
and a plot to PNG where matplotlib is present.

Per row: N, the mean active neighbours (tilec_sparse_tensor_active_pairs / N),
tilec's map build (fresh tensors, after a warm-up), the three kernel times,
useful TFLOP/s (2 * pairs * CI * CO / time), the ratios, and the first call of
the row's shape for tilec and spconv-Triton (maps, compile and tuning
included).
"""

import argparse
import ctypes
import json
import math
import os
import re
import sys
import time
import zlib

START = time.monotonic()

try:
    import torch
except ImportError as error:
    sys.exit(f"tilec bench spconv: needs python3 with torch and triton "
             f"({error}); run it where they are, e.g. on the GPU machine")
try:
    import triton
    import triton.testing
except ImportError:
    triton = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "python")]
import spconv_reference as oracle  # noqa: E402
from tilec import _library as tilec_library  # noqa: E402
from tilec import scenes as tilec_scenes  # noqa: E402
from cuda_timing import poison_allocator, wall_ms  # noqa: E402

# The anchors' rows (shared/anchors.md, in its order), the LiDAR-like street,
# then the rest of the f16 shell grid, then small inputs: a run cut short by
# --budget-s loses the last ones first.
ANCHOR_ROWS = ["shell64/32/f16", "shell64/256/f16", "shell128/64/f16",
               "shell128/128/f16", "shell128/256/f16", "shell256/32/f16",
               "shell256/128/f16", "shell256/256/f16", "shell256/128/f32",
               "shell256/128/bf16", "uniform500k@512/64/f16"]
LIDAR_ROWS = ["lidar/32/f16", "lidar/64/f16", "lidar/128/f16"]
GRID_ROWS = ["shell64/64/f16", "shell64/128/f16", "shell128/32/f16",
             "shell256/64/f16"]
# Small inputs (a res-32 shell, about 3,900 voxels): launches of fewer
# programs than SMs, where the convolution's row blocks run in halves.
SMALL_ROWS = ["shell32/128/f16", "shell32/256/f16"]
QUICK_ROWS = ["shell64/32/f16", "shell128/128/f16", "shell256/128/f16",
              "uniform500k@512/64/f16", "lidar/64/f16"]
ROW = re.compile(r"^(?P<scene>shell(?P<res>\d+)|uniform(?P<count>\d+)k@"
                 r"(?P<grid>\d+)|lidar)/(?P<c>\d+)/(?P<dtype>f16|bf16|f32)$")
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
TILEC_DTYPES = {"f16": 0, "bf16": 1, "f32": 2}  # enum tilec_dtype
KERNEL_SIZE, DILATION = 3, 1
DEVICE = "cuda"
PEERS = ("ours", "spconv_triton", "torch")
PEER_NAMES = {"ours": "tilec", "spconv_triton": "spconv-Triton",
              "torch": "torch"}


class Tilec:
    """libtilec_c.so's runtime, scenes and sparse-convolution calls, at the C
    API's level (capi/include/tilec/tilec.h): the signatures and the errors
    are the tilec package's (python/tilec/_library.py)."""

    def __init__(self):
        # The package's library: $TILEC_LIBRARY, which main() sets to --lib.
        self.library = tilec_library.library()
        self.lib = self.library.lib
        self.runtime = ctypes.c_void_p()
        self.check(self.lib.tilec_runtime_create(ctypes.byref(self.runtime)),
                   "tilec_runtime_create")

    def check(self, status, what):
        """Raises the package's error for a failed call (tilec.Error)."""
        self.library.check(status, what)

    # tilec_row_order, by name.
    ROW_ORDERS = {"key": 0, "lean_groups": 1, "auto": 2}

    def tensor(self, coords, row_order="lean_groups"):
        """A new sparse tensor over `coords` (int32 [N, 4] on the GPU, kept
        alive by the caller), with no maps yet, whose maps will order rows
        by `row_order` (the C API's default: "lean_groups")."""
        handle = ctypes.c_void_p()
        self.check(self.lib.tilec_sparse_tensor_create(
            self.runtime, ctypes.c_void_p(coords.data_ptr()), coords.shape[0],
            ctypes.byref(handle)), "tilec_sparse_tensor_create")
        self.check(self.lib.tilec_sparse_tensor_set_row_order(
            handle, self.ROW_ORDERS[row_order]),
            "tilec_sparse_tensor_set_row_order")
        return handle

    def destroy(self, tensor):
        self.lib.tilec_sparse_tensor_destroy(tensor)

    def build_maps(self, tensor):
        self.check(self.lib.tilec_sparse_tensor_build_maps(
            tensor, KERNEL_SIZE, DILATION, stream()),
            "tilec_sparse_tensor_build_maps")

    def active_pairs(self, tensor):
        pairs = ctypes.c_int64()
        self.check(self.lib.tilec_sparse_tensor_active_pairs(
            tensor, KERNEL_SIZE, DILATION, ctypes.byref(pairs)),
            "tilec_sparse_tensor_active_pairs")
        return pairs.value

    def conv(self, tensor, x, weight, y, dtype):
        """A closure that runs y = conv(x) on torch's current stream, with
        its arguments prepared once (do_bench times the call, not ctypes'
        conversions)."""
        args = (tensor, ctypes.c_void_p(x.data_ptr()),
                ctypes.c_void_p(weight.data_ptr()), None,
                ctypes.c_void_p(y.data_ptr()), x.shape[1], weight.shape[0],
                KERNEL_SIZE, DILATION, TILEC_DTYPES[dtype],
                1 if dtype == "f32" else 0, stream())
        function = self.lib.tilec_submanifold_conv3d

        def run():
            status = function(*args)
            if status != 0:
                self.check(status, "tilec_submanifold_conv3d")
        run.keep = (x, weight, y)
        return run

    def close(self):
        self.lib.tilec_runtime_destroy(self.runtime)


def stream():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def gather_gemm(x, weight, nb, y):
    """torch's gather then one GEMM (im2col): y = A @ W^T with
    A[i, v * CI + c] = x[nb[i, v], c] (zeros where there is no neighbour).
    A closure; the padded x and the gather's buffer are made once."""
    n, ci = x.shape
    co, v_count = weight.shape[0], nb.shape[1]
    rows = torch.where(nb >= 0, nb, n).reshape(-1)
    x_pad = torch.cat([x, x.new_zeros(1, ci)])
    w_t = weight.reshape(co, v_count * ci).t()
    gathered = x.new_empty(n * v_count, ci)

    def run():
        torch.index_select(x_pad, 0, rows, out=gathered)
        torch.matmul(gathered.view(n, v_count * ci), w_t, out=y)
    return run


def poisoned(n, c, dtype):
    return torch.full((n, c), math.nan, device=DEVICE, dtype=dtype)


def scene_voxels(spec):
    """The row's scene as int32 [N, 4] (batch, x, y, z) on the host: the C
    API's scenes through the package (tilec.scenes, its seed)."""
    if spec["kind"] == "shell":
        return tilec_scenes.shell(spec["res"])
    if spec["kind"] == "uniform":
        return tilec_scenes.uniform(spec["count"], spec["res"])
    return tilec_scenes.lidar()


class Scene:
    """A scene's voxels on the GPU and its map built in torch (the oracle)."""

    def __init__(self, tilec, spec):
        self.name = spec["scene"]
        host = scene_voxels(spec)
        self.coords = host.to(DEVICE).contiguous()
        self.n = host.shape[0]
        self.nb = oracle.neighbour_map(self.coords, KERNEL_SIZE, DILATION)
        self.pairs = int((self.nb >= 0).sum().item())
        self.spatial_shape = (host[:, 1:].max(0).values + 1).tolist()
        self.batch_size = int(host[:, 0].max().item()) + 1


def parse_row(text):
    match = ROW.match(text)
    if not match:
        raise ValueError(f"row '{text}': expected shell<res>/<C>/<dtype>, "
                         f"uniform<k>k@<res>/<C>/<dtype> or lidar/<C>/<dtype>"
                         f" (dtype f16, bf16 or f32)")
    scene = match["scene"]
    kind = "shell" if match["res"] else "uniform" if match["count"] else \
        "lidar"
    res = int(match["res"] or match["grid"] or 0)
    count = int(match["count"] or 0) * 1000
    return {"row": text, "scene": scene, "kind": kind, "res": res,
            "count": count, "C": int(match["c"]), "dtype": match["dtype"]}


class Bench:
    def __init__(self, args, tilec, peer):
        self.args = args
        self.tilec = tilec
        self.peer = peer  # spconv_triton's modules, or None
        self.peer_disabled = None  # why the peer stopped, or None
        self.peer_keys = set()  # its autotune keys met in this process
        self.ours_keys = set()
        self.scenes = {}
        self.first_map_build_ms = None
        self.warmup, self.rep = (10, 40) if args.quick else (25, 100)

    def bench(self, function):
        return triton.testing.do_bench(function, warmup=self.warmup,
                                       rep=self.rep, return_mode="median")

    def scene(self, spec):
        if spec["scene"] not in self.scenes:
            self.scenes.clear()  # one scene's maps on the GPU at a time
            torch.cuda.empty_cache()
            self.scenes[spec["scene"]] = Scene(self.tilec, spec)
        return self.scenes[spec["scene"]]

    def run_row(self, spec):
        scene = self.scene(spec)
        c, dtype = spec["C"], spec["dtype"]
        row = {"row": spec["row"], "scene": spec["scene"], "N": scene.n,
               "C": c, "dtype": dtype, "pairs": scene.pairs,
               "act": scene.pairs / scene.n}
        generator = torch.Generator(device=DEVICE)
        generator.manual_seed(zlib.crc32(spec["row"].encode()))
        x = torch.empty(scene.n, c, device=DEVICE).uniform_(
            -1, 1, generator=generator).to(DTYPES[dtype])
        weight = torch.empty(c, 3, 3, 3, c, device=DEVICE).uniform_(
            -1, 1, generator=generator).to(DTYPES[dtype])
        reference = oracle.reference(x, weight, scene.nb)

        def error(y):
            return oracle.worst_error(y, reference, scene.nb, c, dtype)

        for peer, run in (("ours", self.run_ours),
                          ("spconv_triton", self.run_spconv_triton),
                          ("torch", self.run_torch)):
            try:
                row[peer] = run(scene, x, weight, dtype, error)
            except Exception as failure:  # a peer's failure is a result
                row[peer] = {"error": f"{type(failure).__name__}: {failure}"}
            if "ms" in row[peer]:
                row[peer]["tflops"] = 2.0 * scene.pairs * c * c / \
                    row[peer]["ms"] / 1e9
        ours = row["ours"].get("tflops")
        rivals = {p: row[p]["tflops"] for p in ("spconv_triton", "torch")
                  if row[p].get("correct")}
        if ours and "tflops" in row["spconv_triton"]:
            row["ours_over_spconv_triton"] = ours / row["spconv_triton"][
                "tflops"]
        if ours and rivals:
            row["best_peer"] = max(rivals, key=rivals.get)
            row["ours_over_best"] = ours / rivals[row["best_peer"]]
        torch.cuda.empty_cache()
        return row

    def run_ours(self, scene, x, weight, dtype, error):
        tilec = self.tilec
        # Its autotune key: ceil(log2(N)), CI, CO, dtype
        # (kernels/sparse_conv.cpp).
        key = ((scene.n - 1).bit_length(), x.shape[1], weight.shape[0], dtype)
        result = {"tuned_before": key in self.ours_keys}
        self.ours_keys.add(key)
        tensors = []

        def fresh():
            tensors.append(tilec.tensor(scene.coords))
            return tensors[-1]
        try:
            if self.first_map_build_ms is None:
                # The process's first maps: the map kernels' compile counts.
                self.first_map_build_ms = wall_ms(
                    lambda: tilec.build_maps(fresh()))[0]
            y = poisoned(scene.n, weight.shape[0], x.dtype)
            tensor = fresh()
            conv = tilec.conv(tensor, x, weight, y, dtype)
            # A new shape: the maps of a new tensor, compile and tuning.
            result["first_call_ms"] = wall_ms(conv)[0]
            result["err"] = error(y)
            first = y.clone()
            result["pairs"] = tilec.active_pairs(tensor)
            result["pairs_match_oracle"] = result["pairs"] == scene.pairs
            tilec.build_maps(fresh())  # warm-up; then fresh tensors, timed
            builds = [wall_ms(lambda: tilec.build_maps(fresh()))[0]
                      for _ in range(self.args.map_reps)]
            result["map_build_ms_all"] = builds
            result["map_build_ms"] = sorted(builds)[len(builds) // 2]
            result["ms"] = self.bench(conv)
            y.fill_(math.nan)
            conv()
            torch.cuda.synchronize()
            result["err_after_bench"] = error(y)
            result["repeat_bitwise"] = bool(torch.equal(y, first))
            result["correct"] = (max(result["err"], result["err_after_bench"])
                                 <= 1.0 and result["pairs_match_oracle"])
        finally:
            for tensor in tensors:
                tilec.destroy(tensor)
        return result

    def run_spconv_triton(self, scene, x, weight, dtype, error):
        if self.peer is None:
            return {"skipped": "spconv-triton is not installed"}
        if self.peer_disabled:
            return {"skipped": self.peer_disabled}
        spconv, ops, constants = self.peer
        c = x.shape[1]
        key = (c, weight.shape[0], dtype)
        tuned_before = key in self.peer_keys
        left = self.args.budget_s - (time.monotonic() - START)
        if not tuned_before and left < self.args.peer_first_call_budget_s:
            budget = self.args.peer_first_call_budget_s
            return {"skipped": f"a new autotune key (C {c}, {dtype}) may take "
                               f"up to {budget:.0f} s and {max(left, 0):.0f}"
                               f" s of the budget are left"}
        self.peer_keys.add(key)
        result = {"tuned_before": tuned_before}
        # The weights go in unchanged: spconv's KRSC layout [CO, k0, k1, k2,
        # CI] is ours, its offset k = (k0 * 3 + k1) * 3 + k2 over the index
        # columns 1..3 is ours, and its subm pair (o = x + r - k) puts the
        # input of offset k at o + (k - r): ours (docs/bench.md).
        constants.SPCONV_ALLOW_TF32 = dtype == "f32"
        try:
            module = spconv.SubMConv3d(c, weight.shape[0], KERNEL_SIZE,
                                       padding=KERNEL_SIZE // 2,
                                       dilation=DILATION, bias=False,
                                       indice_key="bench")
            module = module.to(device=DEVICE, dtype=x.dtype).eval()
            with torch.no_grad():
                module.weight.copy_(weight)
            source = spconv.SparseConvTensor(x, scene.coords,
                                             scene.spatial_shape,
                                             scene.batch_size)
            poison_allocator((scene.n, weight.shape[0]), x.dtype)
            with torch.no_grad():
                first_ms, out = wall_ms(lambda: module(source))
            result["first_call_ms"] = first_ms
            result["err_first_call"] = error(out.features)
            if first_ms > self.args.peer_first_call_budget_s * 1e3:
                self.peer_disabled = (
                    f"a first call took {first_ms / 1e3:.0f} s, over the "
                    f"{self.args.peer_first_call_budget_s:.0f} s budget")
            pairs = out.indice_dict["bench"]
            n = scene.n

            def kernel():  # what the module runs once the pairs are cached
                return ops.implicit_gemm(
                    x, module.weight, pairs.pair_fwd,
                    pairs.pair_mask_fwd_splits, pairs.mask_argsort_fwd_splits,
                    n, pairs.masks, False, True)[0]
            poison_allocator((n, weight.shape[0]), x.dtype)
            y = kernel()
            torch.cuda.synchronize()
            result["err"] = error(y)
            result["repeat_bitwise"] = bool(torch.equal(y, out.features))
            result["ms"] = self.bench(kernel)
            cached = out.replace_feature(x)  # the pairs travel with it
            with torch.no_grad():
                result["module_ms"] = self.bench(lambda: module(cached))
            result["correct"] = max(result["err"],
                                    result["err_first_call"]) <= 1.0
        finally:
            constants.SPCONV_ALLOW_TF32 = False
        return result

    def run_torch(self, scene, x, weight, dtype, error):
        allow_tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = dtype == "f32"
        try:
            y = poisoned(scene.n, weight.shape[0], x.dtype)
            run = gather_gemm(x, weight, scene.nb, y)
            run()
            torch.cuda.synchronize()
            result = {"err": error(y)}
            result["ms"] = self.bench(run)
            result["correct"] = result["err"] <= 1.0
        finally:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
        return result


def cell(value, form):
    return "-" if value is None else format(value, form)


def seconds(ms):
    return "-" if ms is None else f"{ms / 1e3:.2f}"


def verdict(result):
    if "skipped" in result:
        return "skip"
    if "error" in result:
        return "ERR"
    return "y" if result.get("correct") else "NO"


def table(rows):
    """(header, lines) of the result table, one line a row."""
    header = ["row", "N", "act", "maps ms", "tilec ms", "spconv-Triton ms",
              "torch ms", "tilec TFLOP/s", "spconv-Triton TFLOP/s",
              "torch TFLOP/s", "tilec/spconv-Triton", "tilec/best",
              "first call s: tilec / spconv-Triton", "correct (t/s/g)"]
    lines = []
    for r in rows:
        o, s, g = r["ours"], r["spconv_triton"], r["torch"]
        first = (f"{seconds(o.get('first_call_ms'))} / "
                 f"{seconds(s.get('first_call_ms'))}"
                 f"{' (tuned before)' if s.get('tuned_before') else ''}")
        lines.append([
            r["row"], f"{r['N']:,}", f"{r['act']:.1f}",
            cell(o.get("map_build_ms"), ".3f"), cell(o.get("ms"), ".3f"),
            cell(s.get("ms"), ".3f"), cell(g.get("ms"), ".3f"),
            cell(o.get("tflops"), ".1f"), cell(s.get("tflops"), ".1f"),
            cell(g.get("tflops"), ".1f"),
            cell(r.get("ours_over_spconv_triton"), ".2f"),
            cell(r.get("ours_over_best"), ".2f"), first,
            "/".join(verdict(p) for p in (o, s, g))])
    return header, lines


def print_table(rows, first_map_build_ms, notes):
    header, lines = table(rows)
    widths = [max([len(h)] + [len(line[i]) for line in lines])
              for i, h in enumerate(header)]
    for line in [header] + lines:
        print(" | ".join(text.rjust(w) for text, w in zip(line, widths)))
    print(f"first map build of the process (map kernels' compile included): "
          f"{cell(first_map_build_ms, '.1f')} ms")
    for note in notes:
        print(f"note: {note}")


def write_markdown(rows, first_map_build_ms, notes, path):
    header, lines = table(rows)
    with open(path, "w") as f:
        f.write("| " + " | ".join(header) + " |\n")
        f.write("|" + " --- |" * len(header) + "\n")
        for line in lines:
            f.write("| " + " | ".join(line) + " |\n")
        f.write(f"\nFirst map build of the process (map kernels' compile "
                f"included): {cell(first_map_build_ms, '.1f')} ms.\n")
        for note in notes:
            f.write(f"\n- {note}")
        f.write("\n")


def row_notes(rows):
    notes = []
    for r in rows:
        for peer in PEERS:
            result = r[peer]
            name = PEER_NAMES[peer]
            if "skipped" in result:
                notes.append(f"{r['row']}: {name} skipped: "
                             f"{result['skipped']}")
            elif "error" in result:
                notes.append(f"{r['row']}: {name} failed: {result['error']}")
            elif not result.get("correct"):
                errors = ", ".join(f"{k} {result[k]:.3g}" for k in result
                                   if k.startswith("err"))
                extra = "" if result.get("pairs_match_oracle", True) else \
                    f", pairs {result['pairs']} != {r['pairs']}"
                notes.append(f"{r['row']}: {name} FAILED the check "
                             f"({errors}{extra})")
    return notes


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot written")
        return
    x = range(len(rows))
    width = 0.28
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.8), 4.5))
    for i, peer in enumerate(PEERS):
        values = [r[peer].get("tflops", 0.0) for r in rows]
        bars = ax.bar([v + (i - 1) * width for v in x], values, width,
                      label=PEER_NAMES[peer])
        for bar, r in zip(bars, rows):
            if "tflops" in r[peer] and not r[peer].get("correct"):
                bar.set_hatch("//")
                bar.set_edgecolor("red")
    ax.set_xticks(list(x))
    ax.set_xticklabels([r["row"] for r in rows], fontsize=7, rotation=45,
                       ha="right")
    ax.set_ylabel("useful TFLOP/s (2 pairs CI CO / time)")
    ax.set_title(f"submanifold conv 3x3x3 on {torch.cuda.get_device_name()} "
                 f"(one process; hatched: failed check)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def load_peer():
    """spconv-Triton's modules, or None with the reason."""
    try:
        import spconv_triton.constants as constants
        import spconv_triton.pytorch as spconv
        from spconv_triton.pytorch import ops
    except ImportError as error:
        return None, f"spconv-triton is not installed ({error})"
    return (spconv, ops, constants), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True, help="libtilec_c.so")
    parser.add_argument("--out", default=".", help="where JSON, Markdown and "
                        "PNG go")
    parser.add_argument("--rows", default="", help="rows separated by ';', "
                        "e.g. shell128/64/f16;uniform500k@512/64/f16;"
                        "lidar/32/f16 (default: the anchors', the LiDAR "
                        "street's and the rest of the f16 shell grid)")
    parser.add_argument("--dtypes", default="", help="keep only the rows of "
                        "these dtypes, e.g. f16,bf16")
    parser.add_argument("--quick", action="store_true", help="five rows, "
                        "shorter timing")
    parser.add_argument("--budget-s", type=float, default=360, help="no row "
                        "starts after this many seconds since the start")
    parser.add_argument("--peer-first-call-budget-s", type=float, default=60,
                        help="a peer's first call of a new shape that may "
                        "take longer than the budget left is skipped; one "
                        "that took longer stops that peer")
    parser.add_argument("--map-reps", type=int, default=5,
                        help="fresh tensors whose map build is timed")
    args = parser.parse_args()
    if triton is None:
        sys.exit("tilec bench spconv: needs triton next to torch")
    if not torch.cuda.is_available():
        sys.exit("tilec bench spconv: torch sees no GPU")
    if not os.path.exists(args.lib):
        sys.exit(f"tilec bench spconv: no {args.lib} (--lib)")
    full = ANCHOR_ROWS + LIDAR_ROWS + GRID_ROWS + SMALL_ROWS
    names = [r for r in args.rows.split(";") if r] if args.rows else \
        QUICK_ROWS if args.quick else full
    try:
        specs = [parse_row(r) for r in names]
    except ValueError as error:
        sys.exit(f"tilec bench spconv: {error}")
    if args.dtypes:
        specs = [s for s in specs if s["dtype"] in args.dtypes.split(",")]
    torch.cuda.init()
    torch.empty(1, device=DEVICE)  # the primary context, before tilec's
    start = time.perf_counter()
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    tilec = Tilec()
    runtime_ms = (time.perf_counter() - start) * 1e3
    peer, missing = load_peer()
    bench = Bench(args, tilec, peer)
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "bench-spconv.json")
    rows, skipped = [], []

    def notes():
        lines = row_notes(rows) + [f"{s}: not run (the {args.budget_s:.0f} s "
                                   f"budget was spent)" for s in skipped]
        return ([missing] if missing else []) + lines

    def save():
        from importlib import metadata
        try:
            peer_version = metadata.version("spconv-triton")
        except metadata.PackageNotFoundError:
            peer_version = None
        result = {"device": torch.cuda.get_device_name(),
                  "torch": torch.__version__, "triton": triton.__version__,
                  "spconv_triton": peer_version, "lib": args.lib,
                  "caches": {k: os.environ.get(k) for k in (
                      "TILEC_CACHE_DIR", "TILEC_AUTOTUNE_CACHE",
                      "TRITON_CACHE_DIR")},
                  "quick": args.quick, "budget_s": args.budget_s,
                  "runtime_create_ms": runtime_ms,
                  "first_map_build_ms": bench.first_map_build_ms,
                  "wall_s": time.monotonic() - START, "rows": rows,
                  "skipped_rows": skipped, "notes": notes()}
        with open(json_path, "w") as f:
            json.dump(result, f, indent=1)

    for spec in specs:
        if time.monotonic() - START > args.budget_s:
            skipped.append(spec["row"])
            continue
        rows.append(bench.run_row(spec))
        r = rows[-1]
        print(f"  {r['row']}: N {r['N']:,} act {r['act']:.1f} | tilec "
              f"{cell(r['ours'].get('ms'), '.3f')} spconv-Triton "
              f"{cell(r['spconv_triton'].get('ms'), '.3f')} torch "
              f"{cell(r['torch'].get('ms'), '.3f')} ms | "
              f"{time.monotonic() - START:.0f} s", flush=True)
        save()  # a run cut short keeps its rows
    tilec.close()
    save()
    print_table(rows, bench.first_map_build_ms, notes())
    write_markdown(rows, bench.first_map_build_ms, notes(),
                   os.path.join(args.out, "bench-spconv.md"))
    if rows:
        plot(rows, os.path.join(args.out, "bench-spconv.png"))
    print(f"wall {time.monotonic() - START:.0f} s; json: {json_path}")
    failed = [r for r in rows if "error" in r["ours"] or any(
        "ms" in r[p] and not r[p].get("correct") for p in PEERS)]
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
