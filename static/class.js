// The class page (/class): the instructor makes a class (a room, a room token and a join code
// per student), prints a slip per room (its QR code, link and code: paper only, never on
// screen, since this page may be the projected one), shows the one join address a student who
// lost the tab types the code at, watches every room at a glance and drives them all at once.
// Every call carries the admin token; a student's room token is refused here.
//
// The API (src/routes/class.rs): POST/GET/DELETE /admin/class, POST/DELETE
// /admin/rooms/{room}/token, GET /admin/whoami. "In every room" is a loop over the rooms in
// the browser, one room-scoped call each, so each room's outcome is shown on its own row.

import { t, apply, language, setLanguage } from './i18n.js';
import './class-strings.js';
import { request as call, currentToken, forgetToken, keepToken, useToken } from './room.js';
import { resultsPanel } from './class-results.js';


const $ = (sel) => document.querySelector(sel);
// Tokens and codes are shown once by the server (it keeps only digests). They stay in this tab
// so a reload can still print the slips; the admin token beside them is stronger still.
const TICKETS_KEY = 'oversell.class-tickets';
const REFRESH_MS = 2000;

// The token is room.js's: one per tab, typed once for the dashboard and this page alike.
let unlocked = false;
let rooms = []; // the last GET /admin/class rows
let tickets = loadTickets(); // room → {room, token, join_url, qr_svg, code}
let joinPage = ''; // the join page's address, the one the projector shows
// room → {ok, text}: the last "every room" action's outcome. `text` may be a function, so a
// language switch redraws it.
const results = new Map();
let progress = null; // the last "every room" loop's {what, done, total, failed}, `what` a function
let busy = false; // an "every room" loop is running
let prefix = ''; // the class's room-name prefix

// ---------------------------------------------------------------- helpers

const roomPath = (path, room) => `${path}${path.includes('?') ? '&' : '?'}room=${encodeURIComponent(room)}`;

function say(text, error = false) {
  const m = $('#message');
  m.textContent = text;
  m.classList.toggle('error', error);
}

/** Runs an action with its button disabled; shows its outcome or the API's message. */
async function act(button, fn) {
  if (button) button.disabled = true;
  try {
    const text = await fn();
    if (text) say(text);
  } catch (err) {
    if (err.status === 401) lock('admin.badtoken');
    say(`${t('error')}: ${err.message}`, true);
  } finally {
    if (button) button.disabled = false;
  }
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

const fmt = (n) => (typeof n === 'number' ? n.toLocaleString(language() === 'zh' ? 'zh-CN' : 'en-US') : '–');

// ---------------------------------------------------------------- admin token

/** `key` names the status line (kept in data-i18n, so the language toggle redraws it). */
function setStatus(key, cls, vars = {}) {
  const s = $('#admin-status');
  s.className = `status ${cls}`;
  s.dataset.i18n = key;
  s.dataset.vars = JSON.stringify(vars);
  s.textContent = t(key, vars);
}

function setUnlocked(on) {
  unlocked = on;
  $('#admin').disabled = !on;
  $('#forget').hidden = !on;
  $('#token').hidden = on;
  $('#unlock').hidden = on;
  document.body.dataset.admin = on ? 'on' : 'off';
}

function lock(key = 'class.locked') {
  setUnlocked(false);
  forgetToken();
  setStatus(key, key === 'class.locked' ? 'readonly' : 'bad');
}

async function unlock(candidate) {
  useToken(candidate);
  let who;
  try {
    who = await call('GET', '/admin/whoami');
  } catch (err) {
    if (err.status === 401) lock('admin.badtoken');
    else say(`${t('error')}: ${err.message}`, true);
    return;
  }
  if (who.scope !== 'admin') {
    // A student's token (this tab may have opened a join link): it stays for the dashboard,
    // but the class page is the instructor's.
    setUnlocked(false);
    setStatus('class.roomtoken', 'bad', { room: who.room });
    return;
  }
  keepToken();
  setUnlocked(true);
  setStatus('admin.unlocked', 'unlocked');
  refresh();
  loadPickers(); // as the admin token gets them: the chapter voted on is not hidden from it
}

$('#token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const value = $('#token').value.trim();
  if (value) unlock(value);
});
$('#forget').addEventListener('click', () => lock());

// ---------------------------------------------------------------- the class vote's results

const classResults = resultsPanel({ act });

// ---------------------------------------------------------------- tickets (token, link, QR)

