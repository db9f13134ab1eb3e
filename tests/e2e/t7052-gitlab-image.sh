#!/usr/bin/env bash
# t7052-gitlab-image.sh - the GitLab template's default: the job runs in
# testflame's image (TESTFLAME_IMAGE), where the .deb is installed, and
# needs neither TESTFLAME_REPO nor TESTFLAME_SRC. No container engine runs
# here, so gitlab-ci-local runs the job with the shell executor
# (--force-shell-executor, which skips `image:`), with the package
# installed the way the image has it: `make deb`'s package unpacked into a
# root whose usr/bin is on PATH. What this cannot show: the image itself
# (packaging/Dockerfile) being built and pulled.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

GCL=$NODE_DIR/node_modules/.bin/gitlab-ci-local
need_node_modules 'the GitLab template from the image'
if ! need rsync dpkg-deb dpkg-shlibdeps; then
	test_skip 'the GitLab template from the image' 'rsync or dpkg-dev is missing (make deps)'
	test_done
	exit 0
fi

test_expect_success 'the package, as the image installs it' '
	LINTIAN=no sh "$TOP/packaging/deb.sh" "$BUILD" >deb.log 2>&1 || { cat deb.log; exit 1; }
	deb=$(ls "$BUILD"/testflame_*_$(dpkg --print-architecture).deb) &&
	dpkg-deb -x "$deb" image && test -x image/usr/bin/testflame
'

mkdir project && cp -r "$TOP/examples/." project/ && rm -rf project/build project/testflame-report
mkdir project/gitlab && cp "$TOP/gitlab/testflame.gitlab-ci.yml" project/gitlab/ &&
python3 - project/.gitlab-ci.yml <<\PY
import sys, yaml
p = sys.argv[1]
doc = yaml.safe_load(open(p))
job = doc["testflame"]["variables"]
assert "TESTFLAME_REPO" not in job and "TESTFLAME_SRC" not in job, job
doc["include"] = [{"local": "gitlab/testflame.gitlab-ci.yml"}]
yaml.safe_dump(doc, open(p, "w"), sort_keys=False)
PY
(cd project && git init -q -b main && git config user.email dev@example.com && git config user.name dev &&
	git add -A && git commit -qm "libmini with testflame") >/dev/null

test_expect_success 'the default branch pipeline runs from the image: nothing built, no TESTFLAME_REPO' '
	(cd project && PATH="$SCRATCH/image/usr/bin:$PATH" "$GCL" --force-shell-executor --shell-isolation \
		--no-artifacts-to-source --variable CI_PIPELINE_SOURCE=push --variable GITLAB_CI=true \
		--variable "TESTFLAME_COMMAND=make -s check" testflame) >main.log 2>&1 || { tail -n 40 main.log; exit 1; }
	expect_contains main.log "testflame $("$SCRATCH/image/usr/bin/testflame" --version | sed "s/^testflame //")" &&
	expect_not_contains main.log "TESTFLAME_REPO" && expect_not_contains main.log "deps-build" &&
	expect_contains main.log "saved the baseline" &&
	test -s project/.gitlab-ci-local/artifacts/testflame/testflame-report/head.pb.gz &&
	grep -q "^  image: \$TESTFLAME_IMAGE$" "$TOP/gitlab/testflame.gitlab-ci.yml"
'

test_expect_success 'another image without testflame and no way to get it: one line that says what to set' '
	(cd project && "$GCL" --force-shell-executor --shell-isolation --no-artifacts-to-source \
		--variable CI_PIPELINE_SOURCE=push --variable TESTFLAME_IMAGE=debian:12 \
		--variable TESTFLAME_SRC=/nonexistent testflame) >other.log 2>&1 && exit 1
	expect_contains other.log "not in the image '"'"'debian:12'"'"': set TESTFLAME_DEB"
'

test_done
