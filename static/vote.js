// The class vote, as a student sees it: the open question as large option buttons, their own
// vote marked and changeable until the round closes, a waiting state, and the reveal. The vote
// page (vote.html) shows it alone, phone-first; the dashboard shows it as a card on top while a
// vote is open or revealed. The presenter's view (present.js) draws its reveal with `reveal`.
//
// The API (the poll contract): `GET /poll/events?room=` sends the public view (event `poll`) on
// connect and on every change; `GET /poll?room=` with the room's token adds `my_vote` (and
// `my_note`); `POST /poll?room=` `{"option": N, "sure"?, "why"?}` votes, again in the same round
// replaces the vote. Until the reveal a view names the question by its neutral `number`, never
// its chapter (whose id may name the outcome). A reason is the student's text: shown with
// `textContent`, never as markup. Every view
// and a vote's answer carry the poll's `version`, which grows with every change of the vote: a
// view or an answer older than what the page holds is dropped (they race one another).

import { t, fmt, language } from './i18n.js';
import './poll-strings.js';
import { call, currentToken, withRoom } from './room.js';

/** The longest reason, in characters (the server counts the same way). */
const WHY_CHARS = 140;

const LETTERS = 'ABCD';
/** An option's letter: A, B, C, D, as the projector shows them. */
export const letter = (i) => LETTERS[i] ?? String(i + 1);

/** A text's version in the page's language (`{en, zh}`). */
export const inLanguage = (x) => (x ? (language() === 'zh' ? x.zh : x.en) || x.en || '' : '');

const percent = (share) => (share == null ? '–' : `${Math.round(share * 100)} %`);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The figures a reveal shows first, when not 0: what the ground truth counts. */
const GROUND_TRUTH = ['orders', 'oversold', 'lost_updates', 'overlaps', 'foreign_releases', 'stale_writes_rejected', 'lost_releases', 'lock_timeouts'];

/** A run's figure: whole, or to a tenth (milliseconds, rates); `null`, not measured. */
const figure = (v) => (v == null ? '–' : fmt(Number.isInteger(v) ? v : Math.round(v * 10) / 10));

/** A question's neutral label: "Question 12". */
export const questionLabel = (v) => (v?.number ? t('vote.number', { n: v.number }) : '');

function figureList(entries) {
  const list = el('dl', 'reveal-figures');
  for (const [name, value] of entries) {
    const key = `fig.${name}`;
    const label = t(key);
    const pair = el('div');
    pair.dataset.figure = name;
    pair.append(el('dt', '', label === key ? name.replaceAll('_', ' ') : label), el('dd', '', figure(value)));
    list.append(pair);
  }
  return list;
}

/**
 * The reveal (`reveal` of the public view): the option the run landed in (or none), whether the
 * run showed what the chapter expects, the share right in each round and the gain, where the
 * runs in every room landed (when it ran in every room), the run's figures, the chapter's
 * explanation and its article lines. `options` are the question's.
 */
