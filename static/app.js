// The workshop dashboard: live state over SSE (/events), the lock timeline, a throughput chart
// (chart.js, loaded when it comes into view), the admin controls, the room's lab at a glance (its
// editor is the lab page, lab.html) and the class vote's card (vote.js). No build step: plain
// ES modules.

import { t, apply, fmt, language, setLanguage } from './i18n.js';
import { LiveRoom, fillLegend, loadTiers as fetchTiers } from './feed.js';
import { ROOM, call, showBurst, tokenPanel } from './room.js';
import { Vote } from './vote.js';

const $ = (sel) => document.querySelector(sel);
const FIGURES = ['oversold', 'lost_updates', 'overlaps', 'foreign_releases', 'lost_releases', 'stale_writes_rejected', 'lock_timeouts'];

let state = null; // the last `state` event
let scenarios = [];
const live = new LiveRoom({
  timeline: $('#timeline'),
  handOff: $('#handoff'),
  conn: $('#conn'),
  connText: $('#conn-text'),
  onState: (s) => {
    const tierChanged = state?.tier !== s.tier;
    state = s;
    render(s);
    pushHistory(s);
    if (tierChanged) showLab();
  },
});

// ---------------------------------------------------------------- admin or room token

// Whose token this tab holds (`token.caller`, `GET /admin/whoami`): `{scope: 'admin'}`, or a
// student's `{scope: 'room', room}`, which drives that room only. `null` when read-only.
const token = tokenPanel({
  enable(on, caller, status) {
    $('#admin').disabled = !on;
    // A student's own room, named in the header; their controls lose what reaches beyond it.
    document.body.dataset.scope = caller?.scope || '';
    // A token good in another room only: "Go to room" leads back to it.
    if (status === 'otherroom') $('#room-input').value = caller.room;
    markAdminOnly();
    // The class vote, for a tab that can vote in this room, rides the live state's stream
    // (`/events?poll=1`): a phone holds one stream (one of its address's nginx connections).
    if (on && caller?.scope === 'room') live.carryVote((view) => vote.show(view));
  },
});
/** Runs an admin action with its button disabled, reporting the outcome. */
const act = token.act;

// Scenarios whose fault reaches beyond the room (`admin_only` in GET /scenarios) are greyed
// out for a room token: the server would refuse them with a 403.
function markAdminOnly() {
  const room = token.caller?.scope === 'room';
  const select = $('#scenario-select');
  for (const opt of select.options) {
    const s = scenarios.find((x) => x.id === opt.value);
    if (!s) continue;
    opt.disabled = room && Boolean(s.admin_only);
    opt.textContent = `${s.id} (${s.tier})${opt.disabled ? ` · ${t('ctl.scenario.adminonly')}` : ''}`;
  }
  if (select.selectedOptions[0]?.disabled) {
    const first = [...select.options].find((o) => !o.disabled);
    if (first) select.value = first.value;
    showScenarioText();
  }
}

// ---------------------------------------------------------------- controls

// The tiers in the ladder's order, as the server lists them (`GET /tiers`): the list is
// written once, in the API crate. Leased tiers get lease-expiry marks on the timeline.
async function loadTiers() {
  const tiers = await fetchTiers(call);
  const select = $('#tier-select');
  select.replaceChildren();
  for (const tier of tiers) {
    const opt = document.createElement('option');
    opt.value = tier.id;
    opt.textContent = tier.id;
    select.appendChild(opt);
  }
  live.leased = new Set(tiers.filter((tier) => tier.leased).map((tier) => tier.id));
  if (state) {
    select.value = state.tier;
    showTierText(state.tier);
  }
}

// The tiers' paragraphs (tier-text.js) load the first time a tier is described.
let tierTexts = null;
function showTierText(tier) {
  tierTexts ??= import('./tier-text.js').then((module) => module.TIER_TEXT);
  tierTexts.then((texts) => {
    if ($('#tier-select').value === tier) $('#tier-text').textContent = texts[language()][tier] || '';
  });
}

$('#tier-select').addEventListener('change', (ev) => {
  const tier = ev.target.value;
  showTierText(tier);
  act(ev.target, async () => {
    await call('PUT', '/admin/tier', { tier });
    return t('done.tier', { tier });
  });
});

