// The first violation of a run the fleet kept, drawn by the history checker
// (`GET /admin/runs/{id}/violation.svg`): fetched with this tab's token and shown as an image,
// so nothing in the picture runs (an <img> runs no script, and the route sends none).
import { currentToken, withRoom } from './room.js';

/** An <img> of run `runId`'s first violation in `lang` (en, zh), or null when the fleet keeps
 * no such run (a room keeps its last few) or does not answer. */
export async function violationImage(runId, lang, alt) {
  const headers = {};
  const token = currentToken();
  if (token) headers.authorization = `Bearer ${token}`;
  const path = withRoom(`/admin/runs/${encodeURIComponent(runId)}/violation.svg?lang=${lang === 'zh' ? 'zh' : 'en'}`);
  let resp;
  try {
    resp = await fetch(path, { headers });
  } catch {
    return null;
  }
  if (!resp.ok) return null;
  const img = document.createElement('img');
  img.className = 'violation';
  img.alt = alt;
  // A data: URL, as the reveal's picture: the pages' policy allows images from here and
  // data: only.
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(await resp.text())}`;
  return img;
}

/** Opens run `runId`'s viewer (`GET /admin/runs/{id}/view`, every operation of the run to step
 * through) in a new tab; the run is `room`'s (this page's room unless named: the projector's
 * reveal names the room the chapter ran in). The route wants this tab's token, which a plain link cannot send, so
 * the tab is opened first (inside the click, where a browser allows it), the page fetched with
 * the token and written into it: the new tab is this origin's and keeps the pages' policy, so
 * the viewer's own /viewer.js runs and nothing inline does. False when no tab or no page. */
export async function openViewer(runId, lang, room) {
  const tab = window.open('', '_blank');
  if (!tab) return false;
  const headers = {};
  const token = currentToken();
  if (token) headers.authorization = `Bearer ${token}`;
  const view = `/admin/runs/${encodeURIComponent(runId)}/view?lang=${lang === 'zh' ? 'zh' : 'en'}`;
  const path = room ? `${view}&room=${encodeURIComponent(room)}` : withRoom(view);
  try {
    const resp = await fetch(path, { headers });
    if (!resp.ok) throw new Error(String(resp.status));
    const page = await resp.text();
    tab.document.open();
    tab.document.write(page);
    tab.document.close();
    return true;
  } catch {
    tab.close();
    return false;
  }
}
