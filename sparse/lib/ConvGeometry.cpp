//===- ConvGeometry.cpp - A convolution's kernel, stride, padding, dilation
//===//

#include "tilec/sparse/ConvGeometry.h"

namespace tilec::sparse {
namespace {

std::string axisName(int axis) { return std::string(1, "xyz"[axis]); }

std::string joined(const std::array<int, 3> &values) {
  return std::to_string(values[0]) + "x" + std::to_string(values[1]) + "x" +
         std::to_string(values[2]);
}

} // namespace

int64_t ConvGeometry::offsets() const {
  return int64_t(kernel[0]) * kernel[1] * kernel[2];
}

Result<std::array<int64_t, 3>>
ConvGeometry::outputShape(const std::array<int64_t, 3> &inputShape) const {
  std::array<int64_t, 3> shape{};
  for (int axis = 0; axis < 3; ++axis) {
    if (kernel[axis] < 1 || stride[axis] < 1 || dilation[axis] < 1 ||
        padding[axis] < 0 || inputShape[axis] < 1)
      return Status::error(
          "axis " + axisName(axis) + ": kernel " +
          std::to_string(kernel[axis]) + ", stride " +
          std::to_string(stride[axis]) + ", dilation " +
          std::to_string(dilation[axis]) + ", padding " +
          std::to_string(padding[axis]) + " and input size " +
          std::to_string(inputShape[axis]) +
          ": kernel, stride, dilation and size must be >= 1, padding >= 0");
    int64_t span = int64_t(dilation[axis]) * (kernel[axis] - 1) + 1;
    int64_t padded = inputShape[axis] + 2 * int64_t(padding[axis]);
    if (padded < span)
      return Status::error("axis " + axisName(axis) + ": the kernel spans " +
                           std::to_string(span) + " voxels, the padded input " +
                           std::to_string(padded) + ": no output");
    shape[axis] = (padded - span) / stride[axis] + 1;
  }
  return shape;
}

int64_t ConvGeometry::candidatesAlong(int axis) const {
  return int64_t(kernel[axis] - 1) * dilation[axis] / stride[axis] + 1;
}

int64_t ConvGeometry::candidatesPerVoxel() const {
  return candidatesAlong(0) * candidatesAlong(1) * candidatesAlong(2);
}

std::string ConvGeometry::str() const {
  return "k" + joined(kernel) + ",s" + joined(stride) + ",p" + joined(padding) +
         ",d" + joined(dilation);
}

bool Window::isCube() const {
  return kernel[0] == kernel[1] && kernel[1] == kernel[2] &&
         dilation[0] == dilation[1] && dilation[1] == dilation[2];
}

Window Window::normalized() const {
  Window window = *this;
  for (int axis = 0; axis < 3; ++axis)
    if (kernel[axis] == 1)
      window.dilation[axis] = 1;
  return window;
}

int64_t Window::offsets() const {
  return int64_t(kernel[0]) * kernel[1] * kernel[2];
}

Status Window::check(const std::string &function) const {
  for (int axis = 0; axis < 3; ++axis) {
    if (kernel[axis] < 1 || kernel[axis] % 2 == 0 || kernel[axis] > 7)
      return Status::error(ErrorKind::InvalidArgument,
                           function + ": the kernel size along " +
                               axisName(axis) + " must be odd, 1 to 7, got " +
                               std::to_string(kernel[axis]));
    if (dilation[axis] < 1 || dilation[axis] > (1 << 16))
      return Status::error(ErrorKind::InvalidArgument,
                           function + ": the dilation along " + axisName(axis) +
                               " must be from 1 to 65536, got " +
                               std::to_string(dilation[axis]));
  }
  return Status::success();
}

std::string Window::str() const {
  return "k" + joined(kernel) + ",d" + joined(dilation);
}

} // namespace tilec::sparse
