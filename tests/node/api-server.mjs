// api-server.mjs - a loopback stand-in for the GitHub REST API and the
// GitLab notes API, strict about what it is sent and realistic in what it
// answers. Every request testflame makes is checked against the API's own
// description before it is played:
//
//   github  GitHub's OpenAPI description (npm @octokit/openapi,
//           api.github.com.json): the operation must exist for the method
//           and path, path and query parameters must match their schemas
//           (no undocumented ones), the JSON body must validate against the
//           operation's request schema, and the headers GitHub asks for
//           (Authorization, Accept: application/vnd.github+json,
//           X-GitHub-Api-Version, User-Agent) must be there. The replies
//           are checked against the description's response schemas too, so
//           the stand-in cannot drift from what GitHub returns.
//   gitlab  gitlab-notes-api.json beside this file: GitLab's documented
//           merge request notes API (docs.gitlab.com/api/notes) written
//           down as OpenAPI, checked the same way; PRIVATE-TOKEN auth.
//
// Behaviour played: pagination (per_page/page with Link headers; GitLab's
// X-Next-Page), 401 for a wrong token, 404 for unknown PRs/MRs/comments,
// 403 "Resource not accessible by integration" for a read-only token, 422
// for a review comment on a line outside the PR's diff (computed from the
// repository with `git diff`), and injected faults (5xx, 403/429 rate
// limits with Retry-After) from the state or from POST /_test/faults.
//
//   node api-server.mjs --kind github|gitlab --state STATE.json \
//        --port-file FILE --log LOG.jsonl
//
// GET /_test/state returns the state (comments made), GET /_test/log the
// requests seen with their violations, POST /_test/faults adds faults and
// POST /_test/patch merges into the state (a PR's new head after a push);
// /_test/* is not part of any API.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AjvMod = require('ajv');
const Ajv = AjvMod.default || AjvMod;
const here = path.dirname(fileURLToPath(import.meta.url));

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const kind = args.kind || 'github';
const state = JSON.parse(fs.readFileSync(args.state, 'utf8'));
state.faults = state.faults || [];
const logFile = args.log;
const log = [];

// ---- the API description -------------------------------------------------