function loadTickets() {
  try {
    return new Map(Object.entries(JSON.parse(sessionStorage.getItem(TICKETS_KEY) || '{}')));
  } catch {
    return new Map();
  }
}

function saveTickets() {
  try {
    sessionStorage.setItem(TICKETS_KEY, JSON.stringify(Object.fromEntries(tickets)));
  } catch {
    // Over the tab's storage quota (many rooms): they stay on the page until a reload.
  }
}

/** One room's slip, for paper: its name, QR code, join code and join link. */
function slip(ticket) {
  const card = document.createElement('article');
  card.className = 'slip';
  card.dataset.room = ticket.room;
  // The server's SVG as an image, never as markup in this page: an <img> runs no script.
  const qr = document.createElement('img');
  qr.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(ticket.qr_svg || '')}`;
  qr.alt = t('class.qr.alt', { room: ticket.room });
  const text = document.createElement('div');
  const title = document.createElement('h3');
  title.textContent = ticket.room;
  const how = document.createElement('p');
  how.className = 'how';
  how.textContent = t('class.slip.how', { page: joinPage || `${location.origin}/join` });
  const code = document.createElement('p');
  code.className = 'code';
  code.textContent = ticket.code || '';
  text.append(title, how, code);
  // Only an http(s) link becomes a link: a join link is never a script.
  if (/^https?:\/\//.test(ticket.join_url || '')) {
    const link = document.createElement('a');
    link.href = ticket.join_url;
    link.textContent = ticket.join_url;
    text.append(link);
  }
  card.append(qr, text);
  return card;
}

/** The slips of `only` (a room just given a new token) or of every room this tab holds. */
function renderSlips(only) {
  const sorted = [...tickets.values()]
    .filter((tk) => !only || tk.room === only)
    .sort((a, b) => a.room.localeCompare(b.room));
  $('#slips').replaceChildren(...sorted.map(slip));
  $('#slips').dataset.rooms = String(sorted.length);
  $('#print-slips').disabled = tickets.size === 0;
  $('#slips-ready').textContent = sorted.length
    ? t(only ? 'class.slips.one' : 'class.slips.ready', { n: sorted.length, room: only })
    : '';
}

/** Opens the print dialog on the slips just made (a class, or one room's new token). */
function printSlips(only) {
  renderSlips(only);
  if (tickets.size) window.print();
}

/** The one address the projector shows, and its QR code: the join page, no token. */
function renderJoin(page, qrSvg) {
  if (page) joinPage = page;
  $('#join-address').textContent = joinPage;
  const img = $('#join-qr');
  if (qrSvg) {
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(qrSvg)}`;
    img.alt = t('class.join.qr', { page: joinPage });
    img.hidden = false;
  }
}

$('#print-slips').addEventListener('click', () => printSlips());

// ---------------------------------------------------------------- make / close the class

$('#create-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  if (rooms.length && !confirm(t('class.create.confirm'))) return;
  act($('#create'), async () => {
    const body = {
      students: Number($('#students').value),
      prefix: $('#prefix').value.trim(),
      stock: Number($('#stock').value),
    };
    const made = await call('POST', '/admin/class', body);
    tickets = new Map(made.rooms.map((r) => [r.room, r]));
    saveTickets();
    results.clear();
    renderJoin(made.join_page, made.join_qr_svg);
    printSlips();
    $('#bulk-stock').value = String(body.stock);
    await refresh();
    return t('class.created', { n: made.rooms.length });
  });
});

$('#close-class').addEventListener('click', (ev) => {
  if (!confirm(t('class.close.confirm'))) return;
  act(ev.target, async () => {
    const out = await call('DELETE', '/admin/class');
    tickets.clear();
    saveTickets();
    renderSlips();
    await refresh();
    return t('class.closed', { n: out.revoked });
  });
});

async function rotate(room, button) {
  await act(button, async () => {
    const ticket = await call('POST', `/admin/rooms/${encodeURIComponent(room)}/token`);
    tickets.set(room, ticket);
    saveTickets();
    printSlips(room);
    await refresh();
    return t('class.rotated', { room });
  });
}

async function revoke(room, button) {
  await act(button, async () => {
    await call('DELETE', `/admin/rooms/${encodeURIComponent(room)}/token`);
    tickets.delete(room);
    saveTickets();
    renderSlips();
    await refresh();
    return t('class.revoked', { room });
  });
}

