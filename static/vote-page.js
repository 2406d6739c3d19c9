// The vote page (vote.html?room=…): the class vote on a student's phone, nothing else. The
// room's token comes as on the dashboard (room.js: a join link's fragment, or this tab's);
// the page says when it has none, or one that is refused.

import { t, apply, setLanguage, language } from './i18n.js';
import { ROOM, STATUS, currentToken, whoIs } from './room.js';
import { Vote } from './vote.js';

const $ = (sel) => document.querySelector(sel);
const room = encodeURIComponent(ROOM);
$('#room-name').textContent = ROOM;
$('#to-dashboard').href = `./?room=${room}`;
$('#to-lab').href = `lab.html?room=${room}`;

const vote = new Vote($('#vote'));

/** Whose token this tab holds, said only when it cannot vote here. */
async function checkToken() {
  const line = $('#admin-status');
  if (!currentToken()) return;
  let who;
  try {
    who = await whoIs(currentToken());
  } catch {
    setTimeout(checkToken, 3000); // the fleet did not answer: ask again
    return;
  }
  line.hidden = who.status === 'room';
  const [key, cls] = STATUS[who.status];
  line.className = `status ${cls}`;
  line.dataset.i18n = key;
  line.dataset.vars = JSON.stringify({ room: who.caller?.room || '' });
  line.textContent = t(key, JSON.parse(line.dataset.vars));
  vote.render();
}

$('#lang-toggle').addEventListener('click', () => {
  setLanguage(language() === 'zh' ? 'en' : 'zh');
  const line = $('#admin-status');
  if (line.dataset.i18n) line.textContent = t(line.dataset.i18n, JSON.parse(line.dataset.vars || '{}'));
  vote.render();
});

apply();
vote.render();
vote.connect();
checkToken();
