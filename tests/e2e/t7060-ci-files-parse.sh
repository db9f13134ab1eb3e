#!/usr/bin/env bash
# t7060-ci-files-parse.sh - the CI files parse with the CI systems' own
# parsers: actions/action.yml and the example workflow with GitHub's
# (@actions/workflow-parser), the orb (its packed orb.yml being the packing
# of its source), its examples and the example CircleCI config with
# CircleCI's (@circleci/circleci-config-parser); the GitLab template and the
# example .gitlab-ci.yml with gitlab-ci-local's check against GitLab's
# schema. Each checker is shown to reject a broken file.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'the CI files with their parsers'

gh_parse() { # kind file...
	(cd "$NODE_DIR" && node --input-type=module - "$@" <<\JS
import { register } from 'node:module';
register('./json-hooks.mjs', import.meta.url);
const wp = await import('@actions/workflow-parser');
const wpa = await import('@actions/workflow-parser/actions/index');
const fs = await import('node:fs');
const [kind, ...files] = process.argv.slice(2);
let bad = 0;
for (const f of files) {
	const content = fs.readFileSync(f, 'utf8');
	const r = (kind === 'action' ? wpa.parseAction : wp.parseWorkflow)({ name: f, content }, new wp.NoOperationTraceWriter());
	let errs = r.context.errors.getErrors().map((e) => e.message);
	if (!errs.length) {
		if (kind === 'action') wpa.convertActionTemplate(r.context, r.value);
		else wp.convertWorkflowTemplate(r.context, r.value);
		errs = r.context.errors.getErrors().map((e) => e.message);
	}
	for (const e of errs) console.error(`${f}: ${e}`);
	bad += errs.length;
	if (!errs.length) console.log(`${f}: ok`);
}
process.exit(bad ? 1 : 0);
JS
	)
}

test_expect_success 'actions/action.yml parses with GitHub'\''s parser' '
	gh_parse action "$TOP/actions/action.yml" >out 2>err || { cat err; exit 1; }
'

test_expect_success 'the example workflows parse with GitHub'\''s parser' '
	gh_parse workflow "$TOP"/examples/.github/workflows/*.yml >out 2>err || { cat err; exit 1; }
'

test_expect_success 'GitHub'\''s parser rejects a broken action' '
	sed "s/using: composite/using: compost/" "$TOP/actions/action.yml" >broken.yml &&
	! gh_parse action broken.yml 2>err && test -s err
'

test_expect_success 'the orb: packed from its source, every part parses with CircleCI'\''s parser' '
	node "$NODE_DIR/circleci-check.mjs" "$TOP/circleci" >out 2>err || { cat err; exit 1; }
	expect_contains out "jobs: merge, profile, shard" &&
	expect_contains out "commands: allow-sampling, check, install, record-shard" &&
	expect_contains out "example pull-requests: workflows perf; jobs testflame/profile" &&
	expect_contains out "example sharded: workflows perf; jobs testflame/shard, testflame/merge"
'

test_expect_success 'the example CircleCI configs parse with the orb'\''s jobs' '
	node "$NODE_DIR/circleci-check.mjs" "$TOP/circleci" "$TOP/examples/.circleci/config.yml" \
		"$TOP/examples/.circleci/config.sharded.yml" >out 2>err || { cat err; exit 1; }
	expect_contains out "config.yml: workflows perf; jobs testflame/profile" &&
	expect_contains out "config.sharded.yml: workflows perf; jobs testflame/shard, testflame/merge"
'

test_expect_success 'the CircleCI check rejects a stale orb.yml and a broken job' '
	cp -r "$TOP/circleci" orb && sed -i "s/Put testflame on PATH/Put it on PATH/" orb/src/commands/install.yml &&
	! node "$NODE_DIR/circleci-check.mjs" orb 2>err && expect_contains err "is not the packing of src/" &&
	rm -rf orb && cp -r "$TOP/circleci" orb && sed -i "s/^executor: machine/executor: nosuch/" orb/src/jobs/profile.yml &&
	node "$NODE_DIR/orb-pack.mjs" orb/src >orb/orb.yml &&
	! node "$NODE_DIR/circleci-check.mjs" orb 2>err && expect_contains err "nosuch"
'

GCL=$NODE_DIR/node_modules/.bin/gitlab-ci-local
test_expect_success 'the GitLab template and the example .gitlab-ci.yml pass gitlab-ci-local'\''s schema check' '
	mkdir gl && cp -r "$TOP/examples/." gl/ && mkdir gl/gitlab && cp "$TOP/gitlab/testflame.gitlab-ci.yml" gl/gitlab/ &&
	sed -i "s|^  - project: testflame/testflame.*|  - local: gitlab/testflame.gitlab-ci.yml|; /^    ref: v1/d; /^    file: gitlab/d" gl/.gitlab-ci.yml &&
	(cd gl && git init -q && git add -A && git -c user.email=t@e -c user.name=t commit -qm x &&
	 git remote add origin https://gitlab.example/acme/libmini.git &&
	 "$GCL" --list --variable CI_PIPELINE_SOURCE=merge_request_event) >out 2>err || { cat out err; exit 1; }
	grep -q "^testflame " out
'

test_expect_success 'the sharded example .gitlab-ci.yml: parallel shards, then the merge in .post' '
	cp gl/.gitlab-ci.yml gl/plain.yml &&
	sed "s|^  - project: testflame/testflame.*|  - local: gitlab/testflame.gitlab-ci.yml|; /^    ref: v1/d; /^    file: gitlab/d" \
		"$TOP/examples/.gitlab-ci.sharded.yml" >gl/.gitlab-ci.yml &&
	(cd gl && "$GCL" --list --variable CI_PIPELINE_SOURCE=merge_request_event) >out 2>err || { cat out err; exit 1; }
	grep -Eq "^testflame-shard: \[3/3\] +test" out && grep -Eq "^testflame +\.post +always" out &&
	cp gl/plain.yml gl/.gitlab-ci.yml
'

test_expect_success 'gitlab-ci-local rejects a broken template' '
	sed -i "s/^  stage: test/  stage: [test/" gl/gitlab/testflame.gitlab-ci.yml &&
	! (cd gl && "$GCL" --list) >out 2>&1
'

test_done
