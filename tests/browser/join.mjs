// The phone pages at 390 × 844: a student who lost the tab types the slip's code on /join (the
// address the projector shows) and is back in the room's dashboard, which holds one stream
// (`/events?poll=1`) carrying the feed and the class vote; a wrong code is said so. The
// projected pages (the presenter's view, the class page) show no room token.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminCall, base, newPage, newPhone, noSideScroll, shot, token } from './harness.mjs';

/** Every EventSource a page makes is kept in `window.__streams` (an init script). */
const keepStreams = () => {
  const Native = window.EventSource;
  window.__streams = [];
  window.EventSource = class extends Native {
    constructor(url, options) {
      super(url, options);
      window.__streams.push(this);
    }
  };
};

/** The event streams the page holds open now, as paths. */
function openStreams(page) {
  return page.evaluate(() => window.__streams
    .filter((s) => s.readyState !== 2)
    .map((s) => { const u = new URL(s.url); return u.pathname + u.search; }));
}

test('a phone gets back in by its slip\'s code, on one stream', async (t) => {
  const made = await adminCall('POST', '/admin/class', { students: 3, prefix: 'phone', stock: 20 });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const [first, second] = made.body.rooms;
  assert.equal(made.body.join_page, `${base}/join`);
  const phone = await newPhone();
  await phone.addInitScript(keepStreams);

  await t.test('the projected pages show no room token', async () => {
    const presenter = await newPage('en-US');
    await presenter.goto(`${base}/present.html`);
    await presenter.fill('#token', token);
    await presenter.click('#unlock');
    await presenter.waitForSelector('#admin-status.unlocked');
    const shown = await presenter.evaluate(() => document.documentElement.outerHTML);
    for (const room of made.body.rooms) assert.ok(!shown.includes(room.token), 'a token on the presenter\'s view');
    await presenter.context().close();
  });

  await t.test('the join page at 390 × 844: a wrong code is refused in words', async () => {
    await phone.goto(`${base}/join`);
    await phone.waitForSelector('#code');
    await noSideScroll(phone);
    await phone.fill('#code', 'zzzz-zzzz');
    await phone.click('#join');
    await phone.waitForSelector('#join-message.error', { timeout: 10_000 });
    assert.match(await phone.textContent('#join-message'), /No room has this code/);
    await phone.fill('#code', 'short');
    await phone.click('#join');
    await phone.waitForFunction(() => /eight letters/.test(document.querySelector('#join-message').textContent));
    const [box] = await phone.$$eval('#join', (b) => b.map((e) => e.getBoundingClientRect().height));
    assert.ok(box >= 44, `the button is a thumb's size: ${box} px`);
    await shot(phone, '40-join-phone');
  });

  await t.test('the right code, typed as a phone types it, opens the room\'s dashboard', async () => {
    await phone.fill('#code', second.code.toLowerCase().replace('-', ' '));
    await phone.click('#join');
    await phone.waitForURL((url) => url.pathname === '/' && url.search === `?room=${second.room}` && !url.hash, { timeout: 15_000 });
    await phone.waitForSelector('#admin-status.unlocked', { timeout: 15_000 });
    assert.equal(await phone.textContent('#your-room-name'), second.room);
    assert.ok(!(await phone.evaluate(() => location.href)).includes('token'), 'the session left the address bar');
    await phone.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
    await noSideScroll(phone);
  });

  await t.test('the dashboard holds one stream, and the vote comes on it', async () => {
    const opened = await adminCall('POST', '/admin/class/poll', { question: 'none-race' });
    assert.equal(opened.status, 200, JSON.stringify(opened.body));
    await phone.waitForSelector('#vote:not([hidden]) .vote-option', { timeout: 10_000 });
    // One stream open, the one that carries the vote; no `/poll/events` beside it.
    const held = await openStreams(phone);
    assert.equal(held.length, 1, `streams: ${held}`);
    assert.match(held[0], /^\/events\?.*poll=1/);
    await phone.click('.vote-option[data-option="1"]');
    await phone.waitForSelector('.vote-option[data-option="1"][aria-pressed="true"]', { timeout: 10_000 });
    await noSideScroll(phone);
    await shot(phone, '41-joined-phone-vote');
    assert.equal((await adminCall('POST', '/admin/class/poll/close')).status, 200);
  });

  await t.test('a new token for the room ends the code and the session it gave', async () => {
    const rotated = await adminCall('POST', `/admin/rooms/${first.room}/token`);
    assert.equal(rotated.status, 200);
    const again = await fetch(`${base}/join/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: first.code }),
    });
    assert.equal(again.status, 404);
    assert.equal((await again.json()).error, 'unknown_code');
  });
  await phone.context().close();
});