// ---------------------------------------------------------------- every room at a glance

let refreshing = false;
async function refresh() {
  if (!unlocked || refreshing) return;
  refreshing = true;
  try {
    const data = await call('GET', '/admin/class');
    rooms = data.rooms || [];
    prefix = data.prefix || '';
    if (data.join_page !== joinPage) renderJoin(data.join_page, data.join_qr_svg);
    renderRooms();
  } catch (err) {
    if (err.status === 401) lock('admin.badtoken');
    else say(`${t('error')}: ${err.message}`, true);
  } finally {
    refreshing = false;
  }
}

// Rows are kept per room and updated in place: a row rebuilt every 2 s would swallow a click
// that lands on its buttons mid-refresh.
const rows = new Map(); // room → <tr>

function makeRow(room) {
  const tr = document.createElement('tr');
  tr.dataset.room = room;
  const name = document.createElement('td');
  const watch = document.createElement('a');
  watch.href = `/?room=${encodeURIComponent(room)}`;
  watch.target = '_blank';
  watch.rel = 'noopener';
  watch.textContent = room;
  watch.dataset.i18nTitle = 'class.watch';
  watch.title = t('class.watch');
  name.append(watch);
  tr.append(name);
  for (let i = 0; i < 10; i++) tr.append(cell(''));
  const actions = document.createElement('td');
  actions.className = 'actions';
  for (const [key, fn] of [['class.rotate', rotate], ['class.revoke', revoke]]) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = key.replace('class.', '');
    button.dataset.i18n = key;
    button.textContent = t(key);
    button.addEventListener('click', () => fn(room, button));
    actions.append(button);
  }
  tr.append(actions);
  return tr;
}

function renderRooms() {
  const body = $('#rooms tbody');
  const names = rooms.map((r) => r.room);
  for (const [room, tr] of rows) {
    if (!names.includes(room)) { tr.remove(); rows.delete(room); }
  }
  const totals = { viewers: 0, oversold: 0 };
  for (const r of rooms) {
    let tr = rows.get(r.room);
    if (!tr) { tr = makeRow(r.room); rows.set(r.room, tr); }
    body.append(tr); // in the server's order
    tr.className = r.status === 'live' ? '' : 'absent';
    const last = results.get(r.room);
    const values = [
      [r.tier],
      [`${fmt(r.stock)} / ${fmt(r.initial_stock)}`],
      [fmt(r.orders)],
      [fmt(r.oversold), r.oversold > 0 ? 'hot' : ''],
      [fmt(r.lost_updates), r.lost_updates > 0 ? 'hot' : ''],
      [fmt(r.overlaps), r.overlaps > 0 ? 'hot' : ''],
      [fmt(r.viewers)],
      [t(`class.status.${r.status}`), r.status === 'live' ? 'ok' : ''],
      [r.has_token ? '✓' : '–', r.has_token ? 'ok' : ''],
      [last ? textOf(last.text) : '', last ? (last.ok ? 'ok' : 'fail') : ''],
    ];
    values.forEach(([text, cls], i) => {
      const td = tr.children[i + 1];
      td.textContent = text;
      td.className = cls || '';
      if (i === 9) td.title = last ? textOf(last.text) : '';
    });
    tr.querySelector('button.revoke').disabled = !r.has_token;
    totals.viewers += r.viewers || 0;
    totals.oversold += r.oversold || 0;
  }
  $('#no-class').hidden = rooms.length > 0;
  $('#tickets-missing').hidden = !rooms.some((r) => r.has_token && !tickets.has(r.room));
  $('#class-summary').textContent = rooms.length
    ? t('class.summary', { n: rooms.length, prefix, viewers: fmt(totals.viewers), oversold: fmt(totals.oversold) })
    : '';
}

setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);

// ---------------------------------------------------------------- in every room

const textOf = (text) => (typeof text === 'function' ? text() : text);

function showProgress() {
  if (progress) $('#bulk-progress').textContent = t('class.bulk.progress', { ...progress, what: progress.what() });
}

/**
 * Calls `fn(room)` for every room of the class, `parallel` at a time, showing progress and
 * each room's error (the API's message) as they come. `what()` names the action; `fn` returns
 * the text of the room's "last action" cell (or a function that makes it).
 */
