// The presenter's own notes (present.html), behind a toggle so the projector shows them only
// when the instructor opens them: each round's split per option with how many said "sure" (while
// a round is open, behind a second button: a split on the projector leads the vote, Crouch &
// Mazur's first round and Smith et al.'s second alike; once the round closes the instructor
// reads it to decide, and it stays hidden again when the next round opens), the
// rule of thumb peer instruction decides by (Crouch & Mazur: below ~30 % right, explain; 30–70 %,
// discuss and vote again; above 70 %, reveal), and a sample of reasons per option. Which option
// is right is known only after the run: before it the split and the rule; after it the share
// right and what the rule says. The admin view (`GET /admin/class/poll`) brings the counts and
// reasons; a reason is a student's text, drawn with `textContent` only.
//
// Once a round is closed, a button per option calls a room that voted it, drawn at random by
// the server (`POST /admin/class/poll/call`), to explain its reasoning: a random group rather
// than a volunteer, so every group comes ready to explain. The room's name shows large, to read
// out. Not while a round is open: a room may still change its vote.

import { t, fmt } from './i18n.js';
import { request } from './room.js';
import { letter } from './vote.js';

const $ = (sel) => document.querySelector(sel);
const percent = (share) => (share == null ? '–' : `${Math.round(share * 100)} %`);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** What the rule of thumb says of a share right. */
const advice = (share) => (share < 0.3 ? 'present.advice.explain' : share <= 0.7 ? 'present.advice.discuss' : 'present.advice.reveal');

