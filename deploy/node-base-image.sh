#!/usr/bin/env bash
# Builds a stand-in of the image `node:24-bookworm-slim` without an image registry, for machines that reach Debian's
# package mirror and the npm registry but no registry of images (CI here). The Dockerfile's base then resolves to it,
# so `docker build` works unchanged. It has what the real base has that svc uses:
#   - Debian 12 (bookworm), a minimal root filesystem (debootstrap --variant=minbase), apt sources for bookworm,
#     bookworm-updates and bookworm-security;
#   - Node 24 at /usr/local/bin/node: the binary of the npm package `node` (node_modules/node/bin/node of this clone,
#     installed by `npm ci`), and npm 11 under /usr/local/lib/node_modules/npm (from the npm registry);
#   - a user `node` with uid and gid 1000 and home /home/node;
#   - the certificate authorities this machine trusts (/etc/ssl/certs/ca-certificates.crt, named by
#     NODE_EXTRA_CA_CERTS), so npm inside a build reaches the registry wherever this machine's own npm does (through a
#     proxy that re-signs TLS, for example).
# The svc test suite runs its container tests on this image too (the sandbox workers mount the program under test).
#
#   deploy/node-base-image.sh            build it unless an image of that tag exists
#   deploy/node-base-image.sh --force    build it again
#
# Needs root (debootstrap, chroot), debootstrap and a docker (or podman) client. DOCKER selects the client.
set -euo pipefail
cd "$(dirname "$0")/.."

TAG="${SVC_NODE_BASE_TAG:-node:24-bookworm-slim}"
DOCKER="${DOCKER:-docker}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
NODE_BIN="node_modules/node/bin/node"

if [ "${1:-}" != "--force" ] && "$DOCKER" image inspect "$TAG" >/dev/null 2>&1; then
  echo "$TAG: present"
  exit 0
fi
[ -x "$NODE_BIN" ] || { echo "$NODE_BIN is missing: run npm ci first" >&2; exit 1; }
case "$("$NODE_BIN" --version)" in v24.*) ;; *) echo "$NODE_BIN is not Node 24" >&2; exit 1 ;; esac
command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }

work="$(mktemp -d /tmp/svc-node-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"

echo "$TAG: debootstrap bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 || { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
# as the official image: no package lists and no downloaded packages left in the layer
chroot "$rootfs" apt-get clean
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin

install -m 0755 "$NODE_BIN" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/lib/node_modules"
(cd "$work" && npm pack --silent npm@11 >npm-pack.txt)
tar -xzf "$work/$(tail -n 1 "$work/npm-pack.txt")" -C "$work"
mv "$work/package" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"

if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$rootfs/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  CA_ENV=(--change "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt")
else
  CA_ENV=()
fi

chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
chroot "$rootfs" /usr/local/bin/node --version >/dev/null

NODE_VERSION="$("$NODE_BIN" --version | tr -d v)"
tar --numeric-owner -C "$rootfs" -c . | "$DOCKER" import \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  "${CA_ENV[@]}" \
  - "$TAG" >/dev/null
echo "$TAG: built (Debian bookworm minbase, Node $NODE_VERSION, user node 1000:1000)"
