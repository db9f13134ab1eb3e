#!/usr/bin/env bash
# image.sh - testflame's container image (packaging/Dockerfile) built with
# podman from `make deb`'s package and run: `testflame doctor` with the
# container's default rights and with the ones perf needs, `testflame run`
# on the example project (a baseline, then a comparison with it), and the
# GitLab template's job in gitlab-ci-local's docker executor, with podman as
# its engine, from that image and without TESTFLAME_REPO; then the same job
# in a project's own image (git, make, a C compiler, no testflame) that
# builds testflame from source, the template's fallback. It prints the
# image's size, the build's time and each job's set-up time (from the job's
# start to testflame on PATH, as gitlab-ci-local prints them) for
# BENCHMARKS.md. By hand (minutes, as root; not part of make test):
#
#   make deb && tests/package/image.sh [build/testflame_VERSION_ARCH.deb]
#
# BASE: the Debian 12 image to build from; without it, and without
# debian:12-slim in podman's store, the debootstrapped root of
# tests/package/lib.sh is imported as localhost/debian:12 (no registry is
# needed). The image is built afresh (its time is a release's), from its
# layers with CACHE=yes. SOURCE_BUILD=no skips the fallback job (the whole
# build). KEEP=1 keeps the work directory.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/package/lib.sh"
deb=${1:-$(ls "$TOP"/build/testflame_*_"$(dpkg --print-architecture)".deb 2>/dev/null | tail -n 1)}
[ -f "$deb" ] || fail "no .deb (make deb)"
[ "$(id -u)" = 0 ] || fail "needs root (podman's storage and networks)"
command -v podman >/dev/null || fail "podman is missing (apt-get install podman)"
GCL=$TOP/tests/node/node_modules/.bin/gitlab-ci-local
[ -x "$GCL" ] || fail "gitlab-ci-local is missing (make deps)"
version=$(dpkg-deb -f "$deb" Version)
IMAGE=testflame/testflame:$version   # the template's TESTFLAME_IMAGE
work=$(mktemp -d /tmp/testflame-image.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- the engine -------------------------------------------------------
if [ -z "${BASE:-}" ]; then
	if podman image exists debian:12-slim; then
		BASE=debian:12-slim
	else
		BASE=localhost/debian:12
		if ! podman image exists "$BASE"; then
			root=$(pristine_root)
			say "$BASE imported from $root (no registry here)"
			# as Debian's images are: no package cache, no apt lists
			tar -C "$root" --exclude='./var/cache/apt/archives/*.deb' --exclude='./var/lib/apt/lists/*' \
				--exclude='./dev/*' -c . | podman import --change 'CMD ["bash"]' - "$BASE" >/dev/null
		fi
	fi
fi
# podman's defaults ask for more than some hosts give: crun refuses a
# hybrid cgroup hierarchy with a controller on cgroup2, and the rlimits
# podman sets (1048576 files and processes) need CAP_SYS_RESOURCE to be
# raised to. Where its first container fails, the run goes on with runc and
# the limits this shell has, and says so.
if ! err=$(podman run --rm "$BASE" true 2>&1); then
	say "podman cannot start a container with its defaults here: $err"
	command -v runc >/dev/null || fail "runc is missing (apt-get install runc), and crun failed: $err"
	nproc=$(ulimit -Hu); [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
	cat >"$work/containers.conf" <<-CONF
	[containers]
	default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=$nproc:$nproc"]
	[engine]
	runtime = "runc"
	CONF
	export CONTAINERS_CONF=$work/containers.conf
	err=$(podman run --rm "$BASE" true 2>&1) || fail "podman with runc and the host's rlimits: $err"
	say "so: runc, nofile $(ulimit -Hn), nproc $nproc (CONTAINERS_CONF=$CONTAINERS_CONF)"
fi
say "$(podman --version), $(podman info --format '{{.Store.GraphDriverName}} storage, cgroups {{.Host.CgroupsVersion}}, {{.Host.OCIRuntime.Name}}')"

# --- the image --------------------------------------------------------
mkdir "$work/context" && cp "$deb" "$work/context/"
say "podman build -f packaging/Dockerfile --build-arg BASE=$BASE -t $IMAGE"
cache=--no-cache; [ "${CACHE:-}" = yes ] && cache=
t=$(now)
podman build $cache --build-arg "BASE=$BASE" --build-arg "DEB=$(basename "$deb")" -f "$TOP/packaging/Dockerfile" \
	-t "$IMAGE" "$work/context" >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log"; fail "podman build"; }
build_s=$(since "$t")
size=$(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f", $1 / 1e6 }')
base_size=$(podman image inspect --format '{{.Size}}' "$BASE" | awk '{ printf "%.0f", $1 / 1e6 }')
say "built in $build_s s: $size MB ($base_size MB of it the base)"
podman run --rm "$IMAGE" testflame --version

# --- doctor: what the container's rights allow ------------------------
doctor() { # label podman-options...
	local label=$1; shift
	podman run --rm "$@" "$IMAGE" testflame doctor >"$work/doctor.$label" 2>&1 ||
		{ cat "$work/doctor.$label"; fail "doctor ($label) exited $?"; }
	printf '%-22s %s\n' "$label:" "$(grep -E '^[a-z]+ +sampler: ' "$work/doctor.$label")"
}
say "testflame doctor in the image"
doctor default
doctor cap-add-PERFMON --cap-add PERFMON
doctor cap-add-SYS_ADMIN --cap-add SYS_ADMIN
doctor seccomp-unconfined --security-opt seccomp=unconfined
doctor privileged --privileged
grep -q "sampler: ptrace" "$work/doctor.default" || fail "the default container samples with perf?"
grep -E "perf_event_open: refused" "$work/doctor.default"
grep -q "sampler: perf: cpu-clock, kernel and user stacks" "$work/doctor.cap-add-SYS_ADMIN" ||
	fail "perf refused with SYS_ADMIN"
grep -q "sampler: perf" "$work/doctor.privileged" || fail "perf refused in a privileged container"

# --- run on the example project ---------------------------------------
cat >"$work/example.sh" <<\EOF
set -e
cd /builds/example
git init -q -b main && git config user.email t@example.com && git config user.name t
git add -A && git commit -qm libmini && make -s all >/dev/null
testflame run -- make -s check >/tmp/run1.log 2>&1 || { cat /tmp/run1.log; exit 1; }
grep "no baseline yet" /tmp/run1.log
echo "/* again */" >>src/hash.c && git commit -qam again && make -s all >/dev/null
rc=0; testflame run -- make -s check >/tmp/run2.log 2>&1 || rc=$?
grep -E "^baseline: |^testflame: [0-9]+ tests|^(no regression|REGRESSION)|sampling with ptrace" /tmp/run2.log | sort -u
test -s testflame-report/index.html
[ $rc = 0 ] || [ $rc = 3 ]
EOF
example() { # label podman-options...
	local label=$1; shift
	rm -rf "$work/example" && cp -r "$TOP/examples" "$work/example" &&
		rm -rf "$work/example/build" "$work/example/testflame-report"
	say "testflame run on the example project ($label)"
	podman run --rm "$@" -v "$work/example:/builds/example" -v "$work/example.sh:/example.sh:ro" \
		"$IMAGE" sh /example.sh || fail "the example project ($label)"
}
example "--cap-add SYS_ADMIN: perf" --cap-add SYS_ADMIN
example "default rights: ptrace"

# --- the GitLab template in gitlab-ci-local, podman as its engine -------
# gitlab-ci-local copies the checkout into volumes and the artifacts out
# with a helper image (rsync); without a registry it is made here
HELPER=localhost/testflame-gcl-helper:1
if ! podman image exists "$HELPER"; then
	printf 'FROM %s\nRUN apt-get update -q && apt-get install -y -q --no-install-recommends rsync && rm -rf /var/lib/apt/lists/*\n' \
		"$BASE" | podman build -t "$HELPER" -f - "$work/context" >"$work/helper.log" 2>&1 ||
		{ tail "$work/helper.log"; fail "the helper image"; }
fi
project=$work/project
rm -rf "$project" && cp -r "$TOP/examples" "$project" && rm -rf "$project/build" "$project/testflame-report"
# GitLab resolves `include: project:` from the server; here it is this tree's
mkdir "$project/gitlab" && cp "$TOP/gitlab/testflame.gitlab-ci.yml" "$project/gitlab/"
python3 - "$project/.gitlab-ci.yml" <<\PY
import sys, yaml
p = sys.argv[1]
doc = yaml.safe_load(open(p))
doc["include"] = [{"local": "gitlab/testflame.gitlab-ci.yml"}]
yaml.safe_dump(doc, open(p, "w"), sort_keys=False)
PY
(cd "$project" && git init -q -b main && git config user.email dev@example.com && git config user.name dev &&
	git add -A && git commit -qm libmini && git clone -q --bare . "$work/origin.git" &&
	git remote add origin "$work/origin.git" && git fetch -q origin && git remote set-head origin main &&
	git remote add gcl-origin https://gitlab.example/acme/libmini.git)
# Each output line with the seconds since gitlab-ci-local started; the
# set-up is from "starting IMAGE" to the line `testflame version` prints.
stamp() { perl -MTime::HiRes=time -ne 'BEGIN { $| = 1; $t = time } printf "%7.2f %s", time - $t, $_'; }
setup_time() { # log [from]: from "starting IMAGE", or from the before_script's first line
	awk -v from="${2:- starting }" 'index($0, from) && !s { s = $1 }
		/ > testflame [0-9]+\.[0-9]+\.[0-9]+ / && s { printf "%.2f", $1 - s; exit }' "$1"
}
BEFORE='$ if ! command -v testflame'   # the template's before_script
gcl() { # label gitlab-ci-local-options...
	local label=$1; shift
	(cd "$project" && rm -rf .gitlab-ci-local && "$GCL" --container-executable podman --helper-image "$HELPER" \
		--volume "$work/origin.git:$work/origin.git" --variable CI_PIPELINE_SOURCE=push "$@" testflame) 2>&1 |
		stamp >"$work/gcl.$label.log" || :
	grep -q " PASS  testflame" "$work/gcl.$label.log" || { tail -n 40 "$work/gcl.$label.log"; fail "the job ($label)"; }
	test -s "$project/.gitlab-ci-local/artifacts/testflame/testflame-report/head.pb.gz" ||
		fail "no run file in the job's artifacts ($label)"
}

say "the template's job in $IMAGE (its default): no TESTFLAME_REPO, nothing built"
gcl image
log=$work/gcl.image.log
grep -E "starting|copied to|testflame [0-9]+\.[0-9]+|sampling with|saved the baseline|PASS" "$log"
grep -q "TESTFLAME_REPO" "$log" && fail "the job asked for TESTFLAME_REPO"
grep -Eq "> +(CC|LINK) " "$log" && fail "the job built testflame"
image_setup=$(setup_time "$log")
image_before=$(setup_time "$log" "$BEFORE")
git --git-dir="$work/origin.git" for-each-ref refs/testflame | grep -q . || fail "no baseline pushed"

say "the same job with a privileged runner (privileged = true): perf"
gcl privileged --privileged
grep -q "sampling with ptrace" "$work/gcl.privileged.log" && fail "ptrace in a privileged container"
privileged_setup=$(setup_time "$work/gcl.privileged.log")

src_setup=skipped src_before=skipped
if [ "${SOURCE_BUILD:-yes}" != no ]; then
	# a project's own image: its toolchain and git, no testflame; the
	# template clones TESTFLAME_REPO (a bare clone of this tree, tagged as
	# the template's TESTFLAME_VERSION) and builds it
	OWN=localhost/testflame-own-image:1
	if ! podman image exists "$OWN"; then
		printf 'FROM %s\nRUN apt-get update -q && apt-get install -y -q --no-install-recommends git make gcc libc6-dev ca-certificates && rm -rf /var/lib/apt/lists/*\n' \
			"$BASE" | podman build -t "$OWN" -f - "$work/context" >"$work/own.log" 2>&1 ||
			{ tail "$work/own.log"; fail "the project's image"; }
	fi
	git clone -q --bare "$TOP" "$work/testflame.git" && git --git-dir="$work/testflame.git" tag v1 HEAD
	say "the template's job in a project's image: the fallback, built from TESTFLAME_REPO"
	gcl source --variable "TESTFLAME_IMAGE=$OWN" --variable "TESTFLAME_REPO=$work/testflame.git" \
		--volume "$work/testflame.git:$work/testflame.git"
	grep -E "starting|testflame [0-9]+\.[0-9]+|PASS" "$work/gcl.source.log"
	src_setup=$(setup_time "$work/gcl.source.log")
	src_before=$(setup_time "$work/gcl.source.log" "$BEFORE")
fi

say "figures ($(uptime | sed 's/.*load average: //' | cut -d, -f1) load)"
printf 'image %s: %s MB (base %s MB), built in %s s from %s\n' "$IMAGE" "$size" "$base_size" "$build_s" "$BASE"
printf 'GitLab job set-up, start to testflame on PATH: image %s s (privileged %s s), source build %s s\n' \
	"$image_setup" "$privileged_setup" "$src_setup"
printf '  of which the before_script: image %s s, source build %s s\n' "$image_before" "$src_before"
uptime
