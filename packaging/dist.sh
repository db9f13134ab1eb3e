#!/bin/sh
# dist.sh - the source tarball, BUILD/testflame-VERSION.tar.gz: the tracked
# files of HEAD under testflame-VERSION/, and a COMMIT file naming the
# commit (and "dirty" when the work tree had changes, which the tarball
# does not hold), so that a build from it says which commit it is
# (packaging/version.sh). It builds with `make` alone.
#
#   packaging/dist.sh BUILD       (make dist)
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
version=$(sed -n 's/^#define TF_VERSION "\(.*\)"$/\1/p' include/testflame/common.h)
name=testflame-$version
out=$build/$name.tar.gz
mkdir -p "$build"
stage=$(mktemp -d "$build/dist.XXXXXX")
trap 'rm -rf "$stage"' EXIT
git update-index -q --refresh >/dev/null 2>&1 || :
dirty=$(git diff-index --quiet HEAD -- 2>/dev/null || echo dirty)
[ -z "$dirty" ] || echo "dist.sh: the work tree has changes that are not committed: the tarball is HEAD's" >&2
mkdir "$stage/$name"
printf '%s %s\n' "$(git rev-parse HEAD)" "$dirty" >"$stage/$name/COMMIT"
git archive --format=tar --prefix="$name/" HEAD >"$stage/src.tar"
tar -C "$stage" -rf "$stage/src.tar" --owner=0 --group=0 --mtime="@$(git log -1 --format=%ct)" "$name/COMMIT"
gzip -9n <"$stage/src.tar" >"$out.tmp" && mv "$out.tmp" "$out"
echo "  DIST    $out"
