// The join page (/join, the address the projector shows): a student who lost the tab types
// the short code on their room's slip; `POST /join/session` exchanges it for a session of the
// room (a token of its own), and the page goes on to the room's dashboard with it in the
// fragment, which room.js moves into the tab's storage. A wrong code is said so; past the
// limit on attempts (per address and for the whole fleet), how long to wait.

import { t, apply, language, setLanguage, addStrings } from './i18n.js';

addStrings({
  en: {
    'join.title': 'oversell · join your room',
    'join.ask': 'The code on your slip',
    'join.go': 'Join',
    'join.hint': 'Eight letters and digits, as printed (the dash is optional). Your slip\'s QR code opens your room too.',
    'join.bad': 'A code is eight letters and digits, like 7KQ2-M9XD.',
    'join.unknown': 'No room has this code: check it against your slip, or ask for a new one.',
    'join.limited': 'Too many codes tried: wait {s} s and try again.',
    'join.joining': 'Joining…',
    'join.failed': 'The fleet did not answer: try again in a moment.',
  },
  zh: {
    'join.title': 'oversell · 加入你的房间',
    'join.ask': '纸条上的代码',
    'join.go': '加入',
    'join.hint': '八个字母和数字，照纸条上的输入（横线可省）。扫纸条上的二维码也能进入你的房间。',
    'join.bad': '代码是八个字母和数字，例如 7KQ2-M9XD。',
    'join.unknown': '没有房间用这个代码：对照纸条检查一下，或者要一张新纸条。',
    'join.limited': '尝试次数太多：请等 {s} 秒再试。',
    'join.joining': '正在加入…',
    'join.failed': '服务器没有应答：稍后再试。',
  },
});

const $ = (sel) => document.querySelector(sel);
let said = null; // [key, vars, error]: redrawn on a language switch

function say(key, vars = {}, error = false) {
  said = [key, vars, error];
  const m = $('#join-message');
  m.textContent = t(key, vars);
  m.classList.toggle('error', error);
}

// Crockford's base32 as the server reads it: case, dashes and spaces do not matter.
const looksLikeCode = (text) => /^[0-9A-HJKMNP-TV-Z]{8}$/.test(text.toUpperCase().replace(/[\s-]/g, '')
  .replace(/O/g, '0').replace(/[IL]/g, '1'));

$('#join-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const code = $('#code').value.trim();
  if (!looksLikeCode(code)) {
    say('join.bad', {}, true);
    return;
  }
  const button = $('#join');
  button.disabled = true;
  say('join.joining');
  try {
    const resp = await fetch('/join/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    const data = await resp.json().catch(() => null);
    if (resp.ok && data && /^\/\?room=[A-Za-z0-9_-]{1,32}#token=[\w-]+$/.test(data.dashboard)) {
      location.assign(data.dashboard);
      return;
    }
    if (resp.status === 404) say('join.unknown', {}, true);
    else if (resp.status === 429) say('join.limited', { s: resp.headers.get('retry-after') || '60' }, true);
    else if (resp.status === 400) say('join.bad', {}, true);
    else say('join.failed', {}, true);
  } catch {
    say('join.failed', {}, true);
  } finally {
    button.disabled = false;
  }
});

$('#lang-toggle').addEventListener('click', () => {
  setLanguage(language() === 'zh' ? 'en' : 'zh');
  apply();
  if (said) say(...said);
});

apply();
// A code in the fragment (`/join#code=…`, a link someone sent) is filled in, not sent.
const fromLink = new URLSearchParams(location.hash.slice(1)).get('code');
if (fromLink) $('#code').value = fromLink;
$('#code').focus();
