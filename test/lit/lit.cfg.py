# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TILEC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".ttir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilec_obj_root, "test", "lit")

# tilec compile caches by default; tests must not read or fill the user's
# cache.
config.environment["TILEC_CACHE_DIR"] = os.path.join(config.test_exec_root, "tilec-cache")

config.substitutions.append(("%kernels", os.path.join(config.tilec_src_root, "kernels")))
config.substitutions.append(("%runtime_include", os.path.join(config.tilec_src_root, "runtime", "tuning", "include")))
config.substitutions.append(("%contract_include", os.path.join(config.tilec_src_root, "contract", "include")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    [ToolSubst("tilec-hooked", unresolved="fatal"),
     ToolSubst("tilec-opt", unresolved="fatal"),
     ToolSubst("tilec-kernel", unresolved="fatal"),
     ToolSubst("tilec", unresolved="fatal")],
    [config.tilec_tools_dir, config.llvm_tools_dir])

# cuobjdump (CUDA toolkit, or PyPI's nvidia-cuda-cuobjdump installed by
# scripts/install-deps.sh) lists the kernels of a cubin.
import shutil
cuobjdump_candidates = [os.environ.get("TILEC_CUOBJDUMP", ""),
                        "/usr/local/cuda/bin/cuobjdump",
                        os.path.expanduser("~/.cache/tilec-tools/nvidia/cu13/bin/cuobjdump"),
                        shutil.which("cuobjdump") or ""]
cuobjdump = next((c for c in cuobjdump_candidates if c and os.access(c, os.X_OK)), None)
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
# cuobjdump -sass runs nvdisasm, which it looks for on PATH or NVDISASM_PATH.
nvdisasm_candidates = [os.environ.get("TILEC_NVDISASM", ""),
                       "/usr/local/cuda/bin/nvdisasm",
                       os.path.expanduser("~/.cache/tilec-tools-nvdisasm/nvidia/cu13/bin/nvdisasm"),
                       shutil.which("nvdisasm") or ""]
nvdisasm = next((c for c in nvdisasm_candidates if c and os.access(c, os.X_OK)), None)
if cuobjdump and nvdisasm:
    config.available_features.add("sass")
    config.environment["NVDISASM_PATH"] = os.path.dirname(nvdisasm)
