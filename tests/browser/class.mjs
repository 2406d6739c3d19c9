// A class: the instructor makes one on /class and prints its slips (never on screen: the
// projected page shows the join address and no token); a student's join link drives its own
// room and no other; a new token refuses the old link; a tier and a scenario in every room;
// the page in Chinese; new tokens for a tab that has none; closing the class.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base, browser, chooseTier, fire, newPage, shot, token, waitFigure } from './harness.mjs';

/** PUT /admin/tier in `room` with `bearer`, as a script would: the API's own answer. */
async function putTier(room, bearer, tier) {
  const resp = await fetch(`${base}/admin/tier?room=${room}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier }),
  });
  return { status: resp.status, body: await resp.json().catch(() => null) };
}

/** The slips the class page made for printing: room, link and its token, code. */
function slipsOf(page) {
  return page.$$eval('#slips .slip', (slips) => slips.map((s) => ({
    room: s.dataset.room,
    url: s.querySelector('a').href,
    token: s.querySelector('a').href.split('#token=')[1],
    code: s.querySelector('.code').textContent,
  })));
}

/** What the page shows on screen (the projector's view): no slip, so no token. */
async function assertNoTokenOnScreen(page, tickets) {
  const shown = await page.evaluate(() => document.body.innerText);
  for (const { token: secret } of tickets) assert.ok(!shown.includes(secret), 'a room token is on screen');
}

/** The text of a cell of room `room`'s row on the class page (0: the room's name). */
function classCell(page, room, column) {
  return page.$eval(`#rooms tbody tr[data-room="${room}"]`, (tr, i) => tr.children[i].textContent, column);
}

test('a class: made on /class, each join link drives its own room and no other', async (t) => {
  const page = await newPage('en-US');
  page.on('dialog', (dialog) => dialog.accept()); // "close the class?" and the like
  // The print dialog, counted instead of opened.
  await page.addInitScript(() => { window.printed = 0; window.print = () => { window.printed += 1; }; });
  let tickets = []; // [{room, token, url, code}] as the class page's slips carry them

  await t.test('the class page asks for the admin token, then makes a class of 2 and prints their slips', async () => {
    await page.goto(`${base}/class`);
    assert.equal(await page.$eval('#admin', (f) => f.disabled), true, 'locked without the token');
    await page.fill('#token', 'not-the-token');
    await page.click('#unlock');
    await page.waitForSelector('#admin-status.bad');
    await page.fill('#token', token);
    await page.click('#unlock');
    await page.waitForSelector('#admin-status.unlocked');
    await page.fill('#students', '2');
    await page.fill('#stock', '50');
    await page.click('#create');
    await page.waitForFunction(() => document.querySelectorAll('#rooms tbody tr').length === 2
      && document.querySelectorAll('#slips .slip img').length === 2, null, { timeout: 15_000 });
    // The QR codes are real images: the server's SVG decoded by the browser.
    await page.waitForFunction(() => [...document.querySelectorAll('#slips img, #join-qr')]
      .every((img) => img.complete && img.naturalWidth > 0), null, { timeout: 10_000 });
    assert.equal(await page.evaluate(() => window.printed), 1, 'the print dialog opened on the slips');
    const rooms = await page.$$eval('#rooms tbody tr', (trs) => trs.map((tr) => tr.dataset.room));
    assert.deepEqual(rooms, ['student-01', 'student-02']);
    assert.equal(await classCell(page, 'student-01', 2), '50 / 50');
    assert.equal(await classCell(page, 'student-01', 9), '✓', 'the room has a token');
    tickets = await slipsOf(page);
    assert.equal(tickets.length, 2);
    assert.match(tickets[0].url, /\/\?room=student-01#token=/);
    assert.match(tickets[0].code, /^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    // On screen (the projector): the join address and its QR code, no slip, no token.
    assert.equal(await page.textContent('#join-address'), `${base}/join`);
    assert.equal(await page.isVisible('#join-qr'), true);
    assert.equal(await page.isVisible('#slips'), false);
    await assertNoTokenOnScreen(page, tickets);
    await shot(page, '09-class');
    // On paper: the slips alone, the rest of the page left out.
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.isVisible('#slips .slip[data-room="student-02"] .code'), true);
    assert.equal(await page.isVisible('#rooms'), false);
    await shot(page, '09-class-slips-print');
    await page.emulateMedia({ media: 'screen' });
  });

  await t.test('a join link: the token leaves the address bar, the room is the student\'s to drive', async () => {
    const student = await newPage('en-US');
    await student.goto(tickets[0].url);
    await student.waitForSelector('#admin-status.unlocked', { timeout: 15_000 });
    assert.equal(await student.isVisible('#your-room'), true);
    assert.equal(await student.textContent('#your-room-name'), 'student-01');
    const href = await student.evaluate(() => location.href);
    assert.ok(!href.includes('token'), `the token left the address bar: ${href}`);
    assert.match(href, /\?room=student-01$/);
    // What reaches beyond the room is the instructor's: not offered.
    assert.equal(await student.isVisible('button.fault[data-kind="freeze"]'), false);
    assert.equal(await student.isVisible('button.fault[data-kind="release-gap"]'), true);
    await student.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
    await chooseTier(student, 'none');
    await fire(student, 30);
    await waitFigure(student, 'orders', 'v > 0', '> 0 after the burst');
    // The instructor's table follows: student-01 sold under `none`, student-02 nothing.
    await page.waitForFunction(() => {
      const cells = document.querySelector('#rooms tbody tr[data-room="student-01"]').children;
      return cells[1].textContent === 'none' && Number(cells[3].textContent.replace(/\D/g, '')) > 0;
    }, null, { timeout: 10_000 });
    assert.equal(await classCell(page, 'student-02', 3), '0');
    // A scenario whose fault crashes an instance is the instructor's: greyed out, not a 403.
    assert.equal(await student.$eval('#scenario-select option[value="setnx-crash"]', (o) => o.disabled), true);
    assert.equal(await student.$eval('#scenario-select option[value="none-race"]', (o) => o.disabled), false);
    await shot(student, '10-student-room');
    await student.context().close();
  });

  await t.test('student-01\'s token is refused in student-02\'s room and on the whole fleet', async () => {
    const other = await putTier('student-02', tickets[0].token, 'none');
    assert.equal(other.status, 403, JSON.stringify(other.body));
    assert.match(other.body.message, /student-01/);
    const whole = await fetch(`${base}/admin/class`, { headers: { authorization: `Bearer ${tickets[0].token}` } });
    assert.equal(whole.status, 403);
    const page2 = await newPage('en-US');
    await page2.goto(`${base}/?room=student-02#token=${tickets[0].token}`);
    await page2.waitForSelector('#admin-status.bad', { timeout: 15_000 });
    assert.match(await page2.textContent('#admin-status'), /student-01/);
    assert.equal(await page2.$eval('#admin', (f) => f.disabled), true, 'controls stay disabled');
    assert.ok(!(await page2.evaluate(() => location.href)).includes('token'));
    await page2.context().close();
  });

  await t.test('a new token for a room prints its new slip; the old join link is refused', async () => {
    await page.click('#rooms tbody tr[data-room="student-01"] button.rotate');
    await page.waitForFunction((old) => {
      const link = document.querySelector('#slips .slip[data-room="student-01"] a');
      return link && !link.href.endsWith(old);
    }, tickets[0].token, { timeout: 10_000 });
    assert.equal(await page.$eval('#slips', (s) => s.dataset.rooms), '1', 'only the room\'s new slip');
    assert.equal(await page.evaluate(() => window.printed), 2, 'printed at once');
    await assertNoTokenOnScreen(page, await slipsOf(page));
    assert.equal((await putTier('student-01', tickets[0].token, 'none')).status, 401);
    const stale = await newPage('en-US');
    await stale.goto(tickets[0].url);
    await stale.waitForSelector('#admin-status.bad', { timeout: 15_000 });
    assert.match(await stale.textContent('#admin-status'), /refused/);
    assert.equal(await stale.$eval('#admin', (f) => f.disabled), true);
    await stale.context().close();
  });

  await t.test('in every room: a tier for the whole class, with progress', async () => {
    await page.selectOption('#bulk-tier', 'lua-release');
    await page.click('#bulk-tier-go');
    await page.waitForFunction(() => /2 of 2 rooms done, 0 failed/.test(document.querySelector('#bulk-progress').textContent), null, { timeout: 15_000 });
    await page.waitForFunction(() => [...document.querySelectorAll('#rooms tbody tr')]
      .every((tr) => tr.children[1].textContent === 'lua-release'), null, { timeout: 10_000 });
  });

  await t.test('in every room: a scenario, each room\'s verdict on its row', async () => {
    await page.selectOption('#bulk-scenario', 'none-race');
    await page.click('#bulk-scenario-go');
    await page.waitForFunction(() => /scenario none-race: 2 of 2 rooms done, 0 failed/.test(document.querySelector('#bulk-progress').textContent), null, { timeout: 120_000 });
    for (const room of ['student-01', 'student-02']) {
      assert.match(await classCell(page, room, 10), /^(PASS|FAIL) · none-race$/);
    }
  });

  await t.test('the class page in Chinese', async () => {
    await page.click('#lang-toggle');
    await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
    assert.equal(await page.textContent('#create'), '创建课堂');
    assert.equal(await page.textContent('#rooms thead th:nth-child(4)'), '已售');
    assert.equal(await page.textContent('#bulk-tier-go'), '所有房间都切换');
    assert.match(await page.textContent('#bulk-progress'), /已完成 2 \/ 2 个房间/);
    assert.match(await classCell(page, 'student-01', 10), /^(通过|失败) · none-race$/);
    assert.match(await page.title(), /课堂/);
    await page.waitForFunction(() => document.querySelector('#rooms tbody tr button.rotate').textContent === '换令牌');
    await shot(page, '11-class-chinese');
    await page.click('#lang-toggle');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
  });

  await t.test('another tab (as after `oversell up --class`) has no slips: new tokens for every room', async () => {
    const other = await newPage('en-US');
    other.on('dialog', (dialog) => dialog.accept());
    await other.addInitScript(() => { window.print = () => {}; });
    await other.goto(`${base}/class`);
    await other.fill('#token', token);
    await other.click('#unlock');
    await other.waitForSelector('#tickets-missing', { state: 'visible', timeout: 10_000 });
    await other.click('#bulk-rotate-go');
    await other.waitForFunction(() => document.querySelectorAll('#slips .slip img').length === 2
      && /2 of 2 rooms done, 0 failed/.test(document.querySelector('#bulk-progress').textContent), null, { timeout: 15_000 });
    await other.waitForSelector('#tickets-missing', { state: 'hidden', timeout: 10_000 });
    const [old] = await slipsOf(page);
    assert.equal((await putTier('student-01', old.token, 'none')).status, 401, 'the first tab\'s token was replaced');
    tickets = await slipsOf(other);
    assert.equal((await putTier('student-01', tickets[0].token, 'lua-release')).status, 200);
    await other.context().close();
  });

  await t.test('closing the class takes every room token away', async () => {
    const fresh = tickets[0].token;
    await page.click('#close-class');
    await page.waitForFunction(() => [...document.querySelectorAll('#rooms tbody tr')]
      .every((tr) => tr.children[9].textContent === '–'), null, { timeout: 10_000 });
    assert.equal(await page.$$eval('#slips .slip', (slips) => slips.length), 0);
    assert.equal((await putTier('student-01', fresh, 'none')).status, 401);
  });
  await page.context().close();
});