export function reveal(r, options) {
  const box = el('div', 'reveal');
  box.dataset.landed = r.landed ?? 'none';
  box.dataset.passed = String(r.passed);
  // First what decided it: the figures the question's rule read, under the option's words.
  const decided = el('div', 'reveal-decided');
  const landed = el('p', 'reveal-landed');
  landed.textContent = r.landed == null
    ? t('vote.decided.none')
    : t('vote.decided', { letter: letter(r.landed), option: inLanguage(options?.[r.landed]) });
  decided.append(landed, figureList((r.decided_by || []).map((f) => [f.name, f.value])));
  // A question that put an article's claim on trial cites the line the run just judged.
  const [article, line] = (r.claim || '').split(':');
  if (article && line) decided.append(el('p', 'reveal-claim', t('vote.claim', { article, line })));
  box.append(decided);
  // The first violation drawn, where the chapter has a picture of it: an image, so nothing in
  // it runs.
  const picture = el('figure', 'reveal-picture');
  picture.hidden = !r.svg;
  if (r.svg) {
    const img = el('img');
    img.alt = '';
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(r.svg)}`;
    picture.append(img);
  }
  box.append(picture);
  // The shortest way the chapter's rung breaks, as the search of every schedule says it: part
  // of the reveal alone, so nothing drawn before it hints at the answer.
  const found = r.shortest_break;
  if (found) {
    const key = found.verdict === 'broken' ? 'vote.break' : 'vote.break.none';
    const line = el('p', 'reveal-break', t(key, { words: inLanguage(found) }));
    line.dataset.verdict = found.verdict;
    box.append(line);
  }
  if (r.chapter) box.append(el('p', 'reveal-chapter muted', r.chapter));
  if (!r.passed) {
    const off = el('p', 'reveal-unexpected', t('vote.unexpected', { expectation: r.expectation || '' }));
    box.append(off);
  }
  const rounds = el('ul', 'reveal-rounds');
  for (const round of r.rounds || []) {
    const li = el('li', '', t('vote.share', { round: round.round, share: percent(round.share_right), voters: fmt(round.voters) }));
    li.dataset.round = round.round;
    li.dataset.share = round.share_right ?? '';
    rounds.append(li);
  }
  if (r.gain != null) {
    const gain = el('li', 'reveal-gain', t('vote.gain', { gain: percent(r.gain) }));
    gain.dataset.gain = r.gain;
    rounds.append(gain);
  }
  box.append(rounds);
  if (r.every_room) box.append(everyRoom(r.every_room, r.landed));
  // The figures the chapter's expectation names, and the ground truth's own; every other
  // figure of the run folded away beneath them.
  const named = new Set((r.expectation || '').match(/[a-z_]+/g) || []);
  const first = new Set((r.decided_by || []).map((f) => f.name));
  const entries = Object.entries(r.figures || {}).filter(([name]) => !first.has(name));
  const main = entries.filter(([name, value]) => named.has(name) || (GROUND_TRUTH.includes(name) && value !== 0));
  box.append(figureList(main.length ? main : entries.slice(0, 6)));
  if (entries.length > main.length) {
    const all = el('details', 'reveal-all');
    all.append(el('summary', '', t('vote.figures.all', { n: entries.length })), figureList(entries));
    box.append(all);
  }
  const why = el('p', 'reveal-why', inLanguage(r));
  box.append(why);
  if (r.source) box.append(el('p', 'reveal-source muted', t('vote.source', { source: r.source })));
  return box;
}

/**
 * Where the chapter's runs in the class's rooms landed (`every_room` of a reveal): rooms per
 * option, the shown run's option marked; rooms in no option, those that did not show what the
 * chapter expects, those whose run failed and why, and those not run yet. It fills in as the
 * rooms finish.
 */
function everyRoom(rooms, shown) {
  const box = el('div', 'reveal-rooms');
  const ran = rooms.rooms - rooms.pending - rooms.failed.length;
  box.dataset.rooms = rooms.rooms;
  box.dataset.pending = rooms.pending;
  box.append(el('p', 'reveal-rooms-head', t('vote.rooms', { ran: fmt(ran), rooms: fmt(rooms.rooms) })));
  const counts = el('ul', 'reveal-rooms-counts');
  rooms.landed.forEach((n, i) => {
    const li = el('li', i === shown ? 'shown' : '', t('vote.rooms.option', { letter: letter(i), n: fmt(n) }));
    li.dataset.option = i;
    li.dataset.count = n;
    counts.append(li);
  });
  if (rooms.landed_none) counts.append(el('li', 'off', t('vote.rooms.none', { n: fmt(rooms.landed_none) })));
  box.append(counts);
  const notes = [];
  if (rooms.not_passed) notes.push(t('vote.rooms.unexpected', { n: fmt(rooms.not_passed) }));
  if (rooms.pending) notes.push(t('vote.rooms.pending', { n: fmt(rooms.pending) }));
  if (notes.length) box.append(el('p', 'reveal-rooms-note', notes.join(' · ')));
  if (rooms.failed.length) {
    const failed = el('details', 'reveal-rooms-failed');
    failed.append(el('summary', '', t('vote.rooms.failed', { n: fmt(rooms.failed.length) })));
    const list = el('ul');
    for (const f of rooms.failed) list.append(el('li', '', `${f.room}: ${f.error}`));
    failed.append(list);
    box.append(failed);
  }
  return box;
}

/**
 * The vote of this page's room, live, drawn into `host`: `onView(view)` hears every public view
 * (the dashboard hides its card while no vote is on).
 */
export class Vote {
  /** `onClose`, when given, puts a close button on the card (the dashboard's). */
  constructor(host, { onView = () => {}, onClose = null } = {}) {
    this.host = host;
    this.onView = onView;
    this.onClose = onClose;
    this.view = null; // the last public view
    this.myVote = null; // {number, round, option, sure, version}: this room's vote as the server answered it
    this.message = null; // [key, vars, error]: the last vote's outcome
    this.source = null;
    this.sure = null; // true / false once the student said, with the round on screen
    // Three parts: the question and its options, redrawn with every view; how sure and why,
    // kept (a view arriving while the student types must not take the line away); the outcome
    // and the reveal, redrawn.
    this.top = el('div', 'vote-top');
    this.notes = this.notesForm();
    this.tail = el('div', 'vote-tail');
  }

  /** "Sure / not sure" and one optional line of why; each re-sends the vote with them. */
  notesForm() {
    const form = el('form', 'vote-notes');
    form.hidden = true;
    const ask = el('p', 'vote-sure-ask', '');
    const group = el('div', 'vote-sure');
    group.setAttribute('role', 'group');
    for (const [value, key] of [[true, 'vote.sure'], [false, 'vote.unsure']]) {
      const button = el('button', 'vote-sure-button', '');
      button.type = 'button';
      button.dataset.sure = String(value);
      button.dataset.key = key;
      button.addEventListener('click', () => {
        this.sure = value;
        this.sendNotes(button);
      });
      group.append(button);
    }
    const why = el('input', 'vote-why');
    why.type = 'text';
    why.maxLength = WHY_CHARS;
    why.autocomplete = 'off';
    const send = el('button', 'vote-why-send', '');
    send.type = 'submit';
    const line = el('div', 'vote-why-line');
    line.append(why, send);
    form.append(ask, group, line);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.sendNotes(send);
    });
    return form;
  }

  /** The vote again, with how sure and why, once a letter is chosen. */
  sendNotes(button) {
    const chosen = this.chosen();
    if (chosen == null) {
      // How sure goes with the letter when it comes; a reason alone would be lost: say so.
      if (button.type === 'submit') this.message = ['vote.why.first', {}, true];
      this.render();
      return;
    }
    this.vote(chosen, button, this.notes.querySelector('.vote-why').value.trim() ? 'vote.why.sent' : 'vote.counted');
  }

  /** The form's words and state, in place. */
  drawNotes(v) {
    const form = this.notes;
    form.hidden = !(v && v.state === 'open' && currentToken());
    form.querySelector('.vote-sure-ask').textContent = t('vote.sure.ask');
    for (const button of form.querySelectorAll('.vote-sure-button')) {
      button.textContent = t(button.dataset.key);
      button.setAttribute('aria-pressed', String(String(this.sure) === button.dataset.sure));
    }
    const why = form.querySelector('.vote-why');
    why.placeholder = t('vote.why');
    why.setAttribute('aria-label', t('vote.why'));
    form.querySelector('.vote-why-send').textContent = t('vote.why.send');
  }

  /** Listens to the vote; again, a no-op while the stream is open. */
  connect() {
    if (this.source && this.source.readyState !== EventSource.CLOSED) return;
    const source = new EventSource(withRoom('/poll/events'));
    this.source = source;
    source.addEventListener('poll', (ev) => this.show(JSON.parse(ev.data)));
    // A fleet without the vote, or one restarting: the browser retries a dropped stream by
    // itself, but not one refused; try again later.
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED && this.source === source) {
        setTimeout(() => { if (this.source === source) this.connect(); }, 5000);
      }
    });
  }

  show(view) {
    const before = this.view;
    if (before && (view.version ?? 0) < (before.version ?? 0)) return;
    this.view = view;
    const sameRound = before && before.number === view.number && before.round === view.round;
    if (!sameRound) {
      // A new question or round: the student says again how sure, and why.
      this.sure = null;
      this.notes.querySelector('.vote-why').value = '';
      this.readMyVote();
    }
    if (!sameRound || before.state !== view.state) this.message = null;
    this.render();
    this.onView(view);
  }

  /** This room's vote in the open round (`my_vote`), after a reload or a new round. */
  async readMyVote() {
    if (!currentToken()) return;
    try {
      const view = await call('GET', '/poll');
      // Read before this page's own vote was counted: that vote's answer is the newer.
      if ((view.version ?? 0) < (this.myVote?.version ?? 0)) return;
      if (view.my_vote != null) {
        const note = view.my_note || {};
        this.myVote = { number: view.number, round: view.round, option: view.my_vote, sure: note.sure, version: view.version };
        this.sure = note.sure ?? null;
        const why = this.notes.querySelector('.vote-why');
        if (note.why && document.activeElement !== why && !why.value) why.value = note.why;
      }
      this.render();
    } catch {
      // Not this room's token (the instructor's, or a refused link): no vote of its own to show.
    }
  }

  /** The option this room chose in the round on screen, or null. */
  chosen() {
    const v = this.view;
    const m = this.myVote;
    return v && m && m.number === v.number && m.round === v.round ? m.option : null;
  }

  async vote(option, button, counted = 'vote.counted') {
    button.disabled = true;
    const body = { option };
    if (this.sure != null) body.sure = this.sure;
    const why = this.notes.querySelector('.vote-why').value.trim();
    if (why) body.why = why;
    try {
      this.myVote = await call('POST', '/poll', body);
      this.message = [counted, {}, false];
    } catch (err) {
      const key = { 401: 'vote.notoken', 403: 'vote.forbidden', 409: 'vote.closed' }[err.status];
      this.message = key ? [key, {}, true] : ['vote.error', { error: err.message }, true];
    } finally {
      button.disabled = false; // the form's buttons stay; the options are drawn anew
    }
    this.render();
  }

  render() {
    const v = this.view;
    const host = this.host;
    host.dataset.state = v?.state || 'idle';
    host.dataset.round = v?.round ?? '';
    if (host.firstChild !== this.top) host.replaceChildren(this.top, this.notes, this.tail);
    this.top.replaceChildren();
    this.tail.replaceChildren();
    this.drawNotes(v);
    if (!v || v.state === 'idle' || !v.question) {
      this.top.append(el('p', 'vote-waiting', t('vote.waiting')));
      return;
    }
    const top = this.top;
    const status = v.state === 'open'
      ? t('vote.open', { round: v.round, voted: fmt(v.voted), rooms: fmt(v.rooms) })
      : v.state === 'closed' ? t('vote.closedround', { round: v.round, voted: fmt(v.voted) }) : t('vote.revealed');
    if (this.onClose) {
      const close = el('button', 'vote-close', '×');
      close.type = 'button';
      close.title = t('vote.hide');
      close.setAttribute('aria-label', t('vote.hide'));
      close.addEventListener('click', () => this.onClose(v));
      top.append(close);
    }
    top.append(el('p', 'vote-status', `${questionLabel(v)} · ${status}`), el('h2', 'vote-question', inLanguage(v.question)));
    const chosen = this.chosen();
    const landed = v.state === 'revealed' ? v.reveal?.landed : undefined;
    const list = el('ol', 'vote-options');
    v.question.options.forEach((option, i) => {
      const button = el('button', 'vote-option');
      button.type = 'button';
      button.dataset.option = i;
      button.append(el('b', 'vote-letter', letter(i)), el('span', '', inLanguage(option)));
      button.setAttribute('aria-pressed', String(chosen === i));
      if (landed === i) button.classList.add('landed');
      button.disabled = v.state !== 'open';
      button.addEventListener('click', () => this.vote(i, button));
      const li = el('li');
      li.append(button);
      list.append(li);
    });
    top.append(list);
    const [key, vars, error] = this.message
      || (chosen != null && v.state === 'open' ? ['vote.changeable', {}, false] : null)
      || (v.state === 'open' && !currentToken() ? ['vote.notoken', {}, true] : null)
      || [v.state === 'closed' ? 'vote.wait' : '', {}, false];
    if (key) {
      const note = el('p', `vote-note${error ? ' error' : ''}`, t(key, vars));
      this.tail.append(note);
    }
    if (v.state === 'revealed' && v.reveal) this.tail.append(reveal(v.reveal, v.question.options));
  }
}
