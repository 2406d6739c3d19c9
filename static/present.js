// The presenter's view (present.html), for the projector at 1920 × 1080: a chapter in the
// course's order (`GET /scenarios`), its question, Open the vote / Close / Discuss and vote
// again / Run & reveal (in one room, and optionally in every room of the class after it), how
// many rooms voted (never what, until the reveal), then the reveal: the votes per option in
// each round, the option the run landed in, the share right and the gain, where the rooms'
// runs landed as they finish, the run's figures, the chapter's explanation and its article
// lines; on a rung of the ladder the shortest way its lock breaks, and a button to the viewer
// of the run revealed.
//
// What the room sees comes from the public stream (`GET /poll/events`), as on the students'
// phones; the buttons are the admin's (`/admin/class/poll…`), with the admin token typed once
// per tab as on the class page.
//
// Nothing projected gives the answer away before the reveal: a chapter's id may name its
// outcome, so the picker and the stage say "Question N" (N, the chapter's place in the course)
// and the id shows only after the reveal (in the picker's tooltip too only between votes). The
// instructor's own notes (present-notes.js) open behind a toggle.

import { t, apply, fmt, language, setLanguage } from './i18n.js';
import { request, say, tokenPanel, withRoom } from './room.js';
import { inLanguage, letter, questionLabel, reveal } from './vote.js';
import { notesPanel } from './present-notes.js';
import { openViewer } from './violation.js';

const $ = (sel) => document.querySelector(sel);

let chapters = []; // GET /scenarios, in the course's order (a chapter's tier, once revealed)
let deck = []; // GET /admin/class/deck: every question, in the deck's order (the admin's)
let view = null; // the last public view of the vote
let admin = false; // this tab holds the admin token
let running = false; // a run & reveal is under way
const notes = notesPanel();

/** The question picked: the picker's values are the deck's numbers, from 1, as the class
 * sees them ("Question 12"); a chapter's own question and the articles' claims its run
 * answers are told apart. */
/** The question picked: the deck's entry whose neutral number the picker holds. */
const picked = () => deck.find((q) => String(q.number) === $('#chapter').value);

const token = tokenPanel({
  enable(on, caller) {
    admin = on && caller?.scope === 'admin';
    // A student's token may vote, never drive the vote.
    if (on && !admin) say(t('present.adminonly'), true);
    // The list as the admin token gets it: the chapter voted on is not hidden from it.
    loadChapters();
    draw();
  },
});

/** Runs an admin call; the answer, when it is a view or a reveal, is drawn at once (the stream
 * brings it too, a moment later). */
const act = (button, fn) => token.act(button, async () => {
  const text = await fn();
  draw();
  return text;
});

// ---------------------------------------------------------------- the buttons

$('#open').addEventListener('click', (ev) => act(ev.target, async () => {
  const question = picked()?.id;
  if (!question) return '';
  show(await request('POST', '/admin/class/poll', { question }));
  return t('present.opened', { chapter: questionLabel(view) });
}));

$('#close').addEventListener('click', (ev) => act(ev.target, async () => {
  show(await request('POST', '/admin/class/poll/close'));
  return t('present.closed');
}));

$('#again').addEventListener('click', (ev) => act(ev.target, async () => {
  show(await request('POST', '/admin/class/poll/round'));
  return t('present.again.done');
}));

$('#reveal').addEventListener('click', (ev) => act(ev.target, async () => {
  const room = $('#run-room').value.trim() || 'default';
  const every = $('#run-every').checked;
  running = true;
  say(t(every ? 'present.running.every' : 'present.running', { chapter: questionLabel(view), room }));
  draw();
  try {
    const body = every ? { run: true, room, every_room: true } : { run: true, room };
    const { version, ...answer } = await request('POST', '/admin/class/poll/reveal', body);
    if (view) show({ ...view, state: 'revealed', reveal: answer, version });
  } finally {
    running = false;
  }
  return t('present.revealed');
}));

/** Whether `next` is no older than the view drawn. An admin call's answer and the stream's
 * events race: the stream sends at most every 500 ms what its instance read, so a view from
 * before the reveal may arrive after the reveal's answer. Every view carries the poll's
 * `version`, which grows with every change of the vote: an older one is dropped. */
const fresh = (next) => !view || (next.version ?? 0) >= (view.version ?? 0);

/** A view from an admin call's answer (the admin view is the public view and more). */
function show(next) {
  notes.counted(next);
  if (next && next.state && fresh(next)) view = next;
}

// ---------------------------------------------------------------- drawing

