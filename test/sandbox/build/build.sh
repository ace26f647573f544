#!/usr/bin/env bash
# Builds the sandbox binaries into $DRAINPIPE_SANDBOX_BIN (default: the user
# cache, one directory per Kubernetes version), reusing any binary already
# there. A cold build takes ~15 minutes on two cores, so every step prints
# progress.
#
# $DRAINPIPE_K8S_VERSION picks the control plane's version (default below),
# as it does for the sandbox and its tests (test/sandbox). This
# directory's module pins the default; every other version has its own module
# in ./<version>/ (the Kubernetes tree and its staging modules at that version).
# etcd, kwok and the token webhook do not depend on the version and always
# come from this module.
set -euo pipefail
cd "$(dirname "$0")"
DEFAULT_K8S_VERSION=v1.36.3
K8S_VERSION=${DRAINPIPE_K8S_VERSION:-$DEFAULT_K8S_VERSION}
kmod=.
if [ "$K8S_VERSION" != "$DEFAULT_K8S_VERSION" ]; then
  kmod=./$K8S_VERSION
  if [ ! -f "$kmod/go.mod" ]; then
    echo "sandbox-build: no module pins Kubernetes $K8S_VERSION (known: $DEFAULT_K8S_VERSION $(ls -d v*/ 2>/dev/null | tr -d / | xargs))" >&2
    exit 1
  fi
fi
BIN="${DRAINPIPE_SANDBOX_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/drainpipe/sandbox-${K8S_VERSION}/bin}"
mkdir -p "$BIN"
BIN=$(cd "$BIN" && pwd)
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=${K8S_VERSION} -X $p.gitMajor=1 -X $p.gitMinor=${minor} -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
ticker=""
stop_ticker() { [ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true; }
trap stop_ticker EXIT
build() { # name package expected-cold-time
  local name=$1 pkg=$2 expect=$3
  if [ -x "$BIN/$name" ]; then echo "sandbox-build: $name present"; return; fi
  echo "sandbox-build: building $name ($(date +%T); about $expect when cold)"
  local start=$SECONDS
  # A heartbeat, so a long compile does not look like a hang.
  ( n=0; while sleep 30; do n=$((n+30)); echo "sandbox-build: still building $name (${n} s)"; done ) &
  ticker=$!
  go build -trimpath -ldflags "$ldflags" -o "$BIN/$name.tmp" "$pkg"
  kill "$ticker" 2>/dev/null || true; ticker=""
  mv "$BIN/$name.tmp" "$BIN/$name"
  echo "sandbox-build: $name built in $((SECONDS-start)) s"
}
total=$SECONDS
build etcd ./etcd "1 min"
build kwok sigs.k8s.io/kwok/cmd/kwok "2-3 min"
(
  trap stop_ticker EXIT # a subshell does not inherit the trap
  cd "$kmod"
  build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "1 min"
  build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "3 min"
  build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "8 min"
  # Not run by the sandbox: the tests check that kubectl can use its kubeconfig.
  build kubectl k8s.io/kubernetes/cmd/kubectl "2 min"
)
# The EKS token webhook (aws-iam-authenticator and a fake STS) is our own
# code in its own module: rebuilt when its sources change (their hash is
# stamped beside it), reused otherwise.
stamp=$(cat ../authwebhook/go.mod ../authwebhook/go.sum ../authwebhook/*.go | sha256sum | cut -c1-16)
if [ "$(cat "$BIN/authwebhook.stamp" 2>/dev/null)" != "$stamp" ]; then rm -f "$BIN/authwebhook"; fi
(cd ../authwebhook && ldflags="-s -w" build authwebhook . "2 min")
echo "$stamp" >"$BIN/authwebhook.stamp"
# kwok's default stages ship in its module; a reference copy goes beside the
# binaries (the sandbox embeds its own, adapted, in test/sandbox/stages).
stages="$BIN/../stages"
if [ ! -d "$stages" ]; then
  src="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
  mkdir -p "$stages" && cp -r "$src"/. "$stages"/ && chmod -R u+w "$stages"
fi
echo "sandbox-build: ready in $BIN ($((SECONDS-total)) s)"