const spec = kind === 'github'
	? require('@octokit/openapi/generated/api.github.com.json')
	: JSON.parse(fs.readFileSync(path.join(here, 'gitlab-notes-api.json'), 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(rebase(spec, false), 'api');

function deref(obj) {
	while (obj && obj.$ref) {
		obj = obj.$ref.slice(2).split('/').reduce((o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
	}
	return obj;
}
// A schema from the description, compiled with its "#/components/..."
// references pointing into the description registered as "api". OpenAPI
// 3.0's `nullable: true` admits null also where an enum lists the other
// values (GitHub sends "start_side": null for a one-line comment), which
// Ajv's reading does not: null is added to such enums (in the registered
// description too, where references stay document-relative).
const validators = new WeakMap();
function rebase(x, refs = true) {
	if (Array.isArray(x)) return x.map((y) => rebase(y, refs));
	if (x && typeof x === 'object') {
		const out = {};
		for (const [k, v] of Object.entries(x))
			out[k] = refs && k === '$ref' && typeof v === 'string' && v.startsWith('#') ? 'api' + v : rebase(v, refs);
		if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
		return out;
	}
	return x;
}
function validator(schema) {
	if (!validators.has(schema)) validators.set(schema, ajv.compile(rebase(schema)));
	return validators.get(schema);
}

// Templates sorted so that the one with the most literal text wins.
const templates = Object.keys(spec.paths).map((t) => {
	const names = [];
	const re = new RegExp('^' + t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_, n) => {
		names.push(n);
		return '([^/]+)';
	}) + '$');
	return { t, re, names, literal: t.replace(/\{[^}]+\}/g, '').length };
}).sort((a, b) => b.literal - a.literal);

function findOperation(method, rawPath) {
	for (const tp of templates) {
		const m = tp.re.exec(rawPath);
		if (!m) continue;
		const op = spec.paths[tp.t][method.toLowerCase()];
		if (!op) continue;
		const params = {};
		tp.names.forEach((n, i) => { params[n] = decodeURIComponent(m[i + 1]); });
		return { template: tp.t, op, params };
	}
	return null;
}

function coerce(value, schema) {
	schema = deref(schema) || {};
	const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
	if (type === 'integer' && /^-?\d+$/.test(value)) return Number(value);
	if (type === 'number' && !isNaN(Number(value))) return Number(value);
	if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
	if (!type && schema.oneOf && /^\d+$/.test(value)) return Number(value);
	return value;
}

function checkRequest(req, url, rawPath, bodyText) {
	const v = [];
	const found = findOperation(req.method, rawPath);
	if (!found) {
		v.push(`${req.method} ${rawPath}: no such operation in the API description`);
		return { v, found };
	}
	const { op, template, params } = found;
	const declared = (op.parameters || []).map(deref);
	for (const p of declared) {
		let value;
		if (p.in === 'path') value = params[p.name];
		else if (p.in === 'query') value = url.searchParams.has(p.name) ? url.searchParams.get(p.name) : undefined;
		else if (p.in === 'header') value = req.headers[p.name.toLowerCase()];
		else continue;
		if (value === undefined) {
			if (p.required) v.push(`${p.in} parameter '${p.name}' is required`);
			continue;
		}
		const val = validator(p.schema || {});
		if (!val(coerce(value, p.schema)))
			v.push(`${p.in} parameter '${p.name}'='${value}': ${ajv.errorsText(val.errors)}`);
	}
	for (const name of url.searchParams.keys()) {
		if (!declared.some((p) => p.in === 'query' && p.name === name))
			v.push(`query parameter '${name}' is not documented for ${req.method} ${template}`);
	}
	const rb = deref(op.requestBody);
	if (rb) {
		let body;
		if (!bodyText) {
			if (rb.required) v.push('the request body is required');
		} else {
			const ct = (req.headers['content-type'] || '').split(';')[0].trim();
			if (!rb.content[ct]) v.push(`content type '${ct}' is not one of ${Object.keys(rb.content).join(', ')}`);
			try {
				body = JSON.parse(bodyText);
			} catch (e) {
				v.push(`the body is not JSON: ${e.message}`);
			}
			if (body !== undefined && rb.content['application/json']) {
				const val = validator(rb.content['application/json'].schema);
				if (!val(body)) v.push(`body: ${ajv.errorsText(val.errors)}`);
			}
		}
	} else if (bodyText && req.method !== 'GET') {
		v.push(`${req.method} ${template} takes no body`);
	}
	return { v, found, body: bodyText ? (() => { try { return JSON.parse(bodyText); } catch { return undefined; } })() : undefined };
}

function checkResponse(found, method, status, body) {
	if (!found) return [];
	const resp = found.op.responses && (found.op.responses[String(status)] || found.op.responses.default);
	if (!resp) return [`the reply's status ${status} is not documented for ${method} ${found.template}`];
	const r = deref(resp);
	if (!r.content || !r.content['application/json'] || body === undefined) return [];
	const val = validator(r.content['application/json'].schema);
	return val(body) ? [] : [`reply ${status}: ${ajv.errorsText(val.errors)}`];
}

// ---- objects as the hosts return them ------------------------------------

let nextId = state.next_id || 1000;
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

function ghUser(base, login, id, type) {
	const u = `${base}/users/${encodeURIComponent(login)}`;
	return {
		login, id, node_id: `U_${id}`, avatar_url: `https://avatars.example/u/${id}`, gravatar_id: '',
		url: u, html_url: `https://github.example/${login}`, followers_url: `${u}/followers`,
		following_url: `${u}/following{/other_user}`, gists_url: `${u}/gists{/gist_id}`,
		starred_url: `${u}/starred{/owner}{/repo}`, subscriptions_url: `${u}/subscriptions`,
		organizations_url: `${u}/orgs`, repos_url: `${u}/repos`, events_url: `${u}/events{/privacy}`,
		received_events_url: `${u}/received_events`, type: type || 'User', site_admin: false,
	};
}
function ghIssueComment(base, repo, n, c) {
	return {
		id: c.id, node_id: `IC_${c.id}`, url: `${base}/repos/${repo}/issues/comments/${c.id}`,
		html_url: `https://github.example/${repo}/pull/${n}#issuecomment-${c.id}`, body: c.body,
		user: ghUser(base, c.user, c.user_id, c.user.endsWith('[bot]') ? 'Bot' : 'User'),
		created_at: c.created_at, updated_at: c.updated_at,
		issue_url: `${base}/repos/${repo}/issues/${n}`, author_association: c.user.endsWith('[bot]') ? 'NONE' : 'MEMBER',
	};
}
function ghReviewComment(base, repo, n, c) {
	const self = `${base}/repos/${repo}/pulls/comments/${c.id}`;
	const html = `https://github.example/${repo}/pull/${n}#discussion_r${c.id}`;
	const pr = `${base}/repos/${repo}/pulls/${n}`;
	return {
		url: self, id: c.id, node_id: `PRRC_${c.id}`, pull_request_review_id: c.id + 1,
		diff_hunk: c.diff_hunk, path: c.path, position: c.line, original_position: c.line,
		commit_id: c.commit_id, original_commit_id: c.commit_id,
		user: ghUser(base, c.user, c.user_id, c.user.endsWith('[bot]') ? 'Bot' : 'User'), body: c.body,
		created_at: c.created_at, updated_at: c.updated_at, html_url: html, pull_request_url: pr,
		author_association: 'NONE', _links: { self: { href: self }, html: { href: html }, pull_request: { href: pr } },
		start_line: c.start_line ?? null, original_start_line: c.start_line ?? null,
		start_side: c.start_line ? 'RIGHT' : null, line: c.line, original_line: c.line, side: 'RIGHT',
		subject_type: 'line',
	};
}
function glNote(c, projectId, iid) {
	return {
		id: c.id, type: null, body: c.body, attachment: null,
		author: { id: c.user_id, username: c.user, name: c.user, state: 'active', locked: false,
			avatar_url: `https://gitlab.example/uploads/${c.user_id}.png`, web_url: `https://gitlab.example/${c.user}` },
		created_at: c.created_at, updated_at: c.updated_at, system: !!c.system, noteable_id: 9000 + iid,
		noteable_type: 'MergeRequest', project_id: projectId, resolvable: false, confidential: false,
		internal: false, imported: false, imported_from: 'none', noteable_iid: iid, commands_changes: {},
	};
}

// Lines of the new side inside the PR's hunks, per file (GitHub accepts
// review comments there: added lines and the context around them).
function diffLines(pr) {
	if (pr._lines) return pr._lines;
	const lines = {};
	if (pr.diff_repo) {
		const out = execFileSync('git', ['-C', pr.diff_repo, 'diff', '-U3', '--no-color', '--no-renames',
			`${pr.base_sha}...${pr.head_sha}`], { encoding: 'utf8', maxBuffer: 1 << 28 });
		let file = null;
		for (const l of out.split('\n')) {
			if (l.startsWith('+++ ')) file = l === '+++ /dev/null' ? null : l.slice(6);
			const m = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(l);
			if (m && file) (lines[file] = lines[file] || []).push([+m[1], +m[1] + (m[2] === undefined ? 1 : +m[2]) - 1]);
		}
	}
	for (const [f, ranges] of Object.entries(pr.exclude || {})) {
		// the test narrows the diff, to see a 422 played
		lines[f] = (lines[f] || []).flatMap(([a, b]) => {
			let parts = [[a, b]];
			for (const [x, y] of ranges) parts = parts.flatMap(([p, q]) => (y < p || x > q) ? [[p, q]] : [[p, x - 1], [y + 1, q]].filter(([s, e]) => s <= e));
			return parts;
		});
	}
	pr._lines = lines;
	return lines;
}
const inDiff = (pr, file, line) => (diffLines(pr)[file] || []).some(([a, b]) => line >= a && line <= b);

// ---- the server ----------------------------------------------------------

function paginate(req, url, items, res, headers) {
	const perPage = Math.min(Number(url.searchParams.get('per_page') || (kind === 'github' ? 30 : 20)), 100);
	const page = Math.max(Number(url.searchParams.get('page') || 1), 1);
	const last = Math.max(1, Math.ceil(items.length / perPage));
	const slice = items.slice((page - 1) * perPage, page * perPage);
	const link = (p) => {
		const u = new URL(url);
		u.searchParams.set('page', String(p));
		return `<http://${req.headers.host}${u.pathname}${u.search}>`;
	};
	const rels = [];
	if (page < last) rels.push(`${link(page + 1)}; rel="next"`, `${link(last)}; rel="last"`);
	if (page > 1) rels.push(`${link(1)}; rel="first"`, `${link(page - 1)}; rel="prev"`);
	if (rels.length) headers.link = rels.join(', ');
	if (kind === 'gitlab') {
		Object.assign(headers, { 'x-page': String(page), 'x-per-page': String(perPage), 'x-total': String(items.length),
			'x-total-pages': String(last), 'x-next-page': page < last ? String(page + 1) : '', 'x-prev-page': page > 1 ? String(page - 1) : '' });
	}
	return slice;
}

function ghError(status, message, extra) {
	return { status, body: { message, documentation_url: 'https://docs.github.com/rest', status: String(status), ...(extra || {}) } };
}

function github(req, url, found, body) {
	const base = `http://${req.headers.host}`;
	const auth = req.headers.authorization || '';
	const m = /^(?:Bearer|token) (.+)$/.exec(auth);
	if (!m || m[1] !== state.token) return ghError(401, 'Bad credentials');
	const p = found.params;
	const repoName = `${p.owner}/${p.repo}`;
	const repo = (state.repos || {})[repoName];
	if (!repo) return ghError(404, 'Not Found');
	const write = req.method !== 'GET';
	if (write && state.readonly) return ghError(403, 'Resource not accessible by integration');
	const headers = {};
	const who = { user: state.bot || 'github-actions[bot]', user_id: 41898282 };
	switch (found.template) {
	case '/repos/{owner}/{repo}/issues/{issue_number}/comments': {
		const pr = repo.pulls[p.issue_number];
		if (!pr) return ghError(404, 'Not Found');
		pr.comments = pr.comments || [];
		if (req.method === 'GET') {
			const items = paginate(req, url, pr.comments, null, headers).map((c) => ghIssueComment(base, repoName, p.issue_number, c));
			return { status: 200, body: items, headers };
		}
		const c = { id: nextId++, body: body.body, ...who, created_at: now(), updated_at: now() };
		pr.comments.push(c);
		headers.location = `${base}/repos/${repoName}/issues/comments/${c.id}`;
		return { status: 201, body: ghIssueComment(base, repoName, p.issue_number, c), headers };
	}
	case '/repos/{owner}/{repo}/issues/comments/{comment_id}': {
		for (const [n, pr] of Object.entries(repo.pulls)) {
			const c = (pr.comments || []).find((x) => x.id === Number(p.comment_id));
			if (!c) continue;
			if (req.method === 'PATCH') {
				if (c.user !== who.user) return ghError(403, 'Must have admin rights to Repository.');
				c.body = body.body;
				c.updated_at = now();
				c.edits = (c.edits || 0) + 1;
			}
			return { status: 200, body: ghIssueComment(base, repoName, n, c) };
		}
		return ghError(404, 'Not Found');
	}
	case '/repos/{owner}/{repo}/pulls/{pull_number}/comments': {
		const pr = repo.pulls[p.pull_number];
		if (!pr) return ghError(404, 'Not Found');
		pr.review_comments = pr.review_comments || [];
		if (req.method === 'GET') {
			const items = paginate(req, url, pr.review_comments, null, headers).map((c) => ghReviewComment(base, repoName, p.pull_number, c));
			return { status: 200, body: items, headers };
		}
		const invalid = (field, message) => ghError(422, 'Validation Failed', {
			errors: [{ resource: 'PullRequestReviewComment', code: 'custom', field, message }] });
		if (body.commit_id !== pr.head_sha) return invalid('commit_id', 'commit_id is not part of the pull request');
		if (body.side && body.side !== 'RIGHT') return invalid('side', 'side must be RIGHT for added lines');
		if (!inDiff(pr, body.path, body.line)) return invalid('pull_request_review_thread.line', 'pull_request_review_thread.line must be part of the diff');
		if (body.start_line !== undefined) {
			if (!(body.start_line < body.line)) return invalid('pull_request_review_thread.start_line', 'pull_request_review_thread.start_line must precede the end line.');
			for (let l = body.start_line; l <= body.line; l++)
				if (!inDiff(pr, body.path, l)) return invalid('pull_request_review_thread.start_line', 'pull_request_review_thread.start_line must be part of the same hunk as the line.');
		}
		const c = { id: nextId++, body: body.body, path: body.path, line: body.line, start_line: body.start_line,
			commit_id: body.commit_id, diff_hunk: `@@ -1 +${body.line} @@`, ...who, created_at: now(), updated_at: now() };
		pr.review_comments.push(c);
		headers.location = `${base}/repos/${repoName}/pulls/comments/${c.id}`;
		return { status: 201, body: ghReviewComment(base, repoName, p.pull_number, c), headers };
	}
	case '/repos/{owner}/{repo}/pulls/comments/{comment_id}': {
		for (const [n, pr] of Object.entries(repo.pulls)) {
			const c = (pr.review_comments || []).find((x) => x.id === Number(p.comment_id));
			if (!c) continue;
			if (req.method === 'PATCH') {
				c.body = body.body;
				c.updated_at = now();
				c.edits = (c.edits || 0) + 1;
			}
			return { status: 200, body: ghReviewComment(base, repoName, n, c) };
		}
		return ghError(404, 'Not Found');
	}
	default:
		return ghError(404, `the stand-in does not play ${found.template}`);
	}
}

function gitlab(req, url, found, body) {
	const tok = req.headers['private-token'];
	if (req.headers['job-token'] && !tok) return { status: 403, body: { message: '403 Forbidden' } };
	if (tok !== state.token) return { status: 401, body: { message: '401 Unauthorized' } };
	const p = found.params;
	const project = Object.values(state.projects || {}).find((x) => String(x.id) === p.id || x.path === p.id);
	if (!project) return { status: 404, body: { message: '404 Project Not Found' } };
	const mr = (project.merge_requests || {})[p.merge_request_iid];
	if (!mr) return { status: 404, body: { message: '404 Not found' } };
	mr.notes = mr.notes || [];
	const iid = Number(p.merge_request_iid);
	if (req.method !== 'GET' && state.readonly) return { status: 403, body: { message: '403 Forbidden' } };
	const who = { user: state.bot || 'project_7_bot', user_id: 77 };
	const headers = {};
	switch (found.template) {
	case '/projects/{id}/merge_requests/{merge_request_iid}/notes': {
		if (req.method === 'GET') {
			let notes = [...mr.notes];
			const order = url.searchParams.get('order_by') || 'created_at';
			notes.sort((a, b) => (a[order] < b[order] ? -1 : a[order] > b[order] ? 1 : a.id - b.id));
			if ((url.searchParams.get('sort') || 'desc') === 'desc') notes.reverse();
			return { status: 200, body: paginate(req, url, notes, null, headers).map((n) => glNote(n, project.id, iid)), headers };
		}
		if (!body.body) return { status: 400, body: { message: '400 Bad request - body is missing' } };
		const n = { id: nextId++, body: body.body, ...who, created_at: now(), updated_at: now() };
		mr.notes.push(n);
		return { status: 201, body: glNote(n, project.id, iid) };
	}
	case '/projects/{id}/merge_requests/{merge_request_iid}/notes/{note_id}': {
		const n = mr.notes.find((x) => x.id === Number(p.note_id));
		if (!n) return { status: 404, body: { message: '404 Note Not Found' } };
		if (req.method === 'PUT') {
			if (n.user !== who.user) return { status: 403, body: { message: '403 Forbidden' } };
			n.body = body.body;
			n.updated_at = now();
			n.edits = (n.edits || 0) + 1;
		}
		return { status: 200, body: glNote(n, project.id, iid) };
	}
	default:
		return { status: 404, body: { message: '404 Not Found' } };
	}
}

function headerViolations(req, bodyText) {
	const v = [];
	if (!req.headers['user-agent']) v.push('no User-Agent header');
	if (kind === 'github') {
		if (req.headers.accept !== 'application/vnd.github+json') v.push(`Accept is '${req.headers.accept}', not application/vnd.github+json`);
		const ver = req.headers['x-github-api-version'];
		if (ver !== '2022-11-28') v.push(`X-GitHub-Api-Version is '${ver}', not 2022-11-28`);
	}
	if (bodyText && !(req.headers['content-type'] || '').startsWith('application/json')) v.push('a JSON body without Content-Type: application/json');
	if (state.token && req.url.includes(state.token)) v.push('the token is in the URL');
	return v;
}

const server = http.createServer((req, res) => {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		try {
			handle(req, res, chunks);
		} catch (e) {
			// a bug of the stand-in is a failure of the test, not a hang
			const entry = { t: Date.now(), method: req.method, path: req.url, query: '', status: 500,
				violations: [`api-server failed: ${e.stack}`] };
			log.push(entry);
			if (logFile) fs.appendFileSync(logFile, JSON.stringify(entry) + '\n');
			res.writeHead(500, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ message: 'api-server failed' }));
		}
	});
});

