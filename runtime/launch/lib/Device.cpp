//===- Device.cpp - A CUDA device and the limits kernels must fit ---------===//

#include "tilec/runtime/Device.h"

#include "tilec/contract/InterpreterDevice.h"

namespace tilec::rt {

std::string DeviceProperties::smName() const {
  return "sm_" + std::to_string(computeMajor) + std::to_string(computeMinor);
}

std::string DeviceProperties::compileTarget() const {
  if (name == kInterpreterDeviceName)
    return std::string(kInterpreterTarget);
  bool hasArchFeatures = computeMajor == 9 && computeMinor == 0;
  return smName() + (hasArchFeatures ? "a" : "");
}

Result<int> Device::count(const Driver &driver) {
  int count = 0;
  TILEC_RETURN_IF_ERROR(
      driver.check(driver.api().cuDeviceGetCount(&count), "cuDeviceGetCount"));
  return count;
}

Result<Device> Device::get(const Driver &driver, int ordinal) {
  const DriverApi &api = driver.api();
  Result<int> count = Device::count(driver);
  if (!count)
    return count.status();
  if (ordinal < 0 || ordinal >= *count)
    return Status::error("CUDA device " + std::to_string(ordinal) +
                         " does not exist (the driver sees " +
                         std::to_string(*count) + " device(s))");

  Device device;
  device.properties_.ordinal = ordinal;
  TILEC_RETURN_IF_ERROR(
      driver.check(api.cuDeviceGet(&device.handle_, ordinal), "cuDeviceGet"));

  char name[256] = {};
  TILEC_RETURN_IF_ERROR(
      driver.check(api.cuDeviceGetName(name, sizeof(name) - 1, device.handle_),
                   "cuDeviceGetName"));
  device.properties_.name = name;

  struct AttributeField {
    CUdevice_attribute attribute;
    const char *spelling;
    int DeviceProperties::*field;
  };
  const AttributeField fields[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR",
       &DeviceProperties::computeMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR",
       &DeviceProperties::computeMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT",
       &DeviceProperties::multiprocessorCount},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
       "MAX_SHARED_MEMORY_PER_BLOCK",
       &DeviceProperties::maxSharedBytesPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
       &DeviceProperties::maxSharedBytesPerBlockOptin},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "MAX_REGISTERS_PER_BLOCK",
       &DeviceProperties::maxRegistersPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK",
       &DeviceProperties::maxThreadsPerBlock},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE",
       &DeviceProperties::l2CacheBytes},
  };
  for (const AttributeField &field : fields) {
    if (Status status = driver.check(
            api.cuDeviceGetAttribute(&(device.properties_.*field.field),
                                     field.attribute, device.handle_),
            "cuDeviceGetAttribute");
        !status.ok())
      return status.withContext(std::string("reading ") + field.spelling);
  }

  TILEC_RETURN_IF_ERROR(
      driver.check(api.cuDeviceTotalMem(&device.properties_.totalMemoryBytes,
                                        device.handle_),
                   "cuDeviceTotalMem"));
  return device;
}

} // namespace tilec::rt
