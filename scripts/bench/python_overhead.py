"""The Python side of tilec's sparse convolution, without a GPU.

First a stream's frame as the package runs it in inference: a new
tilec.SparseTensor, then one tilec.nn.SubMConv3d under torch.no_grad, with
every call into libtilec_c.so answered by a stand-in that does nothing (on
a stand-in runtime, tensors on the CPU), so that what is timed is the
package's Python: its checks, its objects, the output's allocation.

Then a training step of tilec.submanifold_conv3d: the library's forward and
backward replaced by stand-ins that only allocate their outputs (on the
CPU), so that what is timed is the package's checks, the torch.library
custom op's dispatch and its autograd. Next to it the same step through a
plain torch.autograd.Function over the same stand-ins, the floor of an
autograd wrapper. Prints medians in us.

    python3 scripts/bench/python_overhead.py [--voxels 64] [--channels 8]
        [--package DIR]   # another checkout's python/ (an A/B of the package)
"""

import argparse
import os
import sys
import threading
import time

import torch

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "python")
if "--package" in sys.argv[:-1]:
    PACKAGE = sys.argv[sys.argv.index("--package") + 1]
sys.path.insert(0, PACKAGE)
import tilec.nn  # noqa: E402
import tilec.sparse as sparse  # noqa: E402


class StandInLibrary:
    """libtilec_c.so's calls of a frame, each doing nothing."""

    class lib:  # noqa: N801 (the attribute the package calls through)
        @staticmethod
        def tilec_sparse_tensor_create(runtime, coords, voxels, handle):
            return 0

        @staticmethod
        def tilec_sparse_tensor_set_row_order(handle, order):
            return 0

        @staticmethod
        def tilec_sparse_tensor_destroy(handle):
            return 0

        @staticmethod
        def tilec_submanifold_conv3d_window(*arguments):
            return 0

    @staticmethod
    def check(status, function):
        assert status == 0, function


class StandInRuntime:
    """A tilec.Runtime of the CPU's tensors over StandInLibrary."""
    device, handle, lock, _lib = None, 1, threading.Lock(), StandInLibrary()


def frame_functions(voxels, channels):
    """(new tensor, one layer over an existing tensor) as the package runs
    them, the library and the device stood in for."""
    cpu = torch.device("cpu")
    sparse.coords_device = lambda function, coords: cpu
    sparse.current_stream = lambda device: 0
    runtime = StandInRuntime()
    coords = torch.zeros(voxels, 4, dtype=torch.int32)
    features = torch.randn(voxels, channels, dtype=torch.float16)
    layer = tilec.nn.SubMConv3d(channels, channels, 3, bias=False).half()
    layer._compiled_ahead = True
    tensor = sparse.SparseTensor(coords, features, runtime=runtime)

    def new_tensor():
        sparse.SparseTensor(coords, features, runtime=runtime)

    def one_layer():
        with torch.no_grad():
            layer(tensor)
    return new_tensor, one_layer


def stand_in_forward(tensor, weight, bias, dilation):
    return torch.empty(tensor.voxels, weight.shape[0])


def stand_in_backward(tensor, grad, weight, dilation, input_grad,
                      weight_grad, bias_grad, weight_grad_dtype=None):
    return (torch.empty_like(tensor.features) if input_grad else None,
            torch.empty(weight.shape) if weight_grad else None,
            torch.empty(weight.shape[0]) if bias_grad else None)


class Maps:
    """Stands in for tilec.sparse._Maps."""


def median_us(function, runs):
    for _ in range(runs // 10):
        function()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--voxels", type=int, default=64)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--package", default=PACKAGE,
                        help="the tilec package's folder (read at import)")
    args = parser.parse_args()
    print(f"tilec package: {os.path.abspath(os.path.dirname(sparse.__file__))}")
    new_tensor, one_layer = frame_functions(args.voxels, args.channels)
    for name, function in (("a new SparseTensor (library stood in)",
                            new_tensor),
                           ("one SubMConv3d, no grad (library stood in)",
                            one_layer)):
        print(f"{name:40} {median_us(function, args.runs * 10):8.1f} us")
    sparse.compile_layers_ahead = False  # the stand-in maps have no runtime
    sparse._forward = stand_in_forward
    sparse.submanifold_conv3d_backward = stand_in_backward
    n, c = args.voxels, args.channels
    maps = Maps()
    maps.coords = torch.zeros(n, 4, dtype=torch.int32)
    maps.device = torch.device("cpu")
    tensor = sparse.over(maps, torch.randn(n, c, requires_grad=True))
    tensor._token = sparse.register_maps(maps)
    weight = torch.randn(c, 3, 3, 3, c, requires_grad=True)
    bias = torch.randn(c, requires_grad=True)
    grad = torch.ones(n, c)

    class Plain(torch.autograd.Function):
        @staticmethod
        def forward(ctx, features, weight, bias):
            ctx.save_for_backward(features, weight)
            return stand_in_forward(tensor, weight, bias, [1, 1, 1])

        @staticmethod
        def backward(ctx, grad):
            features, weight = ctx.saved_tensors
            return stand_in_backward(tensor, grad, weight, [1, 1, 1], True,
                                     True, True)

    def custom_op_step():
        sparse.submanifold_conv3d(tensor, weight, bias).backward(grad)

    def custom_op_forward():
        with torch.no_grad():
            sparse.submanifold_conv3d(tensor, weight, bias)

    def plain_step():
        Plain.apply(tensor.features, weight, bias).backward(grad)

    for name, function in (("step through tilec.submanifold_conv3d",
                            custom_op_step),
                           ("forward alone, no grad", custom_op_forward),
                           ("step through a plain autograd.Function",
                            plain_step)):
        print(f"{name:40} {median_us(function, args.runs):8.1f} us")


if __name__ == "__main__":
    main()
