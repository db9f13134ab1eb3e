// gha-run.mjs - runs one job of a GitHub Actions workflow on this machine the
// way a hosted runner does, as far as testflame's action needs: no GitHub is
// reachable here, so this is the stand-in for the runner.
//
// The workflow and every composite action it uses are first parsed and
// validated with GitHub's own parser (@actions/workflow-parser); a file it
// rejects is an error. Then the job's steps run in order: `${{ }}`
// expressions are evaluated with GitHub's expression engine
// (@actions/expressions) over the github, env, inputs, steps, runner,
// secrets and job contexts; `if:` conditions get the implicit success();
// `run:` steps run as `bash --noprofile --norc -eo pipefail` with the
// runner's environment (GITHUB_* variables, the event payload at
// GITHUB_EVENT_PATH, and the file commands GITHUB_OUTPUT, GITHUB_ENV,
// GITHUB_PATH and GITHUB_STEP_SUMMARY); workflow commands on stdout
// (::error, ::warning, ::notice, ::add-mask::) become annotations; a
// composite action gets its inputs (defaults evaluated), GITHUB_ACTION_PATH
// and its outputs. Three actions are emulated: actions/checkout (the fetch
// and checkout commands actions/checkout runs, at its fetch depth),
// actions/upload-artifact (a copy into --artifacts, the workflow run's
// store) and actions/download-artifact (by name or pattern, each artifact
// into a directory of its name unless merge-multiple), and actions/cache's
// restore and save (a tar of the path per key in --cache, the repository's
// cache store: the exact key, else the newest of the restore-keys
// prefixes; cache-hit only on the exact key). Each step's wall time is in
// the result (`seconds`). `uses:` of
// OWNER/testflame/actions@REF resolves to --testflame (a testflame tree).
// One job of a matrix runs with --matrix (its combination, as JSON): the
// matrix context, and the job's name with the values, as GitHub shows it.
//
//   node gha-run.mjs --workflow FILE --job ID --event pull_request|push
//     --payload EVENT.json --sha SHA --ref REF --origin REPO_URL
//     --workspace DIR --testflame DIR --artifacts DIR --result OUT.json
//     [--matrix JSON] [--api-url URL] [--token TOKEN] [--temp DIR] [--cache DIR]
//     [--env KEY=VALUE,...] (the runner image's variables: ImageOS=ubuntu24,...)
import { register } from 'node:module';
register('./json-hooks.mjs', import.meta.url);

const fs = await import('node:fs');
const path = await import('node:path');
const { spawnSync } = await import('node:child_process');
const YAML = (await import('yaml')).default;
const wp = await import('@actions/workflow-parser');
const wpa = await import('@actions/workflow-parser/actions/index');
const ex = await import('@actions/expressions');

const opt = {};
for (let i = 2; i < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const k of ['workflow', 'job', 'event', 'payload', 'sha', 'ref', 'origin', 'workspace', 'testflame', 'artifacts', 'result'])
	if (!opt[k]) { console.error(`gha-run: --${k} is required`); process.exit(2); }
const payload = JSON.parse(fs.readFileSync(opt.payload, 'utf8'));
const matrix = opt.matrix ? JSON.parse(opt.matrix) : {};
const temp = opt.temp || fs.mkdtempSync('/tmp/gha-run.');
const token = opt.token || '';
const masks = token ? [token] : [];
const result = { job: 'success', steps: [], annotations: [], summary: '', masked_leaks: [] };

function mask(s) {
	for (const m of masks) if (m && m.length >= 3) s = s.split(m).join('***');
	return s;
}
function out(line) {
	process.stdout.write(mask(line) + '\n');
}

// ---- GitHub's parser first ------------------------------------------------

