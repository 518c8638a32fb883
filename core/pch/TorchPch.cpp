// Anchor translation unit for the shared LibTorch precompiled header.
// Nothing to run: CMake builds the .gch from it and other targets reuse it.
namespace halo::pch {
int anchor() { return 0; }
}  // namespace halo::pch
