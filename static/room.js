// The room a page shows (`?room=`) and the token this tab holds, for the dashboard and the lab
// page alike: API calls in the room with it, who it is, a page's runner of actions and its
// token form.

import { t } from './i18n.js';

export const ROOM = (() => {
  const asked = new URLSearchParams(location.search).get('room') || '';
  return /^[A-Za-z0-9_-]{1,32}$/.test(asked) ? asked : 'default';
})();

const TOKEN_KEY = 'oversell.admin-token';

// A join link (`/?room=student-07#token=…`, from the class page) brings a room token in the
// fragment, which browsers never send. It moves to this tab's storage and out of the address
// bar, so it is not left in history, bookmarks or a shared screenshot; `?room=` stays.
export const joinToken = (() => {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromLink = fragment.get('token');
  if (!fromLink) return '';
  sessionStorage.setItem(TOKEN_KEY, fromLink);
  fragment.delete('token');
  const rest = fragment.toString();
  history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  return fromLink;
})();

// In this tab's storage, so the room's other page (dashboard ↔ lab) has it too.
let token = sessionStorage.getItem(TOKEN_KEY) || '';
export const currentToken = () => token;

export function forgetToken() {
  token = '';
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Calls with `candidate` from now on (the class page's typed token, before it is checked). */
export function useToken(candidate) {
  token = candidate;
}

/** Keeps the token in use for this tab's other pages, once it proved good. */
export function keepToken() {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export const withRoom = (path) => `${path}${path.includes('?') ? '&' : '?'}room=${encodeURIComponent(ROOM)}`;

/** An API call in this room with this tab's token; an error status throws the API's message. */
export const call = (method, path, body) => request(method, withRoom(path), body);

/** An API call with this tab's token, to a route of no room (the class's, with the admin's). */
export async function request(method, path, body) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await resp.json(); } catch { /* empty body */ }
  if (!resp.ok) {
    const err = new Error((data && (data.message || data.error)) || `HTTP ${resp.status}`);
    err.status = resp.status;
    throw err;
  }
  return data;
}

/**
 * Who `candidate` is (`GET /admin/whoami`): `{status, caller}`, status a key of STATUS. A
 * refused join link's token was revoked or replaced (`refused`, not "wrong"). A fleet that
 * did not answer throws, and the token is kept to ask again.
 */
export async function whoIs(candidate) {
  token = candidate;
  let caller;
  try {
    caller = await call('GET', '/admin/whoami');
  } catch (err) {
    if (err.status !== 401) throw err;
    forgetToken();
    return { status: candidate === joinToken ? 'refused' : 'bad', caller: null };
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  if (caller.scope === 'room' && caller.room !== ROOM) return { status: 'otherroom', caller };
  return { status: caller.scope === 'room' ? 'room' : 'unlocked', caller };
}

/** The status line under a page's token field: its text key and CSS class (the tests wait
 * on `.unlocked` / `.bad`). */
export const STATUS = {
  readonly: ['admin.readonly', 'readonly'],
  unlocked: ['admin.unlocked', 'unlocked'],
  room: ['admin.room', 'unlocked room'],
  bad: ['admin.badtoken', 'bad'],
  refused: ['admin.refused', 'bad'],
  otherroom: ['admin.otherroom', 'bad'],
};

/** Shows `text` in the page's message line (`#message`), as an error or not. */
export function say(text, error = false) {
  const m = document.getElementById('message');
  m.textContent = text;
  m.classList.toggle('error', error);
}

/** `act(button, fn)`: runs `fn` with its button disabled and says what it returned or the
 * error; a 401 calls `refused()` first (the token went stale while the page was open). */
export const actor = ({ say, errorWord, refused }) => async (button, fn) => {
  if (button) button.disabled = true;
  try {
    const text = await fn();
    if (text) say(text);
  } catch (err) {
    if (err.status === 401) refused();
    say(`${errorWord()}: ${err.message}`, true);
  } finally {
    if (button) button.disabled = false;
  }
};

/**
 * A page's token form, the same on the dashboard, the lab page and the presenter's view:
 * `#token-form` (`#token`, `#unlock`, `#forget`), the status line `#admin-status` and the
 * header's `#your-room` badge. It unlocks with a typed token or the one this tab holds, says
 * whose it is, and forgets it; `enable(on, caller, status)` is the page's part (which controls
 * a token of that scope may use). `act` runs an action as `actor` does, a 401 locking the page.
 */
export function tokenPanel({ enable }) {
  const $ = (sel) => document.querySelector(sel);
  const panel = {
    caller: null, // whose token this tab holds (`GET /admin/whoami`), `null` when read-only

    show(on, status, vars = {}) {
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
      const yours = $('#your-room');
      if (yours) {
        yours.hidden = panel.caller?.scope !== 'room';
        $('#your-room-name').textContent = panel.caller?.room || '';
      }
      enable(on, panel.caller, status);
    },

    lock(status = 'readonly') {
      forgetToken();
      panel.caller = null;
      panel.show(false, status);
    },

    async unlock(candidate) {
      let who;
      try {
        who = await whoIs(candidate);
      } catch (err) {
        // The fleet did not answer (restarting?): the token is kept and asked about again.
        panel.caller = null;
        panel.show(false, 'readonly');
        say(`${t('error')}: ${err.message}`, true);
        setTimeout(() => panel.unlock(candidate), 3000);
        return;
      }
      panel.caller = who.caller;
      // A join link's token refused is a revoked or replaced one: `refused`, not "wrong".
      if (!panel.caller) panel.lock(who.status);
      // Good in its own room only: this one stays read-only.
      else panel.show(who.status !== 'otherroom', who.status, { room: panel.caller.room });
    },

    /** The status line again, in the page's new language. */
    translate() {
      const s = $('#admin-status');
      if (s.dataset.i18n) s.textContent = t(s.dataset.i18n, JSON.parse(s.dataset.vars || '{}'));
    },

    act: actor({
      say,
      errorWord: () => t('error'),
      refused: () => panel.lock(panel.caller?.scope === 'room' ? 'refused' : 'bad'),
    }),

    /** Shows the page read-only, then unlocks with the tab's token if it holds one. */
    start() {
      panel.show(false, 'readonly');
      if (currentToken()) panel.unlock(currentToken());
    },
  };
  $('#token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const value = $('#token').value.trim();
    if (value) panel.unlock(value);
  });
  $('#forget').addEventListener('click', () => panel.lock());
  return panel;
}

/** A burst's outcome (`POST /admin/burst`) in the page's language, in `#burst-result`. */
export function showBurst(r) {
  if (!r) return;
  document.getElementById('burst-result').textContent = t('burst.result', {
    ok: r.ok, sold_out: r.sold_out, unavailable: r.unavailable, errors: r.errors,
    ms: Math.round(r.elapsed_ms), rps: Math.round(r.throughput_rps),
  });
}