$('#reset').addEventListener('click', (ev) => act(ev.target, async () => {
  const stock = Number($('#reset-stock').value);
  await call('POST', '/admin/reset', { stock });
  live.clear();
  return t('done.reset', { stock });
}));

let timingEdited = false;
for (const id of ['#business-ms', '#ttl-ms']) $(id).addEventListener('input', () => { timingEdited = true; });
$('#apply-timing').addEventListener('click', (ev) => act(ev.target, async () => {
  await call('PUT', '/admin/config', { business_ms: Number($('#business-ms').value), ttl_ms: Number($('#ttl-ms').value) });
  timingEdited = false;
  return t('done.config');
}));

for (const button of document.querySelectorAll('button.fault')) {
  button.addEventListener('click', () => act(button, async () => {
    const kind = button.dataset.kind;
    const body = { kind };
    if (['freeze', 'release-gap', 'lock-store-down', 'node-down', 'node-slow', 'clock-jump', 'zk-node-down',
      'late-subscriber', 'subscribe-gap', 'cpu-starve', 'renewal-outage', 'renewal-gives-up',
      'validity-unchecked'].includes(kind)) body.ms = Number($('#fault-ms').value);
    const target = $('#fault-target').value;
    if (target) body.instance = target;
    await call('POST', '/admin/faults', body);
    return t('done.fault', { kind });
  }));
}
$('#cut').addEventListener('click', (ev) => act(ev.target, async () => {
  const isolate = $('#cut-members').value.split(',').map((m) => m.trim()).filter(Boolean);
  const out = await call('POST', '/admin/partition', { isolate, ms: Number($('#fault-ms').value) });
  return t('done.cut', { isolate: out.partition.isolate.join(', ') });
}));
$('#heal').addEventListener('click', (ev) => act(ev.target, async () => {
  await call('DELETE', '/admin/partition');
  return t('done.heal');
}));
$('#clear-faults').addEventListener('click', (ev) => act(ev.target, async () => {
  await call('DELETE', '/admin/faults');
  return t('done.clear');
}));

$('#fire').addEventListener('click', (ev) => act(ev.target, async () => {
  const buyers = Number($('#buyers').value);
  const body = { buyers };
  if ($('#via').value === 'instance') body.via = 'instance';
  const out = $('#burst-result');
  out.textContent = '…';
  lastBurst = await call('POST', '/admin/burst', body);
  showBurst(lastBurst);
  out.dataset.ok = String(lastBurst.ok);
  return '';
}));

let lastBurst = null;

// Scenarios (the catalog may not exist on an older server).
// While the class votes, the server withholds the list from all but the admin token
// (`withheld`): a list with one chapter missing would name it by its place.
let withheld = false;
async function loadScenarios() {
  try {
    const data = await call('GET', '/scenarios');
    scenarios = data.scenarios || [];
    withheld = Boolean(data.withheld);
  } catch {
    scenarios = [];
    withheld = false;
  }
  const select = $('#scenario-select');
  const picked = select.value;
  select.replaceChildren();
  for (const s of scenarios) {
    const opt = document.createElement('option');
    opt.value = s.id;
    opt.textContent = `${s.id} (${s.tier})`;
    select.appendChild(opt);
  }
  if (picked && scenarios.some((s) => s.id === picked)) select.value = picked;
  $('#run-scenario').disabled = scenarios.length === 0;
  markAdminOnly();
  showScenarioText();
}

function showScenarioText() {
  const s = scenarios.find((x) => x.id === $('#scenario-select').value);
  const none = withheld ? t('dash.scenario.withheld') : t('ctl.noscenarios');
  $('#scenario-text').textContent = s ? (language() === 'zh' ? s.zh : s.en) || '' : none;
}
$('#scenario-select').addEventListener('change', showScenarioText);

// A verdict line in the page's language: `figure op value` gets the figure's name, a sentence
// check its `key`'s text (loadtest's SENTENCE_CHECKS); anything else stays as the server said.
function verdictText(v) {
  const figure = /^([a-z0-9_]+) (>|==|<) (\S+)$/.exec(v.check);
  if (figure) return `${t(`check.${figure[1]}`)} ${figure[2]} ${figure[3]}`;
  return v.key ? t(`verdict.${v.key}`) : v.check;
}

