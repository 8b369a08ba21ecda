#!/bin/sh
# scripts/ci/chromium.sh — installs the headless browser that the browser tests of
# `niceeval view` drive (tests/_helpers/browser.ts), once per machine: Debian's `chromium`
# package from the distribution mirror. When the browser is already there only its version is
# printed, so a second run changes nothing. Run as root.
#
# Usage: scripts/ci/chromium.sh   (NICEEVAL_CHROMIUM names another browser binary to check)
# apt-get's output goes to stderr; stdout holds the version line only.
set -eu
browser=${NICEEVAL_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$browser" ]; then
  export DEBIAN_FRONTEND=noninteractive
  echo "chromium: installing the chromium package" >&2
  # Another install running on the machine holds the dpkg lock; wait for it instead of failing.
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >&2
fi
if [ ! -x "$browser" ]; then
  echo "chromium: $browser is missing after the install" >&2
  exit 1
fi
# --version needs neither a display nor a profile.
"$browser" --version
