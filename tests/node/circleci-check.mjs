// circleci-check.mjs - checks testflame's CircleCI orb and a config that
// uses it with CircleCI's own config parser (@circleci/circleci-config-parser,
// whose components validate against CircleCI's JSON schemas as they parse):
//
//   - orb.yml is exactly the packing of src/ (orb-pack.mjs);
//   - every executor, command and job of the orb parses, jobs with the orb's
//     own commands and executors;
//   - the orb's examples and each config given parse as whole configs, the
//     orb's jobs, commands and executors resolved through its manifest.
//
//   node circleci-check.mjs ORB_DIR [CONFIG.yml...]
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { createRequire } from 'node:module';
import { pack } from './orb-pack.mjs';

const require = createRequire(import.meta.url);
const P = require('@circleci/circleci-config-parser');

const [orbDir, ...configs] = process.argv.slice(2);
let failed = 0;
const fail = (what, e) => { failed++; console.error(`${what}: ${e && e.message ? e.message : e}`); };

const packed = pack(path.join(orbDir, 'src'));
const committed = fs.readFileSync(path.join(orbDir, 'orb.yml'), 'utf8');
if (packed !== committed) fail(`${orbDir}/orb.yml`, 'is not the packing of src/ (node tests/node/orb-pack.mjs circleci/src > circleci/orb.yml)');
const orb = YAML.parse(committed);
if (orb.version !== 2.1) fail('orb.yml', `version is ${orb.version}, not 2.1`);
if (!orb.description) fail('orb.yml', 'no description');

let executors = [], commands = [];
try {
	executors = P.parseReusableExecutors(orb.executors || {});
	console.log(`executors: ${executors.map((e) => e.name).join(', ')}`);
} catch (e) { fail('executors', e); }
try {
	commands = P.parseReusableCommands(orb.commands || {});
	console.log(`commands: ${commands.map((c) => c.name).join(', ')}`);
} catch (e) { fail('commands', e); }
try {
	const jobs = P.parseJobList(orb.jobs || {}, commands, executors);
	console.log(`jobs: ${jobs.map((j) => j.name).join(', ')}`);
} catch (e) { fail('jobs', e); }

const params = (kind) => Object.fromEntries(Object.entries(orb[kind] || {}).map(([n, c]) => [n, c.parameters || {}]));
let manifest;
try {
	manifest = P.parseOrbManifest({ jobs: params('jobs'), commands: params('commands'), executors: params('executors') });
} catch (e) { fail('the orb manifest', e); }

function checkConfig(name, cfg) {
	const aliases = Object.entries(cfg.orbs || {}).filter(([, ref]) => /^testflame\/testflame@/.test(String(ref))).map(([a]) => a);
	if (!aliases.length) return fail(name, 'does not use the testflame orb');
	try {
		// the parser walks `jobs` unconditionally; a config that only uses
		// the orb's jobs has none, which CircleCI accepts
		const config = P.parseConfig({ jobs: {}, ...cfg }, Object.fromEntries(aliases.map((a) => [a, manifest])));
		const jobs = config.workflows.flatMap((w) => w.jobs.map((j) => j.name));
		console.log(`${name}: workflows ${config.workflows.map((w) => w.name).join(', ')}; jobs ${jobs.join(', ')}`);
	} catch (e) { fail(name, e); }
}
for (const [n, ex] of Object.entries(orb.examples || {})) {
	if (!ex.description || !ex.usage) fail(`example ${n}`, 'needs description and usage');
	else checkConfig(`example ${n}`, ex.usage);
}
for (const f of configs) checkConfig(f, YAML.parse(fs.readFileSync(f, 'utf8')));
if (failed) process.exit(1);
console.log('ok');