$('#run-scenario').addEventListener('click', (ev) => act(ev.target, async () => {
  const id = $('#scenario-select').value;
  const box = $('#scenario-result');
  box.textContent = t('ctl.running');
  box.dataset.result = 'running';
  const r = await call('POST', '/admin/scenario', { id });
  box.replaceChildren();
  const badge = document.createElement('div');
  badge.className = `verdict ${r.passed ? 'pass' : 'fail'}`;
  badge.id = 'scenario-verdict';
  badge.textContent = `${r.passed ? t('pass') : t('fail')} · ${r.id}`;
  box.appendChild(badge);
  const list = document.createElement('ul');
  for (const v of r.verdicts || []) {
    const li = document.createElement('li');
    li.className = v.held ? 'held' : 'broken';
    li.textContent = `${verdictText(v)}: ${typeof v.seen === 'object' ? JSON.stringify(v.seen) : v.seen}`;
    list.appendChild(li);
  }
  box.appendChild(list);
  box.dataset.result = r.passed ? 'pass' : 'fail';
  return '';
}));

// ---------------------------------------------------------------- the lab

// The room's own lock at a glance (`GET /lab`), read again when the room's tier changes (a
// submission switches it to custom); the editor is the lab page, in this room with this tab.
$('#lab-open').href = `lab.html?room=${encodeURIComponent(ROOM)}`;
let labShown = null; // the last GET /lab, redrawn in the page's new language
async function showLab() {
  try {
    labShown = await call('GET', '/lab');
  } catch {
    labShown = null; // no lab on this fleet, or the room is gone: the summary says nothing
  }
  drawLab();
}
/** The room's lab at a glance, from `GET /lab` and the tier it sells under. */
function labSummary(lab, tier) {
  if (!lab.lock) return t('lab.summary.none');
  const lock = t('lab.summary.lock', {
    acquire: lab.lock.acquire.length,
    release: lab.lock.release.length,
    renew: t(lab.lock.renew ? 'lab.summary.renew' : 'lab.summary.norenew'),
  });
  const selling = tier === 'custom' ? t('lab.summary.selling') : t('lab.summary.idle', { tier: tier || '–' });
  const error = lab.last_error ? ` ${t('lab.lasterror', { error: lab.last_error })}` : '';
  return `${lock} ${selling}${error}`;
}

function drawLab() {
  $('#lab-summary').textContent = labShown ? labSummary(labShown, state?.tier) : '';
}

// The badge names the room from the start: the first state event may come after the stream opens.
$('#room-name').textContent = ROOM;
$('#room-input').value = ROOM;
$('#room-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const room = $('#room-input').value.trim();
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(room)) return;
  const url = new URL(location.href);
  url.searchParams.set('room', room);
  location.href = url.toString();
});

// The server sends the window this many sections wide: ask for the new width.
$('#tl-count').value = String(live.timeline.count);
$('#tl-count').addEventListener('change', (ev) => {
  live.count = Number(ev.target.value);
});

$('#lang-toggle').addEventListener('click', () => {
  setLanguage(language() === 'zh' ? 'en' : 'zh');
  translate();
});

function translate() {
  apply();
  token.translate();
  markAdminOnly();
  showTierText($('#tier-select').value);
  showScenarioText();
  showBurst(lastBurst);
  drawLab();
  vote.render();
  if (state) render(state);
  makeChart();
  live.translate();
}

// ---------------------------------------------------------------- the class vote

// The open question as a card on top, for the student who came in by the join link: shown from
// the moment a vote opens, hidden while none is on, or closed by the student until the vote
// moves on (a new round, a closed round, the reveal, the next chapter).
const voteStep = (v) => `${v.number}/${v.round}/${v.state}`;
let voteClosed = null; // the step of the vote the student closed the card on
// While a chapter is voted on, the server withholds the list from a room token: asked again
// when a vote opens or is revealed, so no explanation stays on the page.
let hiding = null; // the number voted on and whether it is hidden, as last listed
const vote = new Vote($('#vote'), {
  onView: (view) => {
    $('#vote').hidden = !view.question || view.state === 'idle' || voteStep(view) === voteClosed;
    const now = `${view.number}/${view.state === 'open' || view.state === 'closed'}`;
    if (now !== hiding) loadScenarios();
    hiding = now;
  },
  onClose: (view) => {
    voteClosed = voteStep(view);
    $('#vote').hidden = true;
  },
});

// ---------------------------------------------------------------- live state

