#!/usr/bin/env bash
# install-chroot.sh - the Debian package on a clean Debian 12: a minimal
# root made by debootstrap (from the Debian mirror apt is configured with
# here; cached), where `dpkg -i` of the .deb, with its dependencies from
# apt, gives a testflame whose `doctor` runs and whose `run` profiles the
# example project (a baseline, then a comparison with it); then the package
# and the dependencies it brought are purged, and no file is left that was
# not there before. By hand (minutes, as root; not part of make test):
#
#   make deb && tests/package/install-chroot.sh [build/testflame_VERSION_ARCH.deb]
#
# TESTFLAME_CHROOT_CACHE: where the pristine root is kept (default
# ~/.cache/testflame-chroot, tests/package/lib.sh); KEEP=1 keeps the
# scratch root.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
deb=${1:-$(ls "$TOP"/build/testflame_*_"$(dpkg --print-architecture)".deb 2>/dev/null | tail -n 1)}
[ -f "$deb" ] || { echo "install-chroot.sh: no .deb (make deb)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "install-chroot.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
. "$TOP/tests/package/lib.sh"
pristine=$(pristine_root)

root=$(mktemp -d /tmp/testflame-chroot.XXXXXX)/root
mkdir "$root"
mounted=()
cleanup() {
	local m
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || :; done
	[ -n "${KEEP:-}" ] && { echo "kept $root"; return; }
	rm -rf "${root%/root}"
}
trap cleanup EXIT
say "a clean root in $root"
cp -a "$pristine/." "$root/"
for m in proc sys dev dev/pts; do
	mount --bind "/$m" "$root/$m" && mounted+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || :
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
apt_in() { in_root env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 "$@"; }

say "the example project's own needs (make, a C compiler, git): not testflame's"
apt_in update >/dev/null
apt_in install --no-install-recommends make gcc libc6-dev git >/dev/null
# what is there before testflame, but for files that change anyway
snapshot() {
	in_root find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /root \
		-o -path /var/cache -o -path /var/lib/apt/lists -o -path /var/log \) -prune -o -print | sort
}
before=${root%/root}/files.before
snapshot >"$before"

say "dpkg -i $(basename "$deb"), then its dependencies from apt"
cp "$deb" "$root/tmp/testflame.deb"
in_root dpkg -i /tmp/testflame.deb >/dev/null 2>&1 || :   # stops on the missing dependencies
apt_in -f install --no-install-recommends >/dev/null
in_root dpkg-query -W -f='${Status} ${Version}\n' testflame | grep -q '^install ok installed' ||
	fail "testflame is not installed"
in_root testflame --version
in_root man -w testflame-run >/dev/null 2>&1 || test -f "$root/usr/share/man/man1/testflame-run.1.gz" ||
	fail "no testflame-run(1)"
test -f "$root/usr/share/bash-completion/completions/testflame" || fail "no bash completion"
test -f "$root/usr/share/testflame/actions/action.yml" || fail "no /usr/share/testflame"

say "testflame doctor"
in_root testflame doctor || fail "doctor exited $?"

say "testflame run on the example project"
mkdir -p "$root/root/example"
cp -r "$TOP/examples/." "$root/root/example/"
rm -rf "$root/root/example/build" "$root/root/example/testflame-report"
in_root sh -c 'cd /root/example && git init -q -b main && git config user.email t@example.com &&
	git config user.name t && git add -A && git commit -qm libmini && make -s all >/dev/null'
in_root sh -c 'cd /root/example && testflame run -- make -s check' >"$root/../run1.log" 2>&1 ||
	{ cat "$root/../run1.log"; fail "the first run exited $?"; }
cat "$root/../run1.log"
grep -q "no baseline yet" "$root/../run1.log" || fail "the first run kept no baseline"
# a commit on top, compared with the baseline of the first
in_root sh -c 'cd /root/example && echo "/* again */" >>src/hash.c && git commit -qam again && make -s all >/dev/null'
rc=0
in_root sh -c 'cd /root/example && testflame run -- make -s check' >"$root/../run2.log" 2>&1 || rc=$?
cat "$root/../run2.log"
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "the second run exited $rc"
grep -q "baseline: " "$root/../run2.log" || fail "the second run compared with no baseline"
test -s "$root/root/example/testflame-report/index.html" || fail "no report"

say "apt-get purge testflame and what it brought; nothing left behind"
apt_in purge testflame >/dev/null
apt_in autoremove --purge >/dev/null
snapshot >"$before.after"
if ! diff "$before" "$before.after" >"$before.diff"; then
	cat "$before.diff"
	fail "the removal left files behind, or took files that were there"
fi
say "ok: installed, doctor and run work, and removal left nothing"
