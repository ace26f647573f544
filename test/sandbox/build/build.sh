#!/usr/bin/env bash
# Builds the sandbox binaries into $DRAINPIPE_SANDBOX_BIN (default: the user
# cache), reusing any binary already there. A cold build takes ~15 minutes on
# two cores, so every step prints progress.
set -euo pipefail
cd "$(dirname "$0")"
K8S_VERSION=v1.36.3
BIN="${DRAINPIPE_SANDBOX_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/drainpipe/sandbox-${K8S_VERSION}/bin}"
mkdir -p "$BIN"
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=${K8S_VERSION} -X $p.gitMajor=1 -X $p.gitMinor=${minor} -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
build() { # name package
  local name=$1 pkg=$2
  if [ -x "$BIN/$name" ]; then echo "sandbox-build: $name present"; return; fi
  echo "sandbox-build: building $name ($(date +%T)); a cold build of kube-apiserver takes ~8 min"
  local start=$SECONDS
  go build -trimpath -ldflags "$ldflags" -o "$BIN/$name.tmp" "$pkg"
  mv "$BIN/$name.tmp" "$BIN/$name"
  echo "sandbox-build: $name built in $((SECONDS-start)) s"
}
build etcd ./etcd
build kwok sigs.k8s.io/kwok/cmd/kwok
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
# kwok's default stages ship in its module; copy them beside the binaries.
stages="$BIN/../stages"
if [ ! -d "$stages" ]; then
  src="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
  mkdir -p "$stages" && cp -r "$src"/. "$stages"/ && chmod -R u+w "$stages"
fi
echo "sandbox-build: ready in $BIN"
