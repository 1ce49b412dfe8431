#!/usr/bin/env bash
# The Docker image the executor tests and benchmarks run agents in, built on this machine from Debian packages
# (no registry is reachable: nothing is ever pulled) and kept between runs: `bash scripts/test_image.sh`.
#
#   1. kandev-test-base:<suite>  a minbase root file system with python3, made by debootstrap from the mirror
#                                apt already uses, imported with the Engine's image import;
#   2. kandev-test-agent:<n>     FROM it, built with no network: what the tests name (KANDEV_TEST_IMAGE).
# Each step is skipped when its image exists. Needs root (debootstrap) and a running Docker daemon.
set -euo pipefail

IMAGE=${KANDEV_TEST_IMAGE:-kandev-test-agent:1}
SUITE=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
BASE=kandev-test-base:$SUITE

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "test image $IMAGE: cached"
    exit 0
fi

# The mirror apt uses here (deb822 sources first, then the one-line form).
mirror() {
    local uri
    uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$uri" ] || uri=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$uri" ] || { echo "test_image: no Debian mirror found in apt's sources" >&2; exit 1; }
    echo "$uri"
}

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
    if ! command -v debootstrap >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
    fi
    root=$(mktemp -d "${TMPDIR:-/tmp}/kandev-rootfs.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    echo "debootstrap $SUITE (minbase + python3) into $root"
    debootstrap --variant=minbase --include=python3 "$SUITE" "$root" "$(mirror)" >"$root.log" 2>&1 \
        || { tail -n 20 "$root.log" >&2; exit 1; }
    rm -f "$root.log"
    # No package lists or caches in the image: it is only ever run, never updated.
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*
    tar -C "$root" -c . | docker import - "$BASE" >/dev/null
    echo "imported $BASE"
fi

docker build --network none --quiet -t "$IMAGE" - >/dev/null <<DOCKERFILE
FROM $BASE
LABEL kandev.test-image="1"
ENV LANG=C.UTF-8
RUN mkdir -p /workspace && chmod 0777 /workspace
CMD ["python3"]
DOCKERFILE
echo "built $IMAGE"
