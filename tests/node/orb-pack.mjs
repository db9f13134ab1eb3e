// orb-pack.mjs - packs an orb's source layout into one orb.yml, as
// `circleci orb pack` does: src/@orb.yml is the root, and every file
// src/<kind>/<name>.yml (commands, jobs, executors, examples) becomes
// <kind>.<name>. The CircleCI CLI is not available here; the packed file is
// committed, and t7060 checks it is this packing of the source.
//
//   node tests/node/orb-pack.mjs circleci/src > circleci/orb.yml
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

export function pack(src) {
	const root = YAML.parse(fs.readFileSync(path.join(src, '@orb.yml'), 'utf8'));
	for (const kind of ['commands', 'jobs', 'executors', 'examples']) {
		const dir = path.join(src, kind);
		if (!fs.existsSync(dir)) continue;
		for (const f of fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort()) {
			const text = fs.readFileSync(path.join(dir, f), 'utf8');
			if (text.includes('<<include(')) throw new Error(`${kind}/${f}: <<include()>> is not packed by this tool`);
			root[kind] = root[kind] || {};
			root[kind][f.replace(/\.ya?ml$/, '')] = YAML.parse(text);
		}
	}
	return '# This file is generated from src/ by tests/node/orb-pack.mjs; edit src/ instead.\n' +
		YAML.stringify(root, { lineWidth: 0 });
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
	process.stdout.write(pack(process.argv[2] || 'circleci/src'));
}
