// The run viewer: draws what `loadtest check --html` (or the fleet's GET /admin/runs/{id}/view)
// put in the page's <script type="application/json" id="viewer-data"> block — every operation
// on one time axis, a lane per instance and for the lock store, the checker's findings — and
// shows, for the operation hovered or tapped, the stores' state just before and after it.
// Nothing here works a state out: the checker's walk (workshop/src/history/view/walk.rs) did.
//
// A classic script with no import, so the same file runs inline from disk and as /viewer.js
// under the pages' policy (script-src 'self'). Time is folded: each gap between two moments
// gets a width that grows with the log of its length, so 10 µs and 30 s both read; a gap in
// which nothing runs is drawn as a fold with its real length.
(function () {
  'use strict';

  // The words, both languages, the same keys (the dashboard's i18n.js names its keys the same
  // way and uses the same Chinese for the lock's words: 持锁者, 租约, 续期, 围栏令牌, 临界区).
  const STRINGS = {
    en: {
      'lang.toggle': '中文',
      'viewer.title': 'Run {id} · {tier}',
      'viewer.chapter': 'chapter {chapter}',
      'viewer.jump': 'Jump to first violation',
      'viewer.no_violation': 'No violation',
      'viewer.focus': 'Show what is undecided',
      'viewer.filter': 'Filter by owner or instance',
      'viewer.hint': 'Hover or tap an operation for the stores\' state before and after it.',
      'viewer.exit': 'loadtest check exits {code}',
      'viewer.bound': 'clock bound ± {bound}',
      'viewer.nobound': 'no clock bound stated',
      'viewer.cut': 'cut: {what} ({reason})',
      'viewer.window': 'Showing the {shown} operations nearest the first violation, of {total}: the run is too long to draw whole.',
      'state.holds': 'holds',
      'state.violated': 'violated',
      'state.unknown': 'unknown',
      'store.before': 'just before',
      'store.after': 'just after',
      'store.holders': 'holder (the lock store says)',
      'store.stock': 'stock',
      'store.fence': 'highest fence',
      'store.believers': 'believes it holds (inside a section)',
      'store.nobody': 'nobody',
      'store.none': 'none',
      'lane.lock_store': 'lock store',
      'lane.no_answer': 'no answer',
      'op.request': 'request',
      'op.section': 'critical section',
      'op.lease': 'lease',
      'op.fault': 'fault',
      'field.buyer': 'buyer {v}',
      'field.status': 'status {v}',
      'field.no_answer': 'no answer',
      'field.stock_left': 'stock left {v}',
      'field.fence': 'fence #{v}',
      'field.order': 'order {v}',
      'field.read': 'read {v}',
      'field.wrote': 'wrote {v}',
      'field.owner': 'owner {v}',
      'outcome.sold': 'sold',
      'outcome.sold_out': 'sold out',
      'outcome.stale_refused': 'stale write refused',
      'outcome.crashed': 'crashed inside',
      'outcome.open': 'still open',
      'outcome.reset': 'reset under it',
      'field.call': 'call {from} → return {to} ({len})',
      'field.enter': 'enter {from} → exit {to} ({len})',
      'field.open': 'enter {from}, never left',
      'field.grant': 'granted {from} → valid to {to} ({len})',
      'field.held': 'granted {from}, held to the end (no lease)',
      'field.renewal': 'renewed at {at} to {to}',
      'field.released': 'released {at}',
      'field.expired': 'never released: ran out',
      'field.fault': '{kind} on {target}: {from} → {to}',
      'field.fault_instant': '{kind} on {target} at {from}',
      'fold': 'quiet {len}',
      'finding.first': 'First violation',
      'finding.focus': 'Undecided',
    },
    zh: {
      'lang.toggle': 'English',
      'viewer.title': '运行 {id} · {tier}',
      'viewer.chapter': '章节 {chapter}',
      'viewer.jump': '跳到第一个违反',
      'viewer.no_violation': '没有违反',
      'viewer.focus': '查看未定之处',
      'viewer.filter': '按持有者或实例筛选',
      'viewer.hint': '悬停或点按一个操作，看它之前和之后存储的状态。',
      'viewer.exit': 'loadtest check 退出码 {code}',
      'viewer.bound': '时钟误差界 ± {bound}',
      'viewer.nobound': '未给出时钟误差界',
      'viewer.cut': '截断：{what}（{reason}）',
      'viewer.window': '只显示离第一个违反最近的 {shown} 个操作（共 {total} 个）：这次运行太长，无法全部画出。',
      'state.holds': '成立',
      'state.violated': '违反',
      'state.unknown': '未知',
      'store.before': '之前',
      'store.after': '之后',
      'store.holders': '持锁者（锁存储所记）',
      'store.stock': '库存',
      'store.fence': '最高围栏令牌',
      'store.believers': '自认为持锁（在临界区内）',
      'store.nobody': '无人',
      'store.none': '无',
      'lane.lock_store': '锁存储',
      'lane.no_answer': '无应答',
      'op.request': '请求',
      'op.section': '临界区',
      'op.lease': '租约',
      'op.fault': '故障',
      'field.buyer': '买家 {v}',
      'field.status': '状态 {v}',
      'field.no_answer': '无应答',
      'field.stock_left': '剩余库存 {v}',
      'field.fence': '围栏令牌 #{v}',
      'field.order': '订单 {v}',
      'field.read': '读到 {v}',
      'field.wrote': '写入 {v}',
      'field.owner': '持有者 {v}',
      'outcome.sold': '售出',
      'outcome.sold_out': '已售罄',
      'outcome.stale_refused': '陈旧写入被拒',
      'outcome.crashed': '在临界区内崩溃',
      'outcome.open': '仍未结束',
      'outcome.reset': '被重置',
      'field.call': '调用 {from} → 返回 {to}（{len}）',
      'field.enter': '进入 {from} → 离开 {to}（{len}）',
      'field.open': '进入 {from}，从未离开',
      'field.grant': '授予 {from} → 有效至 {to}（{len}）',
      'field.held': '授予 {from}，一直持有（无租约）',
      'field.renewal': '{at} 续期至 {to}',
      'field.released': '{at} 释放',
      'field.expired': '从未释放：租约到期',
      'field.fault': '{kind} 作用于 {target}：{from} → {to}',
      'field.fault_instant': '{kind} 作用于 {target}，在 {from}',
      'fold': '空闲 {len}',
      'finding.first': '第一个违反',
      'finding.focus': '未定',
    },
  };

  const SVG = 'http://www.w3.org/2000/svg';
  // Sizes at a 16 px page; everything in the timeline grows with the page's own size (20 px on
  // a projector), set on each render by `sizes()`.
  let ROW = 22; // px per row of bars
  let BAR = 16;
  let LANE_GAP = 8;
  let AXIS = 24; // the time labels' strip under the lanes
  let CHAR = 7.2; // the widest a label's character gets (12 px at a 16 px page)
  let UNIT = 1;
  function sizes() {
    UNIT = (parseFloat(getComputedStyle(document.documentElement).fontSize) || 16) / 16;
    [ROW, BAR, LANE_GAP, AXIS, CHAR] = [22, 16, 8, 24, 7.2].map((v) => v * UNIT);
  }

  const block = document.getElementById('viewer-data');
  const root = document.getElementById('viewer');
  if (!block || !root) return;
  const data = JSON.parse(block.textContent);
  const runs = data.runs || [];

  // The language the page was asked in (`--lang`, `?lang=`), which the toggle then changes.
  let lang = data.lang === 'zh' ? 'zh' : 'en';
  let filter = '';
  // Each run's sticky selection (an op id) survives a redraw (the language toggle).
  const selected = runs.map(() => null);

  function t(key, vars) {
    let s = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
    for (const [k, v] of Object.entries(vars || {})) s = s.split(`{${k}}`).join(String(v));
    return s;
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c) e.append(c);
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  /** A duration (µs) in the unit that reads it, to 4 figures: 12 µs, 3.4 ms, 30 s. */
  function span(us) {
    const a = Math.abs(us);
    if (a < 1000) return `${us} µs`;
    if (a < 1e6) return `${+(us / 1000).toPrecision(4)} ms`;
    return `${+(us / 1e6).toPrecision(4)} s`;
  }
  /** A moment (µs after the run's first call), exact to the µs, so two moments never read the
   * same: +12 µs, +3.4005 ms, +127.5001 s. */
  function at(us) {
    const a = Math.abs(us);
    if (a < 1000) return `+${us} µs`;
    if (a < 1e6) return `+${+(us / 1000).toFixed(3)} ms`;
    return `+${+(us / 1e6).toFixed(6)} s`;
  }

  // --- the folded time axis ---------------------------------------------------------------

  /** The width of a gap between two moments (at a 16 px page): 10 µs ≈ 10 px, 1 ms ≈ 34, 1 s ≈
   * 76, 30 s ≈ 97. */
  const gapWidth = (g) => (g <= 0 ? 0 : UNIT * (6 + 14 * Math.log10(1 + g / 10)));

  function axisOf(run) {
    const times = new Set([0]);
    const bound = run.clock_bound_us || 0;
    for (const op of run.ops) {
      times.add(op.from_us);
      if (op.to_us !== null) times.add(op.to_us);
      for (const r of op.renewals_us) times.add(r);
      if (bound && op.line.type === 'lease') {
        times.add(op.from_us - bound); times.add(op.from_us + bound);
        if (op.to_us !== null) { times.add(op.to_us - bound); times.add(op.to_us + bound); }
      }
    }
    const T = [...times].sort((a, b) => a - b);
    const X = [0];
    for (let i = 1; i < T.length; i++) X.push(X[i - 1] + gapWidth(T[i] - T[i - 1]));
    // A gap is quiet when no operation runs across it: drawn as a fold with its length.
    const busy = new Array(Math.max(T.length - 1, 0)).fill(0);
    const index = (time) => lowerBound(T, time);
    for (const op of run.ops) {
      const a = index(op.from_us);
      const b = op.to_us === null ? T.length - 1 : index(op.to_us);
      if (a < b) { busy[a] += 1; if (b < busy.length) busy[b] -= 1; }
    }
    const folds = [];
    let running = 0;
    for (let i = 0; i < busy.length; i++) {
      running += busy[i];
      const g = T[i + 1] - T[i];
      if (running === 0 && g >= 10_000) folds.push({ x0: X[i], x1: X[i + 1], len: g });
    }
    const end = X[X.length - 1] + 40;
    const x = (time) => {
      if (time === null) return end;
      const i = Math.min(Math.max(lowerBound(T, time + 1) - 1, 0), T.length - 1);
      if (i >= T.length - 1) return X[T.length - 1];
      return X[i] + (X[i + 1] - X[i]) * ((time - T[i]) / (T[i + 1] - T[i]));
    };
    return { T, X, x, folds, width: end + 20 };
  }

  function lowerBound(list, value) {
    let lo = 0, hi = list.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (list[mid] < value) lo = mid + 1; else hi = mid; }
    return lo;
  }

  // --- lanes, rows, bars ------------------------------------------------------------------

  /** Each lane's rows: requests above sections in an instance's lane, bars that meet in a
   * row of their own (so an overlap is two bars one above the other). */
  function layout(run, axis) {
    const lanes = run.lanes.map(() => ({ groups: { request: [], section: [], lease: [], fault: [] } }));
    for (const op of run.ops) lanes[op.lane].groups[op.line.type].push(op);
    const placed = new Map();
    let y = 0;
    const laneBoxes = [];
    lanes.forEach((lane, li) => {
      const top = y;
      for (const kind of ['request', 'section', 'lease']) {
        const rows = [];
        const ops = lane.groups[kind].slice().sort((a, b) => a.from_us - b.from_us);
        for (const op of ops) {
          const x0 = axis.x(op.from_us);
          const x1 = Math.max(axis.x(op.to_us), x0 + 3);
          let row = rows.findIndex((endX) => endX + 2 <= x0);
          if (row < 0) { row = rows.length; rows.push(0); }
          rows[row] = x1;
          placed.set(op.id, { x0, x1, y: y + row * ROW });
        }
        y += rows.length * ROW;
      }
      if (y === top) y += ROW; // a lane with faults only still gets a row
      for (const op of lane.groups.fault) {
        const x0 = axis.x(op.from_us);
        placed.set(op.id, { x0, x1: Math.max(axis.x(op.to_us), x0 + 3), y: top, h: y - top, fault: true });
      }
      laneBoxes.push({ top, height: y - top });
      y += LANE_GAP;
    });
    return { placed, laneBoxes, height: y + AXIS };
  }

  function flagsOf(run) {
    const flags = new Map();
    const rank = { violation: 3, unknown: 2, listed: 1 };
    run.findings.forEach((f) => {
      for (const id of f.ops) if (!flags.has(id) || rank[f.class] > rank[flags.get(id)]) flags.set(id, f.class);
    });
    return flags;
  }

  function barClass(op, flag) {
    const l = op.line;
    const c = ['op', l.type];
    if (l.type === 'request') c.push(l.status === 200 ? 'ok' : l.status === 409 ? 'soldout' : 'unanswered');
    if (l.type === 'section') c.push(l.outcome);
    if (op.to_us === null) c.push('open');
    if (flag) c.push(flag);
    return c.join(' ');
  }

  function barLabel(op) {
    const l = op.line;
    if (l.type === 'request') return `${l.buyer} ${l.status || '–'}${l.stock_left !== null ? ` →${l.stock_left}` : ''}`;
    if (l.type === 'section') return `${l.owner}${l.read !== null ? ` ${l.read}` : ''}${l.wrote !== null ? `→${l.wrote}` : ''}${l.fence !== null ? ` #${l.fence}` : ''}`;
    if (l.type === 'lease') return l.owner;
    return l.kind;
  }

  function matches(op) {
    if (!filter) return true;
    const l = op.line;
    return [op.owner, l.instance, l.buyer, l.target].some((v) => v && String(v).toLowerCase().includes(filter));
  }

  function drawTimeline(run, ri, axis, lay, flags) {
    const s = svg('svg', { width: axis.width, height: lay.height, class: 'timeline', role: 'img' });
    lay.laneBoxes.forEach((b, i) => {
      s.append(svg('rect', { x: 0, y: b.top, width: axis.width, height: b.height, class: i % 2 ? 'lane odd' : 'lane' }));
    });
    for (const f of axis.folds) {
      const fold = svg('g', { class: 'fold' });
      fold.append(svg('rect', { x: f.x0, y: 0, width: f.x1 - f.x0, height: lay.height - AXIS }));
      const label = svg('text', { x: (f.x0 + f.x1) / 2, y: lay.height - 6 * UNIT, 'text-anchor': 'middle' });
      label.textContent = `≈ ${span(f.len)}`;
      const title = svg('title');
      title.textContent = t('fold', { len: span(f.len) });
      fold.append(label, title);
      s.append(fold);
    }
    // Time labels, at least 80 px apart, each the moment it marks, clear of the folds' labels.
    let lastX = -1e9;
    const gap = 80 * UNIT;
    axis.T.forEach((time, i) => {
      const xx = axis.X[i];
      if (xx - lastX < gap || axis.folds.some((f) => xx > f.x0 - gap && xx < (f.x0 + f.x1) / 2 + gap / 2)) return;
      lastX = xx;
      s.append(svg('line', { x1: xx, x2: xx, y1: 0, y2: lay.height - AXIS, class: 'tick' }));
      const label = svg('text', { x: xx + 2, y: lay.height - 6 * UNIT, class: 'tick' });
      label.textContent = at(time);
      s.append(label);
    });
    const bound = run.clock_bound_us || 0;
    for (const op of run.ops) {
      const p = lay.placed.get(op.id);
      const g = svg('g', { class: barClass(op, flags.get(op.id)) + (matches(op) ? '' : ' dim'), 'data-op': op.id, 'data-run': ri, tabindex: 0 });
      if (p.fault) {
        g.append(svg('rect', { x: p.x0, y: p.y, width: p.x1 - p.x0, height: p.h, class: 'bar' }));
      } else {
        const y = p.y + (ROW - BAR) / 2;
        if (bound && op.line.type === 'lease') {
          for (const edge of [op.from_us, op.to_us]) {
            if (edge === null) continue;
            const b0 = axis.x(edge - bound), b1 = axis.x(edge + bound);
            g.append(svg('rect', { x: b0, y: p.y, width: Math.max(b1 - b0, 1), height: ROW, class: 'bound' }));
          }
        }
        g.append(svg('rect', { x: p.x0, y, width: p.x1 - p.x0, height: BAR, rx: 3, class: 'bar' }));
        for (const r of op.renewals_us) {
          const rx = axis.x(r);
          g.append(svg('line', { x1: rx, x2: rx, y1: y - 2, y2: y + BAR + 2, class: 'renewal' }));
        }
        // The label inside its bar, cut to what fits: the whole of it is in the tooltip and
        // the panel.
        const fits = Math.floor((p.x1 - p.x0 - 6) / CHAR);
        if (fits >= 4) {
          const whole = barLabel(op);
          const label = svg('text', { x: p.x0 + 3, y: y + BAR - 4 * UNIT, class: 'label' });
          label.textContent = whole.length > fits ? `${whole.slice(0, fits - 1)}…` : whole;
          g.append(label);
        }
      }
      // Named for a screen reader; the panel says the rest (a <title> each costs a big run
      // seconds to draw).
      g.setAttribute('aria-label', `${t(`op.${op.line.type}`)}: ${barLabel(op)}`);
      s.append(g);
    }
    return s;
  }

  // --- the state panel --------------------------------------------------------------------

  function fields(op, origin) {
    const l = op.line;
    const f = [];
    const len = (a, b) => span(b - a);
    if (l.type === 'request') {
      f.push(t('field.buyer', { v: l.buyer }), l.status ? t('field.status', { v: l.status }) : t('field.no_answer'));
      if (l.order_id !== null) f.push(t('field.order', { v: l.order_id }));
      if (l.stock_left !== null) f.push(t('field.stock_left', { v: l.stock_left }));
      if (l.fence !== null) f.push(t('field.fence', { v: l.fence }));
      if (l.instance !== null) f.push(l.instance);
      f.push(t('field.call', { from: at(op.from_us), to: at(op.to_us), len: len(op.from_us, op.to_us) }));
    } else if (l.type === 'section') {
      f.push(t('field.owner', { v: l.owner }), l.instance, t(`outcome.${l.outcome}`));
      if (l.read !== null) f.push(t('field.read', { v: l.read }));
      if (l.wrote !== null) f.push(t('field.wrote', { v: l.wrote }));
      if (l.fence !== null) f.push(t('field.fence', { v: l.fence }));
      if (l.order_id !== null) f.push(t('field.order', { v: l.order_id }));
      f.push(op.to_us === null ? t('field.open', { from: at(op.from_us) }) : t('field.enter', { from: at(op.from_us), to: at(op.to_us), len: len(op.from_us, op.to_us) }));
    } else if (l.type === 'lease') {
      f.push(t('field.owner', { v: l.owner }));
      f.push(op.to_us === null ? t('field.held', { from: at(op.from_us) }) : t('field.grant', { from: at(op.from_us), to: at(op.to_us), len: len(op.from_us, op.to_us) }));
      for (const r of l.renewals) f.push(t('field.renewal', { at: at(r.renew_us - origin), to: at(r.deadline_us - origin) }));
      f.push(l.released_us !== null ? t('field.released', { at: at(l.released_us - origin) }) : t('field.expired'));
    } else {
      f.push(op.to_us === null || op.to_us === op.from_us
        ? t('field.fault_instant', { kind: l.kind, target: l.target, from: at(op.from_us) })
        : t('field.fault', { kind: l.kind, target: l.target, from: at(op.from_us), to: at(op.to_us) }));
    }
    return f.filter(Boolean).join(' · ');
  }

  function names(list) {
    return list.length ? list.join(', ') : t('store.nobody');
  }

  function showOp(panel, run, op, named) {
    panel.replaceChildren();
    if (!op) {
      panel.append(el('p', { class: 'hint', text: t('viewer.hint') }));
      delete panel.dataset.op;
      return;
    }
    panel.dataset.op = op.id;
    panel.append(el('h3', { text: `${t(`op.${op.line.type}`)} ${op.id}` }));
    panel.append(el('p', { class: 'fields', text: fields(op, run.origin_us) }));
    const rows = [
      ['holders', (s) => names(s.holders)],
      ['stock', (s) => String(s.stock)],
      ['fence', (s) => (s.fence === null ? t('store.none') : `#${s.fence}`)],
      ['believers', (s) => names(s.believers)],
    ];
    const table = el('table', { class: 'store' });
    table.append(el('tr', {}, el('th'), el('th', { text: t('store.before') }), el('th', { text: t('store.after') })));
    for (const [key, show] of rows) {
      const b = show(op.before), a = show(op.after);
      table.append(el('tr', { 'data-row': key },
        el('th', { text: t(`store.${key}`) }),
        el('td', { class: 'before', text: b }),
        el('td', { class: a === b ? 'after' : 'after changed', text: a })));
    }
    panel.append(table);
    // What the checker said about this operation, in its own words.
    const said = named.get(op.id) || [];
    if (said.length) {
      const list = el('ul', { class: 'said' });
      for (const f of said) list.append(el('li', { class: f.class, text: lang === 'zh' ? f.zh : f.en }));
      panel.append(list);
    }
  }

  // --- one run, the page ------------------------------------------------------------------

  function drawRun(run, ri) {
    const byId = new Map(run.ops.map((op) => [op.id, op]));
    const named = new Map();
    for (const f of run.findings) for (const id of f.ops) named.set(id, [...(named.get(id) || []), f]);
    const show = (op) => showOp(panel, run, op, named);
    const axis = axisOf(run);
    const lay = layout(run, axis);
    const flags = flagsOf(run);
    const section = el('section', { class: `run state-${run.state}`, 'data-run': ri });
    const head = el('header', {},
      el('h2', { text: t('viewer.title', { id: run.run_id, tier: run.tier }) }),
      run.chapter ? el('p', { class: 'chapter', text: t('viewer.chapter', { chapter: run.chapter }) }) : null,
      el('p', { class: 'exit', text: `${t(`state.${run.state}`)} · ${t('viewer.exit', { code: run.exit_code })} · ${run.clock_bound_us ? t('viewer.bound', { bound: span(run.clock_bound_us) }) : t('viewer.nobound')}` }));
    const verdicts = el('ul', { class: 'verdicts' });
    for (const v of run.verdicts) {
      verdicts.append(el('li', { class: `verdict ${v.state}` },
        el('b', { text: `${lang === 'zh' ? v.name_zh : v.name_en}: ${t(`state.${v.state}`)}` }),
        document.createTextNode(` — ${lang === 'zh' ? v.zh : v.en}`)));
    }
    for (const c of run.cuts) verdicts.append(el('li', { class: 'verdict cut', text: t('viewer.cut', { what: c.what, reason: c.reason }) }));
    if (run.total_ops > run.ops.length) verdicts.append(el('li', { class: 'verdict cut', text: t('viewer.window', { shown: run.ops.length, total: run.total_ops }) }));
    const first = run.first_violation !== null ? run.findings[run.first_violation] : null;
    const focus = run.focus !== null ? run.findings[run.focus] : null;
    const target = first || focus;
    const jump = el('button', { type: 'button', class: 'jump', 'data-run': ri, text: first ? t('viewer.jump') : focus ? t('viewer.focus') : t('viewer.no_violation') });
    if (!target) jump.disabled = true;
    const finding = el('p', { class: 'finding', hidden: '' });

    const names = el('div', { class: 'names' });
    lay.laneBoxes.forEach((b, i) => {
      const lane = run.lanes[i];
      const name = lane.kind === 'lock_store' ? t('lane.lock_store') : lane.kind === 'clients' ? t('lane.no_answer') : lane.name;
      const n = el('div', { class: 'name', text: name });
      n.style.top = `${b.top}px`;
      n.style.height = `${b.height}px`;
      names.append(n);
    });
    names.style.height = `${lay.height}px`;
    const scroll = el('div', { class: 'scroll' });
    scroll.append(drawTimeline(run, ri, axis, lay, flags));
    const panel = el('div', { class: 'panel', 'aria-live': 'polite' });

    const setSelected = (id) => {
      selected[ri] = id;
      section.dataset.selected = id || '';
      for (const g of scroll.querySelectorAll('.op.selected')) g.classList.remove('selected');
      if (id) scroll.querySelector(`[data-op="${id}"]`)?.classList.add('selected');
      show(byId.get(id));
    };
    const reveal = (id) => {
      const p = lay.placed.get(id);
      if (!p) return;
      scroll.scrollLeft = Math.max(0, (p.x0 + p.x1) / 2 - scroll.clientWidth / 2);
    };
    scroll.addEventListener('pointerover', (ev) => {
      const g = ev.target.closest?.('.op');
      if (g && ev.pointerType === 'mouse') show(byId.get(g.dataset.op));
    });
    scroll.addEventListener('pointerleave', () => show(byId.get(selected[ri])));
    scroll.addEventListener('click', (ev) => {
      const g = ev.target.closest?.('.op');
      if (g) setSelected(g.dataset.op);
    });
    scroll.addEventListener('keydown', (ev) => {
      const g = ev.target.closest?.('.op');
      if (g && (ev.key === 'Enter' || ev.key === ' ')) { ev.preventDefault(); setSelected(g.dataset.op); }
    });
    jump.addEventListener('click', () => {
      if (!target) return;
      const id = target.ops[0] ?? null;
      setSelected(id);
      if (id) reveal(id);
      finding.hidden = false;
      finding.textContent = `${first ? t('finding.first') : t('finding.focus')} (${at(target.at_us)}): ${lang === 'zh' ? target.zh : target.en}`;
    });

    const body = el('div', { class: 'body' }, el('div', { class: 'track' }, names, scroll), panel);
    section.append(head, verdicts, el('div', { class: 'actions' }, jump), finding, body);
    requestAnimationFrame(() => {
      // On any screen, open on the window around the violation (or what is undecided).
      if (selected[ri]) reveal(selected[ri]);
      else if (target && target.ops[0]) reveal(target.ops[0]);
    });
    setSelected(selected[ri]);
    return section;
  }

  function render() {
    sizes();
    document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
    const toggle = el('button', { type: 'button', id: 'lang', text: t('lang.toggle') });
    toggle.addEventListener('click', () => { lang = lang === 'zh' ? 'en' : 'zh'; render(); });
    const search = el('input', { type: 'search', id: 'filter', placeholder: t('viewer.filter'), 'aria-label': t('viewer.filter') });
    search.value = filter;
    search.addEventListener('input', () => {
      filter = search.value.trim().toLowerCase();
      const ops = runs.map((run) => new Map(run.ops.map((op) => [op.id, op])));
      for (const g of root.querySelectorAll('.op')) g.classList.toggle('dim', !matches(ops[g.dataset.run].get(g.dataset.op)));
    });
    const bar = el('div', { class: 'toolbar' }, search, toggle);
    const list = el('div', { class: runs.length > 1 ? 'runs beside' : 'runs' }, ...runs.map(drawRun));
    root.replaceChildren(bar, list);
  }

  render();
})();
