// The lab page (lab.html): the student's hour. The lab's editor (lab.js) with the contract and
// the grader's card beside the steps, and the room's live timeline under them (feed.js, the
// same stream and drawing as the dashboard's), in the room and with the token the dashboard
// uses (room.js). Stacks into one column on a phone.

import { t, apply, fmt, language, setLanguage } from './i18n.js';
import { LiveRoom, fillLegend, loadTiers } from './feed.js';
import { ROOM, STATUS, actor, call, currentToken, forgetToken, say, whoIs } from './room.js';
import { startLab } from './lab.js';

const $ = (sel) => document.querySelector(sel);
const FIGURES = ['stock', 'orders', 'oversold', 'overlaps', 'foreign_releases', 'lock_timeouts'];

let caller = null; // whose token this tab holds, `null` when read-only
let lastBurst = null;


const act = actor({
  say,
  errorWord: () => t('error'),
  refused: () => lock(caller?.scope === 'room' ? 'refused' : 'bad'),
});


// ---------------------------------------------------------------- the token

/** Submit, Attack and Fire need the room's token (or the admin's); reading needs none. */
function setAdmin(on, status, vars = {}) {
  for (const b of document.querySelectorAll('.admin-only')) b.disabled = !on;
  $('#forget').hidden = !on && status !== 'otherroom';
  $('#token').hidden = on;
  $('#unlock').hidden = on;
  const [key, cls] = STATUS[status];
  const s = $('#admin-status');
  s.className = `status ${cls}`;
  s.dataset.i18n = key;
  s.dataset.vars = JSON.stringify(vars);
  s.textContent = t(key, vars);
  document.body.dataset.admin = on ? 'on' : 'off';
  $('#your-room').hidden = caller?.scope !== 'room';
  $('#your-room-name').textContent = caller?.room || '';
}

function lock(status = 'readonly') {
  forgetToken();
  caller = null;
  setAdmin(false, status);
}

async function unlock(candidate) {
  let who;
  try {
    who = await whoIs(candidate);
  } catch (err) {
    // The fleet did not answer (restarting?): the token is kept and asked about again.
    setAdmin(false, 'readonly');
    say(`${t('error')}: ${err.message}`, true);
    setTimeout(() => unlock(candidate), 3000);
    return;
  }
  caller = who.caller;
  if (!caller) lock(who.status);
  else setAdmin(who.status !== 'otherroom', who.status, { room: caller.room });
}

$('#token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const value = $('#token').value.trim();
  if (value) unlock(value);
});
$('#forget').addEventListener('click', () => lock());

// ---------------------------------------------------------------- the room, live

function render(s) {
  document.body.dataset.tier = s.tier;
  $('#tier-name').textContent = s.tier;
  $('#room-name').textContent = s.room;
  for (const k of FIGURES) {
    $(`#fig-${k}`).textContent = fmt(s[k]);
    $(`#fig-${k}`).parentElement.classList.toggle('hot', s[k] > 0);
  }
}

const live = new LiveRoom({
  timeline: $('#timeline'),
  handOff: $('#handoff'),
  conn: $('#conn'),
  connText: $('#conn-text'),
  onState: render,
});

function showBurst() {
  const r = lastBurst;
  if (!r) return;
  $('#burst-result').textContent = t('burst.result', {
    ok: r.ok, sold_out: r.sold_out, unavailable: r.unavailable, errors: r.errors,
    ms: Math.round(r.elapsed_ms), rps: Math.round(r.throughput_rps),
  });
}

// The stock put on sale again, then the buyers through nginx: the lock at work, on the
// timeline below.
$('#try').addEventListener('click', (ev) => act(ev.target, async () => {
  const stock = Number($('#try-stock').value);
  const buyers = Number($('#try-buyers').value);
  $('#burst-result').textContent = '…';
  await call('POST', '/admin/reset', { stock });
  live.clear();
  lastBurst = await call('POST', '/admin/burst', { buyers });
  showBurst();
  $('#burst-result').dataset.ok = String(lastBurst.ok);
  return '';
}));

// ---------------------------------------------------------------- start

const lab = startLab({ $, call, act });

$('#lang-toggle').addEventListener('click', () => {
  setLanguage(language() === 'zh' ? 'en' : 'zh');
  apply();
  say(''); // said in the other language
  const s = $('#admin-status');
  if (s.dataset.i18n) s.textContent = t(s.dataset.i18n, JSON.parse(s.dataset.vars || '{}'));
  lab.translate();
  showBurst();
  if (live.state) render(live.state);
  live.translate();
});

$('#room-name').textContent = ROOM;
$('#back').href = `./?room=${encodeURIComponent(ROOM)}`;
fillLegend($('#legend'));
apply();
setAdmin(false, 'readonly');
if (currentToken()) unlock(currentToken());
loadTiers(call).then((tiers) => {
  live.leased = new Set(tiers.filter((tier) => tier.leased).map((tier) => tier.id));
  live.draw();
});
live.connect();
live.draw();
window.oversell = { timeline: live.timeline, get state() { return live.state; } };