export function notesPanel() {
  let open = false;
  let admin = false;
  let reasonsHidden = false;
  let splitShown = null; // the round whose split the instructor showed while it was open
  let view = null; // the public view drawn
  let counts = null; // the last admin view
  let asking = null; // the admin view's version asked for
  let called = null; // the room called to explain: {room, round, option}, or {option, none}

  const toggle = $('#notes-toggle');
  const box = $('#notes');
  toggle.addEventListener('click', () => {
    open = !open;
    draw();
    refresh();
  });
  $('#reasons-toggle').addEventListener('click', () => {
    reasonsHidden = !reasonsHidden;
    draw();
  });

  /** The admin view at the public view's version (one call at a time, none while closed). */
  async function refresh() {
    if (!open || !admin || !view || view.state === 'idle') return;
    if (asking === view.version || (counts && (counts.version ?? 0) >= (view.version ?? 0))) return;
    asking = view.version;
    try {
      const next = await request('GET', '/admin/class/poll');
      if (!counts || (next.version ?? 0) >= (counts.version ?? 0)) counts = next;
    } catch {
      // The next view asks again.
    } finally {
      asking = null;
    }
    draw();
  }

  function drawSplit(host, v, a) {
    host.replaceChildren();
    const rounds = a?.rounds || [];
    const held = v?.state === 'open' && rounds.length > 0 && splitShown !== v.round;
    if (held) {
      const show = el('button', 'present-split-show', t('present.split.show', { round: v.round }));
      show.type = 'button';
      show.id = 'split-show';
      show.addEventListener('click', () => {
        splitShown = v.round;
        draw();
      });
      host.append(show);
    }
    for (const round of held ? [] : rounds) {
      const block = el('div', 'present-split');
      block.dataset.round = round.round;
      block.append(el('p', 'present-split-head', t('present.split', { round: round.round, voters: fmt(round.voters) })));
      const list = el('ul');
      round.counts.forEach((n, i) => {
        const li = el('li', '', t('present.split.option', {
          letter: letter(i), n: fmt(n), share: percent(round.voters ? n / round.voters : null), sure: fmt(round.sure?.[i] ?? 0),
        }));
        li.dataset.option = i;
        li.dataset.count = n;
        list.append(li);
      });
      block.append(list);
      host.append(block);
    }
    const thumb = $('#notes-thumb');
    const revealed = v?.state === 'revealed' && v.reveal;
    const first = revealed ? v.reveal.rounds?.[0] : null;
    if (first && first.share_right != null) {
      thumb.textContent = `${t('present.right', { round: 1, share: percent(first.share_right) })} ${t(advice(first.share_right))}`;
      thumb.dataset.share = first.share_right;
    } else {
      thumb.textContent = t('present.thumb');
      delete thumb.dataset.share;
    }
  }

  /** The call buttons, once no round is open, and the room called. */
  function drawCall(host, v, a) {
    host.replaceChildren();
    const round = a?.rounds?.[a.rounds.length - 1];
    host.hidden = !round || !v || v.state === 'open' || v.state === 'idle';
    if (host.hidden) {
      called = null;
      return;
    }
    host.append(el('p', 'present-call-title', t('present.call.title')));
    const buttons = el('div', 'present-call-buttons');
    round.counts.forEach((n, i) => {
      const button = el('button', 'present-call-button', t('present.call', { letter: letter(i) }));
      button.type = 'button';
      button.dataset.option = i;
      // Nobody to call: said on the button rather than asked of the server.
      button.disabled = n === 0;
      if (n === 0) button.title = t('present.call.none', { letter: letter(i) });
      button.addEventListener('click', () => callRoom(i));
      buttons.append(button);
    });
    host.append(buttons);
    if (called?.round !== round.round) return;
    const said = el('div', 'present-called-box');
    said.dataset.option = called.option;
    if (called.room) {
      const name = el('p', 'present-called-room', called.room);
      name.id = 'called-room';
      said.append(name, el('p', 'present-called', t('present.called', {
        room: called.room, letter: letter(called.option), round: called.round,
      })));
    } else {
      said.append(el('p', 'present-called', called.message));
    }
    host.append(said);
  }

  async function callRoom(option) {
    const round = counts?.rounds?.[counts.rounds.length - 1]?.round;
    try {
      const answer = await request('POST', '/admin/class/poll/call', { option });
      called = { room: answer.room, round: answer.round, option };
    } catch (err) {
      // Said where the name would be (a round reopened meanwhile, nobody voted it after all).
      called = { round, option, message: err.message };
    }
    draw();
  }

  function drawReasons(a) {
    const host = $('#reasons');
    host.replaceChildren();
    const round = a?.rounds?.[a.rounds.length - 1];
    $('#reasons-title').textContent = t('present.reasons', { round: round?.round ?? 1 });
    $('#reasons-toggle').textContent = t(reasonsHidden ? 'present.reasons.show' : 'present.reasons.hide');
    $('#reasons-toggle').setAttribute('aria-expanded', String(!reasonsHidden));
    host.hidden = reasonsHidden;
    const given = (round?.reasons || []).some((r) => r.length);
    if (!given) {
      host.append(el('p', 'muted', t('present.reasons.none')));
      return;
    }
    round.reasons.forEach((reasons, i) => {
      if (!reasons.length) return;
      const block = el('div', 'present-reason-option');
      block.dataset.option = i;
      block.append(el('b', 'vote-letter', letter(i)));
      const list = el('ul');
      for (const r of reasons) {
        const li = el('li', 'present-reason');
        // The student's words, as typed: text, never markup.
        li.append(el('span', 'present-reason-why', r.why));
        if (r.sure != null) li.append(el('span', 'muted', ` · ${t(r.sure ? 'present.reason.sure' : 'present.reason.unsure')}`));
        list.append(li);
      }
      block.append(list);
      host.append(block);
    });
  }

  function draw() {
    toggle.hidden = !admin;
    toggle.textContent = t(open ? 'present.notes.hide' : 'present.notes.show');
    toggle.setAttribute('aria-expanded', String(open && admin));
    box.hidden = !(open && admin);
    if (box.hidden) return;
    const a = counts && view && view.state !== 'idle' ? counts : null;
    drawSplit($('#notes-split'), view, a);
    drawCall($('#notes-call'), view, a);
    drawReasons(a);
  }

  return {
    /** The public view drawn and whether this tab holds the admin token. */
    update(nextView, isAdmin) {
      view = nextView;
      if (admin && !isAdmin) counts = null;
      admin = isAdmin;
      draw();
      refresh();
    },
    /** An admin view an action answered with. */
    counted(next) {
      if (next?.rounds && (!counts || (next.version ?? 0) >= (counts.version ?? 0))) counts = next;
    },
    translate: draw,
  };
}