async function everyRoom(what, parallel, fn) {
  if (busy) return;
  await refresh();
  const todo = rooms.map((r) => r.room);
  if (!todo.length) {
    say(t('class.none'), true);
    return;
  }
  busy = true;
  for (const b of document.querySelectorAll('.bulk-go')) b.disabled = true;
  const errors = $('#bulk-errors');
  errors.replaceChildren();
  progress = { what, done: 0, total: todo.length, failed: 0 };
  showProgress();
  const queue = [...todo];
  const worker = async () => {
    for (let room = queue.shift(); room !== undefined; room = queue.shift()) {
      try {
        results.set(room, { ok: true, text: await fn(room) });
      } catch (err) {
        progress.failed += 1;
        results.set(room, { ok: false, text: err.message });
        const li = document.createElement('li');
        li.textContent = `${room}: ${err.message}`;
        errors.append(li);
        if (err.status === 401) { queue.length = 0; lock('admin.badtoken'); }
      }
      progress.done += 1;
      // The room's row shows its outcome as the count of rooms done takes it in.
      renderRooms();
      showProgress();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(parallel, todo.length) }, worker));
  } finally {
    busy = false;
    for (const b of document.querySelectorAll('.bulk-go')) b.disabled = false;
  }
  await refresh();
}

// A tier switch or a reset is quick: several rooms at once. A scenario drives load through the
// whole fleet: two at a time, so the verdicts still measure locks, not a saturated machine.
$('#bulk-tier-go').addEventListener('click', () => {
  const tier = $('#bulk-tier').value;
  everyRoom(() => t('class.bulk.tier.what', { tier }), 6, async (room) => {
    await call('PUT', roomPath('/admin/tier', room), { tier });
    return tier;
  });
});

$('#bulk-reset-go').addEventListener('click', () => {
  const stock = Number($('#bulk-stock').value);
  everyRoom(() => t('class.bulk.reset.what', { stock }), 6, async (room) => {
    await call('POST', roomPath('/admin/reset', room), { stock });
    return () => t('done.reset', { stock });
  });
});

$('#bulk-scenario-go').addEventListener('click', () => {
  const id = $('#bulk-scenario').value;
  if (!id) return;
  everyRoom(() => t('class.bulk.scenario.what', { id }), 2, async (room) => {
    const run = await call('POST', roomPath('/admin/scenario', room), { id });
    return () => `${run.passed ? t('pass') : t('fail')} · ${run.id}`;
  });
});

// The tokens `oversell up --class` printed (or another tab made) are not in this tab: new ones,
// each with its QR code, replace them.
$('#bulk-rotate-go').addEventListener('click', () => {
  if (!confirm(t('class.bulk.rotate.confirm'))) return;
  everyRoom(() => t('class.bulk.rotate.what'), 6, async (room) => {
    tickets.set(room, await call('POST', `/admin/rooms/${encodeURIComponent(room)}/token`));
    saveTickets();
    renderSlips();
    return () => t('class.rotate.done');
  }).then(() => printSlips());
});

// The pickers list what the server offers (GET /tiers, GET /scenarios): no second list here.
async function loadPickers() {
  try {
    const [tiers, catalog] = await Promise.all([
      call('GET', '/tiers'),
      call('GET', '/scenarios').catch(() => ({ scenarios: [] })),
    ]);
    $('#bulk-tier').replaceChildren(...tiers.tiers.map((tier) => new Option(tier.id, tier.id)));
    // A chapter voted on is listed without its id to a caller without the admin token.
    const listed = (catalog.scenarios || []).filter((s) => s.id);
    $('#bulk-scenario').replaceChildren(...listed.map((s) => new Option(`${s.id} (${s.tier})`, s.id)));
    $('#bulk-scenario-go').disabled = !(catalog.scenarios || []).length;
  } catch {
    setTimeout(loadPickers, 2000); // the fleet is restarting: try again
  }
}

// ---------------------------------------------------------------- language, start

function translate() {
  apply();
  const s = $('#admin-status');
  if (s.dataset.i18n) s.textContent = t(s.dataset.i18n, JSON.parse(s.dataset.vars || '{}'));
  showProgress();
  renderRooms();
  renderSlips();
  renderJoin();
  classResults.translate();
}

$('#lang-toggle').addEventListener('click', () => {
  setLanguage(language() === 'zh' ? 'en' : 'zh');
  translate();
});

apply();
setUnlocked(false);
setStatus('class.locked', 'readonly');
renderSlips();
loadPickers();
if (currentToken()) unlock(currentToken());
