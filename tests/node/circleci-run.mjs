// circleci-run.mjs - runs one job of a CircleCI config on this machine the
// way CircleCI's machine executor does, as far as testflame's orb needs:
// CircleCI's runner is not available here, so this is its stand-in.
//
// The config is first parsed with CircleCI's own parser (circleci-check.mjs
// does that part in the tests); here the job named in a workflow is
// expanded from the orb (packed orb.yml): job parameters from their
// defaults and the workflow's values, `<< parameters.x >>` substituted in
// the job and again in each orb command it calls, as CircleCI compiles a
// config. Steps then run in order: `checkout` (clone of --origin, the
// branch at CIRCLE_SHA1, as CircleCI's checkout does), `run` (bash -eo
// pipefail, with the step's `environment`, BASH_ENV carried between steps),
// `store_artifacts` and `store_test_results` (copied into --out),
// `persist_to_workspace` and `attach_workspace` (the workflow's workspace,
// --workspace, shared by its jobs), `save_cache` and `restore_cache` (the
// project's cache, --cache, shared by its jobs; without it an empty one
// of this job's own, under --out: keys from templates, {{ checksum "FILE" }},
// {{ arch }}, {{ .Branch }}, {{ .Environment.NAME }}, {{ epoch }}; a key
// saved once is never saved again; restore takes the first key that
// matches exactly, else the newest cache whose key starts with it; both
// paths as absolute, ~ the home); after a failed step the rest are
// skipped unless `when: always`. The job's environment is CircleCI's
// built-in variables plus the project's (--env KEY=VALUE); a job with
// `parallelism` above 1 runs as one of its containers, --node INDEX
// (CIRCLE_NODE_INDEX, from 0, of CIRCLE_NODE_TOTAL).
//
//   node circleci-run.mjs --config CONFIG.yml --orb ORB.yml --job ALIAS/NAME
//     --origin REPO --workdir DIR --out DIR --result OUT.json
//     [--workspace DIR] [--cache DIR] [--node INDEX] --env KEY=VALUE ...
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import YAML from 'yaml';

const opt = { env: [] };
for (let i = 2; i < process.argv.length; i += 2) {
	const k = process.argv[i].replace(/^--/, '');
	if (k === 'env') opt.env.push(process.argv[i + 1]);
	else opt[k] = process.argv[i + 1];
}
const config = YAML.parse(fs.readFileSync(opt.config, 'utf8'));
const orb = YAML.parse(fs.readFileSync(opt.orb, 'utf8'));
const [alias, jobName] = opt.job.split('/');
if (!config.orbs || !String(config.orbs[alias] || '').startsWith('testflame/testflame@'))
	throw new Error(`the config does not import the orb as '${alias}'`);
const wfJob = Object.values(config.workflows).flatMap((w) => w.jobs)
	.map((j) => (typeof j === 'string' ? { [j]: {} } : j)).find((j) => Object.keys(j)[0] === opt.job);
if (!wfJob) throw new Error(`no workflow runs ${opt.job}`);
const projectEnv = Object.fromEntries(opt.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));

// what a workflow's job entry may say besides the job's parameters
const RESERVED = ['name', 'when', 'requires', 'context', 'filters', 'matrix', 'type', 'pre-steps', 'post-steps'];

// << parameters.x >> with the values of one component
function bindParams(defs, given, where) {
	const values = {};
	for (const [name, def] of Object.entries(defs || {})) {
		if (given && name in given) values[name] = given[name];
		else if (def.default !== undefined) values[name] = def.default;
		else throw new Error(`${where}: parameter '${name}' is required`);
	}
	for (const name of Object.keys(given || {}))
		if (!(name in (defs || {})) && !RESERVED.includes(name)) throw new Error(`${where}: unknown parameter '${name}'`);
	return values;
}
function substitute(node, values) {
	if (typeof node === 'string') {
		const whole = /^<<\s*parameters\.([\w-]+)\s*>>$/.exec(node);
		if (whole && whole[1] in values) return values[whole[1]];
		return node.replace(/<<\s*parameters\.([\w-]+)\s*>>/g, (m, n) => {
			if (!(n in values)) throw new Error(`no parameter '${n}'`);
			return String(values[n]);
		});
	}
	if (Array.isArray(node)) return node.map((x) => substitute(x, values));
	if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, substitute(v, values)]));
	return node;
}

