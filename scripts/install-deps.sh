#!/usr/bin/env bash
# Installs what schedc needs on Debian 12 (the CUDA 13 toolkit is expected in
# /usr/local/cuda already). Installs only what is missing; needs root for apt.
set -euo pipefail
pkgs=(cmake g++ make tao-pegtl-dev libcli11-dev nlohmann-json3-dev libsqlite3-dev libgtest-dev llvm-14-tools clang python3 ccache)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "install-deps: the CUDA toolkit (13.0) is not in /usr/local/cuda; install it first" >&2
  exit 1
fi
