"""The tilec Python package against the build's libtilec_c.so, on a machine
with or without a GPU and PyTorch: the library is found and is the package's
version, the C API's statuses come back as the documented exceptions with
its messages, and arguments are checked before a pointer reaches the
library. The torch layer's tests run where torch is installed (a CPU build
is enough) and skip otherwise; on the GPU, scripts/pytorch-check.sh runs
the rest. Run by ctest (test/python/CMakeLists.txt), with TILEC_LIBRARY set.
"""

import ctypes
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import tilec
from tilec import _library

try:
    import torch
except ImportError:
    torch = None

NO_TORCH = "PyTorch is not installed here: scripts/pytorch-check.sh tests " \
           "the torch layer on the GPU machine"


def checkout():
    """The checkout: $TILEC_CHECKOUT (the wheel's tests run from a copy of
    this file), else this file's."""
    return pathlib.Path(os.environ.get("TILEC_CHECKOUT") or
                        pathlib.Path(__file__).resolve().parents[2])


def bench_script(name):
    """scripts/bench/<name> of the checkout."""
    return checkout() / "scripts" / "bench" / name


def gpu_present():
    try:
        tilec.Runtime()
    except tilec.DeviceError:
        return False
    return True


class LibraryTest(unittest.TestCase):
    def test_the_library_is_the_packages_version(self):
        self.assertEqual(tilec.library_version(), tilec.__version__)
        self.assertEqual(tilec.library_path(),
                         pathlib.Path(os.environ["TILEC_LIBRARY"]))

    def run_python(self, code, **environment):
        """`code` in a fresh interpreter (the library loads once a
        process), with `environment` over this one's."""
        env = dict(os.environ, **environment)
        return subprocess.run([sys.executable, "-c", code], env=env,
                              capture_output=True, text=True)

    def test_a_missing_library_names_where_it_looked(self):
        result = self.run_python(
            "import tilec\n"
            "try:\n"
            "    tilec.library_path()\n"
            "except tilec.LibraryNotFoundError as error:\n"
            "    print(error)\n",
            TILEC_LIBRARY="/nonexistent/libtilec_c.so")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("no libtilec_c.so at /nonexistent/libtilec_c.so",
                      result.stdout)
        self.assertIn("TILEC_LIBRARY", result.stdout)

    def refusal_of(self, arguments):
        """What _library.Library(arguments) raises in a fresh interpreter
        (it must raise LibraryNotFoundError)."""
        result = self.run_python(
            "import tilec\n"
            "from tilec import _library\n"
            "try:\n"
            f"    _library.Library({arguments})\n"
            "except tilec.LibraryNotFoundError as error:\n"
            "    print(error)\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_a_library_without_the_api_is_refused(self):
        # Any shared library that is not tilec's: it lacks the symbols.
        refusal = self.refusal_of("'libm.so.6'")
        self.assertIn("lacks tilec_last_error", refusal)
        self.assertIn("older than this package", refusal)

    def test_a_tool_binds_the_functions_it_names(self):
        # spconv_maps_ab.py loads libraries of other checkouts: it names
        # the functions it calls, and a library that has them loads
        # whatever else it lacks; one that lacks a named one is refused.
        from tilec import _library
        path = os.environ["TILEC_LIBRARY"]
        named = _library.Library(path, names=("tilec_version",
                                              "tilec_last_error"))
        self.assertEqual(named.version, tilec.__version__)
        self.assertIn("lacks tilec_version", self.refusal_of(
            "'libm.so.6', names=('tilec_version',)"))

    def test_import_needs_no_torch(self):
        # Hiding torch from a fresh interpreter: tilec imports, and the
        # parts that need torch say so when asked for.
        result = self.run_python(
            "import sys\n"
            "sys.modules['torch'] = None\n"
            "import tilec\n"
            "try:\n"
            "    tilec.SparseTensor\n"
            "except ImportError as error:\n"
            "    print(error)\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("tilec.SparseTensor needs PyTorch", result.stdout)


class StatusTest(unittest.TestCase):
    def test_statuses_are_their_exceptions(self):
        for status, cls in ((1, tilec.InvalidArgumentError),
                            (2, tilec.InvalidInputError),
                            (3, tilec.DeviceError), (4, tilec.CompileError),
                            (5, tilec.InternalError)):
            self.assertEqual(_library.ERRORS[status], cls)
            self.assertEqual(cls.status, status)
            self.assertTrue(issubclass(cls, tilec.Error))
        self.assertTrue(issubclass(tilec.InvalidArgumentError, ValueError))
        self.assertTrue(issubclass(tilec.InvalidInputError, ValueError))

    def test_a_bad_argument_carries_the_c_apis_message(self):
        lib = _library.library()
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            lib.scene("shell", 0, 1)
        self.assertEqual(str(caught.exception), "tilec_scene_shell: res must "
                         "be in [1, 4096] and batch at least 1")
        self.assertEqual(caught.exception.status, 1)
        self.assertEqual(caught.exception.function, "tilec_scene_shell")

    def test_a_row_order_needs_a_tensor(self):
        lib = _library.library()
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            lib.check(lib.lib.tilec_sparse_tensor_set_row_order(None, 0),
                      "tilec_sparse_tensor_set_row_order")
        self.assertEqual(str(caught.exception),
                         "tilec_sparse_tensor_set_row_order: tensor must not "
                         "be NULL")

    def test_a_success_clears_the_message(self):
        lib = _library.library()
        with self.assertRaises(tilec.InvalidArgumentError):
            lib.scene("shell", 0, 1)
        lib.scene("shell", 8, 1)
        self.assertEqual(lib.lib.tilec_last_error(), b"")


class KernelTest(unittest.TestCase):
    """tilec.Kernel: what is refused before the library sees it, and the C
    API's own refusals of a NULL kernel; scripts/bench-gemm.sh launches
    kernels through it on the GPU."""

    def test_a_compile_json_without_a_signature_is_refused(self):
        for metadata in ("not json", "{}", {"signature": [{"name": "x"}]},
                         b'{"signature": 3}'):
            with self.assertRaises(tilec.InvalidArgumentError) as caught:
                tilec.Kernel(b"", metadata)
            self.assertEqual(caught.exception.function, "Kernel")

    def test_the_c_api_refuses_a_null_kernel(self):
        lib = _library.library()
        for status in (lib.lib.tilec_kernel_set_int(None, 0, 1),
                       lib.lib.tilec_kernel_set_pointer(None, 0, None),
                       lib.lib.tilec_kernel_set_float(None, 0, 1.0),
                       lib.lib.tilec_kernel_launch(None, 1, 1, 1, None)):
            self.assertEqual(status, tilec.InvalidArgumentError.status)
        self.assertEqual(
            lib.lib.tilec_kernel_load(None, b"", 0, b"{}", None),
            tilec.InvalidArgumentError.status)

    def test_retiring_predictions_needs_a_runtime(self):
        lib = _library.library()
        retired = ctypes.c_size_t(7)
        self.assertEqual(
            lib.lib.tilec_retire_predictions(None, ctypes.byref(retired)),
            tilec.InvalidArgumentError.status)
        self.assertIn("runtime must not be NULL",
                      lib.lib.tilec_last_error().decode())

    def test_the_finalizer_calls_destroy_with_the_handle_alone(self):
        # What a collected Kernel (or sparse tensor) runs: the runtime rides
        # along to stay alive, and only the handle reaches
        # tilec_kernel_destroy (NULL: a no-op), whose ctypes signature
        # refuses anything more.
        lib = _library.library()
        _library.release(lib.lib.tilec_kernel_destroy, None, object())
        with self.assertRaises(ctypes.ArgumentError):
            lib.lib.tilec_kernel_destroy(None, object())

    def test_a_dumped_kernel_names_its_arguments(self):
        if not gpu_present():
            self.skipTest("no GPU: the kernel cannot be loaded")
        tool = pathlib.Path(os.environ["TILEC_LIBRARY"]).parent.parent / \
            "bin" / "tilec"
        with tempfile.TemporaryDirectory() as dump:
            subprocess.run([str(tool), "compile", "--kernel", "vector_add",
                            "--config", "BLOCK=1024", "--dump-dir", dump],
                           check=True, capture_output=True)
            kernel = tilec.Kernel.from_dump(dump, "vector_add")
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            kernel.set(x=1)
        self.assertIn("has no argument 'x'", str(caught.exception))
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            kernel.launch((1,))
        self.assertEqual(caught.exception.function, "tilec_kernel_launch")
        kernel.close()  # unloads through the C API, and only once
        kernel.close()


class SceneTest(unittest.TestCase):
    def test_shell_voxels_come_back_in_pythons_memory(self):
        words, n = _library.library().scene("shell", 64, 2)
        self.assertEqual(n, 2 * 15192)
        self.assertEqual(len(words), 4 * n)
        batches = set(words[0::4])
        self.assertEqual(batches, {0, 1})
        self.assertTrue(all(0 <= v < 64 for i, v in enumerate(words)
                            if i % 4))

    def test_lidar_scene_is_the_benchmarks(self):
        self.assertEqual(_library.library().scene("lidar", 1)[1], 106860)

    def test_an_empty_uniform_scene(self):
        words, n = _library.library().scene("uniform", 0, 16, 1, 1)
        self.assertEqual((len(words), n), (0, 0))


class RuntimeTest(unittest.TestCase):
    def test_without_a_gpu_the_runtime_says_so(self):
        if gpu_present():
            self.skipTest("a GPU is present")
        with self.assertRaises(tilec.DeviceError) as caught:
            tilec.Runtime()
        self.assertEqual(caught.exception.status, 3)
        self.assertTrue(str(caught.exception).startswith(
            "tilec_runtime_create_with_options: "))
        self.assertGreater(len(caught.exception.message), 0)

    def test_the_default_runtime_raises_each_time_without_a_gpu(self):
        if gpu_present():
            self.skipTest("a GPU is present")
        for _ in range(2):
            with self.assertRaises(tilec.DeviceError):
                tilec.default_runtime()

    def test_a_missing_bundle_is_named_before_the_device(self):
        with self.assertRaises(FileNotFoundError) as caught:
            tilec.Runtime(bundle="/nonexistent/net.bundle")
        self.assertEqual(caught.exception.filename, "/nonexistent/net.bundle")

    def test_a_bundle_reaches_the_c_api(self):
        # An existing file goes to tilec_runtime_create_with_options, which
        # checks the bundle before it touches the driver: a file that is no
        # bundle is refused the same way with or without a GPU.
        with tempfile.NamedTemporaryFile(suffix=".bundle") as file:
            file.write(b"not a bundle")
            file.flush()
            with self.assertRaises(tilec.InvalidArgumentError) as caught:
                tilec.Runtime(bundle=file.name)
        self.assertIn("not a tilec bundle", str(caught.exception))
        self.assertTrue(str(caught.exception).startswith(
            "tilec_runtime_create_with_options: "))

    def test_strict_without_a_bundle_is_refused(self):
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            tilec.Runtime(allow_jit=False)
        self.assertIn("needs a bundle", str(caught.exception))

    def test_a_device_is_an_ordinal_or_cuda_n(self):
        from tilec.runtime import device_index
        self.assertEqual(device_index(0), 0)
        self.assertEqual(device_index(3), 3)
        self.assertEqual(device_index("cuda:2"), 2)
        self.assertEqual(device_index("cuda"), 0)
        for bad in (-1, "cpu", "cuda:x", "cuda:-1", True, 1.0):
            with self.assertRaises(tilec.InvalidArgumentError) as caught:
                tilec.Runtime(device=bad)
            self.assertIn("device", str(caught.exception))

    def test_a_device_the_driver_lacks_is_refused(self):
        # No GPU: the driver's error; a GPU: no device 4096.
        with self.assertRaises(tilec.DeviceError) as caught:
            tilec.Runtime(device=4096)
        self.assertTrue(str(caught.exception).startswith(
            "tilec_runtime_create_with_options: "))
        if gpu_present():
            self.assertIn("CUDA device 4096 does not exist",
                          str(caught.exception))

    def test_set_default_runtime_takes_a_runtime(self):
        with self.assertRaises(tilec.InvalidArgumentError):
            tilec.set_default_runtime("bundle.bundle")


class HostArgumentCase(unittest.TestCase):
    """A shell of 16 and tilec.nn for tests of the arguments that are
    checked on the host, and the check that a call is refused."""

    def setUp(self):
        import tilec.nn
        self.nn = tilec.nn
        self.coords = tilec.scenes.shell(16)

    def assertRefused(self, text, call, *args, **keywords):
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            call(*args, **keywords)
        self.assertIn(text, str(caught.exception))


@unittest.skipIf(torch is None, NO_TORCH)
class TorchArgumentTest(HostArgumentCase):
    """What is checked before the library is called, on host tensors (the
    device is checked last, so every other mistake is found first)."""

    def test_scenes_are_int32_coordinates(self):
        self.assertEqual(self.coords.dtype, torch.int32)
        self.assertEqual(self.coords.shape[1], 4)
        self.assertEqual(tilec.scenes.lidar().shape, (106860, 4))
        self.assertEqual(tilec.scenes.uniform(0, 16).shape, (0, 4))

    def test_coordinates(self):
        coords = self.coords
        self.assertRefused("coords must be int32, got int64",
                           tilec.SparseTensor, coords.long())
        self.assertRefused("coords must be [N, 4] (batch, x, y, z), got "
                           "shape", tilec.SparseTensor, coords[:, :3])
        self.assertRefused("coords must be contiguous", tilec.SparseTensor,
                           coords.t().contiguous().t())
        self.assertRefused("coords must be a torch.Tensor",
                           tilec.SparseTensor, coords.tolist())
        self.assertRefused("coords must be on a CUDA device, got cpu", tilec.SparseTensor,
                           coords)

    def test_row_order(self):
        self.assertRefused("row_order must be one of auto, key, lean_groups, "
                           "got 'sorted'", tilec.SparseTensor, self.coords,
                           row_order="sorted")
        # A known order gets as far as the devices.
        self.assertRefused("coords must be on a CUDA device, got cpu", tilec.SparseTensor,
                           self.coords, row_order="key")

    def test_features(self):
        n = self.coords.shape[0]
        self.assertRefused("features has 3 rows for", tilec.SparseTensor,
                           self.coords, torch.zeros(3, 8))
        self.assertRefused("features must be float16 or bfloat16 or float32,"
                           " got float64", tilec.SparseTensor, self.coords,
                           torch.zeros(n, 8, dtype=torch.float64))
        self.assertRefused("features must be contiguous", tilec.SparseTensor,
                           self.coords, torch.zeros(8, n).t())
        # Well-formed features get as far as the devices, coords' first.
        self.assertRefused("coords must be on a CUDA device, got cpu", tilec.SparseTensor,
                           self.coords, torch.zeros(n, 8))

    def test_convolution_arguments(self):
        from tilec.sparse import check_conv_arguments
        conv = self.nn.SubMConv3d(16, 32)
        x = torch.zeros(10, 16)
        self.assertRefused("the features have 8 channels, the weight takes "
                           "16", check_conv_arguments, torch.zeros(10, 8),
                           conv.weight, conv.bias, 1, None)
        self.assertRefused("the features are float16 and the weight float32",
                           check_conv_arguments, x.half(), conv.weight,
                           conv.bias, 1, None)
        # Any odd extent per axis; an even one is refused.
        self.assertEqual(check_conv_arguments(
            x, torch.zeros(32, 3, 3, 1, 16), None, (1, 2, 1),
            torch.device("cpu")), ((3, 3, 1), (1, 2, 1)))
        self.assertRefused("weight must be [Co, Kx, Ky, Kz, Ci] with each K "
                           "odd", check_conv_arguments, x,
                           torch.zeros(32, 2, 2, 2, 16), None, 1, None)
        self.assertRefused("bias has 5 entries for 32 output channels",
                           check_conv_arguments, x, conv.weight,
                           torch.zeros(5), 1, None)
        self.assertRefused("dilation must be an int or three ints >= 1, "
                           "got 0",
                           check_conv_arguments, x, conv.weight, conv.bias,
                           0, torch.device("cuda", 1))
        self.assertRefused("weight must be on cuda:1, the device of the "
                           "tensor's coordinates, got cpu",
                           check_conv_arguments, x, conv.weight, conv.bias,
                           1, torch.device("cuda", 1))

    def test_module_arguments(self):
        SubMConv3d = self.nn.SubMConv3d
        self.assertRefused("groups must be 1", SubMConv3d, 8, 8, 3, groups=2)
        self.assertRefused("kernel_size must be odd", SubMConv3d, 8, 8, 4)
        self.assertRefused("kernel_size must be odd", SubMConv3d, 8, 8,
                           (3, 2, 3))
        self.assertRefused("dilation must be an int or three ints >= 1",
                           SubMConv3d, 8, 8, 3, dilation=0)
        # Cylinder3D's windows.
        flat = SubMConv3d(8, 16, (1, 3, 3), dilation=(1, 2, 2))
        self.assertEqual(tuple(flat.weight.shape), (16, 1, 3, 3, 8))
        self.assertEqual((flat.kernel_size, flat.dilation),
                         ((1, 3, 3), (1, 2, 2)))
        self.assertRefused("expected a tilec.SparseTensor",
                           SubMConv3d(8, 8), torch.zeros(4, 8))
        # spconv's arguments that mean nothing for a submanifold layer.
        layer = SubMConv3d(8, 16, [3, 3, 3], stride=1, padding=1,
                           dilation=(2, 2, 2), indice_key="subm1")
        self.assertEqual((layer.kernel_size, layer.dilation),
                         ((3, 3, 3), (2, 2, 2)))


@unittest.skipIf(torch is None, NO_TORCH)
class StridedArgumentTest(HostArgumentCase):
    """The strided and inverse layers' arguments and parameters, and the
    dense grid of a tensor, on the host."""

    def test_grid_and_batch_size(self):
        self.assertRefused("spatial_shape must be three ints from 1 to 65536",
                           tilec.SparseTensor, self.coords,
                           spatial_shape=(16, 16))
        self.assertRefused("spatial_shape must be three ints from 1 to 65536",
                           tilec.SparseTensor, self.coords,
                           spatial_shape=(16, 0, 16))
        self.assertRefused("batch_size must be an int from 1 to 65536",
                           tilec.SparseTensor, self.coords, batch_size=0)
        # Well-formed ones get as far as the devices.
        self.assertRefused("coords must be on a CUDA device, got cpu",
                           tilec.SparseTensor, self.coords,
                           spatial_shape=[16, 16, 16], batch_size=2)

    def test_dense_puts_each_voxel_in_its_cell(self):
        from tilec.sparse import dense_features
        coords = torch.tensor([[0, 1, 2, 3], [1, 0, 0, 0], [1, 3, 1, 2]],
                              dtype=torch.int32)
        features = torch.arange(6, dtype=torch.float32).reshape(3, 2)
        grid = dense_features(coords, features, (4, 3, 4), 2)
        self.assertEqual(tuple(grid.shape), (2, 2, 4, 3, 4))
        self.assertEqual(grid[0, :, 1, 2, 3].tolist(), [0.0, 1.0])
        self.assertEqual(grid[1, :, 3, 1, 2].tolist(), [4.0, 5.0])
        self.assertEqual(grid.abs().sum().item(), sum(range(6)))
        last = dense_features(coords, features, (4, 3, 4), 2,
                              channels_first=False)
        self.assertEqual(last[1, 0, 0, 0].tolist(), [2.0, 3.0])

    def test_layers_take_spconvs_arguments(self):
        nn = self.nn
        down = nn.SparseConv3d(16, 32, (3, 1, 1), stride=(2, 1, 1),
                               padding=(1, 0, 0), indice_key="down1")
        self.assertEqual(tuple(down.weight.shape), (32, 3, 1, 1, 16))
        self.assertEqual((down.stride, down.padding, down.dilation),
                         ((2, 1, 1), (1, 0, 0), (1, 1, 1)))
        up = nn.SparseInverseConv3d(32, 16, (3, 1, 1), indice_key="down1")
        self.assertEqual(tuple(up.weight.shape), (16, 3, 1, 1, 32))
        state = nn.SparseSequential(down, torch.nn.ReLU(), up).state_dict()
        self.assertEqual(sorted(state), ["0.bias", "0.weight", "2.bias",
                                         "2.weight"])
        bound = 1 / (16 * 3) ** 0.5
        self.assertLessEqual(down.weight.abs().max().item(), bound)
        self.assertRefused("groups must be 1", nn.SparseConv3d, 8, 8, 2,
                           groups=2)
        self.assertRefused("kernel_size must be 1 to 7 per axis",
                           nn.SparseConv3d, 8, 8, 9)
        self.assertRefused("stride must be an int or three ints >= 1",
                           nn.SparseConv3d, 8, 8, 2, stride=0)
        self.assertRefused("padding must be an int or three ints >= 0",
                           nn.SparseConv3d, 8, 8, 3, padding=(1, -1, 1))
        self.assertRefused("indice_key must name the SparseConv3d",
                           nn.SparseInverseConv3d, 8, 8, 2)
        self.assertRefused("expected a tilec.SparseTensor", down,
                           torch.zeros(4, 16))

    def test_strided_weight_checks(self):
        from tilec.strided import check_strided_weight
        x = torch.zeros(10, 16)
        self.assertRefused("each K from 1 to 7", check_strided_weight,
                           "sparse_conv3d", x, torch.zeros(8, 8, 1, 1, 16),
                           None, None)
        self.assertRefused("the features have 16 channels, the weight takes "
                           "8", check_strided_weight, "sparse_conv3d", x,
                           torch.zeros(8, 2, 2, 2, 8), None, None)
        self.assertRefused("bias has 3 entries for 8 output channels",
                           check_strided_weight, "sparse_conv3d", x,
                           torch.zeros(8, 2, 2, 2, 16), torch.zeros(3), None)
        self.assertEqual(check_strided_weight(
            "sparse_conv3d", x, torch.zeros(8, 2, 3, 1, 16), None,
            torch.device("cpu")), (2, 3, 1))


class CheckDocsTest(unittest.TestCase):
    """scripts/check-docs.py on a page of its own: a differing output fails
    the check, --update writes what the command printed, and --gpu runs the
    GPU transcripts (what a GPU machine regenerates) and nothing else."""

    def run_check(self, page, *options):
        script = checkout() / "scripts" / "check-docs.py"
        if not script.exists():
            self.skipTest(f"no checkout here ({script} is missing)")
        return subprocess.run([sys.executable, str(script), *options,
                               str(page)], capture_output=True, text=True,
                              check=False)

    def test_update_writes_what_the_tools_print(self):
        with tempfile.TemporaryDirectory() as folder:
            page = pathlib.Path(folder) / "page.md"
            page.write_text(
                "<!-- check-docs -->\n```console\n$ echo checked\nold\n```\n"
                "\n<!-- gpu-transcript: recorded on a GPU -->\n```\n"
                "$ echo on-the-gpu\nstale\n```\n")
            run = self.run_check(page)
            self.assertEqual(run.returncode, 1, run.stdout)
            self.assertIn("1 commands checked, 1 differ", run.stdout)
            run = self.run_check(page, "--update")
            self.assertEqual(run.returncode, 0, run.stdout)
            self.assertIn("$ echo checked\nchecked\n```", page.read_text())
            # The GPU transcript is another run's business.
            self.assertIn("stale", page.read_text())
            run = self.run_check(page, "--gpu", "--update")
            self.assertEqual(run.returncode, 0, run.stdout)
            self.assertIn("$ echo on-the-gpu\non-the-gpu\n```",
                          page.read_text())
            run = self.run_check(page, "--gpu")
            self.assertIn("1 commands checked, 0 differ", run.stdout)
            run = self.run_check(page)
            self.assertIn("1 commands checked, 0 differ", run.stdout)

    def test_a_silent_failure_fails_the_check(self):
        with tempfile.TemporaryDirectory() as folder:
            page = pathlib.Path(folder) / "page.md"
            # A comment after a command, a failure that shows its error
            # (as the pages' error demos do), one that shows nothing.
            page.write_text(
                "<!-- check-docs -->\n```console\n$ echo shown  # why\n"
                "shown\n$ ls /no-such-folder-here > /dev/null 2>&1 || "
                "echo refused\nrefused\n$ false\n```\n")
            run = self.run_check(page)
            self.assertEqual(run.returncode, 1, run.stdout)
            self.assertIn("`false` exited 1 and printed nothing", run.stdout)
            self.assertIn("3 commands checked, 1 differ", run.stdout)

    def test_links_name_a_file_and_a_heading(self):
        with tempfile.TemporaryDirectory() as folder:
            page = pathlib.Path(folder) / "page.md"
            (pathlib.Path(folder) / "other.md").write_text(
                "# Other\n\n## `tilec bench spconv --train`\n\n## Twice\n\n"
                "## Twice\n\n```\n# not a heading\n```\n")
            page.write_text(
                "# Page\n\n[ok](other.md#tilec-bench-spconv---train), "
                "[ok](other.md#twice-1), [ok](#page), "
                "[web](https://example.com/x.md#y)\n"
                "`[code](missing.md)` and\n\n```\n[fenced](missing.md)\n```\n"
                "[gone](missing.md)\n[bad](other.md#not-a-heading)\n"
                "[fence](other.md#not-a-heading-1)\n")
            run = self.run_check(page, "--links-only")
            self.assertEqual(run.returncode, 1, run.stdout)
            self.assertIn("page.md:9: broken link (missing.md)", run.stdout)
            self.assertIn("page.md:10: broken link (other.md#not-a-heading)",
                          run.stdout)
            self.assertIn("page.md:11: broken link "
                          "(other.md#not-a-heading-1)", run.stdout)
            self.assertIn("3 broken", run.stdout)


@unittest.skipIf(torch is None, NO_TORCH)
class CompileTest(unittest.TestCase):
    """torch.compile traces SubMConv3d (the tilec::submanifold_conv3d custom
    op) into one graph with no break, and a tensor of a new size takes the
    compiled graph instead of a recompile per tensor. The library's two calls
    are replaced by a dense stand-in here (no GPU): what is checked is the
    tracing, the op's fake shapes and its autograd registration."""

    def setUp(self):
        import tilec.nn
        import tilec.sparse as sparse
        self.nn, self.sparse = tilec.nn, sparse
        self.saved = sparse._forward, sparse.submanifold_conv3d_backward

        def forward(tensor, weight, bias, dilation):
            w = weight.sum(dim=(1, 2, 3))  # [Co, Ci]
            y = tensor.features @ w.t()
            return y if bias is None else y + bias

        def backward(tensor, grad, weight, dilation, input_grad, weight_grad,
                     bias_grad, weight_grad_dtype=None):
            w = weight.sum(dim=(1, 2, 3))
            dx = grad @ w if input_grad else None
            dw = (grad.t() @ tensor.features)[:, None, None, None, :] \
                .expand(weight.shape).to(weight_grad_dtype or weight.dtype) \
                .contiguous() if weight_grad else None
            db = grad.sum(0).to(weight_grad_dtype or weight.dtype) \
                if bias_grad else None
            return dx, dw, db
        sparse._forward, sparse.submanifold_conv3d_backward = forward, backward
        # The stand-in maps have no runtime to queue compiles on.
        sparse.compile_layers_ahead = False

    def tearDown(self):
        self.sparse._forward, self.sparse.submanifold_conv3d_backward = \
            self.saved
        self.sparse.compile_layers_ahead = True

    class Maps:
        """Stands in for tilec.sparse._Maps (one class: dynamo guards on
        the maps' type, not on the object)."""

    def tensor(self, n):
        maps = self.Maps()
        maps.coords = torch.zeros(n, 4, dtype=torch.int32)
        maps.device = torch.device("cpu")
        features = torch.randn(n, 4, requires_grad=True)
        tensor = self.sparse.over(maps, features)
        tensor._token = self.sparse.register_maps(maps)
        return tensor

    def test_one_graph_and_the_eager_gradients(self):
        import torch._dynamo
        torch._dynamo.reset()
        nn = self.nn
        torch.manual_seed(0)
        net = nn.SparseSequential(nn.SubMConv3d(4, 8), torch.nn.ReLU(),
                                  nn.SubMConv3d(8, 2))
        compiled = torch.compile(net, fullgraph=True, backend="aot_eager")
        for n in (100, 130, 170, 210):
            x = self.tensor(n)
            y = compiled(x).features
            y.sum().backward()
            got = (y.detach(), x.features.grad, net[0].weight.grad.clone())
            x.features.grad = None
            net.zero_grad()
            eager = net(x).features
            eager.sum().backward()
            self.assertTrue(torch.allclose(got[0], eager.detach()))
            self.assertTrue(torch.allclose(got[1], x.features.grad))
            self.assertTrue(torch.allclose(got[2], net[0].weight.grad))
            net.zero_grad()
        graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
        # The first size's graph and one with the size dynamic.
        self.assertLessEqual(graphs, 2)

    def test_the_eager_path_is_the_ops(self):
        """Outside torch.compile submanifold_conv3d runs _EagerConv, the
        op's body and autograd without torch.library's dispatch: the same
        output and gradients as the op, for every combination of the
        gradients asked for, with a bias or none, in the features' dtype
        or another (autocast's)."""
        import itertools
        sparse = self.sparse
        self.assertIs(type(sparse.submanifold_conv3d(
            self.tensor(5), torch.randn(3, 3, 3, 3, 4), None).grad_fn),
            sparse._EagerConv._backward_cls)
        for need_x, need_w, has_bias, dtype in itertools.product(
                (False, True), (False, True), (False, True),
                (None, torch.float64)):
            runs = []
            for conv in (sparse._conv_op, sparse._EagerConv.apply):
                torch.manual_seed(7)
                features = torch.randn(20, 4, requires_grad=need_x)
                weight = torch.randn(8, 3, 3, 3, 4, requires_grad=need_w)
                bias = torch.randn(8, requires_grad=True) if has_bias \
                    else None
                token = self.tensor(20)._token
                y = conv(features, weight, bias, token, [1, 1, 1], dtype)
                if y.requires_grad:
                    y.backward(torch.ones_like(y))
                runs.append((y.detach(), [None if t is None or t.grad is None
                                          else t.grad
                                          for t in (features, weight, bias)]))
            (y_op, grads_op), (y_eager, grads_eager) = runs
            self.assertTrue(torch.equal(y_op, y_eager))
            for got, want in zip(grads_eager, grads_op):
                self.assertEqual(got is None, want is None)
                if want is not None:
                    self.assertEqual(got.dtype, want.dtype)
                    self.assertTrue(torch.equal(got, want))

    def test_inference_runs_the_body_alone(self):
        """Where nothing is to be differentiated (torch.no_grad, or no
        input that requires grad) submanifold_conv3d runs the op's body
        without autograd's Function: no grad_fn, and the output the
        Function gives."""
        sparse = self.sparse
        calls = []
        body = sparse._conv_over

        def counted(*args):
            calls.append(args)
            return body(*args)
        torch.manual_seed(3)
        tensor = self.tensor(20)
        weight = torch.randn(8, 3, 3, 3, 4, requires_grad=True)
        with_grad = sparse.submanifold_conv3d(tensor, weight)
        self.assertIsNotNone(with_grad.grad_fn)
        sparse._conv_over = counted
        try:
            with torch.no_grad():
                inferred = sparse.submanifold_conv3d(tensor, weight)
            plain = sparse.over(tensor._maps, tensor.features.detach())
            plain._token = tensor._token
            frozen = sparse.submanifold_conv3d(plain, weight.detach())
        finally:
            sparse._conv_over = body
        self.assertEqual(len(calls), 2)
        for y in (inferred, frozen):
            self.assertIsNone(y.grad_fn)
            self.assertTrue(torch.equal(y, with_grad.detach()))

    def test_backward_after_the_tensor_is_gone(self):
        """The maps outlive the last SparseTensor over them while autograd
        holds the call (the documented loop: net(SparseTensor(...)) then
        backward), and gradients not asked for (no bias, features without
        grad) come back as distinct empty tensors."""
        import gc
        nn = self.nn
        net = nn.SparseSequential(nn.SubMConv3d(4, 8, bias=False),
                                  torch.nn.ReLU(), nn.SubMConv3d(8, 2))
        x = self.tensor(50)
        x = x.replace_feature(x.features.detach())  # no grad for the input
        loss = net(x).features.sum()
        del x
        gc.collect()
        loss.backward()
        self.assertIsNotNone(net[0].weight.grad)
        self.assertIsNotNone(net[2].bias.grad)
        # Frozen weight, no bias, no input grad: nothing at all is asked of
        # the first layer.
        frozen = nn.SubMConv3d(4, 8, bias=False).requires_grad_(False)
        y = frozen(self.tensor(30).replace_feature(torch.randn(30, 4)))
        self.assertFalse(y.features.requires_grad)

    def test_gradient_checkpointing_gives_the_same_gradients(self):
        """torch.utils.checkpoint over tilec layers (non-reentrant and
        reentrant): the forward runs again inside the backward over the
        same maps, and every gradient equals the plain run's."""
        from torch.utils.checkpoint import checkpoint
        nn = self.nn
        torch.manual_seed(11)
        net = nn.SparseSequential(nn.SubMConv3d(4, 8), torch.nn.ReLU(),
                                  nn.SubMConv3d(8, 2))
        x = self.tensor(40)
        features = x.features.detach()

        def run(f):
            return net(x.replace_feature(f)).features
        grads = []
        for how in ("plain", False, True):
            net.zero_grad()
            f = features.clone().requires_grad_()
            y = run(f) if how == "plain" else \
                checkpoint(run, f, use_reentrant=how)
            y.pow(2).sum().backward()
            grads.append([f.grad] + [p.grad.clone() for p in net.parameters()])
        for got in grads[1:]:
            for a, b in zip(got, grads[0]):
                self.assertTrue(torch.equal(a, b))

    def test_the_op_checks(self):
        """torch.library.opcheck of the backward op, every combination of
        the gradients asked for."""
        import itertools
        x = self.tensor(20)
        weight = torch.randn(8, 3, 3, 3, 4)
        grad = torch.randn(20, 8)
        for need in itertools.product((False, True), repeat=3):
            torch.library.opcheck(
                torch.ops.tilec.submanifold_conv3d_backward,
                (x.features.detach(), weight, grad, x._token, [1, 1, 1],
                 None, *need, False),
                test_utils=("test_schema", "test_faketensor"))


class SceneTableTest(unittest.TestCase):
    """spconv_frames.scene_table: a stream's timed frames per scene, each
    peer's median and range, and the best peer over tilec frame by frame
    (warm-up frames and frames a peer missed left out)."""

    def test_per_scene_medians_and_ratios(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "spconv_frames", bench_script("spconv_frames.py"))
        frames = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(frames)

        def frame(kind, scene, n, tilec, flexgemm, spconv=None):
            ms = {"tilec": tilec, "flexgemm": flexgemm}
            if spconv is not None:
                ms["spconv_triton"] = spconv
            return {"kind": kind, "scene": scene, "N": n, "ms": ms}
        stream = {"config": "L1/C64", "frames": [
            frame("warmup", "street", 10, 100.0, 1.0),
            frame("timed", "street", 20, 1.0, 2.0, 4.0),
            frame("timed", "shell256", 300, 2.0, 1.0, 3.0),
            frame("timed", "street", 30, 2.0, 1.0),
            frame("timed", "street", 25, 4.0, 3.0)]}
        header, lines = frames.scene_table([stream, {"config": "L8/C128",
                                                     "skipped": "budget"}])
        self.assertEqual(len(header), 6)
        self.assertEqual(lines, [
            ["L1/C64 street", "20-30", "2.000 (1.000-4.000)",
             "2.000 (1.000-3.000)", "4.000 (4.000-4.000)", "0.50-2.00"],
            ["L1/C64 shell256", "300-300", "2.000 (2.000-2.000)",
             "1.000 (1.000-1.000)", "3.000 (3.000-3.000)", "0.50-0.50"]])


class TuningSummaryTest(unittest.TestCase):
    """spconv_frames.tuning_summary, which the first-call benchmarks print
    from tilec's autotune cache: the counts, and the tunings' wall times
    where the entries keep them."""

    def test_counts_and_wall_times(self):
        import importlib.util
        import json
        spec = importlib.util.spec_from_file_location(
            "spconv_frames", bench_script("spconv_frames.py"))
        frames = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(frames)
        cache = {"NVIDIA H200": {"sparse_conv_fwd": {
            "tuned": {"config": "a", "tuned_at": "2026-12-05T10:00:00Z",
                      "timings": [
                          {"status": "ok", "reps": 10, "median_us": 20.0,
                           "compile_ms": 100.0},
                          {"status": "screened", "reps": 10,
                           "median_us": 30.0, "compile_ms": 120.0}],
                      "tuning": {"started_unix_ms": 1000.0,
                                 "total_ms": 300.0, "compile_ms": 220.0,
                                 "inputs_ms": 1.0, "benchmark_ms": 90.0}},
            "only": {"config": "b", "timings": [{"status": "only"}],
                     "tuning": {"started_unix_ms": 1500.0,
                                "total_ms": 200.0, "compile_ms": 150.0}}}}}
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "at.json")
            with open(path, "w") as f:
                json.dump(cache, f)
            summary = frames.tuning_summary(path)
        self.assertEqual(summary["keys_tuned"], 1)
        self.assertEqual(summary["keys_adopted"], 1)
        self.assertEqual(summary["candidates"],
                         {"ok": 1, "screened": 1, "only": 1})
        self.assertAlmostEqual(summary["benchmark_ms"], 0.5)
        self.assertEqual(summary["tuning_walls_ms"],
                         {"total_ms": 500.0, "compile_ms": 370.0,
                          "benchmark_ms": 90.0, "span_ms": 700.0})
        self.assertIn("from the first start to the last end 0.70 s",
                      summary["text"])


@unittest.skipIf(torch is None, NO_TORCH)
class CompileAheadTest(unittest.TestCase):
    """tilec.nn.compile_ahead's layer plans as the C API receives them: a
    stand-in library records them (no GPU here), then the real library
    refuses a null runtime."""

    class Recorder:
        """Stands in for the loaded library: records each plan array."""

        def __init__(self):
            self.plans, self.lib = [], self

        def tilec_compile_layers_ahead(self, handle, array, count, queued):
            self.plans.append([
                (p.voxels, p.ci, p.co, tuple(p.kernel), tuple(p.dilation),
                 p.dtype, p.has_bias, p.allow_tf32, p.strided,
                 p.input_gradient, p.weight_gradient, tuple(p.stride),
                 tuple(p.padding))
                for p in array[:count]])
            queued._obj.value = 7 * count
            return 0

        def check(self, status, function):
            assert status == 0, function

    def setUp(self):
        import threading
        import tilec.nn
        import tilec.sparse as sparse
        self.nn, self.sparse = tilec.nn, sparse
        self.library = self.Recorder()

        class Runtime:
            pass
        runtime = Runtime()
        runtime._lib, runtime.handle = self.library, None
        runtime.lock = threading.Lock()
        self.runtime = runtime
        self.saved = sparse._forward
        sparse._forward = lambda tensor, weight, bias, dilation: \
            tensor.features @ weight.sum(dim=(1, 2, 3)).t()

    def tearDown(self):
        self.sparse._forward = self.saved

    def tensor(self, n, channels=4, dtype=None):
        maps = CompileTest.Maps()
        maps.coords = torch.zeros(n, 4, dtype=torch.int32)
        maps.device = torch.device("cpu")
        maps.runtime = self.runtime
        tensor = self.sparse.over(maps, torch.randn(n, channels, dtype=dtype))
        tensor._token = self.sparse.register_maps(maps)
        return tensor

    def test_a_networks_layers_in_module_order(self):
        nn = self.nn
        net = nn.SparseSequential(
            nn.SubMConv3d(4, 8, (3, 1, 3), dilation=(1, 1, 2), bias=False),
            torch.nn.ReLU(),
            nn.SparseConv3d(8, 16, 2, stride=2, indice_key="down"),
            nn.SparseInverseConv3d(16, 8, 2, indice_key="down"))
        net[0].weight.requires_grad_(False)
        queued = nn.compile_ahead(net, self.tensor(500), training=True)
        self.assertEqual(queued, 21)
        f16, f32 = 0, 2
        none = ((0, 0, 0), (0, 0, 0))
        # The downsampling layer gives its stride and padding (its maps'
        # build); the inverse one reuses them.
        self.assertEqual(self.library.plans, [[
            (500, 4, 8, (3, 1, 3), (1, 1, 2), f32, 0, 0, 0, 0, 0) + none,
            (500, 8, 16, (2, 2, 2), (1, 1, 1), f32, 1, 0, 1, 1, 1,
             (2, 2, 2), (0, 0, 0)),
            (500, 16, 8, (2, 2, 2), (1, 1, 1), f32, 1, 0, 1, 1, 1) + none]])
        # Inference in f16: the forwards alone.
        self.library.plans.clear()
        nn.compile_ahead([net[2]], self.tensor(9, 8, torch.float16),
                         training=False)
        self.assertEqual(self.library.plans, [[
            (9, 8, 16, (2, 2, 2), (1, 1, 1), f16, 1, 0, 1, 0, 0,
             (2, 2, 2), (0, 0, 0))]])
        self.assertRaises(tilec.InvalidArgumentError, nn.compile_ahead,
                          net, self.tensor(9, 4, torch.float64))
        self.assertRaises(tilec.InvalidArgumentError, nn.compile_ahead,
                          [torch.nn.ReLU()], self.tensor(9))

    def test_the_first_forward_plans_the_layers_not_run(self):
        """The layer that runs first, then every layer made so far that has
        not run, in the order made; a second forward plans nothing."""
        import gc
        nn = self.nn
        ran = nn.SubMConv3d(4, 4)
        ran._compiled_ahead = True
        net = nn.SparseSequential(nn.SubMConv3d(4, 8), nn.SubMConv3d(8, 2))
        gc.collect()
        with torch.no_grad():
            net(self.tensor(64))
        self.assertEqual(len(self.library.plans), 1)
        plan = [(p[1], p[2]) for p in self.library.plans[0]]
        # The layer that ran first; the other after any older layer that
        # has not run (none here, unless another test kept one alive).
        self.assertEqual(plan[0], (4, 8))
        self.assertIn((8, 2), plan)
        self.assertNotIn((4, 4), plan)
        self.assertEqual({(p[9], p[10]) for p in self.library.plans[0]},
                         {(0, 0)})
        with torch.no_grad():
            net(self.tensor(64))
            ran(self.tensor(64))
        self.assertEqual(len(self.library.plans), 1)

    def test_a_recorded_call_plans_its_backward_once_per_shape(self):
        """A functional call that autograd records queues its forward's and
        backward's compiles the first time its shape comes, and not again
        for a new tensor of the same bucket; a new bucket plans again."""
        sparse = self.sparse
        sparse._PLANNED_CALLS.clear()
        weight = torch.randn(8, 3, 3, 3, 4, requires_grad=True)

        def run(n):
            x = self.tensor(n)
            x = x.replace_feature(x.features.requires_grad_())
            sparse.submanifold_conv3d(x, weight, None, (1, 2, 1))
        run(100)
        run(120)
        f32 = 2
        self.assertEqual(self.library.plans, [
            [(100, 4, 8, (3, 3, 3), (1, 2, 1), f32, 0, 0, 0, 1, 1,
              (0, 0, 0), (0, 0, 0))]])
        run(300)
        self.assertEqual(len(self.library.plans), 2)
        with torch.no_grad():
            run(5000)
        self.assertEqual(len(self.library.plans), 2)

    def test_the_library_checks_the_plans_then_the_runtime(self):
        self.runtime._lib = _library.library()
        nn = self.nn
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            nn.compile_ahead([nn.SubMConv3d(4, 8), nn.SubMConv3d(8, 0)],
                             self.tensor(9))
        self.assertEqual(str(caught.exception), "tilec_compile_layers_ahead: "
                         "layer plan 1: ci and co must be positive, got 8 "
                         "and 0")
        with self.assertRaises(tilec.InvalidArgumentError) as caught:
            nn.compile_ahead([nn.SubMConv3d(4, 8)], self.tensor(9))
        self.assertEqual(str(caught.exception), "tilec_compile_layers_ahead: "
                         "runtime must not be NULL")

    def test_a_refused_plan_warns_and_the_forward_goes_on(self):
        import gc
        import warnings
        self.runtime._lib = _library.library()
        gc.collect()
        layer = self.nn.SubMConv3d(4, 8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with torch.no_grad():
                y = layer(self.tensor(16))
                layer(self.tensor(16))
        self.assertEqual(y.features.shape, (16, 8))
        self.assertEqual(len(caught), 1)
        self.assertIn("tilec: the compiles were not queued ahead: "
                      "tilec_compile_layers_ahead: runtime must not be NULL",
                      str(caught[0].message))


@unittest.skipIf(torch is None, NO_TORCH)
class StridedCheckScriptTest(unittest.TestCase):
    """The float64 reference of scripts/bench/spconv_strided_check.py (dense
    conv3d and conv_transpose3d on the active cells) against a loop over
    the definition, on the CPU."""

    def test_dense_reference_is_the_definition(self):
        script = bench_script("spconv_strided_check.py")
        if not script.exists():
            self.skipTest(f"no checkout here ({script} is missing)")
        run = subprocess.run([sys.executable, str(script), "--self-test"],
                             capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual(run.stdout.count(" ok"), 4, run.stdout)

    def test_network_reference_layers_are_the_dense_ones(self):
        """scripts/bench/spunet.py's float64 layers (the network bench's
        reference) against the same dense reference, and its network's
        shapes."""
        script = bench_script("spunet.py")
        if not script.exists():
            self.skipTest(f"no checkout here ({script} is missing)")
        run = subprocess.run([sys.executable, str(script), "--self-test"],
                             capture_output=True, text=True, check=False,
                             cwd=script.parent)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual(run.stdout.count(" ok"), 5, run.stdout)


@unittest.skipIf(torch is None, NO_TORCH)
class PythonOverheadScriptTest(unittest.TestCase):
    """scripts/bench/python_overhead.py runs the package's inference frame
    over its stand-in library and its training step, and names the package
    it timed."""

    def test_every_measurement_prints(self):
        script = bench_script("python_overhead.py")
        if not script.exists():
            self.skipTest(f"no checkout here ({script} is missing)")
        run = subprocess.run([sys.executable, str(script), "--runs", "5"],
                             capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("tilec package: ", run.stdout)
        self.assertEqual(run.stdout.count(" us\n"), 5, run.stdout)


@unittest.skipIf(torch is None, NO_TORCH)
class CheckpointTest(unittest.TestCase):
    """A state_dict of spconv's layout loads as it is."""

    def setUp(self):
        import tilec.nn
        self.nn = tilec.nn

    def network(self):
        nn = self.nn
        return nn.SparseSequential(nn.SubMConv3d(32, 64, 3), torch.nn.ReLU(),
                                   nn.SubMConv3d(64, 16, 5, bias=False))

    def test_parameters_are_krsc(self):
        state = self.network().state_dict()
        self.assertEqual({k: tuple(v.shape) for k, v in state.items()},
                         {"0.weight": (64, 3, 3, 3, 32), "0.bias": (64,),
                          "2.weight": (16, 5, 5, 5, 64)})

    def test_spconv_initialization_bounds(self):
        conv = self.nn.SubMConv3d(32, 64, 3)
        bound = 1 / (32 * 27) ** 0.5
        self.assertLessEqual(conv.weight.abs().max().item(), bound)
        self.assertGreater(conv.weight.abs().max().item(), 0.9 * bound)

    def test_pointwise_layers_read_the_weight_as_spconv(self):
        """spconv's 1 x 1 x 1 layers compute x @ weight.view(Ci, Co) (a raw
        reinterpretation of [Co, 1, 1, 1, Ci]); tilec.nn's pointwise layers
        take the same function of the same state_dict."""
        from tilec.nn import spconv_pointwise_weight
        weight = torch.randn(5, 1, 1, 1, 3)
        x = torch.randn(7, 3)
        ours = spconv_pointwise_weight(weight)[:, 0, 0, 0, :]  # [Co, Ci]
        self.assertTrue(torch.allclose(x @ ours.t(),
                                       x @ weight.view(3, 5)))
        self.assertTrue(spconv_pointwise_weight(weight).is_contiguous())

    def test_round_trip_through_a_state_dict(self):
        a, b = self.network(), self.network()
        b.load_state_dict(a.state_dict())
        for (ka, va), (kb, vb) in zip(a.state_dict().items(),
                                      b.state_dict().items()):
            self.assertEqual(ka, kb)
            self.assertTrue(torch.equal(va, vb))

    def test_spconv_triton_loads_ours_and_we_load_its(self):
        try:
            import spconv_triton.pytorch as spconv
        except ImportError as error:
            self.skipTest(f"spconv-Triton is not installed ({error})")
        theirs = spconv.SparseSequential(
            spconv.SubMConv3d(32, 64, 3, indice_key="a"), torch.nn.ReLU(),
            spconv.SubMConv3d(64, 16, 5, bias=False, indice_key="b"))
        ours = self.network()
        theirs.load_state_dict(ours.state_dict())
        fresh = self.network()
        fresh.load_state_dict(theirs.state_dict())
        for key, value in ours.state_dict().items():
            self.assertTrue(torch.equal(fresh.state_dict()[key], value), key)


if __name__ == "__main__":
    unittest.main()