// The job's steps with orb commands expanded into built-in steps.
function expand(steps, where) {
	const out = [];
	for (const step of steps) {
		const [name, args] = typeof step === 'string' ? [step, {}] : Object.entries(step)[0];
		const bare = name.startsWith(`${alias}/`) ? name.slice(alias.length + 1) : name;
		if (['run', 'checkout', 'store_artifacts', 'store_test_results', 'persist_to_workspace',
			'attach_workspace', 'save_cache', 'restore_cache'].includes(name)) {
			out.push({ type: name, args: typeof args === 'string' ? { command: args } : (args || {}) });
		} else if (orb.commands[bare]) {
			const cmd = orb.commands[bare];
			const values = bindParams(cmd.parameters, args || {}, `${where}/${bare}`);
			out.push(...expand(substitute(cmd.steps, values), `${where}/${bare}`));
		} else {
			throw new Error(`${where}: step '${name}' is not emulated`);
		}
	}
	return out;
}

const job = orb.jobs[jobName];
if (!job) throw new Error(`the orb has no job '${jobName}'`);
const jobValues = bindParams(job.parameters, Object.values(wfJob)[0] || {}, opt.job);
const steps = expand(substitute(job.steps, jobValues), opt.job);
const parallelism = Number(substitute(job.parallelism || 1, jobValues));
if (parallelism > 1 && opt.node === undefined) throw new Error(`${opt.job} runs ${parallelism} containers: name one with --node`);
if (opt.node !== undefined && !(Number(opt.node) >= 0 && Number(opt.node) < parallelism))
	throw new Error(`--node ${opt.node}: ${opt.job} has ${parallelism} containers`);

const workdir = path.resolve(opt.workdir);
fs.mkdirSync(workdir, { recursive: true });
fs.mkdirSync(opt.out, { recursive: true });
const bashEnv = path.join(opt.out, '.bash_env');
fs.writeFileSync(bashEnv, '');
const baseEnv = {
	PATH: process.env.PATH, HOME: process.env.HOME || '/root', LANG: 'C.UTF-8', CI: 'true', CIRCLECI: 'true',
	CIRCLE_WORKING_DIRECTORY: workdir, CIRCLE_JOB: opt.job, CIRCLE_BUILD_NUM: '77', BASH_ENV: bashEnv,
	CIRCLE_NODE_INDEX: String(opt.node || 0), CIRCLE_NODE_TOTAL: String(parallelism),
	...projectEnv,
};

// a glob of *, ? (no /) against a name
function globRe(g) {
	return new RegExp('^' + g.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]') + '$');
}
function persist(args) {
	if (!opt.workspace) throw new Error('persist_to_workspace: no --workspace');
	const root = path.resolve(workdir, args.root || '.');
	let n = 0;
	for (const p of args.paths || []) {
		const dir = path.join(root, path.dirname(p)), re = globRe(path.basename(p));
		for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
			if (!re.test(f)) continue;
			const rel = path.relative(root, path.join(dir, f));
			fs.mkdirSync(path.dirname(path.join(opt.workspace, rel)), { recursive: true });
			fs.cpSync(path.join(dir, f), path.join(opt.workspace, rel), { recursive: true });
			process.stdout.write(`    persisted ${rel}\n`);
			n++;
		}
	}
	return n ? 0 : 1; /* CircleCI fails a persist that matched nothing */
}
function attach(args) {
	if (!opt.workspace) throw new Error('attach_workspace: no --workspace');
	const at = path.resolve(workdir, args.at || '.');
	fs.mkdirSync(at, { recursive: true });
	if (fs.existsSync(opt.workspace)) fs.cpSync(opt.workspace, at, { recursive: true });
	process.stdout.write(`    attached the workspace at ${at}\n`);
	return 0;
}
// a cache key's template, evaluated as CircleCI does
function cacheKey(t) {
	return String(t).replace(/\{\{\s*(.*?)\s*\}\}/g, (m, e) => {
		let x;
		if ((x = /^checksum\s+"(.*)"$/.exec(e))) {
			const f = path.resolve(workdir, x[1]);
			if (!fs.existsSync(f)) throw new Error(`cache key: no file ${x[1]} to checksum`);
			return crypto.createHash('sha256').update(fs.readFileSync(f)).digest('base64url');
		}
		if (e === 'arch') return `arch1-linux-${process.arch === 'x64' ? 'amd64' : process.arch}`;
		if (e === 'epoch') return String(Math.floor(Date.now() / 1000));
		if (e === '.Branch') return baseEnv.CIRCLE_BRANCH || '';
		if (e === '.Revision') return baseEnv.CIRCLE_SHA1 || '';
		if ((x = /^\.Environment\.(\w+)$/.exec(e))) return baseEnv[x[1]] || '';
		throw new Error(`cache key: '${e}' is not emulated`);
	});
}
function cachePath(p) {
	return p.startsWith('~/') ? path.join(baseEnv.HOME, p.slice(2)) : path.resolve(workdir, p);
}
const cacheDir = opt.cache || path.join(opt.out, '.cache');
function saveCache(args) {
	const key = cacheKey(args.key), dir = path.join(cacheDir, encodeURIComponent(key));
	if (fs.existsSync(dir)) {
		process.stdout.write(`    Skipping cache generation, cache already exists for key: ${key}\n`);
		return 0;
	}
	const tmp = `${dir}.tmp`, saved = [];
	for (const p of args.paths || []) {
		const abs = cachePath(p);
		if (!fs.existsSync(abs)) {
			process.stdout.write(`    Warning: could not find ${p}\n`);
			continue;
		}
		fs.cpSync(abs, path.join(tmp, 'files', abs), { recursive: true, verbatimSymlinks: true });
		saved.push(abs);
	}
	if (!saved.length) {
		process.stdout.write('    nothing to save\n');
		return 0;
	}
	fs.writeFileSync(path.join(tmp, 'paths.json'), JSON.stringify(saved));
	fs.renameSync(tmp, dir);
	process.stdout.write(`    saved ${saved.join(', ')} under ${key}\n`);
	return 0;
}
function restoreCache(args) {
	const have = fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).filter((d) => !d.endsWith('.tmp'))
		.map((d) => ({ key: decodeURIComponent(d), dir: path.join(cacheDir, d), t: fs.statSync(path.join(cacheDir, d)).mtimeMs })) : [];
	for (const t of args.keys || [args.key]) {
		const key = cacheKey(t);
		const hit = have.find((c) => c.key === key) ||
			have.filter((c) => c.key.startsWith(key)).sort((a, b) => b.t - a.t)[0];
		if (!hit) continue;
		for (const abs of JSON.parse(fs.readFileSync(path.join(hit.dir, 'paths.json'), 'utf8')))
			fs.cpSync(path.join(hit.dir, 'files', abs), abs, { recursive: true, verbatimSymlinks: true });
		process.stdout.write(`    Found a cache from key ${hit.key}; restored\n`);
		return 0;
	}
	process.stdout.write('    No cache is found for the keys\n');
	return 0;
}
const result = { steps: [], status: 'success', artifacts: [], test_results: [] };

