// The lock timeline: one lane per instance, one bar per critical section (enter → exit), drawn
// as SVG. Overlapping sections are vermillion and hatched, a band on top shows where two or
// more ran at once, renewals are white ticks, lease expiry an orange line (estimated here from
// the lease and the last renewal, not read from Redis), lost releases a '!', foreign releases a
// yellow ✕ linked to the section whose lock they deleted.
//
// The server sends the window this page draws, whole (the newest 20/50/100/200 sections and the
// marks among them, see src/feed/window.rs): the page keeps no history of its own, so a window
// it missed costs nothing.

import { t } from './i18n.js';

const SVG = 'http://www.w3.org/2000/svg';
const LANE_LABEL = 92;
const LANE_LABEL_NARROW = 56; // on a phone's width, room for the bars
const BAND = 18;
const AXIS = 20;

function el(name, attrs = {}, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function niceStep(spanMs, ticks) {
  const raw = spanMs / ticks;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

function fmtMs(ms) {
  if (Math.abs(ms) >= 1000) return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
  return `${+ms.toFixed(1)} ms`;
}

// A section's outcome as the commit script names it, in the page's language.
function outcomeText(outcome) {
  if (outcome == null) return t('tip.holding');
  return ['sold', 'sold_out', 'stale'].includes(outcome) ? t(`tip.${outcome}`) : outcome;
}

export class Timeline {
  constructor(host) {
    this.host = host;
    this.sections = new Map(); // owner -> section
    this.points = []; // foreign and lost releases, stale refusals, lock-free deducts
    this.count = 100;
    this.lastAt = 0; // Redis clock (µs) of the newest entry
    this.lastAtLocal = 0; // performance.now() when it arrived
  }

  clear() {
    this.sections.clear();
    this.points = [];
    this.lastAt = 0;
  }

  /** Shows the server's window: `{base_us, instances, sections: [[owner, instance, enter,
   * exit, took, outcome, stock, overlaps, fence, renews]], points: [[kind, instance, at, owner,
   * detail]]}`, times in µs after base_us (`took`: ms from the sale's start to its write),
   * trailing empty values left out. */
  setWindow(w) {
    const base = Number(w.base_us) || 0;
    const names = w.instances || [];
    const at = (dt) => base + Number(dt);
    let newest = 0;
    this.sections = new Map();
    for (const [owner, i, enter, exit, took, outcome, stock, overlaps, fence, renews] of w.sections || []) {
      const s = {
        owner, instance: names[i], fence: fence || '', enter: at(enter), stock,
        renews: (renews || []).map(at), exit: exit == null ? null : at(exit),
        outcome: outcome ?? null, overlaps: Number(overlaps) || 0, took: took ?? null,
      };
      this.sections.set(owner, s);
      newest = Math.max(newest, s.exit ?? s.enter, ...s.renews);
    }
    const kinds = { foreign_release: 'foreign', lost_release: 'lost', stale: 'stale', deduct: 'deduct' };
    this.points = (w.points || []).map(([kind, i, dt, owner, detail]) => {
      const p = { kind: kinds[kind] || kind, instance: names[i], at: at(dt), owner: owner || '' };
      if (p.kind === 'foreign') p.victim = detail;
      if (p.kind === 'stale') p.fence = detail;
      if (p.kind === 'store_fault' || p.kind === 'partition' || p.kind === 'fault') p.detail = detail;
      if (p.kind === 'deduct') p.stock = detail;
      newest = Math.max(newest, p.at);
      return p;
    });
    if (newest > this.lastAt) {
      this.lastAt = newest;
      this.lastAtLocal = performance.now();
    }
  }

  /** Redis' clock now, estimated from the newest entry and the local time since. */
  nowUs() {
    if (!this.lastAt) return 0;
    return this.lastAt + (performance.now() - this.lastAtLocal) * 1000;
  }

  /** The hand-offs among the window's sold sections, as `loadtest` measures them from the
   * ledger: a hand-off is the next section's start minus the previous one's end, on Redis'
   * clock, counted only when the next began after the previous ended (overlapping sections
   * hand nothing over). With each instance's share of the sections (`instances`: the live ones,
   * so one that sold nothing counts as 0) and Jain's fairness index over those shares
   * (1: even; 1/n: one instance got them all). And how long those sales took to their write,
   * waiting for the lock included, p50 and p99: a queue serves every buyer in about the same
   * time, a race keeps some waiting far longer than most. */
  handOff(instances = []) {
    const sold = [...this.sections.values()]
      .filter((s) => s.outcome === 'sold' && s.exit != null)
      .sort((a, b) => a.enter - b.enter);
    const gaps = [];
    for (let i = 1; i < sold.length; i++) {
      const gap = sold[i].enter - sold[i - 1].exit;
      if (gap >= 0) gaps.push(gap);
    }
    const quantileMs = (us, q) => (us.length ? us[Math.ceil(q * us.length) - 1] / 1000 : null);
    gaps.sort((a, b) => a - b);
    const p99Ms = quantileMs(gaps, 0.99);
    const took = sold.filter((s) => s.took != null).map((s) => s.took * 1000).sort((a, b) => a - b);
    const sale = { n: took.length, p50Ms: quantileMs(took, 0.5), p99Ms: quantileMs(took, 0.99) };
    const per = Object.fromEntries(instances.map((name) => [name, 0]));
    for (const s of sold) per[s.instance] = (per[s.instance] || 0) + 1;
    const counts = Object.values(per);
    const sum = counts.reduce((a, b) => a + b, 0);
    const squares = counts.reduce((a, b) => a + b * b, 0);
    const jain = squares ? (sum * sum) / (counts.length * squares) : null;
    return { handOffs: gaps.length, p99Ms, sections: sold.length, perInstance: per, jain, sale };
  }

  /** The numbers the page (and its test) can read: what is on screen. */
  summary() {
    return this.view ? { bars: this.view.bars.length, overlapping: this.view.overlapping, foreign: this.view.foreign, expired: this.view.expired } : { bars: 0, overlapping: 0, foreign: 0, expired: 0 };
  }

  render({ instances = [], ttlMs = 0, leased = false } = {}) {
    const host = this.host;
    const width = Math.max(300, host.clientWidth);
    const height = Math.max(160, host.clientHeight);
    const nowUs = this.nowUs();

    const bars = [...this.sections.values()].sort((a, b) => a.enter - b.enter).slice(-this.count);
    let t0, t1;
    if (bars.length) {
      t0 = bars[0].enter;
      t1 = Math.max(...bars.map((b) => b.exit ?? Math.max(nowUs, b.enter)));
    } else {
      const pts = this.points.slice(-this.count);
      if (pts.length) {
        t0 = pts[0].at;
        t1 = pts[pts.length - 1].at;
      }
    }
    const points = t0 === undefined ? [] : this.points.filter((p) => p.at >= t0 && p.at <= t1);
    host.replaceChildren();
    if (t0 === undefined) {
      this.view = null;
      const empty = document.createElement('div');
      empty.className = 'empty';
      empty.textContent = t('timeline.empty');
      host.appendChild(empty);
      return;
    }
    if (t1 - t0 < 1000) t1 = t0 + 1000;
    const pad = (t1 - t0) * 0.03;
    t0 -= pad;
    t1 += pad;

    // Lanes: live instances and any instance on screen.
    const names = new Set(instances);
    for (const b of bars) names.add(b.instance);
    for (const p of points) names.add(p.instance);
    const lanes = [...names].sort();

    // Overlaps between finished sections (a holder that never exits — it crashed — is not one).
    const closed = bars.filter((b) => b.exit !== null);
    for (const b of bars) b.overlapping = false;
    for (let i = 0; i < closed.length; i++) {
      for (let j = i + 1; j < closed.length; j++) {
        const a = closed[i], c = closed[j];
        if (c.enter >= a.exit) continue;
        if (a.enter < c.exit && c.enter < a.exit) a.overlapping = c.overlapping = true;
      }
    }
    // Where two or more ran at once.
    const marks = [];
    for (const b of closed) marks.push([b.enter, 1], [b.exit, -1]);
    marks.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const band = [];
    let depth = 0, from = 0, peak = 0;
    for (const [at, d] of marks) {
      const before = depth;
      depth += d;
      if (before < 2 && depth >= 2) { from = at; peak = depth; }
      if (depth >= 2) peak = Math.max(peak, depth);
      if (before >= 2 && depth < 2) band.push([from, at, peak]);
    }

    // Sub-rows inside each lane, so sections of one instance that overlap stay visible.
    const rowsOf = new Map(lanes.map((l) => [l, []]));
    for (const b of bars) {
      const rows = rowsOf.get(b.instance);
      const end = b.exit ?? Math.max(nowUs, b.enter);
      let r = rows.findIndex((last) => last <= b.enter);
      if (r < 0) { r = rows.length; rows.push(end); } else rows[r] = end;
      b.row = r;
    }

    const label = width < 480 ? LANE_LABEL_NARROW : LANE_LABEL;
    const plotX = label, plotW = width - label - (width < 480 ? 10 : 24);
    const top = BAND + 4, plotH = height - top - AXIS;
    const laneH = plotH / lanes.length;
    const x = (us) => plotX + ((us - t0) / (t1 - t0)) * plotW;

    const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, width, height, 'font-family': 'inherit' });
    const defs = el('defs', {}, svg);
    const hatch = el('pattern', { id: 'tl-overlap', width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, defs);
    el('rect', { width: 8, height: 8, fill: '#d55e00' }, hatch);
    el('rect', { width: 3, height: 8, fill: '#ffb380' }, hatch);
    const stripes = el('pattern', { id: 'tl-stale', width: 6, height: 6, patternUnits: 'userSpaceOnUse' }, defs);
    el('rect', { width: 6, height: 6, fill: '#cc79a7' }, stripes);
    el('rect', { width: 2, height: 6, fill: '#fff' }, stripes);

    // Lanes and their names.
    lanes.forEach((name, i) => {
      const y = top + i * laneH;
      el('rect', { x: 0, y, width, height: laneH, fill: i % 2 ? '#f7f8fa' : '#ffffff' }, svg);
      const label = el('text', { x: 8, y: y + laneH / 2 + 5, 'font-size': 15, 'font-weight': 700, fill: '#111418' }, svg);
      label.textContent = name;
      if (!instances.includes(name) && instances.length) label.setAttribute('fill', '#9aa3ae');
    });

    // Time axis.
    const spanMs = (t1 - t0) / 1000;
    // Eight ticks, fewer on a narrow screen (a phone): a label needs about 70 px.
    const step = niceStep(spanMs, Math.max(2, Math.min(8, Math.floor(plotW / 70))));
    const axisY = height - AXIS;
    el('line', { x1: plotX, x2: plotX + plotW, y1: axisY, y2: axisY, stroke: '#5a6270' }, svg);
    const origin = bars.length ? bars[0].enter : t0 + pad;
    for (let ms = Math.ceil((t0 - origin) / 1000 / step) * step; origin + ms * 1000 <= t1; ms += step) {
      const gx = x(origin + ms * 1000);
      el('line', { x1: gx, x2: gx, y1: top, y2: axisY, stroke: '#e3e6eb' }, svg);
      const tick = el('text', { x: gx, y: height - 5, 'font-size': 12, 'text-anchor': 'middle', fill: '#5a6270' }, svg);
      tick.textContent = fmtMs(ms);
    }

    // The "at once" band.
    const bandLabel = el('text', { x: 8, y: BAND - 4, 'font-size': 12, 'font-weight': 700, fill: band.length ? '#d55e00' : '#9aa3ae' }, svg);
    bandLabel.textContent = label === LANE_LABEL ? `≥2 ${t('timeline.overlapband')}` : '≥2';
    el('rect', { x: plotX, y: 2, width: plotW, height: BAND - 4, fill: '#f1f3f6' }, svg);
    for (const [a, b, n] of band) {
      const bx = x(a), bw = Math.max(2, x(b) - x(a));
      el('rect', { x: bx, y: 2, width: bw, height: BAND - 4, fill: '#d55e00' }, svg);
      if (bw > 22) {
        const txt = el('text', { x: bx + bw / 2, y: BAND - 5, 'font-size': 11, 'font-weight': 800, fill: '#fff', 'text-anchor': 'middle' }, svg);
        txt.textContent = `×${n}`;
      }
    }

    // The bars.
    const barOf = new Map();
    let expired = 0;
    for (const b of bars) {
      const lane = lanes.indexOf(b.instance);
      const rows = Math.max(1, rowsOf.get(b.instance).length);
      const rowH = laneH / rows;
      const h = Math.max(3, Math.min(34, rowH - (rows > 1 ? 1 : 8)));
      const y = top + lane * laneH + b.row * rowH + (rowH - h) / 2;
      const end = b.exit ?? Math.max(nowUs, b.enter);
      const bx = x(b.enter), bw = Math.max(2, x(end) - bx);
      let fill = '#0072b2';
      if (b.outcome === 'sold_out') fill = '#9aa3ae';
      if (b.outcome === 'stale') fill = 'url(#tl-stale)';
      if (b.overlapping) fill = b.outcome === 'stale' ? 'url(#tl-stale)' : 'url(#tl-overlap)';
      const rect = el('rect', {
        x: bx, y, width: bw, height: h, rx: Math.min(3, h / 3), fill,
        stroke: b.overlapping ? '#7a2e00' : 'none', 'stroke-width': b.overlapping ? 1.5 : 0,
        'stroke-dasharray': b.exit === null ? '4 3' : 'none',
        class: `bar${b.overlapping ? ' overlapping' : ''}`,
      }, svg);
      if (b.exit === null) rect.setAttribute('stroke', '#111418'), rect.setAttribute('stroke-width', 1.5), rect.setAttribute('fill-opacity', 0.55);
      const title = el('title', {}, rect);
      const dur = ((end - b.enter) / 1000).toFixed(1);
      title.textContent = [
        b.instance, b.owner, b.fence ? t('tip.fence', { fence: b.fence }) : null,
        t('tip.read', { stock: b.stock }), outcomeText(b.outcome), `${dur} ${t('tip.ms')}`,
      ].filter(Boolean).join(' · ');
      barOf.set(b.owner, { x: bx, y, w: bw, h });
      for (const r of b.renews) {
        if (r < b.enter || r > end) continue;
        el('line', { x1: x(r), x2: x(r), y1: y - 2, y2: y + h + 2, stroke: '#ffffff', 'stroke-width': 2.5 }, svg);
        el('line', { x1: x(r), x2: x(r), y1: y - 2, y2: y + h + 2, stroke: '#0072b2', 'stroke-width': 1 }, svg);
      }
      if (leased && ttlMs > 0) {
        const lease = Math.max(b.enter, ...b.renews) + ttlMs * 1000;
        if (lease < end) {
          expired++;
          const ex = x(lease);
          el('line', { x1: ex, x2: ex, y1: y - 4, y2: y + h + 4, stroke: '#e69f00', 'stroke-width': 4 }, svg);
          el('path', { d: `M${ex - 5},${y - 9} L${ex + 5},${y - 9} L${ex},${y - 2} Z`, fill: '#e69f00' }, svg);
        }
      }
      const label = b.fence ? `#${b.fence}` : String(b.stock ?? '');
      if (label && bw > label.length * 8 + 6 && h >= 12) {
        const txt = el('text', {
          x: bx + 4, y: y + h / 2 + 4.5, 'font-size': Math.min(14, h - 2), 'font-weight': 700,
          fill: b.outcome === 'sold_out' || b.outcome === 'stale' ? '#111418' : '#fff', 'pointer-events': 'none',
        }, svg);
        txt.textContent = label;
      }
    }

    // Points: stale refusals, lock-free deducts, lost and foreign releases (drawn last, on top).
    let foreign = 0;
    let lost = 0;
    for (const p of points) {
      const lane = lanes.indexOf(p.instance);
      const cy = top + lane * laneH + laneH / 2;
      const px = x(p.at);
      if (p.kind === 'store_fault' || p.kind === 'partition' || p.kind === 'heal') {
        // A lock-store fault or a network cut strikes the whole fleet: a line across every lane.
        const g = el('g', { class: 'cut' }, svg);
        const dash = p.kind === 'heal' ? '2 4' : '6 3';
        el('line', { x1: px, x2: px, y1: top, y2: top + lanes.length * laneH, stroke: '#d55e00', 'stroke-width': 2, 'stroke-dasharray': dash }, g);
        const mark = el('text', { x: px + 3, y: top + 12, 'font-size': 13, fill: '#d55e00' }, g);
        mark.textContent = p.kind === 'heal' ? '⟷' : '✂';
        el('title', {}, g).textContent = `${p.kind}: ${p.detail || ''}`;
      } else if (p.kind === 'fault') {
        // A fault as it struck a holder (a freeze, a pause, a crash): a band on its lane for
        // as long as it lasts, a mark where it began.
        const [kind, ms] = (p.detail || '').split(' ');
        const width = Math.max(3, x(p.at + (Number(ms) || 0) * 1000) - px);
        const g = el('g', { class: 'fault' }, svg);
        el('rect', { x: px, y: cy - laneH / 2 + 2, width, height: laneH - 4, fill: '#d55e00', 'fill-opacity': 0.18, stroke: '#d55e00', 'stroke-dasharray': '4 3' }, g);
        const mark = el('text', { x: px + 3, y: cy - laneH / 2 + 14, 'font-size': 12, fill: '#d55e00' }, g);
        mark.textContent = `⚡ ${kind}`;
        el('title', {}, g).textContent = `${kind}${Number(ms) ? ` (${ms} ms)` : ''}: ${p.instance}`;
      } else if (p.kind === 'deduct') {
        el('line', { x1: px, x2: px, y1: cy - 9, y2: cy + 9, stroke: '#009e73', 'stroke-width': 2 }, svg);
      } else if (p.kind === 'stale') {
        el('path', { d: `M${px},${cy - 9} L${px + 8},${cy} L${px},${cy + 9} L${px - 8},${cy} Z`, fill: '#cc79a7', stroke: '#111418' }, svg);
      } else if (p.kind === 'lost') {
        // The holder's release found the lock gone: Redisson's IllegalMonitorStateException.
        lost++;
        const g = el('g', { class: 'lost' }, svg);
        el('circle', { cx: px, cy, r: 9, fill: '#d55e00', stroke: '#111418', 'stroke-width': 2 }, g);
        const mark = el('text', { x: px, y: cy + 5, 'font-size': 14, 'font-weight': 900, 'text-anchor': 'middle', fill: '#fff' }, g);
        mark.textContent = '!';
        el('title', {}, g).textContent = `${t('legend.lost')}: ${t('tip.lost', { instance: p.instance, owner: p.owner })}`;
      } else if (p.kind === 'foreign') {
        foreign++;
        const victim = barOf.get(p.victim);
        if (victim) {
          el('rect', { x: victim.x - 2, y: victim.y - 2, width: victim.w + 4, height: victim.h + 4, fill: 'none', stroke: '#111418', 'stroke-width': 3 }, svg);
          el('line', { x1: px, y1: cy, x2: Math.min(Math.max(px, victim.x), victim.x + victim.w), y2: victim.y + victim.h / 2, stroke: '#111418', 'stroke-width': 2, 'stroke-dasharray': '5 3' }, svg);
        }
        const g = el('g', { class: 'foreign' }, svg);
        el('circle', { cx: px, cy, r: 11, fill: '#f0e442', stroke: '#111418', 'stroke-width': 2 }, g);
        const mark = el('text', { x: px, y: cy + 5, 'font-size': 15, 'font-weight': 900, 'text-anchor': 'middle', fill: '#111418' }, g);
        mark.textContent = '✕';
        el('title', {}, g).textContent = `${t('legend.foreign')}: ${t('tip.foreign', { instance: p.instance, victim: p.victim })}`;
      }
    }

    host.appendChild(svg);
    this.view = { bars, overlapping: bars.filter((b) => b.overlapping).length, foreign, lost, expired };
    host.dataset.bars = String(bars.length);
    host.dataset.foreign = String(foreign);
    host.dataset.lost = String(lost);
    host.dataset.expired = String(expired);
    host.dataset.overlapping = String(this.view.overlapping);
  }
}
