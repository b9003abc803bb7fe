//===- KernelLoader.cpp - Loading a compiled kernel from disk -------------===//

#include "tilec/runtime/KernelLoader.h"

#include "tilec/runtime/FileIO.h"

namespace tilec::rt {

Result<Kernel> loadKernelFromDirectory(const Context &context,
                                       const std::string &directory,
                                       const std::string &stem) {
  const std::string base = directory + "/" + stem;
  Result<std::string> json = readFile(base + ".json");
  if (!json)
    return json.status();
  Result<CompileMetadata> metadata = CompileMetadata::parse(*json);
  if (!metadata)
    return metadata.status().withContext(base + ".json");

  std::string imagePath = base + ".cubin";
  bool isCubin = isRegularFile(imagePath);
  if (!isCubin) {
    imagePath = base + ".ptx";
    if (!isRegularFile(imagePath))
      return Status::error("no device code for kernel '" + stem + "' in " +
                           directory + ": neither " + stem + ".cubin nor " +
                           stem + ".ptx exists");
  }
  Result<std::string> image = readFile(imagePath);
  if (!image)
    return image.status();

  const DeviceProperties &device = context.properties();
  // The target/device pair explains the usual reason a valid cubin does not
  // load: it was built for another architecture.
  const std::string where = imagePath + " (target " + metadata->target +
                            ", device " + device.smName() + " " + device.name +
                            ")";
  Result<std::shared_ptr<Module>> module =
      isCubin ? Module::loadCubin(context, image->data(), image->size())
              : Module::loadPtx(context, *image);
  if (!module)
    return module.status().withContext(where);
  Result<Kernel> kernel =
      Kernel::create(context, std::move(*module), std::move(*metadata));
  if (!kernel)
    return kernel.status().withContext(where);
  return kernel;
}

} // namespace tilec::rt