const HISTORY = 120; // points of the chart (~60 s at 2 a second)
const history = [[], [], []];
let chart = null;
let lastChartAt = 0;

// The chart and uPlot (chart.js) load when the chart first comes into view: at once on a
// projector, after scrolling down on a phone. The points gather from the start meanwhile.
let drawChart = null;
function makeChart() {
  if (!drawChart) return;
  if (chart) chart.destroy();
  chart = drawChart($('#chart'), history);
}
new IntersectionObserver((seen, observer) => {
  if (!seen.some((e) => e.isIntersecting)) return;
  observer.disconnect();
  import('./chart.js').then((module) => {
    drawChart = module.drawChart;
    makeChart();
  });
}).observe($('#chart'));

function pushHistory(s) {
  const now = Date.now() / 1000;
  if (now - lastChartAt < 0.45) return;
  lastChartAt = now;
  history[0].push(now);
  history[1].push(s.throughput_rps ?? 0);
  history[2].push(s.stock ?? 0);
  for (const h of history) if (h.length > HISTORY) h.shift();
  if (chart) chart.setData(history);
}

// The lock store's nodes, as the nodes themselves report them: which is primary, which is
// down, and which one holds the room's lock (and for how long).
function renderLockStore(store) {
  if (!store) return;
  const persistence = store.nodes?.find((n) => n.persistence)?.persistence;
  $('#store-kind').textContent = t(`store.kind.${store.kind}`) + (persistence ? ` · ${t('store.persistence')} ${persistence}` : '');
  const body = $('#lock-store tbody');
  body.replaceChildren();
  for (const n of store.nodes || []) {
    const tr = document.createElement('tr');
    if (!n.up) tr.className = 'down';
    const lease = n.holds_lock ? t('store.holds', { ms: n.lock_ttl_ms < 0 ? '∞' : fmt(n.lock_ttl_ms) }) : '–';
    // The owner id is `<run>:<seq>`: its last characters tell holders apart on a glance.
    const holder = n.holder ? `…${n.holder.slice(-8)}` : '–';
    const skew = n.clock_skew_ms ? `${n.clock_skew_ms > 0 ? '+' : ''}${fmt(n.clock_skew_ms)} ms` : '–';
    const cells = [n.addr, n.up ? t(`store.role.${n.role}`) : t('store.down'), lease, holder, skew];
    cells.forEach((v, i) => {
      const td = document.createElement('td');
      td.textContent = v;
      if (i === 2 && n.holds_lock) td.className = 'holds';
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
  // ZooKeeper's servers, one row each, and who is in the room's queue (holder first).
  const zk = store.zookeeper;
  for (const z of zk?.servers || []) {
    const tr = document.createElement('tr');
    if (!z.mode) tr.className = 'down';
    const holder = zk.queue?.[0];
    const cells = [`${t('store.zookeeper')} ${z.addr}`, z.mode || t('store.down'), '–', holder ? `…${holder.owner.slice(-8)}` : '–', `${t('store.queue')}: ${zk.queue?.length ?? 0}`];
    for (const v of cells) {
      const td = document.createElement('td');
      td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  // PostgreSQL: up or down, and the room's advisory lock in its lock table.
  const pg = store.postgres;
  if (pg) {
    const tr = document.createElement('tr');
    if (!pg.up) tr.className = 'down';
    const cells = [`${t('store.postgres')} ${pg.addr}`, pg.up ? t('store.up') : t('store.down'), '–', pg.holding ? t('store.session') : '–', `${t('store.waiting')}: ${pg.waiting}`];
    for (const v of cells) {
      const td = document.createElement('td');
      td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

// The fleet's own network (`--network netns`, or compose's): its members, and the partition
// in force. On compose the containers' line names the members already.
function renderNetwork(network, compose) {
  const line = $('#network');
  line.hidden = !network || (compose && !network.partition);
  $('#cut-form').hidden = !network;
  if (!network) return;
  const cut = network.partition;
  line.classList.toggle('cut', !!cut);
  line.textContent = cut
    ? t('store.cut', { isolate: cut.isolate.join(', '), rest: cut.rest.join(', '), left: (cut.left_ms / 1000).toFixed(1) })
    : t('store.network', { members: network.members.join(', ') });
}

// A fleet on docker compose: each member and its address; ⚙ marks a store whose supervisor
// does what the faults ask of it.
function renderContainers(containers) {
  const line = $('#containers');
  line.hidden = !containers;
  if (!containers) return;
  const members = containers.members.map((m) => `${m.id}${m.supervised ? ' ⚙' : ''} ${m.addr}`);
  line.textContent = t('store.containers', { members: members.join(', ') });
}

function render(s) {
  document.body.dataset.tier = s.tier;
  $('#tier-name').textContent = s.tier;
  $('#room-name').textContent = s.room;
  if (document.activeElement !== $('#tier-select')) $('#tier-select').value = s.tier;
  if ($('#tier-select').value === s.tier) showTierText(s.tier);
  if (!timingEdited && document.activeElement?.type !== 'number') {
    $('#business-ms').value = s.settings.business_ms;
    $('#ttl-ms').value = s.settings.ttl_ms;
  }
  $('#fig-stock').textContent = fmt(s.stock);
  $('#fig-initial').textContent = `/ ${fmt(s.initial_stock)}`;
  $('#fig-orders').textContent = fmt(s.orders);
  $('#fig-throughput').textContent = fmt(Math.round(s.throughput_rps ?? 0));
  for (const k of FIGURES) {
    const v = s[k];
    $(`#fig-${k}`).textContent = fmt(v);
    const card = $(`#card-${k}`);
    card.classList.toggle('hot', v > 0);
    card.classList.toggle('zero', v === 0 && k !== 'lock_timeouts' && k !== 'stale_writes_rejected' && s.orders > 0);
  }
  const armed = (s.faults || []).map((f) => `${f.kind}${f.ms ? ` ${f.ms}ms` : ''}${f.instance ? ` @${f.instance}` : ''}`);
  $('#faults-armed').textContent = armed.length ? t('ctl.fault.armed', { faults: armed.join(', ') }) : '';

  // Instances: the live ones plus any that sold in this room.
  const live = (s.live_instances || []).map((i) => i.instance);
  const target = $('#fault-target');
  const have = [...target.options].map((o) => o.value).filter(Boolean);
  if (have.join() !== [...live].sort().join()) {
    const keep = target.value;
    target.replaceChildren(new Option(t('ctl.fault.any'), ''));
    target.options[0].dataset.i18n = 'ctl.fault.any';
    for (const id of [...live].sort()) target.appendChild(new Option(id, id));
    target.value = live.includes(keep) ? keep : '';
  }
  renderLockStore(s.lock_store);
  renderNetwork(s.network, !!s.containers);
  renderContainers(s.containers);
  const per = s.per_instance || {};
  const names = [...new Set([...live, ...Object.keys(per)])].filter((n) => n).sort();
  const body = $('#per-instance tbody');
  body.replaceChildren();
  for (const name of names) {
    const f = per[name] || {};
    const tr = document.createElement('tr');
    if (!live.includes(name)) tr.className = 'down';
    const cells = [name, f.orders ?? 0, f.sections ?? 0, f.overlaps ?? 0, f.foreign_releases ?? 0, f.stale ?? 0, f.renewals ?? 0];
    cells.forEach((v, i) => {
      const td = document.createElement('td');
      td.textContent = i === 0 ? v : fmt(v);
      if ((i === 3 || i === 4) && v > 0) td.className = 'hot';
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
  // The timeline figures counted part of the timeline: the sale rate outran the feed's reads.
  $('#inst-sampled').hidden = !s.timeline_sampled;
}

let resizeTimer = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => { makeChart(); live.draw(); }, 150);
});

// ---------------------------------------------------------------- start

fillLegend($('#legend'));
apply();
token.start();
makeChart();
loadTiers();
loadScenarios();
// A viewer without a token has no vote on its stream (the live state's alone), so it
// asks the vote's small public view every few seconds, and the catalog again when the vote
// moves on: a chapter the class starts voting on leaves this page within one ask, and its
// explanation comes back after the reveal.
const ASK_VOTE_MS = 3_000;
setInterval(async () => {
  if (token.caller) return;
  try {
    const view = await call('GET', '/poll');
    const now = `${view.number}/${view.state === 'open' || view.state === 'closed'}`;
    if (now !== hiding) loadScenarios();
    hiding = now;
  } catch {
    // The fleet is restarting: the next ask tries again.
  }
}, ASK_VOTE_MS);
live.connect();
live.draw();
window.oversell = { timeline: live.timeline, get state() { return state; } };
