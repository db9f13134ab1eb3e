// report.js - testflame's interactive report, embedded in index.html.
// It reads the JSON data block (#tf-data) and draws: the per-test table
// (sortable, filterable), the diff flame graph of the chosen test (width
// from the head or the base, colour from the change, click to zoom,
// breadcrumb to zoom out, search that highlights and sums the matches,
// tooltips, flame/icicle), a sandwich view of one function (callers above,
// callees below) and the function table (self and total, base/head/delta).
// Where the runs recorded the time threads waited, a test whose waits grew
// also gets its off-CPU diff flame graph and the places it waited more.
// Every name is put into the page with textContent, never as markup.
// The colour and number rules match src/report/flame.c and
// tf_compare_format_cost() so the SVG files and the page agree.
(function () {
'use strict';
// index.html#memory draws the comparison of the allocations (alloc_space)
// when the run measured them: its own data block, the same drawing
var MEMD = document.getElementById('tf-data-memory');
var MEMORY = !!MEMD && /^#memory/.test(location.hash);
var D = JSON.parse((MEMORY ? MEMD : document.getElementById('tf-data')).textContent);
var HASH = MEMORY ? '#memory&' : '#';
var S = D.strings, UNIT = D.unit, SINGLE = D.mode === 'single';
var VERDICTS = ['regressed', 'improved', 'new', 'gone', 'inconclusive', 'unchanged'];
var H = 18;

function $(id) { return document.getElementById(id); }
function el(tag, cls, text) {
var e = document.createElement(tag);
if (cls) e.className = cls;
if (text !== undefined && text !== null) e.textContent = text;
return e;
}

// ---- numbers ----
function sig3(v, suffix) {
var a = Math.abs(v);
var s = a >= 99.95 ? v.toFixed(0) : a >= 9.995 ? v.toFixed(1) : v.toFixed(2);
return suffix ? s + ' ' + suffix : s;
}
function cost(v, unit) {
if (v === null || v === undefined || !isFinite(v)) return '-';
if (v === 0) return '0';
var a = Math.abs(v);
unit = unit || UNIT;
if (unit === 'nanoseconds') {
if (a >= 1e9) return sig3(v / 1e9, 's');
if (a >= 1e6) return sig3(v / 1e6, 'ms');
if (a >= 1e3) return sig3(v / 1e3, 'us');
return v.toFixed(0) + ' ns';
}
if (unit === 'bytes') {
if (a >= 1073741824) return sig3(v / 1073741824, 'GiB');
if (a >= 1048576) return sig3(v / 1048576, 'MiB');
if (a >= 1024) return sig3(v / 1024, 'KiB');
return v.toFixed(0) + ' B';
}
if (a >= 1e9) return sig3(v / 1e9, 'G');
if (a >= 1e6) return sig3(v / 1e6, 'M');
if (a >= 1e4) return sig3(v / 1e3, 'k');
if (a === Math.floor(a)) return v.toFixed(0);
return sig3(v, '');
}
function scost(v, unit) {
if (!isFinite(v)) return '-';
if (v === 0) return '0';
return (v < 0 ? '-' : '+') + cost(Math.abs(v), unit);
}
function pct(p) {
if (p === null || p === undefined || !isFinite(p)) return '-';
return (p >= 0 ? '+' : '') + p.toFixed(1) + '%';
}
function rel(b, h) { return b > 0 ? (h - b) / b * 100 : (h > 0 ? Infinity : NaN); }
function relText(b, h) { var r = rel(b, h); return r === Infinity ? 'new' : pct(r); }
function share(v, tot) { return tot > 0 ? (v / tot * 100).toFixed(1) + '%' : '-'; }

// ---- colours (flame.c: rp_diff_colour, rp_name_colour) ----
function hex2(n) { return (n < 16 ? '0' : '') + n.toString(16); }
function mix(from, to, t) {
var c = '#';
for (var i = 0; i < 3; i++) c += hex2(Math.round(from[i] + (to[i] - from[i]) * t));
return c;
}
var NEUTRAL = [224, 224, 224], RED = [236, 64, 52], BLUE = [64, 120, 228];
var ORANGE = [240, 128, 16], CBBLUE = [40, 104, 200];
function diffColour(b, h) {
var m = Math.max(b, h);
if (m <= 0 || (b > 0 && Math.abs(h - b) / b * 100 < D.threshold)) return mix(NEUTRAL, NEUTRAL, 0);
var r = (h - b) / m;
var t = Math.min(1, 0.25 + 0.75 * Math.sqrt(Math.abs(r) / 0.5));
return mix(NEUTRAL, r > 0 ? (st.cb ? ORANGE : RED) : (st.cb ? CBBLUE : BLUE), t);
}
function nameColour(name) {
var h = 2166136261;
var bytes = new TextEncoder().encode(name);
for (var i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 16777619) >>> 0;
var v1 = (h & 255) / 255, v2 = ((h >>> 8) & 255) / 255, v3 = ((h >>> 16) & 255) / 255;
return '#' + hex2(205 + Math.floor(50 * v3)) + hex2(Math.floor(230 * v1)) + hex2(Math.floor(55 * v2));
}

// ---- trees: preorder arrays (depth, name, base, head) ----
function mkTree(d, n, b, h, other, otherCount) {
var N = d.length, par = new Int32Array(N), end = new Int32Array(N), stack = [], i;
for (i = 0; i < N; i++) {
while (stack.length && d[stack[stack.length - 1]] >= d[i]) end[stack.pop()] = i;
par[i] = stack.length ? stack[stack.length - 1] : -1;
stack.push(i);
}
while (stack.length) end[stack.pop()] = N;
var bs = new Float64Array(N), hs = new Float64Array(N);
for (i = 0; i < N; i++) { bs[i] = b[i]; hs[i] = h[i]; }
for (i = 1; i < N; i++) if (par[i] >= 0) { bs[par[i]] -= b[i]; hs[par[i]] -= h[i]; }
var o = new Int32Array(N);
if (other) for (i = 0; i < other.length; i++) o[other[i]] = otherCount[i];
return { N: N, d: d, n: n, b: b, h: h, par: par, end: end, bs: bs, hs: hs, other: o };
}
var T = mkTree(D.tree.d, D.tree.n, D.tree.b || D.tree.h, D.tree.h, D.tree.o, D.tree.oc);
// the waits' own forest (off-CPU time, in nanoseconds whatever the event)
var WT = D.waits ? mkTree(D.waits.d, D.waits.n, D.waits.b || D.waits.h, D.waits.h, D.waits.o, D.waits.oc) : null;
if (WT) WT.unit = 'nanoseconds';
function nameOf(t, i) { return t.other[i] ? '(other)' : t.n[i] < 0 ? '(other)' : S[t.n[i]]; }
function where(sid, line) {
if (sid < 0) return '';
var f = D.file[sid] ? S[D.file[sid]] : '';
var l = line || D.line[sid];
return f ? f + (l > 0 ? ':' + l : '') : '';
}

// ---- state ----
var st = { test: -1, root: 0, zoom: 0, wroot: -1, wzoom: 0, icicle: false, wbase: false, cb: !!D.colorblind, sw: -1,
sort: { col: -1, asc: false }, fsort: { col: -1, asc: false }, fall: false };

// ---- search ----
var qre = null, qcache = null;
function setQuery(s) {
qre = null;
if (s) {
try { qre = new RegExp(s, 'i'); } catch (e) { qre = new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'); }
}
qcache = new Int8Array(S.length);
}
function matches(t, i) {
if (!qre || t.other[i] || t.n[i] < 0 || t.d[i] < 2 && (t === T || t === WT)) return false;
var sid = t.n[i], c = qcache[sid];
if (!c) { c = qre.test(S[sid]) ? 1 : 2; qcache[sid] = c; }
return c === 1;
}

// ---- the flame graph renderer (any tree, any root) ----
function draw(box, t, top, zoom, icicle, interactive) {
box.textContent = '';
box.tfTree = t;
var W = Math.max(200, box.clientWidth || 800);
var val = st.wbase ? t.b : t.h;
var frames = [], path = [], a;
if (zoom !== top) for (a = t.par[zoom]; a >= 0; a = t.par[a]) { path.unshift(a); if (a === top) break; }
for (a = 0; a < path.length; a++) frames.push([path[a], 0, W, a, 1]);
var tot = val[zoom], r0 = path.length, maxRow = r0;
if (!(tot > 0)) {
box.style.height = 'auto';
box.appendChild(el('div', 'empty', st.wbase ? 'Nothing here in the base.' : 'Nothing here in the head (it is only in the base: draw the width from the base to see it).'));
return 0;
}
var scale = W / tot, stack = [[zoom, 0]];
while (stack.length) {
var it = stack.pop(), i = it[0], x = it[1], w = val[i] * scale;
var row = r0 + t.d[i] - t.d[zoom];
frames.push([i, x, w, row, 0]);
if (row > maxRow) maxRow = row;
var cx = x;
for (var c = i + 1; c < t.end[i]; c = t.end[c]) {
var cw = val[c] * scale;
if (cw >= 1) stack.push([c, cx]);
cx += cw;
}
}
box.style.height = ((maxRow + 1) * H) + 'px';
var frag = document.createDocumentFragment();
for (var k = 0; k < frames.length; k++) {
var f = frames[k], n = f[0];
var e = el('div', 'f' + (f[4] ? ' a' : '') + (t.other[n] || t.n[n] < 0 ? ' o' : '') + (matches(t, n) ? ' m' : ''));
e.style.left = f[1].toFixed(1) + 'px';
e.style.width = Math.max(1, f[2]).toFixed(1) + 'px';
e.style.top = ((icicle ? f[3] : maxRow - f[3]) * H) + 'px';
e.style.background = SINGLE ? nameColour(nameOf(t, n)) : diffColour(t.b[n], t.h[n]);
if (f[2] > 24) e.textContent = nameOf(t, n);
e.dataset.i = n;
frag.appendChild(e);
}
box.appendChild(frag);
box.dataset.frames = frames.length;
return frames.length;
}

// ---- tooltips ----
var tip = $('tip');
function tipLines(t, i, rootIdx) {
var out = [], name = nameOf(t, i), u = t.unit;
out.push(['t', t.other[i] ? '(other: ' + t.other[i] + ' frames too small to draw, merged)' : name]);
var loc = t.other[i] || t.n[i] < 0 ? '' : where(t.n[i]);
if (loc) out.push(['l', loc]);
var tb = t.b[rootIdx], th = t.h[rootIdx];
if (SINGLE) {
out.push(['', cost(t.h[i], u) + ' (' + share(t.h[i], th) + ')' + (t.inverted ? '' : ', self ' + cost(Math.max(0, t.hs[i]), u))]);
} else {
out.push(['', 'head ' + cost(t.h[i], u) + ' (' + share(t.h[i], th) + '), base ' + cost(t.b[i], u) + ' (' + share(t.b[i], tb) + ')']);
out.push([t.h[i] > t.b[i] ? 'up' : t.h[i] < t.b[i] ? 'down' : '', 'delta ' + scost(t.h[i] - t.b[i], u) + ' (' + relText(t.b[i], t.h[i]) + ')']);
if (!t.inverted) out.push(['', 'self: head ' + cost(Math.max(0, t.hs[i]), u) + ', base ' + cost(Math.max(0, t.bs[i]), u) + ', delta ' + scost(Math.max(0, t.hs[i]) - Math.max(0, t.bs[i]), u)]);
}
return out;
}
function showTip(ev, lines) {
tip.textContent = '';
for (var k = 0; k < lines.length; k++) tip.appendChild(el('div', lines[k][0], lines[k][1]));
tip.hidden = false;
var x = ev.clientX + 14, y = ev.clientY + 14;
var r = tip.getBoundingClientRect();
if (x + r.width > window.innerWidth) x = Math.max(0, ev.clientX - r.width - 14);
if (y + r.height > window.innerHeight) y = Math.max(0, ev.clientY - r.height - 14);
tip.style.left = x + 'px';
tip.style.top = y + 'px';
}
function hook(box, onClick, rootOf) {
box.addEventListener('mousemove', function (ev) {
var f = ev.target.closest ? ev.target.closest('.f') : null;
if (!f) { tip.hidden = true; return; }
showTip(ev, tipLines(box.tfTree, +f.dataset.i, rootOf()));
});
box.addEventListener('mouseleave', function () { tip.hidden = true; });
box.addEventListener('click', function (ev) {
var f = ev.target.closest ? ev.target.closest('.f') : null;
if (f) { tip.hidden = true; onClick(+f.dataset.i); }
});
}

// ---- the main graph ----
function testNode(ti) { return ti < 0 ? 0 : D.tests[ti].node; }
function zoomTo(i) { st.zoom = i; renderGraph(); }
function renderGraph() {
var box = $('flame');
if (st.root < 0) {
box.textContent = '';
box.style.height = 'auto';
box.appendChild(el('div', 'empty', 'This test has no samples on either side.'));
$('crumbs').textContent = '';
$('detail').textContent = '';
$('qres').textContent = '';
return;
}
draw(box, T, st.root, st.zoom, st.icicle, true);
var crumbs = $('crumbs'), path = [];
crumbs.textContent = '';
for (var a = st.zoom; a >= 0; a = T.par[a]) { path.unshift(a); if (a === st.root) break; }
path.forEach(function (n, k) {
var b = el('button', k === path.length - 1 ? 'on' : '', k === 0 ? (st.root === 0 ? 'all tests' : nameOf(T, n)) : nameOf(T, n));
b.type = 'button';
b.addEventListener('click', function () { zoomTo(n); });
crumbs.appendChild(b);
});
renderDetail();
renderSearch();
}
function renderDetail() {
var d = $('detail'), i = st.zoom;
d.textContent = '';
if (i === st.root) {
d.appendChild(el('span', 'hint', 'Click a frame to zoom in; the buttons above zoom out again (Esc: back to the whole test).'));
return;
}
var lines = tipLines(T, i, st.root);
for (var k = 0; k < lines.length; k++) d.appendChild(el('div', lines[k][0], lines[k][1]));
if (!T.other[i]) {
var b = el('button', '', 'sandwich view of this function');
b.type = 'button';
b.id = 'sandwich-open';
b.addEventListener('click', function () { openSandwich(T.n[i]); });
d.appendChild(b);
}
}
function renderSearch() {
var r = $('qres');
r.textContent = '';
if (!qre || st.root < 0) return;
var z = st.zoom, nb = 0, nh = 0, count = 0, i;
for (i = z; i < T.end[z]; i++) if (matches(T, i)) count++;
for (i = z; i < T.end[z];) {
if (matches(T, i)) { nb += T.b[i]; nh += T.h[i]; i = T.end[i]; } else i++;
}
var text = count + ' matching frame' + (count === 1 ? '' : 's') + ' in view: ';
if (SINGLE) text += cost(nh) + ' (' + share(nh, T.h[z]) + ' of the view)';
else text += 'head ' + cost(nh) + ' (' + share(nh, T.h[z]) + ' of the view), base ' + cost(nb) + ' (' + share(nb, T.b[z]) + '), delta ' + scost(nh - nb) + ' (' + relText(nb, nh) + ')';
r.textContent = text;
}

// ---- sandwich view ----
function builder() { return { par: [-1], n: [-2], b: [0], h: [0], kids: [new Map()] }; }
function bchild(B, p, name) {
var k = B.kids[p].get(name);
if (k === undefined) {
k = B.n.length;
B.par.push(p); B.n.push(name); B.b.push(0); B.h.push(0); B.kids.push(new Map());
B.kids[p].set(name, k);
}
return k;
}
function merge(B, bp, i) {
for (var c = i + 1; c < T.end[i]; c = T.end[c]) {
var k = bchild(B, bp, T.other[c] ? -1 : T.n[c]);
B.b[k] += T.b[c]; B.h[k] += T.h[c];
merge(B, k, c);
}
}
function finish(B, sid) {
var d = [], n = [], b = [], h = [], stack = [[0, 0]];
while (stack.length) {
var it = stack.pop(), i = it[0];
d.push(it[1]); n.push(i === 0 ? sid : B.n[i]); b.push(B.b[i]); h.push(B.h[i]);
var ks = Array.from(B.kids[i].values());
ks.sort(function (x, y) { var a = B.n[x] < 0 ? '' : S[B.n[x]], c = B.n[y] < 0 ? '' : S[B.n[y]]; return a < c ? 1 : a > c ? -1 : 0; });
for (var k = 0; k < ks.length; k++) stack.push([ks[k], it[1] + 1]);
}
return mkTree(d, n, b, h, null, null);
}
var SW = null;
function openSandwich(sid) {
st.sw = sid;
var cal = builder(), cel = builder(), r = st.root, lowest = r === 0 ? 1 : 2;
for (var i = r; i < T.end[r];) {
if (T.d[i] >= 2 && !T.other[i] && T.n[i] === sid) {
cel.b[0] += T.b[i]; cel.h[0] += T.h[i];
cal.b[0] += T.b[i]; cal.h[0] += T.h[i];
merge(cel, 0, i);
var node = 0;
for (var a = T.par[i]; a >= 0 && T.d[a] >= lowest; a = T.par[a]) {
node = bchild(cal, node, T.other[a] ? -1 : T.n[a]);
cal.b[node] += T.b[i]; cal.h[node] += T.h[i];
}
i = T.end[i];
} else i++;
}
SW = { callers: finish(cal, sid), callees: finish(cel, sid) };
SW.callers.inverted = true;
var sec = $('sandwich-sec');
sec.hidden = false;
$('sandwich-title').textContent = 'Sandwich: ' + S[sid];
draw($('callers'), SW.callers, 0, 0, false, true);
draw($('callees'), SW.callees, 0, 0, true, true);
sec.scrollIntoView({ block: 'nearest' });
}
function closeSandwich() { st.sw = -1; SW = null; $('sandwich-sec').hidden = true; }

// ---- tables ----
function sortRows(rows, col, asc, key) {
rows.sort(function (x, y) {
var a = key(x, col), b = key(y, col), c;
if (typeof a === 'string') c = a < b ? -1 : a > b ? 1 : 0;
else c = (a === b) ? 0 : (a === null || isNaN(a)) ? 1 : (b === null || isNaN(b)) ? -1 : a - b;
return asc ? c : -c;
});
}
function heads(table, cols, sort, onSort) {
var tr = el('tr');
cols.forEach(function (c, k) {
var th = el('th', (c[1] ? 'num' : '') + (sort.col === k ? ' sorted' + (sort.asc ? ' asc' : '') : ''), c[0]);
th.addEventListener('click', function () {
if (sort.col === k) sort.asc = !sort.asc; else { sort.col = k; sort.asc = !!c[2]; }
sort.user = true;
onSort();
});
tr.appendChild(th);
});
var thead = table.tHead;
thead.textContent = '';
thead.appendChild(tr);
}
function td(tr, text, cls) { var c = el('td', cls || '', text); tr.appendChild(c); return c; }

var TCOLS = SINGLE ? [['test', 0, 1], ['cost', 1], ['share', 1], ['samples', 1]]
: [['verdict', 0, 1], ['test', 0, 1], ['base', 1], ['head', 1], ['delta', 1], ['95% CI', 1]];
function tkey(i, col) {
var t = i < 0 ? null : D.tests[i];
if (i < 0) return col === (SINGLE ? 0 : 1) ? '' : -Infinity;
if (SINGLE) return [S[t.n], t.h, t.h, t.hs][col];
return [t.a * 8 + t.v, S[t.n], t.b, t.h, t.d === null ? -Infinity : t.d, t.lo === null ? -Infinity : t.lo][col];
}
function renderTests() {
var table = $('tests'), body = table.tBodies[0];
heads(table, TCOLS, st.sort, renderTests);
body.textContent = '';
var filter = $('tfilter').value.toLowerCase(), changed = $('tchanged').checked;
var rows = [];
for (var i = 0; i < D.tests.length; i++) {
var t = D.tests[i];
if (changed && t.a > 4) continue; // the order of attention (compare.h): up to new and gone
if (filter && S[t.n].toLowerCase().indexOf(filter) < 0) continue;
rows.push(i);
}
if (st.sort.col >= 0) sortRows(rows, st.sort.col, st.sort.asc, tkey);
rows.unshift(-1);
var frag = document.createDocumentFragment();
rows.forEach(function (i) {
var tr = el('tr', i === st.test ? 'sel' : '');
tr.dataset.test = i;
if (i < 0) {
if (SINGLE) { td(tr, 'all tests'); td(tr, cost(D.total.h), 'num'); td(tr, '100.0%', 'num'); td(tr, String(D.total.hs), 'num'); }
else { td(tr, ''); td(tr, 'all tests'); td(tr, cost(D.total.b), 'num'); td(tr, cost(D.total.h), 'num'); td(tr, relText(D.total.b, D.total.h), 'num'); td(tr, '', 'num'); }
} else {
var t = D.tests[i];
if (SINGLE) {
td(tr, S[t.n]).title = S[t.n];
td(tr, cost(t.h), 'num'); td(tr, share(t.h, D.total.h), 'num'); td(tr, String(t.hs), 'num');
} else {
// the work outside the tests is shown, not gated: which way it moved, no verdict
var vw = t.ng && (VERDICTS[t.v] === 'regressed' || VERDICTS[t.v] === 'improved');
td(tr, vw ? (VERDICTS[t.v] === 'regressed' ? 'slower' : 'faster') : VERDICTS[t.v], vw ? '' : 'v-' + VERDICTS[t.v]).title =
vw ? 'outside the tests: shown, not gated' : t.why !== null ? t.why :
'no significant change (95% CI ' + pct(t.lo) + ' to ' + pct(t.hi) + ')';
td(tr, S[t.n] + (t.wl ? ' (waiting)' : '')).title = S[t.n];
var u = t.wl ? 'nanoseconds' : UNIT;
td(tr, t.b > 0 ? cost(t.b, u) : t.wl ? '0' : '-', 'num');
td(tr, t.h > 0 ? cost(t.h, u) : t.wl ? '0' : '-', 'num');
td(tr, pct(t.d), 'num');
td(tr, t.lo === null ? '-' : '[' + pct(t.lo).replace('%', '') + ', ' + pct(t.hi).replace('%', '') + ']', 'num');
}
}
tr.addEventListener('click', function () { select(i); });
frag.appendChild(tr);
});
body.appendChild(frag);
$('tcount').textContent = (rows.length - 1) + ' of ' + D.tests.length + ' tests';
}

var FCOLS = SINGLE ? [['function', 0, 1], ['location', 0, 1], ['self', 1], ['self %', 1], ['total', 1], ['total %', 1]]
: [['function', 0, 1], ['location', 0, 1], ['self base', 1], ['self head', 1], ['self delta', 1], ['total base', 1], ['total head', 1], ['total delta', 1]];
function fkey(r, col) {
if (SINGLE) return [S[r[0]], where(r[0], r[5]), r[2], r[2], r[4], r[4]][col];
return [S[r[0]], where(r[0], r[5]), r[1], r[2], r[2] - r[1], r[3], r[4], r[4] - r[3]][col];
}
function renderFuncs() {
var t = st.test < 0 ? null : D.tests[st.test];
var fx = t ? t.fx : D.allfx, total = t ? t.fxn : D.fxn;
var table = $('funcs'), body = table.tBodies[0];
// until the reader sorts: biggest self first, or what moved most in the
// test's direction (growth first, shrinkage first for an improved test)
if (!st.fsort.user) st.fsort = { col: SINGLE ? 2 : 4, asc: !!(t && t.v === 1), user: false };
heads(table, FCOLS, st.fsort, renderFuncs);
body.textContent = '';
var rows = fx.slice();
sortRows(rows, st.fsort.col, st.fsort.asc, fkey);
var limit = st.fall ? rows.length : Math.min(rows.length, 100);
var th = t ? (t.wl ? t.ch : t.h) : D.total.h, tb = t ? (t.wl ? t.cb : t.b) : D.total.b;
var frag = document.createDocumentFragment();
for (var k = 0; k < limit; k++) {
var r = rows[k], tr = el('tr');
var name = td(tr, '');
var b = el('button', 'link', S[r[0]]);
b.type = 'button';
b.title = 'sandwich view of ' + S[r[0]];
(function (sid) { b.addEventListener('click', function () { openSandwich(sid); }); })(r[0]);
name.appendChild(b);
td(tr, where(r[0], r[5])).title = where(r[0], r[5]);
if (SINGLE) {
td(tr, cost(r[2]), 'num'); td(tr, share(r[2], th), 'num'); td(tr, cost(r[4]), 'num'); td(tr, share(r[4], th), 'num');
} else {
td(tr, cost(r[1]), 'num'); td(tr, cost(r[2]), 'num'); td(tr, scost(r[2] - r[1]), 'num ' + (r[2] > r[1] ? 'up' : r[2] < r[1] ? 'down' : ''));
td(tr, cost(r[3]), 'num'); td(tr, cost(r[4]), 'num'); td(tr, scost(r[4] - r[3]), 'num ' + (r[4] > r[3] ? 'up' : r[4] < r[3] ? 'down' : ''));
}
frag.appendChild(tr);
}
body.appendChild(frag);
var more = $('funcs-more');
more.textContent = '';
if (limit < rows.length) {
var mb = el('button', '', 'show all ' + rows.length);
mb.type = 'button';
mb.addEventListener('click', function () { st.fall = true; renderFuncs(); });
more.appendChild(mb);
}
if (total > fx.length) more.appendChild(el('span', 'hint', ' The page keeps the ' + fx.length + ' biggest of ' + total + ' functions; report.json lists the ones that changed most.'));
$('funcs-title').textContent = 'Functions of ' + (t ? S[t.n] : 'all tests') + (SINGLE ? '' : ' (base ' + cost(tb) + ', head ' + cost(th) + ')');
}

// ---- waiting: the off-CPU diff flame graph and where it waited more ----
var WCOLS = [['blocking call', 0, 1], ['called from', 0, 1], ['why', 0, 1], ['base', 1], ['head', 1], ['delta', 1]];
function renderWaits() {
var sec = $('waits-sec'), t = st.test < 0 ? null : D.tests[st.test], w = t && t.w;
if (!WT || !w) { sec.hidden = true; st.wroot = -1; return; }
sec.hidden = false;
$('waits-title').textContent = 'Where it waited more: ' + S[t.n] + ' (off-CPU diff flame graph)';
var sum = 'waiting ' + cost(w.b, 'nanoseconds') + ' \u2192 ' + cost(w.h, 'nanoseconds') + ' a run (' + scost(w.h - w.b, 'nanoseconds') + ')';
if (!(w.grew & 1) && w.cpu !== null) sum += '; CPU time ' + pct(w.cpu) + ': it is slower because it waits';
$('waits-summary').textContent = sum;
draw($('waits-flame'), WT, st.wroot, st.wzoom, st.icicle, true);
var crumbs = $('wcrumbs'), path = [];
crumbs.textContent = '';
for (var a = st.wzoom; a >= 0; a = WT.par[a]) { path.unshift(a); if (a === st.wroot) break; }
path.forEach(function (n) {
var b = el('button', n === st.wzoom ? 'on' : '', nameOf(WT, n));
b.type = 'button';
b.addEventListener('click', function () { st.wzoom = n; renderWaits(); });
crumbs.appendChild(b);
});
var table = $('waits'), body = table.tBodies[0];
var tr = el('tr');
WCOLS.forEach(function (c) { tr.appendChild(el('th', c[1] ? 'num' : '', c[0])); });
table.tHead.textContent = '';
table.tHead.appendChild(tr);
body.textContent = '';
w.sites.forEach(function (r) {
var row = el('tr');
td(row, S[r[0]]).title = S[r[0]];
var from = r[1] >= 0 ? S[r[1]] + (S[r[2]] ? '  ' + S[r[2]] + (r[3] > 0 ? ':' + r[3] : '') : '') : '-';
td(row, from).title = from;
td(row, S[r[4]]);
td(row, cost(r[5], 'nanoseconds'), 'num'); td(row, cost(r[6], 'nanoseconds'), 'num');
td(row, scost(r[6] - r[5], 'nanoseconds'), 'num ' + (r[6] > r[5] ? 'up' : r[6] < r[5] ? 'down' : ''));
body.appendChild(row);
});
}

// ---- selection ----
function select(i) {
st.test = i;
st.root = testNode(i);
st.zoom = st.root;
st.fall = false;
closeSandwich();
var name = i < 0 ? 'all tests' : S[D.tests[i].n];
$('graph-title').textContent = (SINGLE ? 'Flame graph: ' : MEMORY ? 'Allocation diff flame graph (alloc_space): ' : 'Diff flame graph: ') + name;
try { history.replaceState(null, '', i < 0 ? (MEMORY ? '#memory' : '#') : HASH + 'test=' + encodeURIComponent(name)); } catch (e) { }
var rows = $('tests').tBodies[0].rows;
for (var k = 0; k < rows.length; k++) rows[k].className = +rows[k].dataset.test === i ? 'sel' : '';
renderGraph();
st.wroot = st.wzoom = i >= 0 && D.tests[i].w ? D.tests[i].w.node : -1;
renderWaits();
renderFuncs();
}

// ---- header ----
function short(c) { return c ? c.slice(0, 12) : '?'; }
function link(text, href) {
var a = el('a', '', text);
a.href = href;
a.rel = 'noreferrer';
return a;
}
function renderHeader() {
document.title = D.title;
$('title').textContent = D.title;
var s = $('summary');
if (SINGLE) {
s.textContent = D.tests.length + ' test' + (D.tests.length === 1 ? '' : 's') + ', ' + cost(D.total.h) + ' of ' + D.event + ' in ' + D.total.hs + ' samples';
} else {
var parts = [];
for (var v = 0; v < VERDICTS.length; v++) if (D.counts[v]) parts.push(D.counts[v] + ' ' + VERDICTS[v]);
s.textContent = (D.counts[0] ? '' : 'No regressions in ' + D.tests.length + ' tests: ') + parts.join(', ') + (D.counts[0] ? ' of ' + D.tests.length + ' tests' : '');
s.className = D.counts[0] ? 'v-regressed' : '';
}
var m = $('meta');
m.textContent = '';
var bm = D.base.meta, hm = D.head.meta;
if (!SINGLE) {
m.appendChild(document.createTextNode('base '));
if (D.links.base) m.appendChild(link(short(bm.commit), D.links.base)); else m.appendChild(el('code', '', bm.commit ? short(bm.commit) : D.base.files.join(', ')));
if (bm.branch) m.appendChild(document.createTextNode(' (' + bm.branch + ')'));
if (D.distance >= 0) m.appendChild(document.createTextNode(', ' + D.distance + ' commit' + (D.distance === 1 ? '' : 's') + ' back'));
m.appendChild(document.createTextNode(' \u2192 head '));
if (D.links.head) m.appendChild(link(short(hm.commit), D.links.head)); else m.appendChild(el('code', '', hm.commit ? short(hm.commit) : D.head.files.join(', ')));
if (hm.branch) m.appendChild(document.createTextNode(' (' + hm.branch + ')'));
m.appendChild(document.createTextNode(' \u00b7 '));
}
m.appendChild(document.createTextNode(D.event + ' (' + D.value_type + ', ' + D.unit + ')' + (D.waits ? ' and time waited' : '') + (SINGLE ? '' : ' \u00b7 threshold ' + D.threshold + '% \u00b7 ' + D.base.runs + ' base run' + (D.base.runs === 1 ? '' : 's') + ' vs ' + D.head.runs + ' head run' + (D.head.runs === 1 ? '' : 's'))));
if (D.links.run) { m.appendChild(document.createTextNode(' \u00b7 ')); m.appendChild(link('CI run', D.links.run)); }
var notes = $('notes');
// the other view: time, or the allocations
if (MEMD) {
var sw = el('p', 'note small');
sw.appendChild(document.createTextNode(MEMORY ? 'Allocations of each test (gate.memory ' + (D.memory.gated ? 'on' : 'off') + '). ' : 'The run measured memory too: '));
var other = link(MEMORY ? 'back to time' : 'the allocations of each test, and where they grew', MEMORY ? '#' : '#memory');
other.addEventListener('click', function (ev) { ev.preventDefault(); location.hash = MEMORY ? '' : 'memory'; location.reload(); });
sw.appendChild(other);
notes.appendChild(sw);
}
if (D.memory) D.memory.notes.forEach(function (n) {
var p = el('p', 'note');
if (n[0] !== null) { p.appendChild(el('code', '', n[0])); p.appendChild(document.createTextNode(' ')); }
p.appendChild(document.createTextNode(n[1]));
notes.appendChild(p);
});
if (D.pruned.others > 0) {
var inChanged = (D.pruned.bar * 100 / D.pruned.detail).toPrecision(2) + '% of its test';
// a suite of thousands of tests: past 100%, every frame of an unchanged test
notes.appendChild(el('p', 'note', 'To keep this page fast, ' + (D.pruned.frames - D.pruned.kept) + ' of ' + D.pruned.frames + ' frames' + (D.pruned.bar >= 1 ? ' (all of the unchanged tests\' frames, and in changed tests those smaller than ' + inChanged + ')' : ', each smaller than ' + (D.pruned.bar * 100).toPrecision(2) + '% of its test (' + inChanged.replace(' of its test', '') + ' in changed tests),') + ' are merged into hatched "(other)" frames. The function table and the test totals are exact.'));
}
// what a run lost, in one small line per side (one when both say the
// same): which programs, and the fix
var losses = [['head', hm, D.head], ['base', bm, D.base]].map(function (x) {
var m = x[1], parts = [], n = function (k) { return m[k] && m[k] !== '0' ? m[k] : null; };
if (SINGLE && x[0] === 'base') return '';
if (n('lost') || n('throttled')) parts.push((n('lost') || 0) + ' samples lost and ' + (n('throttled') || 0) + ' throttled by the kernel (a lower --freq)');
// the tests' losses get the fix; the harness's (outside every test) a count
var tests = function (k) { return Math.max(0, (+n(k) || 0) - (+n(k + '_outside') || 0)); };
var outside = function (k, what) { return +n(k + '_outside') ? ' (and ' + n(k + '_outside') + ' ' + what + ' outside the tests, the harness\'s own, which change no test)' : ''; };
if (tests('unresolved')) {
var inb = (x[2].unresolved_in || []).map(function (u) { return u[0] + ' (' + u[1] + ')'; });
parts.push(tests('unresolved') + ' frames of the tests without a symbol' + (inb.length ? ', most in ' + inb.join(', ') : '') + ' (build with -g, or install the -dbg/-dbgsym package of a library)' + outside('unresolved', 'frames'));
} else if (+n('unresolved_outside')) parts.push(n('unresolved_outside') + ' frames without a symbol outside the tests (the harness\'s own, which change no test)');
if (tests('truncated')) parts.push(tests('truncated') + ' stacks of the tests cut short (a larger --stack-size, up to 65000, or build with -fno-omit-frame-pointer)' + outside('truncated', 'stacks'));
return parts.join('; ');
});
// the runs' notes: what stepped aside, what ran from a cache
(D.notes || []).forEach(function (n) { notes.appendChild(el('p', 'note small', (SINGLE ? '' : n[0] === 'both' ? 'Both runs: ' : 'The ' + n[0] + ' run: ') + n[1] + (/[.!?]$/.test(n[1]) ? '' : '.'))); });
if (losses[0] && losses[0] === losses[1]) notes.appendChild(el('p', 'note small', 'Both runs: ' + losses[0] + '.'));
else ['head', 'base'].forEach(function (side, i) { if (losses[i]) notes.appendChild(el('p', 'note small', 'The ' + side + ' run: ' + losses[i] + '.')); });
$('foot').textContent = 'testflame ' + D.version + ' \u00b7 ' + (SINGLE ? D.head.files.join(', ') : 'base: ' + D.base.files.join(', ') + ' \u00b7 head: ' + D.head.files.join(', '));
}
function renderLegend() {
var l = $('legend');
l.textContent = '';
document.body.classList.toggle('cb', st.cb);
if (SINGLE) { l.appendChild(el('span', '', 'width: cost; colour: by name (no meaning)')); return; }
l.appendChild(el('span', '', 'colour: shrank'));
[-1, -0.5, -0.2, 0, 0.2, 0.5, 1].forEach(function (r) {
var b = r < 0 ? 1 : 1 - r, h = r < 0 ? 1 + r : 1;
var sw = el('span', 'sw');
sw.style.background = diffColour(b, h);
l.appendChild(sw);
});
l.appendChild(el('span', '', 'grew (grey: within \u00b1' + D.threshold + '%) \u00b7 width: ' + (st.wbase ? 'base' : 'head')));
}

// ---- controls ----
function toggle(on, off) { $(on).className = 'on'; $(off).className = ''; }
$('b-flame').addEventListener('click', function () { st.icicle = false; toggle('b-flame', 'b-icicle'); renderGraph(); renderWaits(); });
$('b-icicle').addEventListener('click', function () { st.icicle = true; toggle('b-icicle', 'b-flame'); renderGraph(); renderWaits(); });
$('b-whead').addEventListener('click', function () { st.wbase = false; toggle('b-whead', 'b-wbase'); renderLegend(); renderGraph(); renderWaits(); redrawSandwich(); });
$('b-wbase').addEventListener('click', function () { st.wbase = true; toggle('b-wbase', 'b-whead'); renderLegend(); renderGraph(); renderWaits(); redrawSandwich(); });
$('cb').checked = st.cb;
$('cb').addEventListener('change', function () { st.cb = $('cb').checked; renderLegend(); renderGraph(); renderWaits(); redrawSandwich(); });
var qtimer = 0;
$('q').addEventListener('input', function () {
clearTimeout(qtimer);
qtimer = setTimeout(function () { setQuery($('q').value); renderGraph(); renderWaits(); redrawSandwich(); }, 120);
});
$('tfilter').addEventListener('input', renderTests);
$('tchanged').addEventListener('change', renderTests);
$('sandwich-close').addEventListener('click', closeSandwich);
document.addEventListener('keydown', function (ev) {
if (ev.key === 'Escape' && st.root >= 0) { tip.hidden = true; zoomTo(st.root); }
});
function redrawSandwich() {
if (!SW) return;
draw($('callers'), SW.callers, 0, 0, false, true);
draw($('callees'), SW.callees, 0, 0, true, true);
}
var rtimer = 0;
window.addEventListener('resize', function () { clearTimeout(rtimer); rtimer = setTimeout(function () { renderGraph(); renderWaits(); redrawSandwich(); }, 150); });
hook($('flame'), function (i) { zoomTo(i); }, function () { return st.root; });
hook($('waits-flame'), function (i) { st.wzoom = i; renderWaits(); }, function () { return st.wroot; });
hook($('callers'), function (i) { if (i > 0) openSandwich(SW.callers.n[i]); }, function () { return 0; });
hook($('callees'), function (i) { if (i > 0) openSandwich(SW.callees.n[i]); }, function () { return 0; });
if (SINGLE) { $('wgroup').hidden = true; $('cblabel').hidden = true; $('tchanged-label').hidden = true; }

// ---- start: the test named in the URL, else the first change ----
D.fxn = D.allfx ? D.fxn : 0;
setQuery('');
renderHeader();
renderLegend();
var start = -1, want = null;
var m = /^#(?:memory&)?test=(.*)$/.exec(location.hash);
if (m) { try { want = decodeURIComponent(m[1]); } catch (e) { want = null; } }
for (var i = 0; i < D.tests.length; i++) {
if (want !== null && S[D.tests[i].n] === want) { start = i; break; }
}
if (start < 0 && want === null && !SINGLE) {
for (i = 0; i < D.tests.length; i++) if (D.tests[i].v <= 3) { start = i; break; }
}
if (start < 0 && D.tests.length === 1) start = 0;
renderTests();
select(start);
document.body.dataset.ready = '1';
})();
