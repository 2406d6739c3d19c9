// The lab page (lab.html): the student's hour. The lab's editor (lab.js) with the contract and
// the grader's card beside the steps, and the room's live timeline under them (feed.js, the
// same stream and drawing as the dashboard's), in the room and with the token the dashboard
// uses (room.js). Stacks into one column on a phone.

import { apply, fmt, language, setLanguage } from './i18n.js';
import { LiveRoom, fillLegend, loadTiers } from './feed.js';
import { ROOM, call, say, showBurst, tokenPanel } from './room.js';
import { startLab } from './lab.js';

const $ = (sel) => document.querySelector(sel);
const FIGURES = ['stock', 'orders', 'oversold', 'overlaps', 'foreign_releases', 'lock_timeouts'];

let lastBurst = null;

// ---------------------------------------------------------------- the token

/** Submit, Attack and Fire need the room's token (or the admin's); reading needs none. */
const token = tokenPanel({
  enable(on) {
    for (const b of document.querySelectorAll('.admin-only')) b.disabled = !on;
  },
});
const act = token.act;

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

// The stock put on sale again, then the buyers through nginx: the lock at work, on the
// timeline below.
$('#try').addEventListener('click', (ev) => act(ev.target, async () => {
  const stock = Number($('#try-stock').value);
  const buyers = Number($('#try-buyers').value);
  $('#burst-result').textContent = '…';
  await call('POST', '/admin/reset', { stock });
  live.clear();
  lastBurst = await call('POST', '/admin/burst', { buyers });
  showBurst(lastBurst);
  $('#burst-result').dataset.ok = String(lastBurst.ok);
  return '';
}));

// ---------------------------------------------------------------- start

const lab = startLab({ $, call, act });

$('#lang-toggle').addEventListener('click', () => {
  setLanguage(language() === 'zh' ? 'en' : 'zh');
  apply();
  say(''); // said in the other language
  token.translate();
  lab.translate();
  showBurst(lastBurst);
  if (live.state) render(live.state);
  live.translate();
});

$('#room-name').textContent = ROOM;
$('#back').href = `./?room=${encodeURIComponent(ROOM)}`;
fillLegend($('#legend'));
apply();
token.start();
loadTiers(call).then((tiers) => {
  live.leased = new Set(tiers.filter((tier) => tier.leased).map((tier) => tier.id));
  live.draw();
});
live.connect();
live.draw();
window.oversell = { timeline: live.timeline, get state() { return live.state; } };
