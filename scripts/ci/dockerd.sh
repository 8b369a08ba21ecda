#!/bin/sh
# scripts/ci/dockerd.sh start|stop — private rootful dockerd for niceeval tests
# (sandboxes.md §9.3, toolchain.md §3.5). Run as root. `start` prints exactly one line on stdout,
# `export DOCKER_HOST=… NICEEVAL_REQUIRE_DOCKER=1`, for `eval "$(scripts/ci/dockerd.sh start)"`;
# everything else goes to stderr. Both commands are idempotent.
#
# Deviations from the script text of sandboxes.md §9.3, each needed on the CI machines:
# - apt-get's and dpkg's output goes to stderr: stdout is eval'd by the caller, and the
#   "Selecting previously unselected package …" lines would be run as commands.
# - apt-get runs with DEBIAN_FRONTEND=noninteractive (no standard input in CI).
# - `stop` removes a pid file whose process is gone (a daemon killed with SIGKILL when its
#   session ended) instead of waiting 30 s for it to disappear.
set -eu
ROOT="${NICEEVAL_DOCKERD_ROOT:-/tmp/niceeval-dockerd}"
export DOCKER_HOST="unix://$ROOT/docker.sock"
if [ "${1:-start}" = stop ]; then
  if [ -f "$ROOT/dockerd.pid" ] && ! kill -TERM "$(cat "$ROOT/dockerd.pid")" 2>/dev/null; then
    rm -f "$ROOT/dockerd.pid"
  fi
  i=0; while [ -f "$ROOT/dockerd.pid" ] && [ $i -lt 60 ]; do sleep 0.5; i=$((i+1)); done
  exit 0
fi
command -v dockerd >/dev/null && [ -x /bin/busybox ] && command -v git >/dev/null || {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends docker.io busybox-static git >&2; }
mkdir -p "$ROOT"
if ! docker version >/dev/null 2>&1; then
  nohup dockerd --storage-driver=vfs --iptables=false --bridge=none \
    --default-address-pool base=10.213.0.0/22,size=24 \
    --data-root="$ROOT/data" --exec-root="$ROOT/exec" \
    --pidfile="$ROOT/dockerd.pid" --host="$DOCKER_HOST" >"$ROOT/dockerd.log" 2>&1 &
  i=0; until docker version >/dev/null 2>&1; do
    i=$((i+1)); [ $i -le 60 ] || { tail -n 40 "$ROOT/dockerd.log" >&2; exit 1; }; sleep 0.5; done
fi
rootfs() {   # $1 = directory to (re)create
  rm -rf "$1"; mkdir -p "$1/bin" "$1/etc" "$1/tmp" "$1/root" "$1/home/sandbox"
  chmod 0755 "$1"; chmod 1777 "$1/tmp"; cp /bin/busybox "$1/bin/busybox"
  for a in $("$1/bin/busybox" --list); do [ "$a" = busybox ] || ln -sf busybox "$1/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000::/home/sandbox:/bin/sh\n' >"$1/etc/passwd"
  printf 'root:x:0:\nsandbox:x:1000:\n' >"$1/etc/group"; chown 1000:1000 "$1/home/sandbox"
}
import_rootfs() {   # $1 = directory, $2 = tag
  tar -C "$1" -c . | docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c 'CMD ["/bin/sh"]' - "$2" >/dev/null
}
docker image inspect niceeval-test/busybox:local >/dev/null 2>&1 || {
  rootfs "$ROOT/rootfs"; import_rootfs "$ROOT/rootfs" niceeval-test/busybox:local; }
docker image inspect niceeval-test/busybox-git:local >/dev/null 2>&1 || {
  R="$ROOT/rootfs-git"; rootfs "$R"; g="$(command -v git)"
  mkdir -p "$R/usr/bin"; cp "$g" "$R/usr/bin/git"
  for lib in $(ldd "$g" | grep -o '/[^ ]*'); do mkdir -p "$R$(dirname "$lib")"; cp -L "$lib" "$R$lib"; done
  import_rootfs "$R" niceeval-test/busybox-git:local; }
docker run --rm --network none --user sandbox niceeval-test/busybox-git:local git --version >/dev/null
echo "export DOCKER_HOST=$DOCKER_HOST NICEEVAL_REQUIRE_DOCKER=1"
