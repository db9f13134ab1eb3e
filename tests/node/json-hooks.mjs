// json-hooks.mjs - a module loader hook for Node 20: @actions/workflow-parser
// imports its JSON schemas without import attributes, which Node refuses;
// this serves those files as modules. Registered with module.register().
import { readFile } from 'node:fs/promises';

export async function load(url, context, next) {
	if (url.startsWith('file:') && url.endsWith('.json') && url.includes('/node_modules/@actions/')) {
		const text = await readFile(new URL(url), 'utf8');
		return { format: 'module', source: `export default ${text};`, shortCircuit: true };
	}
	return next(url, context);
}