function runBash(script, env, label) {
	const file = path.join(opt.out, `.step-${result.steps.length}.sh`);
	fs.writeFileSync(file, script);
	const r = spawnSync('/bin/bash', ['-eo', 'pipefail', file], { cwd: workdir, env, encoding: 'utf8', maxBuffer: 1 << 28 });
	for (const l of `${r.stdout}${r.stderr}`.split('\n')) if (l) process.stdout.write(`    | ${l}\n`);
	return r.status === null ? 128 : r.status;
}

for (const s of steps) {
	const label = s.args.name || s.type;
	const when = s.args.when || 'on_success';
	if (result.status !== 'success' && when !== 'always' && when !== 'on_fail') {
		result.steps.push({ label, outcome: 'skipped' });
		process.stdout.write(`--- ${label}: skipped\n`);
		continue;
	}
	process.stdout.write(`--- ${label}\n`);
	const t0 = Date.now();
	let code = 0;
	if (s.type === 'checkout') {
		const sha = baseEnv.CIRCLE_SHA1, branch = baseEnv.CIRCLE_BRANCH;
		code = runBash(`git clone -q "${opt.origin}" .\ngit checkout -q -B "${branch}" "${sha}"\n`, baseEnv, label);
	} else if (s.type === 'run') {
		code = runBash(s.args.command, { ...baseEnv, ...(s.args.environment || {}) }, label);
	} else if (s.type === 'persist_to_workspace') {
		code = persist(s.args);
	} else if (s.type === 'attach_workspace') {
		code = attach(s.args);
	} else if (s.type === 'save_cache') {
		code = saveCache(s.args);
	} else if (s.type === 'restore_cache') {
		code = restoreCache(s.args);
	} else {
		const src = path.resolve(workdir, s.args.path);
		if (fs.existsSync(src)) {
			const dst = path.join(opt.out, s.type === 'store_artifacts' ? 'artifacts' : 'test-results', s.args.destination || path.basename(src));
			fs.mkdirSync(path.dirname(dst), { recursive: true });
			fs.cpSync(src, dst, { recursive: true });
			result[s.type === 'store_artifacts' ? 'artifacts' : 'test_results'].push(dst);
		}
	}
	result.steps.push({ label, outcome: code ? 'failure' : 'success', exit_code: code, seconds: (Date.now() - t0) / 1000 });
	process.stdout.write(`    => ${code ? `failure (exit ${code})` : 'success'}\n`);
	if (code) result.status = 'failure';
}
fs.writeFileSync(opt.result, JSON.stringify(result, null, 1));
process.stdout.write(`=== ${opt.job}: ${result.status}\n`);
process.exit(result.status === 'success' ? 0 : 1);
