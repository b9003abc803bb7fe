"""`tilec bench gemm`: tilec's autotuned matmul, a Triton kernel of the same
algorithm (triton_matmul.py) and torch.matmul (cuBLAS), in one process, on one
GPU, for f16, bf16 and f32 (tf32 allowed) on the shapes of the Hopper-engine
issue. Every result is checked against a float64 reference (cuBLAS DGEMM on
the same inputs) with the tolerance of its dtype; times are
triton.testing.do_bench medians with the L2 flushed; the table goes to stdout,
everything to JSON, and a plot to PNG where matplotlib is present.

tilec's kernel is tuned by `tilec tune` (its own process: tilec's compiler is
C++), then its winning cubin and compile json are loaded here through
the tilec package's Kernel (python/tilec: libtilec_c.so's tilec_kernel_*, so
the runtime binds the arguments and encodes the TMA tensor maps) and launched
on torch's stream next to the peers.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import triton
    import triton.testing
except ImportError as error:
    sys.exit(f"tilec bench gemm: needs python3 with torch and triton "
             f"({error}); run it where they are, e.g. on the GPU machine")

HERE = os.path.dirname(os.path.abspath(__file__))
# The tilec package of this checkout; it loads the library on first use,
# from $TILEC_LIBRARY, which main() sets to the one it was given.
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "python")]
import tilec  # noqa: E402
import triton_matmul  # noqa: E402

SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192),
          (65536, 128, 3456), (2048, 2048, 8192), (1000, 1000, 1000),
          (1111, 2222, 3333)]
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def tune_tilec(tilec_bin, m, n, k, dtype, work):
    """Tunes tilec's matmul for the call and compiles the winner into `work`."""
    sizes = f"M={m},N={n},K={k}"
    tune_json = os.path.join(work, "tune.json")
    # --force: a winner already in the autotune cache would come back
    # without the timings (and compile times) this table reports.
    command = [tilec_bin, "tune", "--kernel", "matmul", "--sizes", sizes,
               "--types", f"DTYPE={dtype}", "--force", "--quiet",
               "--json", tune_json]
    if dtype == "f32":
        command += ["--params", "ALLOW_TF32=1"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(tune_json) as f:
        tuned = json.load(f)
    dump = os.path.join(work, "winner")
    # The target the tuner compiled for on this device (sm_90a on an H200:
    # wgmma), not `tilec compile`'s default.
    subprocess.run([tilec_bin, "compile", "--kernel", "matmul", "--config",
                    tuned["config"], "--target", tuned["target"],
                    "--arg-values", sizes, "--dump-dir", dump],
                   check=True, stdout=subprocess.DEVNULL)
    compile_ms = sorted(t["compile_ms"] for t in tuned["timings"])
    return tuned, tilec.Kernel.from_dump(dump, "matmul"), \
        compile_ms[len(compile_ms) // 2]


def tilec_launcher(tuned, kernel, a, b, c):
    """A closure that launches `kernel` on torch's stream, its arguments
    set once."""
    m, k = a.shape
    n = b.shape[1]
    kernel.set(a_ptr=a, b_ptr=b, c_ptr=c, M=m, N=n, K=k,
               stride_am=a.stride(0), stride_ak=a.stride(1),
               stride_bk=b.stride(0), stride_bn=b.stride(1),
               stride_cm=c.stride(0), stride_cn=c.stride(1))
    grid = tuned["grid"]
    return lambda: kernel.launch(grid, torch.cuda.current_stream())


def worst_error(c, reference, dtype, k):
    """max |c - ref| / (atol + rtol |ref|): <= 1 passes (tilec's harness)."""
    rtol = 1e-2 if dtype in ("f16", "bf16") else 1e-3  # f32 runs as tf32
    atol = rtol * math.sqrt(k)
    error = (c.double() - reference).abs() / (atol + rtol * reference.abs())
    if not torch.isfinite(c).all():
        return math.inf
    return error.max().item()


def bench(launch):
    return triton.testing.do_bench(launch, warmup=25, rep=200,
                                   return_mode="median")


def run_row(tilec_bin, m, n, k, dtype, work):
    torch.manual_seed(m * 31 + n * 7 + k)
    a = torch.empty(m, k, device="cuda").uniform_(-1, 1).to(DTYPES[dtype])
    b = torch.empty(k, n, device="cuda").uniform_(-1, 1).to(DTYPES[dtype])
    reference = a.double() @ b.double()
    flops = 2.0 * m * n * k
    row = {"M": m, "N": n, "K": k, "dtype": dtype}

    tuned, kernel, compile_ms = tune_tilec(tilec_bin, m, n, k, dtype, work)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=DTYPES[dtype])
    launch = tilec_launcher(tuned, kernel, a, b, c)
    launch()
    torch.cuda.synchronize()
    row["tilec"] = {"config": tuned["config"], "compile_ms_median": compile_ms,
                    "err": worst_error(c, reference, dtype, k),
                    "ms": bench(launch)}

    c = torch.full((m, n), float("nan"), device="cuda", dtype=DTYPES[dtype])
    launch = triton_matmul.matmul(a, b, c, allow_tf32=True)
    launch()
    torch.cuda.synchronize()
    row["triton"] = {"config": triton_matmul.best_config(),
                     "err": worst_error(c, reference, dtype, k),
                     "ms": bench(launch)}

    torch.backends.cuda.matmul.allow_tf32 = True
    out = torch.empty(m, n, device="cuda", dtype=DTYPES[dtype])
    launch = lambda: torch.matmul(a, b, out=out)  # noqa: E731
    launch()
    torch.cuda.synchronize()
    row["cublas"] = {"err": worst_error(out, reference, dtype, k),
                     "ms": bench(launch)}
    for peer in ("tilec", "triton", "cublas"):
        row[peer]["tflops"] = flops / row[peer]["ms"] / 1e9
        row[peer]["correct"] = row[peer]["err"] <= 1.0
    row["tilec_over_triton"] = row["tilec"]["tflops"] / row["triton"]["tflops"]
    row["tilec_over_cublas"] = row["tilec"]["tflops"] / row["cublas"]["tflops"]
    return row


def print_table(rows):
    print(f"{'shape':>18} {'dtype':>5} | {'tilec':>7} {'Triton':>7} "
          f"{'cuBLAS':>7} TFLOP/s | {'/Triton':>7} {'/cuBLAS':>7} | "
          f"correct (t/T/c) | tilec compile ms/config")
    for r in rows:
        shape = f"{r['M']}x{r['N']}x{r['K']}"
        ok = "/".join("y" if r[p]["correct"] else "NO"
                      for p in ("tilec", "triton", "cublas"))
        print(f"{shape:>18} {r['dtype']:>5} | {r['tilec']['tflops']:7.1f} "
              f"{r['triton']['tflops']:7.1f} {r['cublas']['tflops']:7.1f}"
              f"         | {r['tilec_over_triton']:7.2f} "
              f"{r['tilec_over_cublas']:7.2f} | {ok:>15} | "
              f"{r['tilec']['compile_ms_median']:.0f}")


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot written")
        return
    labels = [f"{r['M']}x{r['N']}x{r['K']}\n{r['dtype']}" for r in rows]
    x = range(len(rows))
    width = 0.28
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.9), 4.5))
    for i, (peer, name) in enumerate((("tilec", "tilec"), ("triton", "Triton"),
                                      ("cublas", "cuBLAS"))):
        ax.bar([v + (i - 1) * width for v in x],
               [r[peer]["tflops"] for r in rows], width, label=name)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=7, rotation=45, ha="right")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"matmul on {torch.cuda.get_device_name()} (one process)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tilec", required=True, help="the tilec binary")
    parser.add_argument("--lib", required=True, help="libtilec_c.so")
    parser.add_argument("--out", default=".", help="where JSON and PNG go")
    parser.add_argument("--dtypes", default="f16,bf16,f32")
    parser.add_argument("--shapes", default="",
                        help="MxNxK;... (default: the issue's seven)")
    args = parser.parse_args()
    shapes = SHAPES if not args.shapes else [
        tuple(int(v) for v in s.split("x")) for s in args.shapes.split(";")]
    torch.cuda.init()
    os.environ["TILEC_LIBRARY"] = os.path.abspath(args.lib)
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "bench-gemm.json")

    def save(rows):
        result = {"device": torch.cuda.get_device_name(),
                  "torch": torch.__version__, "triton": triton.__version__,
                  "rows": rows}
        with open(json_path, "w") as f:
            json.dump(result, f, indent=1)

    rows = []
    with tempfile.TemporaryDirectory() as work:
        for dtype in args.dtypes.split(","):
            for m, n, k in shapes:
                rows.append(run_row(args.tilec, m, n, k, dtype, work))
                r = rows[-1]
                print(f"  {m}x{n}x{k} {dtype}: tilec {r['tilec']['tflops']:.1f}"
                      f" Triton {r['triton']['tflops']:.1f} cuBLAS "
                      f"{r['cublas']['tflops']:.1f} TFLOP/s", flush=True)
                save(rows)  # a run cut short keeps its rows
    print_table(rows)
    plot(rows, os.path.join(args.out, "bench-gemm.png"))
    bad = [r for r in rows if not all(r[p]["correct"]
                                      for p in ("tilec", "triton", "cublas"))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
