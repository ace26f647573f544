#!/usr/bin/env bash
# Writes test/events/earlier/RELEASE.json with the release's own code: a
# temporary worktree of COMMIT gets earlier_gen_test.go in its test/e2e, whose
# test runs the release's bootstrap against the release's sandbox and AWS
# wire fakes and writes the nodes and in-flight messages it left. The
# worktree is removed afterwards, whatever happens.
#
#   test/events/earlier/gen/generate.sh [RELEASE COMMIT]   (default: 0.1.0 01113dd)
set -euo pipefail
release=${1:-0.1.0}
commit=${2:-01113dd}
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
out="$root/test/events/earlier/$release.json"

# The release's sandbox binaries: the Kubernetes version its build script
# names, in the cache every checkout shares.
k8s=$(git -C "$root" show "$commit:test/sandbox/build/build.sh" | sed -n 's/^K8S_VERSION=//p')
bin="${DRAINPIPE_SANDBOX_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/drainpipe/sandbox-${k8s}/bin}"
if [ ! -x "$bin/kube-apiserver" ]; then
  echo "earlier-fixtures: no sandbox binaries for Kubernetes $k8s in $bin (make sandbox-build at $commit builds them)" >&2
  exit 1
fi

tmp=$(mktemp -d)
src="$tmp/src"
cleanup() {
  git -C "$root" worktree remove --force "$src" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$root" worktree add --quiet --detach "$src" "$commit"
cp "$here/earlier_gen_test.go" "$src/test/e2e/"
full=$(git -C "$root" rev-parse --short "$commit")
echo "earlier-fixtures: running $release ($full) against the sandbox in $bin"
(cd "$src" && DRAINPIPE_SANDBOX_BIN="$bin" DRAINPIPE_EARLIER_OUT="$tmp/out.json" \
  DRAINPIPE_EARLIER_RELEASE="$release" DRAINPIPE_EARLIER_COMMIT="$full" \
  go test -tags earliergen -count=1 -timeout 15m -run '^TestWriteEarlierFixture$' ./test/e2e/)
cp "$tmp/out.json" "$out"
echo "earlier-fixtures: wrote $out"
