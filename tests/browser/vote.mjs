// The class vote: a phone's vote page from a join link, the presenter's view (1920 × 1080)
// opening it, a vote changed and counted, the dashboard's card, a second round, run & reveal
// on both screens (the projector's with a button to the run's viewer; a ladder rung's reveal
// with its shortest break, never before), the results downloaded from the class page. Until the reveal no screen
// names the chapter or explains it (its id may name the outcome); a vote says how sure and
// why, and a reason written as HTML shows as typed on the presenter's notes and the class page;
// once a round is closed, the notes call a room that voted a letter to explain.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, adminCall, apart, base, boxes, newPage, newPhone, noSideScroll, token } from './harness.mjs';

const CHAPTER = 'none-race';
// A question that puts an article's claim to the class, answered by a chapter's run.
const CLAIM = { id: 'claim-watchdog-gc-pause', cites: /article 002, line 644/ };
// A reason a student could type: it must show as these characters, never become an element.
const HOSTILE = '<img src=x onerror="window.pwned=1"> <b>bold</b>';

/** Whether `page` names the chapter anywhere in its markup, or shows its explanation. */
async function gives(page, explanation) {
  return page.evaluate(([id, text]) => ({
    id: document.documentElement.outerHTML.includes(id),
    explanation: document.documentElement.textContent.includes(text),
  }), [CHAPTER, explanation]);
}