function validate(kind, file) {
	const content = fs.readFileSync(file, 'utf8');
	const trace = new wp.NoOperationTraceWriter();
	const r = kind === 'action'
		? wpa.parseAction({ name: file, content }, trace)
		: wp.parseWorkflow({ name: file, content }, trace);
	const errors = r.context.errors.getErrors().map((e) => e.message);
	if (!errors.length) {
		if (kind === 'action') wpa.convertActionTemplate(r.context, r.value);
		else wp.convertWorkflowTemplate(r.context, r.value);
		errors.push(...r.context.errors.getErrors().map((e) => e.message));
	}
	if (errors.length) {
		console.error(`gha-run: GitHub's parser rejects ${file}:\n  ${errors.join('\n  ')}`);
		process.exit(2);
	}
	return YAML.parse(content);
}

// ---- expressions ------------------------------------------------------------

const toData = (v) => JSON.parse(JSON.stringify(v === undefined ? null : v), ex.data.reviver);
function statusFuncs(scope) {
	const b = (v) => new ex.data.BooleanData(v);
	return new Map([
		['success', { name: 'success', minArgs: 0, maxArgs: 0, call: () => b(scope.status === 'success') }],
		['failure', { name: 'failure', minArgs: 0, maxArgs: 0, call: () => b(scope.status === 'failure') }],
		['always', { name: 'always', minArgs: 0, maxArgs: 0, call: () => b(true) }],
		['cancelled', { name: 'cancelled', minArgs: 0, maxArgs: 0, call: () => b(false) }],
	]);
}
function evaluate(expr, scope) {
	const ctx = scope.contexts();
	const lr = new ex.Lexer(expr).lex();
	const funcs = statusFuncs(scope);
	const parser = new ex.Parser(lr.tokens, Object.keys(ctx), [...funcs.values()].map(({ name, minArgs, maxArgs }) => ({ name, minArgs, maxArgs })));
	const tree = parser.parse();
	const dict = new ex.data.Dictionary(...Object.entries(ctx).map(([key, value]) => ({ key, value: toData(value) })));
	return new ex.Evaluator(tree, dict, funcs).evaluate();
}
// A string with ${{ }} parts, as the runner expands it.
function interpolate(s, scope) {
	if (typeof s !== 'string') return s === undefined || s === null ? '' : String(s);
	return s.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e) => evaluate(e.trim(), scope).coerceString());
}
function condition(raw, scope) {
	let e = raw === undefined || raw === null ? '' : String(raw).trim();
	const m = /^\$\{\{([\s\S]*)\}\}$/.exec(e);
	if (m) e = m[1].trim();
	if (!e) e = 'success()';
	else if (!/\b(success|failure|always|cancelled)\s*\(/.test(e)) e = `success() && (${e})`;
	const v = evaluate(e, scope);
	return v.kind === ex.data.Kind.Boolean ? v.value : !!v.coerceString();
}

// ---- file commands ------------------------------------------------------------

function parseFileCommand(file) {
	const values = {};
	if (!fs.existsSync(file)) return values;
	const lines = fs.readFileSync(file, 'utf8').split('\n');
	for (let i = 0; i < lines.length; i++) {
		const l = lines[i];
		if (!l) continue;
		const heredoc = /^([^=<]+)<<(.+)$/.exec(l);
		if (heredoc) {
			const [, name, delim] = heredoc;
			const body = [];
			for (i++; i < lines.length && lines[i] !== delim; i++) body.push(lines[i]);
			if (i >= lines.length) throw new Error(`${file}: no closing delimiter ${delim} for ${name}`);
			values[name] = body.join('\n');
		} else {
			const eq = l.indexOf('=');
			if (eq <= 0) throw new Error(`${file}: bad line '${l}'`);
			values[l.slice(0, eq)] = l.slice(eq + 1);
		}
	}
	return values;
}

function decodeData(s) {
	return s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%');
}
function decodeProp(s) {
	return s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');
}
function workflowCommands(text, step) {
	for (const line of text.split('\n')) {
		const m = /^::([a-z-]+)(?: ([^:]*))?::(.*)$/.exec(line);
		if (!m) continue;
		const [, cmd, props, data] = m;
		if (cmd === 'add-mask') { masks.push(decodeData(data)); continue; }
		if (!['error', 'warning', 'notice'].includes(cmd)) continue;
		const a = { level: cmd, message: decodeData(data), step };
		for (const kv of (props || '').split(',').filter(Boolean)) {
			const eq = kv.indexOf('=');
			a[kv.slice(0, eq).trim()] = decodeProp(kv.slice(eq + 1));
		}
		if (a.line) a.line = Number(a.line);
		result.annotations.push(a);
	}
}

// ---- the job ------------------------------------------------------------------

const workflow = validate('workflow', opt.workflow);
const on = typeof workflow.on === 'string' ? { [workflow.on]: null } : Array.isArray(workflow.on)
	? Object.fromEntries(workflow.on.map((e) => [e, null])) : workflow.on;
if (!(opt.event in on)) { console.error(`gha-run: the workflow does not run on ${opt.event}`); process.exit(2); }
const job = workflow.jobs[opt.job];
if (!job) { console.error(`gha-run: no job '${opt.job}'`); process.exit(2); }
const permissions = job.permissions || workflow.permissions || {};

const ws = path.resolve(opt.workspace);
fs.mkdirSync(ws, { recursive: true });
const repository = payload.repository.full_name;
const prNumber = payload.pull_request ? payload.pull_request.number : null;
const refName = opt.ref.replace(/^refs\/(heads|tags)\//, '').replace(/^refs\/pull\//, '');
const eventPath = path.join(temp, 'event.json');
fs.writeFileSync(eventPath, JSON.stringify(payload));
const github = {
	event_name: opt.event, event: payload, sha: opt.sha, ref: opt.ref, ref_name: refName,
	ref_type: opt.ref.startsWith('refs/tags/') ? 'tag' : 'branch',
	head_ref: payload.pull_request ? payload.pull_request.head.ref : '',
	base_ref: payload.pull_request ? payload.pull_request.base.ref : '',
	repository, repository_owner: repository.split('/')[0], server_url: 'https://github.com',
	api_url: opt['api-url'] || 'https://api.github.com', graphql_url: 'https://api.github.com/graphql',
	run_id: '4711', run_number: '12', run_attempt: '1', workflow: workflow.name || path.basename(opt.workflow),
	job: opt.job, workspace: ws, token, actor: 'octocat', action_path: '',
};
const runnerEnv = {
	PATH: process.env.PATH, HOME: process.env.HOME || '/root', LANG: 'C.UTF-8',
	CI: 'true', GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: opt.event, GITHUB_EVENT_PATH: eventPath,
	GITHUB_SHA: opt.sha, GITHUB_REF: opt.ref, GITHUB_REF_NAME: refName, GITHUB_REF_TYPE: github.ref_type,
	GITHUB_HEAD_REF: github.head_ref, GITHUB_BASE_REF: github.base_ref, GITHUB_REPOSITORY: repository,
	GITHUB_REPOSITORY_OWNER: github.repository_owner, GITHUB_SERVER_URL: github.server_url,
	GITHUB_API_URL: github.api_url, GITHUB_GRAPHQL_URL: github.graphql_url, GITHUB_RUN_ID: github.run_id,
	GITHUB_RUN_NUMBER: github.run_number, GITHUB_RUN_ATTEMPT: github.run_attempt,
	GITHUB_WORKFLOW: github.workflow, GITHUB_JOB: opt.job, GITHUB_WORKSPACE: ws, GITHUB_ACTOR: 'octocat',
	RUNNER_OS: 'Linux', RUNNER_ARCH: 'X64', RUNNER_TEMP: temp, RUNNER_TOOL_CACHE: path.join(temp, 'tool-cache'),
	...Object.fromEntries((opt.env || '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
};
const jobEnv = {};      // from GITHUB_ENV
const pathAdds = [];    // from GITHUB_PATH

function envOf(scope, stepEnv) {
	const env = { ...runnerEnv, ...interpolated(workflow.env, scope), ...interpolated(job.env, scope), ...jobEnv, ...stepEnv };
	env.PATH = [...pathAdds].reverse().concat(env.PATH).join(':');
	if (scope.actionPath) env.GITHUB_ACTION_PATH = scope.actionPath;
	return env;
}
function interpolated(map, scope) {
	const o = {};
	for (const [k, v] of Object.entries(map || {})) o[k] = interpolate(typeof v === 'string' ? v : String(v), scope);
	return o;
}

function makeScope(parent, extra) {
	const s = {
		status: 'success', steps: {}, inputs: extra.inputs, actionPath: extra.actionPath, label: extra.label,
		contexts() {
			return {
				github: { ...github, action_path: s.actionPath || '' }, env: { ...runnerEnv, ...jobEnv },
				steps: s.steps, inputs: s.inputs || {}, runner: { os: 'Linux', arch: 'X64', temp },
				secrets: { GITHUB_TOKEN: token }, job: { status: s.status }, vars: {}, matrix,
				strategy: opt.matrix ? { 'fail-fast': false, 'job-total': 0, 'max-parallel': 0 } : {},
			};
		},
	};
	return s;
}

function runScript(step, scope, label) {
	const script = interpolate(step.run, scope);
	const file = path.join(temp, `step-${result.steps.length}.sh`);
	fs.writeFileSync(file, script);
	const files = {};
	for (const name of ['GITHUB_OUTPUT', 'GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_STEP_SUMMARY']) {
		files[name] = path.join(temp, `${name.toLowerCase()}-${result.steps.length}`);
		fs.writeFileSync(files[name], '');
	}
	const shell = step.shell || 'bash';
	if (shell !== 'bash') throw new Error(`${label}: shell '${shell}' is not emulated`);
	const env = { ...envOf(scope, interpolated(step.env, scope)), ...files };
	const cwd = step['working-directory'] ? path.resolve(ws, interpolate(step['working-directory'], scope)) : ws;
	const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', file], { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28 });
	workflowCommands(r.stdout || '', label);
	for (const l of (r.stdout || '').split('\n')) if (l) out(`    | ${l}`);
	for (const l of (r.stderr || '').split('\n')) if (l) out(`    ! ${l}`);
	const outputs = parseFileCommand(files.GITHUB_OUTPUT);
	Object.assign(jobEnv, parseFileCommand(files.GITHUB_ENV));
	for (const p of fs.readFileSync(files.GITHUB_PATH, 'utf8').split('\n')) if (p.trim()) pathAdds.push(p.trim());
	result.summary += fs.readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8');
	const code = r.status === null ? 128 : r.status;
	return { code, outputs };
}

function git(args, cwd) {
	const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
	out(`    $ git ${args.join(' ')}${r.status ? ` -> ${r.status}: ${r.stderr.trim()}` : ''}`);
	return r.status;
}

// actions/checkout, as it fetches: one commit at --depth unless fetch-depth: 0
function checkout(withs) {
	const depth = withs['fetch-depth'] === undefined ? 1 : Number(withs['fetch-depth']);
	const target = prNumber ? `refs/remotes/pull/${prNumber}/merge` : `refs/remotes/origin/${refName}`;
	let rc = git(['init', '-q'], ws) || git(['remote', 'add', 'origin', opt.origin], ws) ||
		git(['config', '--local', 'gc.auto', '0'], ws);
	const fetch = ['-c', 'protocol.version=2', 'fetch', '--no-tags', '--prune', '--no-recurse-submodules'];
	if (depth > 0) fetch.push(`--depth=${depth}`);
	rc = rc || git([...fetch, 'origin', `+${opt.sha}:${target}`], ws);
	rc = rc || (prNumber ? git(['checkout', '-q', '--force', target], ws)
		: git(['checkout', '-q', '--force', '-B', refName, target], ws));
	return { code: rc, outputs: { ref: opt.ref, commit: opt.sha } };
}

function uploadArtifact(withs, scope) {
	const name = withs.name || 'artifact';
	const src = path.resolve(ws, withs.path || '');
	if (!withs.path || !fs.existsSync(src)) {
		if ((withs['if-no-files-found'] || 'warn') === 'error') return { code: 1, outputs: {} };
		out(`    no files at '${withs.path}'`);
		return { code: 0, outputs: {} };
	}
	const dst = path.join(opt.artifacts, name);
	fs.mkdirSync(dst, { recursive: true });
	fs.cpSync(src, fs.statSync(src).isDirectory() ? dst : path.join(dst, path.basename(src)), { recursive: true });
	out(`    uploaded ${withs.path} as artifact '${name}'`);
	return { code: 0, outputs: { 'artifact-id': '1' } };
}

// actions/download-artifact@v4: `name`, else every artifact matching
// `pattern` (a glob of * and ?), each into PATH/<name>, or all into PATH
// with merge-multiple
function downloadArtifact(withs) {
	const dst = path.resolve(ws, withs.path || '.');
	const names = fs.existsSync(opt.artifacts) ? fs.readdirSync(opt.artifacts).sort() : [];
	let want;
	if (withs.name) want = names.filter((n) => n === withs.name);
	else {
		const re = new RegExp('^' + (withs.pattern || '*').replace(/[.+^${}()|[\]\\]/g, '\\$&')
			.replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
		want = names.filter((n) => re.test(n));
	}
	if (withs.name && !want.length) {
		out(`    no artifact named '${withs.name}'`);
		return { code: 1, outputs: {} };
	}
	const merge = withs.name || String(withs['merge-multiple']) === 'true';
	for (const n of want) {
		const to = merge ? dst : path.join(dst, n);
		fs.mkdirSync(to, { recursive: true });
		fs.cpSync(path.join(opt.artifacts, n), to, { recursive: true });
		out(`    downloaded artifact '${n}' to ${to}`);
	}
	return { code: 0, outputs: { 'download-path': dst } };
}

// actions/cache/restore@v4 and actions/cache/save@v4 over --cache: one tar
// per key, of the paths (newline-separated) as given
function cacheFile(key) {
	return path.join(opt.cache, encodeURIComponent(key) + '.tar');
}
function cachePaths(withs) {
	return String(withs.path || '').split('\n').map((p) => p.trim()).filter(Boolean)
		.map((p) => path.resolve(ws, p.replace(/^~(?=\/)/, process.env.HOME || '/root')));
}
function cacheRestore(withs) {
	const key = withs.key;
	if (!opt.cache || !key) return { code: opt.cache ? 1 : 0, outputs: { 'cache-hit': 'false' } };
	let file = cacheFile(key), matched = key;
	if (!fs.existsSync(file)) {
		file = null;
		const prefixes = String(withs['restore-keys'] || '').split('\n').map((k) => k.trim()).filter(Boolean);
		const have = fs.existsSync(opt.cache) ? fs.readdirSync(opt.cache).filter((f) => f.endsWith('.tar'))
			.map((f) => ({ key: decodeURIComponent(f.slice(0, -4)), t: fs.statSync(path.join(opt.cache, f)).mtimeMs })) : [];
		for (const pre of prefixes) {
			const m = have.filter((h) => h.key.startsWith(pre)).sort((a, b) => b.t - a.t)[0];
			if (m) { file = cacheFile(m.key); matched = m.key; break; }
		}
	}
	if (!file) {
		out(`    cache not found for input keys: ${key}`);
		return { code: 0, outputs: { 'cache-hit': 'false', 'cache-primary-key': key } };
	}
	const r = spawnSync('tar', ['-xf', file, '-P'], { encoding: 'utf8' });
	if (r.status) return { code: 1, outputs: {} };
	out(`    cache restored from key: ${matched}`);
	return { code: 0, outputs: { 'cache-hit': String(matched === key), 'cache-primary-key': key, 'cache-matched-key': matched } };
}
function cacheSave(withs) {
	const key = withs.key;
	if (!opt.cache || !key) return { code: 0, outputs: {} };
	fs.mkdirSync(opt.cache, { recursive: true });
	if (fs.existsSync(cacheFile(key))) {
		out(`    cache entry ${key} exists: not saved again`);
		return { code: 0, outputs: {} };
	}
	const paths = cachePaths(withs).filter((p) => fs.existsSync(p));
	if (!paths.length) { out('    no paths to cache'); return { code: 0, outputs: {} }; }
	const r = spawnSync('tar', ['-cPf', cacheFile(key) + '.tmp', ...paths], { encoding: 'utf8' });
	if (r.status) return { code: 1, outputs: {} };
	fs.renameSync(cacheFile(key) + '.tmp', cacheFile(key));
	out(`    cache saved with key: ${key}`);
	return { code: 0, outputs: {} };
}

function compositeAction(dir, withs, parentScope, label) {
	const file = ['action.yml', 'action.yaml'].map((f) => path.join(dir, f)).find((f) => fs.existsSync(f));
	if (!file) throw new Error(`${label}: no action.yml in ${dir}`);
	const action = validate('action', file);
	if (action.runs.using !== 'composite') throw new Error(`${label}: only composite actions are emulated`);
	const inputs = {};
	for (const [name, def] of Object.entries(action.inputs || {})) {
		if (name in withs) inputs[name] = withs[name];
		else if (def && def.default !== undefined) inputs[name] = interpolate(String(def.default), parentScope);
		else if (def && def.required) throw new Error(`${label}: input '${name}' is required`);
		else inputs[name] = '';
	}
	for (const name of Object.keys(withs))
		if (!(name in (action.inputs || {}))) out(`    warning: unexpected input '${name}'`);
	const scope = makeScope(parentScope, { inputs, actionPath: dir, label });
	runSteps(action.runs.steps, scope, label);
	const outputs = {};
	for (const [name, def] of Object.entries(action.outputs || {})) outputs[name] = interpolate(def.value, scope);
	return { code: scope.status === 'success' ? 0 : 1, outputs };
}

function runSteps(steps, scope, where) {
	steps.forEach((step, i) => {
		const id = step.id || `__${i}`;
		const label = `${where} / ${step.name || step.uses || (step.run || '').split('\n')[0]}`;
		if (!condition(step.if, scope)) {
			scope.steps[id] = { outputs: {}, outcome: 'skipped', conclusion: 'skipped' };
			result.steps.push({ label, outcome: 'skipped' });
			out(`--- ${label}: skipped`);
			return;
		}
		out(`--- ${label}`);
		const started = process.hrtime.bigint();
		let r;
		if (step.run !== undefined) {
			r = runScript(step, scope, label);
		} else {
			const uses = String(step.uses);
			const withs = interpolated(step.with, scope);
			if (/^actions\/checkout@/.test(uses)) r = checkout(withs);
			else if (/^actions\/upload-artifact@/.test(uses)) r = uploadArtifact(withs, scope);
			else if (/^actions\/download-artifact@/.test(uses)) r = downloadArtifact(withs);
			else if (/^actions\/cache\/restore@/.test(uses)) r = cacheRestore(withs);
			else if (/^actions\/cache\/save@/.test(uses)) r = cacheSave(withs);
			else if (/^[^/]+\/testflame\/actions@/.test(uses)) r = compositeAction(path.join(opt.testflame, 'actions'), withs, scope, label);
			else if (uses.startsWith('./')) r = compositeAction(path.resolve(ws, uses), withs, scope, label);
			else throw new Error(`${label}: '${uses}' is not emulated`);
		}
		const outcome = r.code === 0 ? 'success' : 'failure';
		scope.steps[id] = { outputs: r.outputs, outcome, conclusion: outcome };
		const seconds = Number(process.hrtime.bigint() - started) / 1e9;
		result.steps.push({ label, outcome, exit_code: r.code, outputs: r.outputs, seconds });
		out(`    => ${outcome}${r.code ? ` (exit ${r.code})` : ''}`);
		if (r.code !== 0) scope.status = 'failure';
	});
}

const top = makeScope(null, { label: opt.job });
result.permissions = permissions;
try {
	runSteps(job.steps, top, opt.job);
} catch (e) {
	console.error(`gha-run: ${e.message}`);
	top.status = 'failure';
	result.error = e.message;
}
result.job = top.status;
const text = JSON.stringify(result, null, 1);
if (token && text.includes(token)) result.masked_leaks.push('the token appears in the result');
fs.writeFileSync(opt.result, JSON.stringify(result, null, 1));
out(`=== job ${opt.job}: ${result.job}`);
process.exit(result.job === 'success' ? 0 : 1);
