// A room, live, for the dashboard and the lab page: its `/events` stream kept connected, and
// its lock timeline drawn with the hand-off line under it.

import { t } from './i18n.js';
import { Timeline } from './timeline.js';
import { withRoom } from './room.js';

/** The pages' phone layout (app.css's media query). */
export const PHONE = '(max-width: 640px)';

const ms = (v) => (v < 10 ? v.toFixed(2) : v.toFixed(0));

// The hand-off p99, how long the buyers waited to be served, and how evenly the instances got
// the lock, over the sections the timeline shows (the newest 20–200): how fast and how fair
// the tier is right now.
function renderHandOff(line, h) {
  line.hidden = h.handOffs === 0;
  if (line.hidden) return;
  const shares = Object.entries(h.perInstance).sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${Math.round((100 * n) / Math.max(1, h.sections))}%`).join(' / ');
  const served = h.sale.n ? t('timeline.served', {
    p50: ms(h.sale.p50Ms), p99: ms(h.sale.p99Ms),
    spread: (h.sale.p99Ms / Math.max(h.sale.p50Ms, 0.001)).toFixed(1),
  }) : '';
  line.textContent = t('timeline.handoff', {
    p99: ms(h.p99Ms), n: h.handOffs, served, shares, jain: h.jain.toFixed(2),
  });
  line.dataset.p99 = h.p99Ms;
  line.dataset.jain = h.jain;
  if (h.sale.n) line.dataset.servedP99 = h.sale.p99Ms;
}

export class LiveRoom {
  /** `conn`, `connText`: the connection's dot and words; `onState(state)`: each state event. */
  constructor({ timeline, handOff, conn, connText, onState }) {
    this.timeline = new Timeline(timeline);
    // On a phone's width, 20 sections a window: bars wide enough to read and to tell apart.
    if (matchMedia(PHONE).matches) this.timeline.count = 20;
    this.handOffLine = handOff;
    this.conn = conn;
    this.connText = connText;
    this.onState = onState;
    this.state = null; // the last `state` event
    this.leased = new Set(); // tiers with a lease: their sections get lease-expiry marks
    this.source = null;
    // `(view) => …` while this stream carries the class vote too (`/events?poll=1`).
    this.onPoll = null;
    this.lastEventAt = 0;
    this.drawQueued = false;

    // The instance serving this stream may be frozen or dead (that is what the fault buttons
    // do): with no event for a few seconds, connect again. nginx sends a room's streams to one
    // instance: a dead one's go to the next, a frozen one's come back when it is resumed.
    setInterval(() => {
      if (performance.now() - this.lastEventAt > 3000) this.connect();
    }, 1000);
    // Redraw while a section is open (its bar grows) and on resize.
    setInterval(() => {
      if (this.timeline.view && this.timeline.view.bars.some((b) => b.exit === null)) this.draw();
    }, 500);
  }

  /** The server sends the window this many sections wide: ask for the new width. */
  set count(n) {
    this.timeline.count = n;
    this.connect();
  }

  /** The class vote on this stream too (a student's tab: one stream a phone, not two). */
  carryVote(onPoll) {
    if (this.onPoll) return;
    this.onPoll = onPoll;
    this.connect();
  }

  setConn(mode, key) {
    this.conn.dataset.state = mode;
    this.connText.dataset.i18n = key;
    this.connText.textContent = t(key);
  }

  connect() {
    if (this.source) this.source.close();
    this.setConn('connecting', 'reconnecting');
    this.lastEventAt = performance.now();
    const poll = this.onPoll ? '&poll=1' : '';
    const source = new EventSource(withRoom(`/events?draw=${this.timeline.count}${poll}`));
    this.source = source;
    const heard = () => { this.lastEventAt = performance.now(); };
    source.addEventListener('open', () => this.setConn('live', 'live'));
    source.addEventListener('error', () => this.setConn('connecting', 'reconnecting'));
    source.addEventListener('unavailable', () => { heard(); this.setConn('down', 'unavailable'); });
    // The store lost the room's stock and orders: no figure is shown as if it were true.
    source.addEventListener('state_lost', () => { heard(); this.setConn('down', 'state_lost'); });
    source.addEventListener('state', (ev) => {
      heard();
      this.state = JSON.parse(ev.data);
      if (this.conn.dataset.state !== 'live') this.setConn('live', 'live');
      this.onState(this.state);
      this.draw();
    });
    source.addEventListener('timeline', (ev) => {
      this.timeline.setWindow(JSON.parse(ev.data));
      this.draw();
    });
    source.addEventListener('reset', () => this.clear());
    source.addEventListener('poll', (ev) => { heard(); if (this.onPoll) this.onPoll(JSON.parse(ev.data)); });
  }

  clear() {
    this.timeline.clear();
    this.draw();
  }

  /** At the next frame: many events in one frame draw once. */
  draw() {
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame(() => {
      this.drawQueued = false;
      const s = this.state;
      const live = ((s && s.live_instances) || []).map((i) => i.instance);
      this.timeline.render({ instances: live, ttlMs: s ? s.settings.ttl_ms : 0, leased: s ? this.leased.has(s.tier) : false });
      if (this.handOffLine) renderHandOff(this.handOffLine, this.timeline.handOff(live));
    });
  }

  translate() {
    this.connText.textContent = t(this.connText.dataset.i18n || 'reconnecting');
    this.draw();
  }
}

/** The tiers in the ladder's order (`GET /tiers`: written once, in the API crate), asked
 * again while the server restarts. */
export async function loadTiers(call) {
  for (;;) {
    try {
      return (await call('GET', '/tiers')).tiers;
    } catch {
      await new Promise((ok) => { setTimeout(ok, 2000); });
    }
  }
}

/** The timeline's legend: a swatch per mark, its `legend.*` text. */
export function fillLegend(list) {
  const swatches = [['ok', ''], ['overlap', ''], ['stale', ''], ['soldout', ''], ['expiry', ''], ['renew', ''], ['foreign', '✕'], ['lost', '!']];
  const items = swatches.map(([kind, mark]) => {
    const li = document.createElement('li');
    const sw = document.createElement('i');
    sw.className = `sw ${kind}`;
    sw.textContent = mark;
    const text = document.createElement('span');
    text.dataset.i18n = `legend.${kind}`;
    text.textContent = t(`legend.${kind}`);
    li.append(sw, text);
    return li;
  });
  const label = document.createElement('li');
  label.className = 'muted';
  label.dataset.i18n = 'legend.label';
  label.textContent = t('legend.label');
  list.replaceChildren(...items, label);
}
