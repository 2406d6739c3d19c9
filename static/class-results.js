// The class vote's results on the class page: `GET /admin/class/results?format=csv|md|reasons`,
// fetched with the admin token and saved as a file (a plain link could not carry the token),
// and the students' reasons listed on the page. A reason is a student's free text on the page
// that holds the admin token: it is put in with `textContent`, never as markup.

import { t } from './i18n.js';
import { currentToken, request } from './room.js';

const $ = (sel) => document.querySelector(sel);
const LETTERS = 'ABCD';
const letter = (i) => LETTERS[i] ?? String(i + 1);

/** `act(button, fn)`: the page's runner of actions. */
export function resultsPanel({ act }) {
  let shown = null; // the last results listed

  async function download(format, button, file) {
    await act(button, async () => {
      const resp = await fetch(`/admin/class/results?format=${format}`, { headers: { authorization: `Bearer ${currentToken()}` } });
      if (!resp.ok) {
        let data = null;
        try { data = await resp.json(); } catch { /* no JSON body */ }
        const err = new Error((data && (data.message || data.error)) || `HTTP ${resp.status}`);
        err.status = resp.status;
        throw err;
      }
      const link = document.createElement('a');
      link.href = URL.createObjectURL(await resp.blob());
      link.download = file;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      return t('class.results.saved', { file });
    });
  }

  function draw() {
    const list = $('#reasons');
    list.replaceChildren();
    if (!shown) return;
    const rows = shown.chapters.flatMap((c) => c.reasons.map((r) => ({ ...r, chapter: c.chapter })));
    if (!rows.length) {
      const none = document.createElement('li');
      none.className = 'muted';
      none.textContent = t('class.reasons.none');
      list.append(none);
      return;
    }
    for (const r of rows) {
      const li = document.createElement('li');
      li.className = 'class-reason';
      if (r.right != null) li.dataset.right = String(r.right);
      const where = document.createElement('span');
      where.className = 'muted';
      const sure = r.sure == null ? '' : ` · ${t(r.sure ? 'class.reasons.sure' : 'class.reasons.unsure')}`;
      where.textContent = `${t('class.reasons.where', { chapter: r.chapter, round: r.round, room: r.room, letter: letter(r.option) })}${sure}: `;
      const why = document.createElement('span');
      why.className = 'class-reason-why';
      why.textContent = r.why; // as typed: text, never markup
      li.append(where, why);
      list.append(li);
    }
  }

  $('#results-csv').addEventListener('click', (ev) => download('csv', ev.target, 'class-results.csv'));
  $('#results-md').addEventListener('click', (ev) => download('md', ev.target, 'class-results.md'));
  $('#reasons-csv').addEventListener('click', (ev) => download('reasons', ev.target, 'class-reasons.csv'));
  $('#reasons-show').addEventListener('click', (ev) => act(ev.target, async () => {
    shown = await request('GET', '/admin/class/results');
    draw();
    return '';
  }));

  return { translate: draw };
}
