#!/bin/sh
# deb.sh - build the Debian package, BUILD/testflame_VERSION_ARCH.deb, from
# `make install` into a staging root (PREFIX=/usr, Debian's places), then
# check it with lintian: an error of lintian fails the build.
#
# Depends: the shared libraries the binary links, as dpkg-shlibdeps finds
# them, plus libcurl4, which testflame's HTTP transport opens by its soname when
# it first publishes (the check below fails if that soname changes), and
# the package of the libgit2 the build found, which testflame opens by its
# soname when it first needs git (include/testflame/git.h).
# Recommends: git and linux-perf (CI jobs and `doctor` use them).
#
#   packaging/deb.sh BUILD        (make deb)
#   DEB_MAINTAINER="Name <addr>"  the package's maintainer
#   LINTIAN=no                    skip lintian (the tests that install it)
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
version=$(sed -n 's/^#define TF_VERSION "\(.*\)"$/\1/p' include/testflame/common.h)
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-testflame developers <testflame@example.org>}
work=$build/deb
root=$work/root
out=$build/testflame_${version}_$arch.deb

rm -rf "$work" && mkdir -p "$root/DEBIAN" "$work/debian"
${MAKE:-make} --no-print-directory -s BUILD="$build" install DESTDIR="$root" PREFIX=/usr \
	ZSHCOMPDIR=/usr/share/zsh/vendor-completions >/dev/null
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/testflame"
gzip -9n "$root"/usr/share/man/man*/*

# the libcurl testflame opens at run time, not linked: declared by hand
grep -rqF '"libcurl.so.4"' src || {
	echo "deb.sh: testflame no longer opens libcurl.so.4: fix the Depends on libcurl4" >&2
	exit 1
}
printf 'Source: testflame\n\nPackage: testflame\nArchitecture: any\n' >"$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O -e"root/usr/bin/testflame" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
curl=$(dpkg-query -W -f='${Version}' libcurl4 2>/dev/null | sed 's/-[^-]*$//')
git2dir=$(pkg-config --variable=libdir libgit2)
git2so=$(objdump -p "$git2dir/libgit2.so" | sed -n 's/^ *SONAME *//p')
git2pkg=$(dpkg-query -S "$(readlink -f "$git2dir/$git2so")" 2>/dev/null | sed -n '1s/:.*//p')
[ -n "$git2pkg" ] || { echo "deb.sh: no package holds $git2dir/$git2so (libgit2)" >&2; exit 1; }
git2=$(dpkg-query -W -f='${Version}' "$git2pkg" 2>/dev/null | sed 's/-[^-]*$//')
depends="$shlibs, libcurl4${curl:+ (>= $curl)}, $git2pkg${git2:+ (>= $git2)}"

doc=$root/usr/share/doc/testflame
mkdir -p "$doc"
commit=$(sed -n 's/^const char tf_build_commit\[\] = "\(.*\)";$/\1/p' "$build/gen/version.c")
date=$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
printf 'testflame (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- %s  %s\n' \
	"$version" "${commit:-unknown}" "$maintainer" "$date" | gzip -9n >"$doc/changelog.gz"
{
	printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n'
	printf 'Upstream-Name: testflame\n\nFiles: *\nCopyright: 2026 The testflame authors\nLicense: Expat\n'
	sed -n '/^Permission/,$p' LICENSE | sed -e 's/^$/./' -e 's/^/ /'
} >"$doc/copyright"

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: testflame
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Recommends: git, linux-perf
Section: devel
Priority: optional
Description: per-test performance regressions of a test suite
 testflame runs a project's test suite under a sampling profiler
 (perf_event, or ptrace where perf_event_open is refused), splits the
 samples by test, compares each test with the baseline of the merge-base
 and reports which tests got slower and where: diff flame graphs, a pull
 request comment, annotations on the changed lines, JUnit and Code Quality
 files. It fails the build when a test got slower beyond noise.
 .
 The package has the command, its manual pages, bash and zsh completions,
 and in /usr/share/testflame the GitHub Action, the GitLab CI template,
 the CircleCI orb and the test-marker helpers (C, shell, pytest, Go).
CONTROL
(cd "$root" && find usr -type f | sort | xargs md5sum) >"$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +
find "$root/usr/share" -type f -exec chmod 644 {} +
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "  DEB     $out"
if [ "${LINTIAN:-}" = no ]; then
	:
elif command -v lintian >/dev/null 2>&1; then
	lintian --fail-on error "$out"
else
	echo "deb.sh: lintian is not installed: the package is unchecked" >&2
fi
