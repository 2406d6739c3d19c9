#!/usr/bin/env bash
# Makes the two images oversell's Dockerfile starts FROM when this Docker has neither and
# cannot pull them (a machine with no image registry); does nothing where they exist, and
# pulls them where a registry answers. Run it once before `docker compose up --build`; a
# Docker that pulls from the internet (Docker Desktop on macOS or Windows) never needs it.
#
#   debian:bookworm-slim   Debian's own packages only: `debootstrap --variant=minbase bookworm`
#                          from Debian's mirror, with the official image's apt sources
#                          (bookworm, -updates, -security), then `docker import`. Every member
#                          of the fleet runs on it: redis-server, redis-sentinel, ZooKeeper and
#                          nginx are installed into the oversell image from Debian's packages,
#                          the versions `oversell up` runs on a Debian host.
#   rust:1-bookworm        the build stage only: that base, Debian's C compiler (the clock shim
#                          is C) and this machine's own Rust toolchain (`rustc --print sysroot`:
#                          rustc, cargo and the standard library) copied in, since no Rust
#                          toolchain can be downloaded here; and the certificate authorities
#                          this machine added (/usr/local/share/ca-certificates), since it may
#                          reach crates.io only through a proxy that one of them signs.
#
# Needs root for debootstrap (it uses sudo otherwise) and a reachable Debian mirror
# (DEBIAN_MIRROR, default http://deb.debian.org/debian). FORCE=1 remakes both.
set -euo pipefail

mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base=debian:bookworm-slim
rust=rust:1-bookworm

say() { echo "base-images: $*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

have() { docker image inspect "$1" >/dev/null 2>&1; }

# A registry that is not there answers at once (no such host); one that is slow gets a minute.
pulled() { timeout 60 docker pull -q "$1" >/dev/null 2>&1; }

docker info >/dev/null 2>&1 || { echo "base-images: error: cannot reach the Docker engine (is it running, and may $(id -un) use it?)" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/oversell-base.XXXXXX")"
trap 'as_root rm -rf "$work"' EXIT

make_debian() {
  command -v debootstrap >/dev/null || {
    say "installing debootstrap"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  say "making $base with debootstrap (minbase, bookworm, from $mirror)"
  as_root debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap.log" >&2; echo "base-images: error: debootstrap failed (log above)" >&2; exit 1; }
  as_root rm -f "$work/rootfs/etc/apt/sources.list"
  as_root tee "$work/rootfs/etc/apt/sources.list.d/debian.sources" >/dev/null <<SOURCES
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  # As the official slim image: no apt caches, no docs or man pages kept.
  as_root rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin \
    "$work/rootfs/var/cache/apt/archives/"*.deb
  as_root tar -C "$work/rootfs" -c . | docker import --change 'CMD ["bash"]' - "$base" >/dev/null
  as_root rm -rf "$work/rootfs"
}

make_rust() {
  command -v rustc >/dev/null || { echo "base-images: error: $rust cannot be pulled and this machine has no Rust toolchain to copy in" >&2; exit 1; }
  local sysroot
  sysroot="$(rustc --print sysroot)"
  say "making $rust from $base, Debian's gcc and this machine's toolchain ($(rustc --version))"
  mkdir -p "$work/rust/toolchain"
  # bin (rustc, cargo, rustdoc) and lib (the compiler's libraries and std); not share/ (docs).
  cp -a "$sysroot/bin" "$sysroot/lib" "$work/rust/toolchain/"
  [ -d "$sysroot/libexec" ] && cp -a "$sysroot/libexec" "$work/rust/toolchain/"
  mkdir -p "$work/rust/ca"
  cp /usr/local/share/ca-certificates/*.crt "$work/rust/ca/" 2>/dev/null || true
  cat >"$work/rust/Dockerfile" <<'DOCKERFILE'
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates gcc libc6-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
COPY ca /usr/local/share/ca-certificates
RUN update-ca-certificates >/dev/null
COPY toolchain /usr/local/rust
ENV CARGO_HOME=/usr/local/cargo \
    PATH=/usr/local/cargo/bin:/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
DOCKERFILE
  docker build -q -t "$rust" "$work/rust" >"$work/build.log" 2>&1 \
    || { tail -n 20 "$work/build.log" >&2; echo "base-images: error: building $rust failed (log above)" >&2; exit 1; }
}

for image in "$base" "$rust"; do
  if [ "${FORCE:-}" != 1 ] && have "$image"; then
    say "$image: present"
  elif [ "${FORCE:-}" != 1 ] && pulled "$image"; then
    say "$image: pulled"
  elif [ "$image" = "$base" ]; then
    make_debian
    say "$image: made ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
  else
    make_rust
    say "$image: made ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
  fi
done