function draw() {
  const v = view;
  const state = v?.state || 'idle';
  document.body.dataset.state = state;
  const open = state === 'open';
  const closed = state === 'closed';
  $('#admin').disabled = !admin;
  $('#open').disabled = !picked()?.id || running;
  $('#close').disabled = !open || running;
  $('#again').disabled = !((open || closed) && v.round === 1) || running;
  $('#reveal').disabled = !v?.question || state === 'idle' || running;

  // The chapter's id and tier once revealed; before, its neutral number only.
  const chapter = state === 'revealed' ? chapters.find((c) => c.id === v.chapter) : null;
  const number = v?.number ?? (state === 'idle' ? Number($('#chapter').value) || null : null);
  $('#present-chapter').textContent = chapter
    ? `${questionLabel({ number })} · ${chapter.id} · ${t('tier')} ${chapter.tier}`
    : questionLabel({ number });
  drawPicker(state);
  const question = $('#question');
  if (v?.question && state !== 'idle') {
    delete question.dataset.i18n;
    question.textContent = inLanguage(v.question);
  } else {
    question.dataset.i18n = 'present.pick';
    question.textContent = t('present.pick');
  }
  drawOptions(v);

  $('#voted').textContent = v && state !== 'idle' ? fmt(v.voted) : '–';
  $('#voted-of').textContent = v && state !== 'idle' ? ` / ${fmt(v.rooms)} ${t('present.voted')}` : '';
  $('#poll-state').textContent = t(`present.state.${state}`, { round: v?.round ?? '' });

  const box = $('#reveal-box');
  box.hidden = !(state === 'revealed' && v.reveal);
  box.replaceChildren();
  if (!box.hidden) box.append(reveal(v.reveal, v.question?.options));
  // The run just revealed, every operation to step through: the viewer wants the admin token,
  // which this tab holds once unlocked (a plain link could not send it).
  const run = v?.reveal?.history;
  if (!box.hidden && admin && run) {
    const step = document.createElement('button');
    step.type = 'button';
    step.id = 'reveal-viewer';
    step.dataset.run = run;
    step.textContent = t('present.viewer');
    step.addEventListener('click', () => openViewer(run, language(), v.reveal.room));
    box.append(step);
  }
  notes.update(v, admin);
}

/** The picker's labels: numbers only, since the projector shows whatever the pointer
 * hovers. The picked question's id is in the presenter's notes, which the instructor opens. */
function drawPicker(state) {
  for (const option of $('#chapter').options) {
    option.textContent = questionLabel({ number: Number(option.value) });
  }
  const chosen = picked();
  const between = state === 'idle' || state === 'revealed';
  $('#notes-picked').textContent = between && chosen?.id ? pickedNote(chosen) : '';
}

/** The picked question for the instructor: its id, and the question it is asked instead of
 * (a claim and its chapter's own question share a run: one of them is asked). */
function pickedNote(chosen) {
  const numberOf = (id) => deck.find((q) => q.id === id)?.number;
  const said = [t('present.picked', { id: chosen.id })];
  if (chosen.alternative_to) {
    said.push(t('present.picked.instead', { n: numberOf(chosen.alternative_to) }));
  } else if (chosen.alternatives?.length) {
    said.push(t('present.picked.or', { n: chosen.alternatives.map(numberOf).join(', ') }));
  }
  return said.join(' · ');
}

/** The options; once revealed, each with its votes in every round as bars (never before: the
 * room must not see where the others lean). */
function drawOptions(v) {
  const list = $('#options');
  list.replaceChildren();
  if (!v?.question || v.state === 'idle') return;
  const revealed = v.state === 'revealed' && v.reveal;
  v.question.options.forEach((option, i) => {
    const li = document.createElement('li');
    li.dataset.option = i;
    if (revealed && v.reveal.landed === i) li.className = 'landed';
    const mark = document.createElement('b');
    mark.className = 'vote-letter';
    mark.textContent = letter(i);
    const text = document.createElement('span');
    text.className = 'present-option-text';
    text.textContent = inLanguage(option);
    li.append(mark, text);
    if (revealed) {
      const bars = document.createElement('div');
      bars.className = 'present-bars';
      for (const round of v.reveal.rounds || []) {
        const n = round.counts?.[i] ?? 0;
        const bar = document.createElement('div');
        bar.className = `present-bar round-${round.round}`;
        bar.dataset.count = n;
        const fill = document.createElement('i');
        fill.style.width = `${round.voters ? (100 * n) / round.voters : 0}%`;
        const label = document.createElement('span');
        label.textContent = t('present.bar', { round: round.round, n: fmt(n) });
        bar.append(fill, label);
        bars.append(bar);
      }
      li.append(bars);
    }
    list.append(li);
  });
}

// ---------------------------------------------------------------- the chapters and the stream

async function loadChapters() {
  try {
    chapters = (await request('GET', '/scenarios')).scenarios || [];
    // Only the admin token opens questions; without it the picker stays empty.
    deck = admin ? (await request('GET', '/admin/class/deck')).questions || [] : [];
  } catch {
    setTimeout(loadChapters, 3000); // the fleet is restarting: ask again
    return;
  }
  const select = $('#chapter');
  const before = select.value;
  select.replaceChildren(...deck.map((q) => new Option('', String(q.number))));
  select.value = view?.number ? String(view.number) : before || String(deck[0]?.number ?? '');
  draw();
}
$('#chapter').addEventListener('change', draw);

function connect() {
  const source = new EventSource(withRoom('/poll/events'));
  source.addEventListener('poll', (ev) => {
    const next = JSON.parse(ev.data);
    if (!fresh(next)) return;
    view = next;
    if (next.number && document.activeElement !== $('#chapter')) $('#chapter').value = String(next.number);
    draw();
  });
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 5000);
  });
}

$('#lang-toggle').addEventListener('click', () => {
  setLanguage(language() === 'zh' ? 'en' : 'zh');
  token.translate();
  say('');
  draw();
  notes.translate();
});

apply();
token.start();
loadChapters();
connect();
draw();
window.oversell = { get view() { return view; } };
