// The room a page shows and the token this tab holds, shared by the dashboard (app.js) and the
// lab page (lab-page.js): `?room=` in the address, the token in this tab's storage (a join
// link's `#token=` moved there first), and API calls in the room with it.

export const ROOM = (() => {
  const asked = new URLSearchParams(location.search).get('room') || '';
  return /^[A-Za-z0-9_-]{1,32}$/.test(asked) ? asked : 'default';
})();

const TOKEN_KEY = 'oversell.admin-token';

/**
 * A join link (`/?room=student-07#token=…`, from the class page) brings a room token in the
 * fragment, which browsers never send. It moves to this tab's storage and out of the address
 * bar, so it is not left in history, bookmarks or a shared screenshot; `?room=` stays.
 * Returns the link's token, or '' when the page was not opened by one.
 */
function takeJoinToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromLink = fragment.get('token');
  if (!fromLink) return '';
  sessionStorage.setItem(TOKEN_KEY, fromLink);
  fragment.delete('token');
  const rest = fragment.toString();
  // `window.`: the dashboard names its chart data `history`.
  window.history.replaceState(window.history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  return fromLink;
}

export const joinToken = takeJoinToken();
let token = sessionStorage.getItem(TOKEN_KEY) || '';

export const currentToken = () => token;

/** Uses `candidate` for the calls that follow (not yet kept: see `keepToken`). */
export function useToken(candidate) {
  token = candidate;
}

/** Keeps the token in this tab, for the next page of the room (dashboard ↔ lab). */
export function keepToken() {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken() {
  token = '';
  sessionStorage.removeItem(TOKEN_KEY);
}

export function withRoom(path) {
  return `${path}${path.includes('?') ? '&' : '?'}room=${encodeURIComponent(ROOM)}`;
}

/** An API call in this room, with this tab's token; a 4xx/5xx throws with the API's message
 * and `status`. */
export async function call(method, path, body) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const resp = await fetch(withRoom(path), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
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
 * Who the token is (`GET /admin/whoami`), as a page's status line names it: `{status, caller}`
 * with status `unlocked` (the admin token), `room` (this room's token), `otherroom` (another
 * room's: read-only here), `bad`/`refused` (401: a typed token is wrong, a join link's was
 * revoked or replaced). A fleet that did not answer throws, and the token is kept to ask again.
 */
export async function whoIs(candidate) {
  useToken(candidate);
  let caller;
  try {
    caller = await call('GET', '/admin/whoami');
  } catch (err) {
    if (err.status !== 401) throw err;
    forgetToken();
    return { status: candidate === joinToken ? 'refused' : 'bad', caller: null };
  }
  keepToken();
  if (caller.scope === 'room' && caller.room !== ROOM) return { status: 'otherroom', caller };
  return { status: caller.scope === 'room' ? 'room' : 'unlocked', caller };
}

/** A page's status line under its token field: its text key, and its CSS class (the tests
 * wait on `.unlocked` / `.bad`). */
export const STATUS = {
  readonly: ['admin.readonly', 'readonly'],
  unlocked: ['admin.unlocked', 'unlocked'],
  room: ['admin.room', 'unlocked room'],
  bad: ['admin.badtoken', 'bad'],
  refused: ['admin.refused', 'bad'],
  otherroom: ['admin.otherroom', 'bad'],
};

/**
 * A page's runner of actions: `act(button, fn)` runs `fn` with its button disabled and says
 * what it returned, or the error (`errorWord: message`); a 401 calls `refused()` first (the
 * token went stale while the page was open).
 */
export function actor({ say, errorWord, refused }) {
  return async function act(button, fn) {
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
}