test('the class vote: a phone votes with its join link, the presenter reveals', async (t) => {
  const probe = await adminCall('GET', '/admin/class/poll');
  if (probe.status === 404 && probe.body?.error === 'not_found') {
    t.skip('this server has no class vote yet');
    return;
  }
  const made = await adminCall('POST', '/admin/class', { students: 2, prefix: 'voter', stock: 20 });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const [mine, other] = made.body.rooms;
  const catalog = (await adminCall('GET', '/scenarios')).body.scenarios;
  const at = catalog.findIndex((c) => c.id === CHAPTER);
  const explanation = catalog[at]?.en;
  assert.ok(at >= 0 && explanation, 'the admin token lists the chapter and its explanation');
  // The number the class votes under: the question's place in the deck.
  const deck = (await adminCall('GET', '/admin/class/deck')).body.questions;
  const number = deck.find((q) => q.id === CHAPTER)?.number;
  assert.ok(number > 0, 'the deck has the chapter\'s own question');
  const phone = await newPhone();
  let dash; // the other room's dashboard, opened by its join link
  const presenter = await newPage('en-US');
  await presenter.setViewportSize({ width: 1920, height: 1080 });
  presenter.on('dialog', (dialog) => dialog.accept());

  await t.test('the vote page, opened by a join link, waits for a question', async () => {
    await phone.goto(`${base}/vote.html?room=${mine.room}#token=${mine.token}`);
    await phone.waitForSelector('#vote[data-state="idle"] .vote-waiting', { timeout: 15_000 });
    // Served with a policy that runs the page's own script files only.
    const served = await fetch(`${base}/vote.html`);
    assert.match(served.headers.get('content-security-policy') || '', /script-src 'self'/);
    assert.ok(!(await phone.evaluate(() => location.href)).includes('token'), 'the token left the address bar');
    assert.equal(await phone.textContent('#room-name'), mine.room);
    await noSideScroll(phone);
    await phone.screenshot({ path: join(SHOTS, '32-vote-phone-waiting.png') });
  });

  await t.test('the presenter opens the vote: the question is on the phone within seconds', async () => {
    await presenter.goto(`${base}/present.html`);
    await presenter.fill('#token', token);
    await presenter.click('#unlock');
    await presenter.waitForSelector('#admin-status.unlocked');
    await presenter.waitForFunction(() => document.querySelectorAll('#chapter option').length > 0);
    // The picker: the deck's order under neutral labels.
    assert.equal(await presenter.$eval(`#chapter option[value="${number}"]`, (o) => o.textContent), `Question ${number}`);
    await presenter.selectOption('#chapter', String(number));
    const opened = Date.now();
    await presenter.click('#open');
    await phone.waitForSelector('#vote[data-state="open"] .vote-option', { timeout: 5_000 });
    const took = Date.now() - opened;
    console.log(`the question reached the phone ${took} ms after the click`);
    assert.equal(await phone.$$eval('.vote-option', (b) => b.length), await presenter.$$eval('#options li', (li) => li.length));
    assert.match(await presenter.textContent('#poll-state'), /Round 1: voting/);
    await noSideScroll(phone);
  });

  await t.test('while the class votes, neither the projector nor the phone names the chapter', async () => {
    assert.equal(await presenter.textContent('#present-chapter'), `Question ${number}`);
    assert.match(await phone.textContent('.vote-status'), new RegExp(`^Question ${number} · `));
    for (const [name, page] of [['the presenter', presenter], ['the vote page', phone]]) {
      assert.deepEqual(await gives(page, explanation), { id: false, explanation: false }, name);
    }
    // Nor does the catalog, to anyone but the admin token: no list, so no place names it.
    const listed = await (await fetch(`${base}/scenarios`, { headers: { authorization: `Bearer ${mine.token}` } })).json();
    assert.deepEqual(listed, { scenarios: [], withheld: true });
  });

  await t.test('a tap votes, a second tap changes it, the admin view counts one vote', async () => {
    await phone.click('.vote-option[data-option="1"]');
    await phone.waitForSelector('.vote-option[data-option="1"][aria-pressed="true"]');
    await phone.click('.vote-option[data-option="0"]');
    await phone.waitForSelector('.vote-option[data-option="0"][aria-pressed="true"]');
    assert.equal(await phone.$$eval('.vote-option[aria-pressed="true"]', (b) => b.length), 1);
    // How sure, and why: sent with the vote.
    await phone.click('.vote-sure-button[data-sure="true"]');
    await phone.waitForSelector('.vote-sure-button[data-sure="true"][aria-pressed="true"]');
    await phone.fill('.vote-why', HOSTILE);
    await phone.click('.vote-why-send');
    await phone.waitForFunction(() => /Your reason is in/.test(document.querySelector('.vote-note')?.textContent || ''), null, { timeout: 5_000 });
    const view = await adminCall('GET', '/admin/class/poll');
    assert.equal(view.status, 200, JSON.stringify(view.body));
    const counts = view.body.rounds[0].counts;
    assert.equal(counts[0], 1, JSON.stringify(counts));
    assert.equal(counts.reduce((a, b) => a + b, 0), 1, JSON.stringify(counts));
    // The projector shows how many voted, never for what.
    await presenter.waitForFunction(() => document.querySelector('#voted').textContent === '1', null, { timeout: 5_000 });
    assert.equal(await presenter.$('.present-bar'), null, 'no counts per option before the reveal');
    assert.equal(view.body.rounds[0].sure[0], 1, JSON.stringify(view.body.rounds[0]));
    // The instructor's notes, behind their toggle: the split, the rule of thumb, the reasons as
    // typed (text: no element made of them, nothing run).
    assert.equal(await presenter.isHidden('#notes'), true, 'the notes are closed until asked for');
    await presenter.click('#notes-toggle');
    await presenter.waitForFunction((want) => [...document.querySelectorAll('.present-reason-why')].some((e) => e.textContent === want), HOSTILE, { timeout: 5_000 });
    assert.equal(await presenter.$$eval('#notes img, #notes b:not(.vote-letter)', (e) => e.length), 0, 'a reason never becomes markup');
    assert.equal(await presenter.evaluate(() => window.pwned), undefined);
    assert.match(await presenter.textContent('#notes-thumb'), /below ~30 %, explain; 30–70 %, discuss and vote again; above 70 %, reveal/);
    // While the round is open, the split waits behind its own button: on the projector it
    // would lead the vote.
    assert.equal(await presenter.$$eval('.present-split', (s) => s.length), 0, 'no split while the round is open');
    await presenter.click('#split-show');
    assert.equal(await presenter.$$eval('.present-split[data-round="1"] li', (li) => li.length), await presenter.$$eval('#options li', (li) => li.length));
    await presenter.screenshot({ path: join(SHOTS, '33-present-notes.png') });
    await presenter.click('#reasons-toggle');
    assert.equal(await presenter.isHidden('#reasons'), true, 'the reasons hide');
    await presenter.click('#notes-toggle');
    assert.equal(await presenter.isHidden('#notes'), true);
    await presenter.screenshot({ path: join(SHOTS, '33-present-open.png') });
    // On a phone: the options, how sure and why, side by side or stacked, none cut off.
    await noSideScroll(phone);
    apart(await boxes(phone, '.vote-option, .vote-sure-button, .vote-why, .vote-why-send'), 390, 'the vote page');
    await phone.screenshot({ path: join(SHOTS, '34-vote-phone-voted.png'), fullPage: true });
  });

  await t.test('reloaded, the phone still shows its vote; the dashboard shows the question on top', async () => {
    await phone.reload();
    await phone.waitForSelector('.vote-option[data-option="0"][aria-pressed="true"]', { timeout: 10_000 });
    dash = await newPhone();
    await dash.goto(`${base}/?room=${other.room}#token=${other.token}`);
    await dash.waitForSelector('#vote:not([hidden]) .vote-option', { timeout: 10_000 });
    // The catalog is withheld while the class votes: no chapter listed, and the page says why.
    await dash.waitForFunction(() => /the chapters are back after the reveal/.test(document.querySelector('#scenario-text')?.textContent || ''), null, { timeout: 10_000 });
    assert.equal(await dash.$$eval('#scenario-select option', (o) => o.length), 0, 'no chapter listed');
    assert.deepEqual(await gives(dash, explanation), { id: false, explanation: false }, 'the dashboard of a room token');
    const [card] = await boxes(dash, '#vote');
    const [figures] = await boxes(dash, '#figures');
    assert.ok(card.bottom <= figures.top, 'the question is on top');
    await dash.click('.vote-option[data-option="2"]');
    await dash.waitForSelector('.vote-option[data-option="2"][aria-pressed="true"]');
    await noSideScroll(dash);
    await dash.screenshot({ path: join(SHOTS, '35-dashboard-phone-vote.png') });
    // Closed by the student, the card stays away until the vote moves on.
    await dash.click('#vote .vote-close');
    assert.equal(await dash.isHidden('#vote'), true);
    await presenter.waitForFunction(() => document.querySelector('#voted').textContent === '2', null, { timeout: 5_000 });
  });

  await t.test('round 1 closed: the notes call a room that voted a letter, drawn at random', async () => {
    // Round 1: this phone's room voted A, the dashboard's room C, nobody B.
    await presenter.click('#close');
    await presenter.waitForSelector('body[data-state="closed"]', { timeout: 5_000 });
    await presenter.click('#notes-toggle');
    await presenter.waitForSelector('#notes-call:not([hidden]) .present-call-button', { timeout: 5_000 });
    assert.equal(await presenter.$$eval('.present-call-button', (b) => b.length), await presenter.$$eval('#options li', (li) => li.length));
    assert.equal(await presenter.$eval('.present-call-button[data-option="1"]', (b) => b.disabled), true, 'nobody voted B: no call');
    for (const [option, seat] of [[0, mine], [2, other], [0, mine]]) {
      await presenter.click(`.present-call-button[data-option="${option}"]`);
      await presenter.waitForFunction(([o, room]) => document.querySelector('.present-called-box')?.dataset.option === String(o)
        && document.querySelector('#called-room')?.textContent === room, [option, seat.room], { timeout: 5_000 });
    }
    assert.match(await presenter.textContent('.present-called'), new RegExp(`Room ${mine.room} voted A in round 1: ask it to explain`));
    await presenter.screenshot({ path: join(SHOTS, '33-present-called.png') });
    await presenter.click('#notes-toggle');
  });

  await t.test('discuss and vote again: round 2 opens with no vote marked, counted apart', async () => {
    await presenter.click('#again');
    await phone.waitForSelector('#vote[data-state="open"][data-round="2"]', { timeout: 5_000 });
    assert.equal(await phone.$$eval('.vote-option[aria-pressed="true"]', (b) => b.length), 0);
    await phone.click('.vote-option[data-option="2"]');
    await phone.waitForSelector('.vote-option[data-option="2"][aria-pressed="true"]');
    await dash.waitForSelector('#vote:not([hidden])[data-round="2"]', { timeout: 5_000 });
    await dash.context().close();
    const view = await adminCall('GET', '/admin/class/poll');
    assert.deepEqual(view.body.rounds.map((r) => r.counts.reduce((a, b) => a + b, 0)), [2, 1], JSON.stringify(view.body.rounds));
  });

  await t.test('run & reveal: the phone and the projector show where the run landed', async () => {
    // Every state each screen draws from here on: once revealed, neither goes back to an older
    // view (a stream event read before the reveal may arrive after the reveal's answer; its
    // smaller version has it dropped).
    const recordStates = (selector) => {
      const host = document.querySelector(selector);
      window.statesDrawn = [];
      new MutationObserver(() => window.statesDrawn.push(host.dataset.state))
        .observe(host, { attributes: true, attributeFilter: ['data-state'] });
    };
    await presenter.evaluate(recordStates, 'body');
    await phone.evaluate(recordStates, '#vote');
    await presenter.check('#run-every');
    await presenter.click('#reveal');
    await presenter.waitForSelector('#reveal-box:not([hidden]) .reveal', { timeout: 120_000 });
    await phone.waitForSelector('#vote[data-state="revealed"] .reveal', { timeout: 10_000 });
    const landed = await phone.getAttribute('.reveal', 'data-landed');
    if (landed !== 'none') {
      assert.ok(await phone.$(`.vote-option.landed[data-option="${landed}"]`), 'the landed option is marked');
      // The reveal's answer draws it at once; waited for all the same, with a deadline.
      await presenter.waitForSelector(`#options li.landed[data-option="${landed}"]`, { timeout: 10_000 });
    }
    assert.match(await phone.textContent('.reveal-landed'), /the run landed in/i);
    // The reveal leads with what decided it: the figures the question's rule read, in order.
    const decided = await presenter.evaluate(() => window.oversell.view.reveal.decided_by.map((f) => f.name));
    assert.ok(decided.length > 0);
    for (const page of [presenter, phone]) {
      assert.equal(await page.$eval('.reveal', (r) => r.firstElementChild.className), 'reveal-decided');
      assert.deepEqual(await page.$$eval('.reveal-decided [data-figure]', (d) => d.map((e) => e.dataset.figure)), decided);
    }
    // `none-race` runs no lock: no shortest break to say.
    for (const page of [presenter, phone]) assert.equal(await page.$('.reveal-break'), null);
    // Revealed: the chapter is named again, and explained to everyone.
    assert.match(await presenter.textContent('#present-chapter'), new RegExp(`${CHAPTER}`));
    assert.equal((await gives(phone, explanation)).explanation, true, 'the phone explains it now');
    const listed = await (await fetch(`${base}/scenarios`, { headers: { authorization: `Bearer ${other.token}` } })).json();
    assert.equal(listed.scenarios[at].en, explanation);
    assert.match(await presenter.textContent('.reveal-rounds'), /Round 1: [\d–]+ %? ?right \(2 voted\)/);
    assert.match(await presenter.textContent('.reveal-rounds'), /Round 2: [\d–]+ %? ?right \(1 voted\)/);
    // Each option's votes in both rounds, on the projector only now.
    assert.equal(await presenter.$$eval('.present-bar', (bars) => bars.length), 2 * await presenter.$$eval('#options li', (li) => li.length));
    // Then in every room of the class: the tally fills in as the rooms finish, on both screens.
    await presenter.waitForSelector('.reveal-rooms[data-pending="0"]', { timeout: 120_000 });
    await phone.waitForSelector('.reveal-rooms[data-pending="0"]', { timeout: 10_000 });
    const rooms = await presenter.evaluate(() => window.oversell.view.reveal.every_room);
    assert.equal(rooms.rooms, 2, JSON.stringify(rooms));
    assert.deepEqual(rooms.failed, [], JSON.stringify(rooms));
    assert.equal(rooms.landed.reduce((a, b) => a + b, 0) + rooms.landed_none, 2, JSON.stringify(rooms));
    assert.match(await presenter.textContent('.reveal-rooms-head'), /In every room: 2 of 2 rooms ran it/);
    for (const [name, page] of [['the projector', presenter], ['the phone', phone]]) {
      const drawn = await page.evaluate(() => window.statesDrawn);
      const first = drawn.indexOf('revealed');
      assert.ok(first >= 0 && drawn.slice(first).every((state) => state === 'revealed'), `${name} drew ${drawn.join(' → ')}`);
    }
    // The projector's reveal steps through the run it revealed: that run's viewer, in a new
    // tab, with the admin token; a phone has no such button (the instructor's room is not its).
    const run = await presenter.evaluate(() => window.oversell.view.reveal.history);
    assert.ok(run, 'the reveal names its run\'s history');
    assert.equal(await presenter.getAttribute('#reveal-viewer', 'data-run'), run);
    assert.equal(await phone.$('#reveal-viewer'), null);
    const [tab] = await Promise.all([presenter.waitForEvent('popup'), presenter.click('#reveal-viewer')]);
    await tab.waitForSelector('section.run[data-run="0"] .op', { timeout: 15_000 });
    const data = await tab.$eval('#viewer-data', (d) => d.textContent);
    assert.ok(data.includes(run) && data.includes(CHAPTER), data.slice(0, 300));
    await tab.close();
    const version = await presenter.evaluate(() => window.oversell.view.version);
    assert.ok(Number.isSafeInteger(version) && version > 0, `the projector's view version: ${version}`);
    await noSideScroll(phone);
    await phone.screenshot({ path: join(SHOTS, '36-vote-phone-revealed.png'), fullPage: true });
    await presenter.screenshot({ path: join(SHOTS, '37-present-revealed.png') });
  });

  await t.test('the class page downloads the results as CSV and Markdown', async () => {
    const page = await newPage('en-US');
    await page.goto(`${base}/class`);
    await page.fill('#token', token);
    await page.click('#unlock');
    await page.waitForSelector('#admin-status.unlocked');
    assert.match(await page.getAttribute('#to-present', 'href'), /present\.html$/);
    for (const [button, format] of [['#results-csv', 'csv'], ['#results-md', 'md']]) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
      assert.equal(download.suggestedFilename(), `class-results.${format}`);
      const path = await download.path();
      const text = (await import('node:fs')).readFileSync(path, 'utf8');
      assert.match(text, /none-race/, `${format}: ${text.slice(0, 300)}`);
    }
    // The reasons: on the page as typed, and as a CSV file.
    await page.click('#reasons-show');
    await page.waitForSelector('.class-reason-why');
    assert.deepEqual(await page.$$eval('.class-reason-why', (e) => e.map((x) => x.textContent)), [HOSTILE]);
    assert.equal(await page.$$eval('#reasons img, #reasons b', (e) => e.length), 0, 'a reason never becomes markup');
    assert.equal(await page.evaluate(() => window.pwned), undefined);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#reasons-csv')]);
    assert.equal(download.suggestedFilename(), 'class-reasons.csv');
    const csv = (await import('node:fs')).readFileSync(await download.path(), 'utf8');
    assert.ok(csv.includes(`"${HOSTILE.replaceAll('"', '""')}"`), csv);
    await page.context().close();
  });

  await t.test('the class page and the presenter\'s view at a phone\'s width', async () => {
    const page = await newPhone();
    await page.goto(`${base}/class`);
    await page.fill('#token', token);
    await page.click('#unlock');
    await page.waitForSelector('#admin-status.unlocked');
    await page.waitForFunction(() => document.querySelectorAll('#rooms tbody tr').length === 2);
    await noSideScroll(page);
    apart(await boxes(page, 'main > section, fieldset > section'), 390, 'the class page\'s panels');
    await page.screenshot({ path: join(SHOTS, '38-class-phone.png'), fullPage: true });
    await page.goto(`${base}/present.html`);
    await page.waitForSelector('#reveal-box:not([hidden])', { timeout: 10_000 });
    await noSideScroll(page);
    // The notes on a phone: round 2 (revealed) had one vote, this phone's room's C; the room
    // called for C is it, its name within the screen.
    await page.click('#notes-toggle');
    await page.waitForSelector('#notes-call:not([hidden]) .present-call-button', { timeout: 5_000 });
    await page.click('.present-call-button[data-option="2"]');
    await page.waitForFunction((room) => document.querySelector('#called-room')?.textContent === room, mine.room, { timeout: 5_000 });
    await noSideScroll(page);
    apart(await boxes(page, '.present-call-button, #called-room'), 390, 'the call buttons and the room called');
    await page.screenshot({ path: join(SHOTS, '38-present-phone-called.png'), fullPage: true });
    await page.context().close();
  });

  await t.test('a question that puts an article\'s claim on trial: the phone\'s reveal cites its line', async () => {
    const claim = deck.find((q) => q.id === CLAIM.id)?.number;
    assert.ok(claim > 0, 'the deck has the claim question');
    await presenter.selectOption('#chapter', String(claim));
    // The instructor's note says which question the claim is asked instead of.
    const replaced = deck.find((q) => q.id === deck.find((c) => c.id === CLAIM.id).alternative_to)?.number;
    assert.ok(replaced > 0, 'the claim names the question it replaces');
    assert.match(await presenter.textContent('#notes-picked'), new RegExp(`instead of Question ${replaced}\\b`));
    await presenter.click('#open');
    await phone.waitForFunction((n) => document.querySelector('#vote[data-state="open"] .vote-status')
      ?.textContent.startsWith(`Question ${n} · `), claim, { timeout: 5_000 });
    await phone.click('.vote-option[data-option="0"]');
    await phone.waitForSelector('.vote-option[data-option="0"][aria-pressed="true"]');
    // The chapter runs on reentrant-watchdog, a rung of the ladder: while the vote is open no
    // screen says how its lock breaks, nor does the view the phone holds.
    for (const page of [presenter, phone]) {
      assert.equal(await page.$('.reveal-break'), null);
      assert.doesNotMatch(await page.textContent('body'), /shortest way this lock breaks|sold twice/i);
    }
    const open = await (await fetch(`${base}/poll`)).json();
    assert.equal(open.reveal, null);
    assert.ok(!JSON.stringify(open).includes('shortest'), JSON.stringify(open));
    await presenter.click('#reveal');
    await phone.waitForSelector('#vote[data-state="revealed"] .reveal-claim', { timeout: 120_000 });
    assert.match(await phone.textContent('.reveal-claim'), CLAIM.cites);
    // Revealed: the search's shortest break of the rung, on both screens, in the page's language.
    for (const page of [presenter, phone]) {
      await page.waitForSelector('.reveal-break[data-verdict="broken"]', { timeout: 10_000 });
      assert.match(await page.textContent('.reveal-break'),
        /^The shortest way this lock breaks: A acquire-1 → .*A pauses.*: one unit sold twice, a lost update$/);
    }
    await phone.click('#lang-toggle');
    assert.match(await phone.textContent('.reveal-break'), /^这把锁最短的攻破方式：A 执行 acquire-1 → .*：同一件商品卖了两次（丢失更新）$/);
    await phone.click('#lang-toggle');
    // Every room's run ends before the class is deleted after this test.
    await phone.waitForSelector('.reveal-rooms[data-pending="0"]', { timeout: 120_000 });
    await noSideScroll(phone);
    await phone.screenshot({ path: join(SHOTS, '39-vote-phone-claim-revealed.png'), fullPage: true });
  });

  await phone.context().close();
  await presenter.context().close();
  assert.equal((await adminCall('DELETE', '/admin/class')).status, 200);
});
