# lib.sh - what the by-hand package scripts share: a pristine Debian 12
# root made once by debootstrap from the mirror apt is configured with here,
# kept in TESTFLAME_CHROOT_CACHE (default ~/.cache/testflame-chroot), for
# install-chroot.sh to copy and image.sh to import as a base image.

say() { printf '== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# The mirror apt uses here: deb822 sources first, then sources.list.
mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ { if (u) { print u; exit } }' "$f"
	done | head -n 1 | grep . && return
	awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null | grep . ||
		{ echo "no bookworm source in apt's configuration" >&2; return 1; }
}

# Prints the pristine root's path, debootstrapping it the first time.
pristine_root() {
	local cache=${TESTFLAME_CHROOT_CACHE:-$HOME/.cache/testflame-chroot}
	local root=$cache/bookworm-root
	if [ ! -x "$root/bin/sh" ]; then
		command -v debootstrap >/dev/null || fail "apt-get install debootstrap"
		say "debootstrap bookworm into $root (once)" >&2
		mkdir -p "$cache"
		rm -rf "$root.tmp"
		debootstrap --variant=minbase bookworm "$root.tmp" "$(mirror)" >"$cache/debootstrap.log" 2>&1 ||
			{ tail -n 20 "$cache/debootstrap.log" >&2; fail "debootstrap"; }
		mv "$root.tmp" "$root"
	fi
	echo "$root"
}
