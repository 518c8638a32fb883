#!/usr/bin/env bash
# `make gpu-bundle`: the headers and libraries the headless build needs that the GPU machine
# lacks (it has CUDA, CMake, Ninja, a compiler and torch; no Debian packages, no registries),
# as Debian 12 packages unpacked with dpkg -x into an ignored folder that travels with the
# device call (carry [".gpu-bundle"]). The list: packaging/gpu/bundle-packages.txt.
#   packaging/gpu-bundle.sh [DEST]     (default DEST: .gpu-bundle; seconds when up to date)
# DEST/root/usr/{include,lib/x86_64-linux-gnu,share}: the unpacked packages, static libraries
# dropped (GoogleTest's kept), docs dropped, stubs added; DEST/MANIFEST.txt: what is in it.
# The .deb files are cached in $HALO_GPU_BUNDLE_CACHE (default ~/.cache/halo/gpu-bundle-debs).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/.gpu-bundle}
list=$here/packaging/gpu/bundle-packages.txt
tool=$here/packaging/gpu/bundle_tool.py
cache=${HALO_GPU_BUNDLE_CACHE:-$HOME/.cache/halo/gpu-bundle-debs}
arch=x86_64-linux-gnu
log() { printf '[gpu-bundle] %s\n' "$*"; }

mapfile -t packages < <(grep -vE '^\s*(#|$|stub )' "$list" | sed 's/#.*//; s/[[:space:]]//g')
mapfile -t stubs < <(grep -E '^stub ' "$list" | awk '{print $2}')

# Up to date when the list, this script and its tool are unchanged and every package's
# candidate version is the one bundled.
versions=$(apt-cache policy "${packages[@]}" 2>/dev/null | awk '/^[^ ]/{p=$1} /Candidate:/{print p, $2}')
stamp=$( (cat "$list" "$0" "$tool"; echo "$versions") | sha256sum | cut -d' ' -f1)
if [ -f "$dest/.stamp" ] && [ "$(cat "$dest/.stamp")" = "$stamp" ]; then
  log "up to date: $dest ($(du -sh "$dest" | cut -f1))"
  exit 0
fi

mkdir -p "$cache"
want=()
while read -r p v; do
  [ "$v" != "(none)" ] || { echo "gpu-bundle: no candidate version of ${p%:} (apt-get update?)" >&2; exit 1; }
  want+=("${p%:}=$v")
done <<<"$versions"
download() {
  local need=()
  for pv in "${want[@]}"; do
    local f="${pv%%=*}_${pv#*=}"
    f=${f//:/%3a}
    compgen -G "$cache/${f}_*.deb" >/dev/null || need+=("$pv")
  done
  [ ${#need[@]} -eq 0 ] || (cd "$cache" && apt-get download -qq "${need[@]}")
}
if ! download 2>/dev/null; then
  log "apt-get download failed; updating the package lists once"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  download
fi

stage=$(mktemp -d "${dest%/}.tmp.XXXXXX")
trap 'rm -rf "$stage"' EXIT
for pv in "${want[@]}"; do
  f="${pv%%=*}_${pv#*=}"
  f=${f//:/%3a}
  dpkg -x "$(compgen -G "$cache/${f}_*.deb" | head -1)" "$stage/root"
done
r=$stage/root/usr
# Packages of the base system (zlib, xz) still install into /lib: merge it into /usr/lib.
if [ -d "$stage/root/lib" ]; then
  cp -a "$stage/root/lib/." "$r/lib/"
  rm -rf "$stage/root/lib"
fi
# Keep headers, shared libraries, CMake packages; GoogleTest/GMock are static only.
rm -rf "${r:?}/share/doc" "${r:?}/share/man" "${r:?}/share/lintian" "${r:?}/src" "${r:?}/bin" "${r:?}/lib/ssl" "$stage/root/etc" \
  "$r/lib/$arch/pkgconfig" "$r/share/pkgconfig"
find "$r/lib" -name '*.a' ! -name 'libgtest*.a' ! -name 'libgmock*.a' -delete
# fmt serves as a CMake package only. Its headers would come before LibTorch's on
# the include path, and Debian's fmt 9 would shadow the fmt 12 that LibTorch and Halo include
# (on Debian /usr/include comes last, after LibTorch's).
rm -rf "$r/include/fmt"
python3 "$tool" stubs "$r/lib/$arch" "${stubs[@]}"
python3 "$tool" prune "$r/lib/$arch"
rm -rf "$r/lib/$arch/engines-3" "$r/lib/$arch/ossl-modules"  # OpenSSL's loadable providers: SHA-256 needs none
if ! python3 "$tool" check "$r/lib/$arch" >"$stage/check.txt"; then
  cat "$stage/check.txt" >&2
  echo "gpu-bundle: the bundle is incomplete: add the packages above to $list" >&2
  exit 1
fi

{
  echo "Halo GPU bundle (packaging/gpu-bundle.sh), made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(grep -oP '^PRETTY_NAME="\K[^"]*' /etc/os-release)"
  echo "packages:"
  printf '  %s\n' "${want[@]}"
  echo "stubs (abort if called): ${stubs[*]}"
  tail -1 "$stage/check.txt"
  echo "size: $(du -sb "$stage/root" | cut -f1) bytes"
} >"$stage/MANIFEST.txt"
echo "$stamp" >"$stage/.stamp"
rm -f "$stage/check.txt"
rm -rf "$dest"
mv "$stage" "$dest"
trap - EXIT
log "$dest: ${#want[@]} packages, ${#stubs[@]} stubs, $(du -sh "$dest" | cut -f1) ($(tail -2 "$dest/MANIFEST.txt" | head -1))"
