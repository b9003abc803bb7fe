"""The table and deploy-bench.json of scripts/deploy-bench.sh, from the JSON its
runs wrote: summarize.py WORK_DIR OUT_DIR PROCESSES."""
import glob, json, os, statistics, sys
work, out, processes = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(pattern):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(work, pattern)))]
def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "spread": max(values) / min(values) if min(values) > 0 else 0} if values else {}
result = {"processes": processes, "startup": {}, "conv_first_call": {}}
print("\nfirst matmul 4096^3 f16 of a fresh process, context ready -> kernel done, minus the kernel")
print("%-10s %12s %12s %12s %14s %14s" % ("from", "median us", "min us", "max us", "kernel med us", "kernel spread"))
for source in ("cache", "bundle", "embedded", "bare"):
    runs = load("startup-%s-*.json" % source)
    if not runs:
        continue
    overhead = spread([r["overhead_us"] for r in runs])
    kernel = spread([r["kernel_us"] for r in runs])
    steps = {name: statistics.median(r["steps_us"].get(name, 0) for r in runs) for name in runs[0]["steps_us"]}
    result["startup"][source] = {"overhead_us": overhead, "kernel_us": kernel, "steps_us": steps,
                                 "cubin_source": runs[0]["cubin_source"]}
    print("%-10s %12.1f %12.1f %12.1f %14.1f %13.3fx" % (source, overhead["median"], overhead["min"], overhead["max"], kernel["median"], kernel["spread"]))
    for name, us in steps.items():
        print("             %-34s %9.1f us" % (name, us))
if "embedded" in result["startup"] and "bare" in result["startup"]:
    tilec_us = result["startup"]["embedded"]["overhead_us"]["median"]
    bare_us = result["startup"]["bare"]["overhead_us"]["median"]
    result["startup"]["embedded_over_bare"] = tilec_us / bare_us if bare_us > 0 else 0
    print("embedded bundle / raw driver (medians): %.2fx (%.1f us over the floor)" % (tilec_us / bare_us, tilec_us - bare_us))
print("\nfirst call of a convolution layer in a fresh process (maps + kernels), and its kernel time")
print("%-10s %12s %12s %12s %14s %14s" % ("from", "median ms", "min ms", "max ms", "kernel med us", "kernel spread"))
for source in ("bundle", "cache"):
    runs = load("conv-%s-*.json" % source)
    if not runs:
        continue
    first = spread([r["calls"][0]["first_call_ms"] for r in runs])
    kernel = spread([r["calls"][0]["kernel_us"] for r in runs])
    result["conv_first_call"][source] = {"call": runs[0]["calls"][0]["call"], "first_call_ms": first, "kernel_us": kernel}
    print("%-10s %12.2f %12.2f %12.2f %14.1f %13.3fx" % (source, first["median"], first["min"], first["max"], kernel["median"], kernel["spread"]))
for name in ("replay-bundle", "replay-cache"):
    path = os.path.join(out, name + ".json")
    if os.path.exists(path):
        result[name] = json.load(open(path))
path = os.path.join(out, "warmup.json")
if os.path.exists(path):
    result["warmup"] = json.load(open(path))
result["pack"] = open(os.path.join(out, "pack.txt")).read().splitlines()[-2:] if os.path.exists(os.path.join(out, "pack.txt")) else []
print("\n" + "\n".join(result["pack"]))
json.dump(result, open(os.path.join(out, "deploy-bench.json"), "w"), indent=1)
