// The room a page shows (`?room=`) and the token this tab holds, for the dashboard and the lab
// page alike: API calls in the room with it, who it is, and a page's runner of actions.

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

export const withRoom = (path) => `${path}${path.includes('?') ? '&' : '?'}room=${encodeURIComponent(ROOM)}`;

/** An API call in this room with this tab's token; an error status throws the API's message. */
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