function handle(req, res, chunks) {
	{
		const bodyText = Buffer.concat(chunks).toString('utf8');
		const url = new URL(req.url, `http://${req.headers.host}`);
		// the API's base path (GitHub Enterprise's /api/v3, GitLab's /api/v4)
		const basePath = state.base_path ?? (kind === 'gitlab' ? '/api/v4' : '');
		let rawPath = req.url.split('?')[0];
		if (!rawPath.startsWith('/_test/')) {
			if (basePath && !rawPath.startsWith(basePath + '/')) {
				res.writeHead(404, { 'content-type': 'application/json' });
				return res.end(JSON.stringify({ message: `not under the API's base path ${basePath}` }));
			}
			rawPath = rawPath.slice(basePath.length);
		}
		const send = (status, body, headers) => {
			const text = body === undefined ? '' : JSON.stringify(body);
			res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...(headers || {}) });
			res.end(text);
		};
		if (rawPath.startsWith('/_test/')) {
			if (rawPath === '/_test/state') return send(200, state);
			if (rawPath === '/_test/log') return send(200, log);
			if (rawPath === '/_test/patch' && req.method === 'POST') {
				// deep-merge into the state (a PR's new head after a push)
				const merge = (dst, src) => {
					for (const [k, v] of Object.entries(src)) {
						if (v && typeof v === 'object' && !Array.isArray(v) && dst[k] && typeof dst[k] === 'object') merge(dst[k], v);
						else dst[k] = v;
					}
					delete dst._lines;
				};
				merge(state, JSON.parse(bodyText));
				return send(200, {});
			}
			if (rawPath === '/_test/faults' && req.method === 'POST') {
				state.faults.push(...JSON.parse(bodyText));
				return send(200, state.faults);
			}
			return send(404, { message: 'no such test endpoint' });
		}
		const entry = { t: Date.now(), method: req.method, path: rawPath, query: url.search, violations: [] };
		const checked = checkRequest(req, url, rawPath, bodyText);
		entry.operation = checked.found ? `${req.method} ${checked.found.template}` : null;
		entry.violations.push(...checked.v, ...headerViolations(req, bodyText));
		entry.auth = kind === 'github' ? (req.headers.authorization || '').split(' ')[0] : (req.headers['private-token'] ? 'PRIVATE-TOKEN' : 'none');
		entry.body = checked.body;
		let out;
		const fault = state.faults.find((f) => f.times > 0 && f.method === req.method && new RegExp(f.path).test(rawPath));
		if (entry.violations.length && !state.lenient) {
			out = { status: 400, body: { message: `api-server: ${entry.violations.join('; ')}` } };
		} else if (fault) {
			fault.times--;
			out = { status: fault.status, body: fault.body || { message: fault.message || 'injected' }, headers: fault.headers };
			entry.fault = true;
		} else if (!checked.found) {
			out = { status: 404, body: { message: 'Not Found' } };
		} else {
			out = (kind === 'github' ? github : gitlab)(req, url, checked.found, checked.body || {});
		}
		if (!entry.fault && !(entry.violations.length && !state.lenient))
			entry.reply_violations = checkResponse(checked.found, req.method, out.status, out.body);
		entry.status = out.status;
		log.push(entry);
		if (logFile) fs.appendFileSync(logFile, JSON.stringify(entry) + '\n');
		send(out.status, out.body, out.headers);
	}
}

server.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(args['port-file'], String(server.address().port));
});
process.on('SIGTERM', () => {
	for (const pr of Object.values(state.repos || {}).flatMap((r) => Object.values(r.pulls || {}))) delete pr._lines;
	if (args['state-out']) fs.writeFileSync(args['state-out'], JSON.stringify(state, null, 1));
	process.exit(0);
});
