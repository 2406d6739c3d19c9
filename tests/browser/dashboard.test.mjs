// The dashboard in a real browser: headless Chromium (Debian's) driven by playwright-core,
// against a real fleet (`oversell up`: redis-server, 3 instances, nginx) started here.
//
// Steps, each checked in the DOM: read-only without the token; unlock; tier `none`, reset,
// fire a server-side burst, see oversold > 0; `lua-release`, reset, fire, see 0; a scenario
// Chinese via the toggle and by default for a zh browser; another room sees none of it; last
// (it changes the room), a catalog scenario shows PASS/FAIL (skipped when the server has none).
// The lab page, reached from the dashboard with the tab's token: a rung loaded with its line
// numbers, submitted (the room switches to custom), buyers sold through it onto the page's
// timeline, graded twice, in Chinese, a compile error's line marked; at 390 px, one column and
// no sideways scroll, in English and Chinese.
// Then a class: the instructor makes one on /class; a student's join link drives its own room
// and no other; a new token refuses the old link; a tier and a scenario in every room; the
// page in Chinese; new tokens for a tab that has none; closing the class.
// The dashboard on a phone (390 × 844): stacked, 20 sections a window, nothing overlapping or
// wider than the screen. The class vote: a phone's vote page from a join link, the presenter's
// view (1920 × 1080) opening it, a vote changed and counted, the dashboard's card, a second
// round, run & reveal on both screens, the results downloaded from the class page.
// Screenshots go to artifacts/browser/.
//
// Env: OVERSELL_BIN (default target/debug/oversell), CHROMIUM (default /usr/bin/chromium).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = process.env.OVERSELL_BIN || join(ROOT, 'target/debug/oversell');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = join(ROOT, 'artifacts/browser');
const ROOM = 'browser';

let up; // the `oversell up` child
let upOutput = '';
let base; // nginx URL
let token;
let browser;

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/** Starts `oversell up` and resolves with its URL and admin token once it prints `ready:`. */
function startFleet(port) {
  return new Promise((ok, fail) => {
    const env = { ...process.env, RUST_LOG: 'oversell=warn', BUSINESS_MS: '20', WAIT_DEADLINE_MS: '20000' };
    delete env.ADMIN_TOKEN;
    delete env.LOCK_TIER;
    // `--lab`: a lock store of its own, where students' locks may run.
    up = spawn(BIN, ['up', '--instances', '3', '--port', String(port), '--lab'], {
      cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => fail(new Error(`oversell up not ready in 60s:\n${upOutput}`)), 60_000);
    const onData = (chunk) => {
      upOutput += chunk.toString();
      const tok = upOutput.match(/^admin token: (\S+)$/m);
      const ready = upOutput.match(/^ready: (\S+)$/m);
      if (tok && ready) {
        clearTimeout(timer);
        ok({ url: ready[1], token: tok[1] });
      }
    };
    up.stdout.on('data', onData);
    up.stderr.on('data', onData);
    up.on('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`oversell up exited (${code ?? signal}):\n${upOutput}`));
    });
  });
}

async function stopFleet() {
  if (up && (up.exitCode !== null || up.signalCode !== null)) {
    // Gone before the end: what it said last is the only clue to why every step after failed.
    console.error(`oversell up exited during the run (${up.exitCode ?? up.signalCode}):\n${upOutput.split('\n').slice(-40).join('\n')}`);
    return;
  }
  if (!up) return;
  const exited = new Promise((ok) => up.once('exit', ok));
  up.kill('SIGTERM');
  const killed = setTimeout(() => up.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(killed);
}

/** Uncaught errors of every page: a script that throws fails the run, even if what the
 * test looked at still showed. */
const pageErrors = [];

async function newPage(locale) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, locale });
  const page = await context.newPage();
  page.on('pageerror', (err) => {
    console.error(`page error: ${err.message}`);
    pageErrors.push(err.message);
  });
  page.on('console', (msg) => { if (msg.type() === 'error') console.error(`console: ${msg.text()}`); });
  return page;
}

/** The number shown in a figure card. */
async function figure(page, name) {
  const text = await page.textContent(`#fig-${name}`);
  return Number(String(text).replace(/[^\d-]/g, ''));
}

/** Waits until a figure satisfies `check`; fails with what the page showed. */
async function waitFigure(page, name, check, what, timeout = 15_000) {
  try {
    await page.waitForFunction(
      ([id, src]) => {
        const v = Number(document.querySelector(`#fig-${id}`).textContent.replace(/[^\d-]/g, ''));
        return document.querySelector(`#fig-${id}`).textContent !== '–' && new Function('v', `return ${src}`)(v);
      },
      [name, check],
      { timeout },
    );
  } catch (err) {
    throw new Error(`${name} never became ${what}: showed ${await page.textContent(`#fig-${name}`)} (${err.message})`);
  }
}

async function shot(page, name, { fullPage = false } = {}) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

async function chooseTier(page, tier) {
  await page.selectOption('#tier-select', tier);
  await page.waitForFunction((want) => document.querySelector('#tier-name').textContent === want, tier, { timeout: 10_000 });
}

async function resetStock(page, stock) {
  await page.fill('#reset-stock', String(stock));
  await page.click('#reset');
  await waitFigure(page, 'orders', 'v === 0', '0 after reset');
  await waitFigure(page, 'stock', `v === ${stock}`, `${stock} after reset`);
}

async function fire(page, buyers) {
  await page.fill('#buyers', String(buyers));
  await page.evaluate(() => { delete document.querySelector('#burst-result').dataset.ok; });
  await page.click('#fire');
  await page.waitForFunction(() => document.querySelector('#burst-result').dataset.ok !== undefined, null, { timeout: 60_000 });
  return page.textContent('#burst-result');
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const fleet = await startFleet(await freePort());
  base = fleet.url.replace(/\/$/, '');
  token = fleet.token;
  // playwright-core gives every launch a fresh, temporary --user-data-dir of its own (and
  // refuses the flag in `launch`), removed again on close.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
    ],
  });
});

after(async () => {
  await browser?.close().catch(() => {});
  await stopFleet();
  assert.deepEqual(pageErrors, [], 'no page may throw an uncaught error');
});

test('the dashboard drives the fleet and shows what each tier does', async (t) => {
  const page = await newPage('en-US');
  await page.goto(`${base}/?room=${ROOM}`);

  await t.test('opens read-only, live, in English, in its room', async () => {
    await page.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
    assert.equal(await page.textContent('#room-name'), ROOM);
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.equal(await page.$eval('#admin', (f) => f.disabled), true, 'controls locked without a token');
    assert.equal(await page.textContent('#lang-toggle'), '中文');
    await shot(page, '01-read-only');
  });

  await t.test('a wrong token stays read-only; the right one unlocks', async () => {
    await page.fill('#token', 'not-the-token');
    await page.click('#unlock');
    await page.waitForSelector('#admin-status.bad');
    assert.equal(await page.$eval('#admin', (f) => f.disabled), true);
    await page.fill('#token', token);
    await page.click('#unlock');
    await page.waitForSelector('#admin-status.unlocked');
    assert.equal(await page.$eval('#admin', (f) => f.disabled), false);
  });

  await t.test('tier none: a burst oversells', async () => {
    await chooseTier(page, 'none');
    assert.match(await page.textContent('#tier-text'), /No lock at all/);
    await page.fill('#business-ms', '20');
    await page.click('#apply-timing');
    await resetStock(page, 20);
    const result = await fire(page, 80);
    await waitFigure(page, 'oversold', 'v > 0', '> 0');
    await waitFigure(page, 'orders', 'v > 20', '> 20 orders for 20 items');
    await page.waitForFunction(() => Number(document.querySelector('#timeline').dataset.overlapping) > 0, null, { timeout: 10_000 });
    assert.ok(await page.$('#card-oversold.hot'), 'oversold card is highlighted');
    console.log(`none: ${result}; oversold ${await figure(page, 'oversold')}, orders ${await figure(page, 'orders')}`);
    await page.waitForTimeout(600); // let the chart catch up for the screenshot
    await shot(page, '02-none-oversold');
  });

  await t.test('tier lua-release: the same burst sells exactly the stock', async () => {
    await chooseTier(page, 'lua-release');
    await resetStock(page, 20);
    const result = await fire(page, 80);
    await waitFigure(page, 'orders', 'v === 20', 'exactly 20');
    await waitFigure(page, 'stock', 'v === 0', '0');
    assert.equal(await figure(page, 'oversold'), 0);
    assert.equal(await figure(page, 'overlaps'), 0);
    assert.equal(await figure(page, 'lost_updates'), 0);
    await page.waitForFunction(() => Number(document.querySelector('#timeline').dataset.bars) > 0, null, { timeout: 10_000 });
    assert.equal(await page.getAttribute('#timeline', 'data-overlapping'), '0');
    // One lock, no overlaps: every section after the first was handed over, and the line
    // under the timeline says how fast (on Redis' clock) and how evenly the instances got it.
    await page.waitForFunction(() => !document.querySelector('#handoff').hidden, null, { timeout: 10_000 });
    const handOff = await page.$eval('#handoff', (el) => ({ text: el.textContent, p99: Number(el.dataset.p99), jain: Number(el.dataset.jain), served: Number(el.dataset.servedP99) }));
    assert.ok(handOff.p99 >= 0 && handOff.jain > 0 && handOff.jain <= 1, JSON.stringify(handOff));
    // Each sale's time to its write (waiting for the lock included), as its instance measured
    // it: at least the 5 ms of work every sale does here.
    assert.ok(handOff.served >= 5, JSON.stringify(handOff));
    assert.match(handOff.text, /hand-off p99 [\d.]+ ms/);
    assert.match(handOff.text, /served in p50 [\d.]+ \/ p99 [\d.]+ ms/);
    console.log(`lua-release: ${result}; ${handOff.text}`);
    await page.waitForTimeout(600);
    await shot(page, '03-lua-release-exact');
  });

  await t.test('atomic-expiry with work longer than the lease: expiry, overlaps, foreign releases', async () => {
    await chooseTier(page, 'atomic-expiry');
    await page.fill('#business-ms', '300');
    await page.fill('#ttl-ms', '100');
    await page.click('#apply-timing');
    await page.waitForFunction(() => window.oversell.state?.settings.business_ms === 300, null, { timeout: 10_000 });
    await resetStock(page, 20);
    await fire(page, 5);
    await waitFigure(page, 'foreign_releases', 'v > 0', '> 0');
    await waitFigure(page, 'overlaps', 'v > 0', '> 0');
    const tl = await page.$eval('#timeline', (el) => ({ ...el.dataset }));
    assert.ok(Number(tl.expired) > 0, `lease expiry marked: ${JSON.stringify(tl)}`);
    assert.ok(Number(tl.foreign) > 0, `foreign release drawn: ${JSON.stringify(tl)}`);
    assert.ok(Number(tl.overlapping) > 0, `overlaps drawn: ${JSON.stringify(tl)}`);
    await page.waitForTimeout(400);
    await shot(page, '04-atomic-expiry-lease');
    await page.fill('#business-ms', '20');
    await page.fill('#ttl-ms', '3000');
    await page.click('#apply-timing');
    // Landed before the next step switches the tier: the server patches settings by read, then
    // write, so a tier switch racing this patch can be lost (seen once in a full run).
    await page.waitForFunction(() => window.oversell.state?.settings.ttl_ms === 3000, null, { timeout: 10_000 });
  });

  await t.test('fenced: a holder frozen past its lease has its stale write refused', async () => {
    await chooseTier(page, 'fenced');
    await page.fill('#business-ms', '20');
    await page.fill('#ttl-ms', '300');
    await page.click('#apply-timing');
    await page.waitForFunction(() => window.oversell.state?.settings.ttl_ms === 300, null, { timeout: 10_000 });
    await resetStock(page, 20);
    await page.fill('#fault-ms', '1500');
    await page.click('button.fault[data-kind="freeze"]');
    await page.waitForFunction(() => /freeze/.test(document.querySelector('#faults-armed').textContent), null, { timeout: 10_000 });
    await fire(page, 10);
    await waitFigure(page, 'stale_writes_rejected', 'v > 0', '> 0', 20_000);
    // The frozen holder's release finds its lock gone: counted, and marked on the timeline.
    await waitFigure(page, 'lost_releases', 'v > 0', '> 0', 20_000);
    await page.waitForFunction(() => Number(document.querySelector('#timeline').dataset.lost) > 0, null, { timeout: 10_000 });
    await page.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
    assert.equal(await figure(page, 'oversold'), 0);
    await page.waitForTimeout(600);
    await shot(page, '05-fenced-freeze');
    await page.fill('#ttl-ms', '3000');
    await page.click('#apply-timing');
  });

  await t.test('the language toggle switches to Chinese and back', async () => {
    await page.click('#lang-toggle');
    await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
    assert.equal(await page.textContent('#lang-toggle'), 'English');
    assert.equal(await page.textContent('#card-oversold .k'), '超卖');
    assert.match(await page.textContent('#tier-text'), /围栏令牌/);
    assert.match(await page.textContent('.timeline-panel h2'), /锁时间线/);
    await shot(page, '06-chinese');
    assert.match(await page.textContent('#burst-result'), /成交/);
    await page.click('#lang-toggle');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    assert.equal(await page.textContent('#card-oversold .k'), 'oversold');
  });

  await t.test('a Chinese browser gets Chinese by default, and the token stays in its own tab', async () => {
    const zh = await newPage('zh-CN');
    await zh.goto(`${base}/?room=${ROOM}`);
    await zh.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
    assert.equal(await zh.getAttribute('html', 'lang'), 'zh-CN');
    assert.equal(await zh.textContent('#card-orders .k'), '订单');
    assert.equal(await zh.$eval('#admin', (f) => f.disabled), true, 'a new session is read-only');
    const orders = await figure(page, 'orders');
    await waitFigure(zh, 'orders', `v === ${orders}`, `the room's ${orders} orders`);
    await shot(zh, '07-zh-default-read-only');
    await zh.context().close();
  });

  await t.test('another room does not see these orders', async () => {
    const other = await newPage('en-US');
    await other.goto(`${base}/?room=elsewhere`);
    await other.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
    assert.equal(await other.textContent('#room-name'), 'elsewhere');
    await waitFigure(other, 'orders', 'v === 0', '0 in another room');
    await other.context().close();
  });
  await t.test('a catalog scenario runs server-side and shows its verdict', async (st) => {
    const resp = await fetch(`${base}/scenarios`);
    const catalog = resp.ok ? (await resp.json()).scenarios || [] : [];
    if (!catalog.length) {
      st.skip('this server has no GET /scenarios yet');
      return;
    }
    const pick = catalog.find((s) => !s.timing_sensitive) || catalog[0];
    await page.selectOption('#scenario-select', pick.id);
    await page.click('#run-scenario');
    await page.waitForSelector('#scenario-verdict', { timeout: 90_000 });
    const verdict = await page.textContent('#scenario-verdict');
    assert.match(verdict, /PASS|FAIL/);
    assert.match(await page.getAttribute('#scenario-result', 'data-result'), /^(pass|fail)$/);
    assert.ok(verdict.includes(pick.id));
    console.log(`scenario ${pick.id}: ${verdict}`);
    await shot(page, '08-scenario');
  });

});

/** PUT /admin/tier in `room` with `bearer`, as a script would: the API's own answer. */
async function putTier(room, bearer, tier) {
  const resp = await fetch(`${base}/admin/tier?room=${room}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier }),
  });
  return { status: resp.status, body: await resp.json().catch(() => null) };
}

/** The text of a cell of room `room`'s row on the class page (0: the room's name). */
function classCell(page, room, column) {
  return page.$eval(`#rooms tbody tr[data-room="${room}"]`, (tr, i) => tr.children[i].textContent, column);
}

/** Submits the lock in the editor: the server switches the room to tier custom with it. */
async function submitLock(page) {
  await page.evaluate(() => { document.querySelector('#message').textContent = ''; });
  await page.click('#lab-submit');
  await page.waitForFunction(() => /submitted/.test(document.querySelector('#message').textContent), null, { timeout: 15_000 });
  await page.waitForFunction(() => document.querySelector('#tier-name').textContent === 'custom', null, { timeout: 15_000 });
}

/** Grades the room's lock and waits for the report card: `{attack: outcome}`. */
async function grade(page) {
  await page.evaluate(() => { document.querySelector('#lab-card').dataset.result = ''; });
  await page.click('#lab-grade');
  await page.waitForSelector('#lab-card[data-result="done"]', { timeout: 180_000 });
  return page.$$eval('#lab-card li', (items) => Object.fromEntries(items.map((li) => [li.dataset.attack, li.dataset.outcome])));
}

async function loadRung(page, rung) {
  await page.selectOption('#lab-start', rung);
  await page.click('#lab-load');
  await page.waitForFunction((want) => document.querySelector('#message').textContent.includes(want), rung);
}

/** The page is no wider than its window: nothing to scroll sideways. */
async function noSideScroll(page) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    width: window.innerWidth,
  }));
  assert.ok(scroll <= width, `the page is ${scroll} px wide in a ${width} px window`);
}

test('the lab page: write a lock, submit it, watch it sell, read its card', async (t) => {
  const page = await newPage('en-US');
  await page.goto(`${base}/?room=lab-browser`);
  await page.fill('#token', token);
  await page.click('#unlock');
  await page.waitForSelector('#admin-status.unlocked');

  await t.test('the dashboard says the room has no lock of its own, and links to the lab', async () => {
    await page.waitForFunction(() => /no lock of its own/.test(document.querySelector('#lab-summary').textContent), null, { timeout: 10_000 });
    assert.equal(await page.$('#lab-acquire-1'), null, 'the editor left the dashboard');
    await page.click('#lab-open');
    await page.waitForURL(/\/lab\.html\?room=lab-browser$/);
    // Same room, same tab's token: unlocked without typing it again.
    await page.waitForSelector('#admin-status.unlocked');
    await page.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
    assert.equal(await page.textContent('#room-name'), 'lab-browser');
    assert.match(await page.textContent('#lab-contract'), /KEYS\[1\] the lock/);
    assert.match(await page.title(), /the lab/);
  });

  await t.test('a rung loads with its line numbers; submitted, the room sells under it', async () => {
    await loadRung(page, 'setnx-expire');
    assert.match(await page.inputValue('#lab-acquire-1'), /SETNX/);
    assert.match(await page.inputValue('#lab-acquire-2'), /EXPIRE/);
    const lines = (await page.inputValue('#lab-acquire-1')).split('\n').length;
    const numbers = await page.$$eval('.editor:has(#lab-acquire-1) .gutter span', (spans) => spans.map((s) => s.textContent).filter(Boolean));
    assert.deepEqual(numbers, Array.from({ length: lines }, (_, i) => String(i + 1)));
    await submitLock(page);
    await page.fill('#try-stock', '20');
    await page.fill('#try-buyers', '40');
    await page.click('#try');
    await page.waitForFunction(() => document.querySelector('#burst-result').dataset.ok !== undefined, null, { timeout: 60_000 });
    await page.waitForFunction(() => Number(document.querySelector('#timeline').dataset.bars) > 0, null, { timeout: 15_000 });
    await page.waitForFunction(() => document.querySelector('#fig-orders').textContent === '20', null, { timeout: 15_000 });
    assert.equal(await page.textContent('#fig-oversold'), '0');
    console.log(`lab page, setnx-expire: ${await page.textContent('#burst-result')}`);
    await shot(page, '20-lab-page-selling', { fullPage: true }); // the timeline is under the steps
  });

  await t.test('SETNX without an expiry: deadlock on a dead holder', async () => {
    await loadRung(page, 'setnx');
    assert.equal(await page.inputValue('#lab-acquire-2'), '');
    await submitLock(page);
    const outcomes = await grade(page);
    assert.equal(outcomes['holder-dies'], 'deadlock', JSON.stringify(outcomes));
    assert.equal(outcomes.contention, 'held', JSON.stringify(outcomes));
    assert.match(await page.textContent('#lab-rung'), /rung: setnx$/);
    assert.match(await page.textContent('#lab-card li[data-attack="holder-dies"]'), /000's bronze tier/);
    await shot(page, '21-lab-page-deadlock', { fullPage: true });
  });

  await t.test('fixed with SET NX PX: the dead holder\'s lock expires, and the card says so', async () => {
    await loadRung(page, 'atomic-expiry');
    assert.match(await page.inputValue('#lab-acquire-1'), /'NX', 'PX'/);
    await submitLock(page);
    const outcomes = await grade(page);
    assert.equal(outcomes['holder-dies'], 'held', JSON.stringify(outcomes));
    assert.equal(outcomes['holder-dies-between-steps'], 'not-applicable', JSON.stringify(outcomes));
    assert.match(await page.textContent('#lab-rung'), /rung: atomic-expiry$/);
    await shot(page, '22-lab-page-holds', { fullPage: true });
  });

  await t.test('the page and the card in Chinese', async () => {
    await page.click('#lang-toggle');
    await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
    assert.match(await page.textContent('#lab-card li[data-attack="holder-dies"]'), /守住了/);
    assert.match(await page.textContent('#lab-rung'), /与阶梯上的这一级相同/);
    assert.match(await page.textContent('#lab-contract'), /KEYS\[1\] 是锁/);
    await shot(page, '23-lab-page-zh', { fullPage: true });
    await page.click('#lang-toggle');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
  });

  await t.test('a script that does not compile is refused with Redis\'s message, its line marked', async () => {
    await page.fill('#lab-acquire-1', "\nreturn redis.call('SETNX', KEYS[1], ARGV[1]");
    await page.click('#lab-submit');
    await page.waitForSelector('#message.error');
    assert.match(await page.textContent('#message'), /acquire step 1: ERR Error compiling script.*user_script:2/);
    assert.equal(await page.textContent('.editor:has(#lab-acquire-1) .gutter span.marked'), '2');
  });

  await t.test('back on the dashboard: the room sells under its own lock', async () => {
    await page.click('#back');
    await page.waitForURL(/\/\?room=lab-browser$/);
    await page.waitForFunction(() => /sells under it \(tier custom\)/.test(document.querySelector('#lab-summary').textContent), null, { timeout: 10_000 });
    assert.match(await page.textContent('#lab-summary'), /1 acquire and 1 release step/);
  });
  await page.context().close();
});

test('the lab page on a phone (390 px): one column, nothing to scroll sideways', async (t) => {
  for (const [locale, name] of [['en-US', '24-lab-phone-en'], ['zh-CN', '25-lab-phone-zh']]) {
    await t.test(locale, async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
      const phone = await context.newPage();
      phone.on('pageerror', (err) => pageErrors.push(err.message));
      await phone.goto(`${base}/lab.html?room=lab-browser`);
      await phone.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
      // The room's lock as the server holds it fills the editor; the window of sections, the timeline.
      await phone.waitForFunction(() => document.querySelector('#lab-acquire-1').value.includes('SET'), null, { timeout: 10_000 });
      await phone.waitForFunction(() => document.querySelector('#timeline svg') !== null, null, { timeout: 10_000 });
      await noSideScroll(phone);
      // Stacked: the card comes under the steps, not beside them.
      const steps = await phone.$eval('.lab-editor', (el) => el.getBoundingClientRect());
      const side = await phone.$eval('.lab-side', (el) => el.getBoundingClientRect());
      assert.ok(side.top >= steps.bottom, 'the contract and the card are under the steps');
      await phone.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
      await context.close();
    });
  }
});

test('a class: made on /class, each join link drives its own room and no other', async (t) => {
  const page = await newPage('en-US');
  page.on('dialog', (dialog) => dialog.accept()); // "close the class?" and the like
  let tickets = []; // [{room, token, url}] as the class page shows them

  await t.test('the class page asks for the admin token, then makes a class of 2 with their QR codes', async () => {
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
      && document.querySelectorAll('#tickets .ticket img').length === 2, null, { timeout: 15_000 });
    // The QR codes are real images: the server's SVG decoded by the browser.
    await page.waitForFunction(() => [...document.querySelectorAll('#tickets img')]
      .every((img) => img.complete && img.naturalWidth > 0), null, { timeout: 10_000 });
    const rooms = await page.$$eval('#rooms tbody tr', (trs) => trs.map((tr) => tr.dataset.room));
    assert.deepEqual(rooms, ['student-01', 'student-02']);
    assert.equal(await classCell(page, 'student-01', 2), '50 / 50');
    assert.equal(await classCell(page, 'student-01', 9), '✓', 'the room has a token');
    tickets = await page.$$eval('#tickets .ticket', (cards) => cards.map((c) => ({
      room: c.dataset.room, token: c.querySelector('code').textContent, url: c.querySelector('a').href,
    })));
    assert.equal(tickets.length, 2);
    assert.match(tickets[0].url, /\/\?room=student-01#token=/);
    await shot(page, '09-class');
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

  await t.test('a new token for a room shows a new QR code; the old join link is refused', async () => {
    await page.click('#rooms tbody tr[data-room="student-01"] button.rotate');
    await page.waitForFunction((old) => {
      const code = document.querySelector('#ticket-student-01 code');
      return code && code.textContent !== old;
    }, tickets[0].token, { timeout: 10_000 });
    assert.ok(await page.$('#ticket-student-01.fresh img'), 'the new QR code is outlined');
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

  await t.test('another tab (as after `oversell up --class`) has no QR codes: new tokens for every room', async () => {
    const other = await newPage('en-US');
    other.on('dialog', (dialog) => dialog.accept());
    await other.goto(`${base}/class`);
    await other.fill('#token', token);
    await other.click('#unlock');
    await other.waitForSelector('#tickets-missing', { state: 'visible', timeout: 10_000 });
    await other.click('#bulk-rotate-go');
    await other.waitForFunction(() => document.querySelectorAll('#tickets .ticket img').length === 2
      && /2 of 2 rooms done, 0 failed/.test(document.querySelector('#bulk-progress').textContent), null, { timeout: 15_000 });
    await other.waitForSelector('#tickets-missing', { state: 'hidden', timeout: 10_000 });
    const old = await page.textContent('#ticket-student-01 code');
    assert.equal((await putTier('student-01', old, 'none')).status, 401, 'the first tab\'s token was replaced');
    tickets = await other.$$eval('#tickets .ticket', (cards) => cards.map((c) => ({ room: c.dataset.room, token: c.querySelector('code').textContent })));
    assert.equal((await putTier('student-01', tickets[0].token, 'lua-release')).status, 200);
    await other.context().close();
  });

  await t.test('closing the class takes every room token away', async () => {
    const fresh = tickets[0].token;
    await page.click('#close-class');
    await page.waitForFunction(() => [...document.querySelectorAll('#rooms tbody tr')]
      .every((tr) => tr.children[9].textContent === '–'), null, { timeout: 10_000 });
    assert.equal(await page.$$eval('#tickets .ticket', (cards) => cards.length), 0);
    assert.equal((await putTier('student-01', fresh, 'none')).status, 401);
  });
  await page.context().close();
});

/** A new page at a phone's size (390 × 844, touch), its errors counted. */
async function newPhone(locale = 'en-US') {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const phone = await context.newPage();
  phone.on('pageerror', (err) => {
    console.error(`page error: ${err.message}`);
    pageErrors.push(err.message);
  });
  return phone;
}

/** The boxes of `selector`'s elements, as the page lays them out. */
function boxes(page, selector) {
  return page.$$eval(selector, (els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { id: e.id || e.className, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  }));
}

/** No two of `list`'s boxes overlap, and each lies inside the window's width. */
function apart(list, width, what) {
  for (const b of list) assert.ok(b.left >= 0 && b.right <= width + 0.5, `${what}: ${b.id} reaches past the screen (${b.left}–${b.right} of ${width})`);
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const a = list[i], b = list[j];
      const overlap = a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
      assert.ok(!overlap, `${what}: ${a.id} and ${b.id} overlap`);
    }
  }
}

/** An admin call, as the presenter's buttons make it: status and body. */
async function adminCall(method, path, body) {
  const resp = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: resp.status, body: await resp.json().catch(() => null) };
}

test('on a phone (390 × 844): the dashboard stacks, its timeline readable, nothing scrolls sideways', async (t) => {
  // Sections on the timeline, whichever tests ran before.
  assert.equal((await adminCall('POST', `/admin/reset?room=${ROOM}`, { stock: 20 })).status, 200);
  assert.equal((await adminCall('POST', `/admin/burst?room=${ROOM}`, { buyers: 30 })).status, 200);
  for (const [locale, name] of [['en-US', '30-dashboard-phone-en'], ['zh-CN', '31-dashboard-phone-zh']]) {
    await t.test(locale, async () => {
      const phone = await newPhone(locale);
      await phone.goto(`${base}/?room=${ROOM}`);
      await phone.waitForSelector('#conn[data-state="live"]', { timeout: 15_000 });
      await phone.waitForFunction(() => document.querySelector('#timeline svg') !== null, null, { timeout: 10_000 });
      await noSideScroll(phone);
      const width = await phone.evaluate(() => innerWidth);
      // Fewer sections a window, so each bar is wide enough to read.
      assert.equal(await phone.inputValue('#tl-count'), '20');
      // Stacked: the figures, then the timeline, then the controls, then the chart and tables.
      const [figures] = await boxes(phone, '#figures');
      const [timeline] = await boxes(phone, '.timeline-panel');
      const [controls] = await boxes(phone, 'aside.controls');
      const [bottom] = await boxes(phone, '.bottom');
      assert.ok(figures.bottom <= timeline.top, 'the timeline is under the figures');
      assert.ok(timeline.bottom <= controls.top, 'the controls are under the timeline');
      assert.ok(controls.bottom <= bottom.top, 'the chart and the tables are under the controls');
      apart(await boxes(phone, '#figures .fig'), width, 'figure cards');
      apart(await boxes(phone, '#figures, .timeline-panel, aside.controls, .bottom > .panel'), width, 'panels');
      apart(await boxes(phone, 'header > *:not([hidden])'), width, 'the header');
      const svg = await phone.$eval('#timeline svg', (el) => el.getBoundingClientRect().width);
      assert.ok(svg <= width, `the timeline is ${svg} px wide in a ${width} px window`);
      // The controls are reachable: the token field and the fault buttons fit the screen.
      apart(await boxes(phone, '#token-form > *:not([hidden])'), width, 'the token form');
      apart(await boxes(phone, '.buttons button.fault:not([hidden])'), width, 'the fault buttons');
      // The chart loads when scrolled to, and fits too.
      await phone.$eval('#chart', (el) => el.scrollIntoView());
      await phone.waitForSelector('#chart canvas', { timeout: 10_000 });
      await noSideScroll(phone);
      await phone.evaluate(() => scrollTo(0, 0));
      await phone.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
      await phone.context().close();
    });
  }
});

test('the class vote: a phone votes with its join link, the presenter reveals', async (t) => {
  const probe = await adminCall('GET', '/admin/class/poll');
  if (probe.status === 404 && probe.body?.error === 'not_found') {
    t.skip('this server has no class vote yet');
    return;
  }
  const made = await adminCall('POST', '/admin/class', { students: 2, prefix: 'voter', stock: 20 });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const [mine, other] = made.body.rooms;
  const phone = await newPhone();
  let dash; // the other room's dashboard, opened by its join link
  const presenter = await newPage('en-US');
  await presenter.setViewportSize({ width: 1920, height: 1080 });
  presenter.on('dialog', (dialog) => dialog.accept());

  await t.test('the vote page, opened by a join link, waits for a question', async () => {
    await phone.goto(`${base}/vote.html?room=${mine.room}#token=${mine.token}`);
    await phone.waitForSelector('#vote[data-state="idle"] .vote-waiting', { timeout: 15_000 });
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
    await presenter.selectOption('#chapter', 'none-race');
    const opened = Date.now();
    await presenter.click('#open');
    await phone.waitForSelector('#vote[data-state="open"] .vote-option', { timeout: 5_000 });
    const took = Date.now() - opened;
    console.log(`the question reached the phone ${took} ms after the click`);
    assert.equal(await phone.$$eval('.vote-option', (b) => b.length), await presenter.$$eval('#options li', (li) => li.length));
    assert.match(await presenter.textContent('#poll-state'), /Round 1: voting/);
    await noSideScroll(phone);
  });

  await t.test('a tap votes, a second tap changes it, the admin view counts one vote', async () => {
    await phone.click('.vote-option[data-option="1"]');
    await phone.waitForSelector('.vote-option[data-option="1"][aria-pressed="true"]');
    await phone.click('.vote-option[data-option="0"]');
    await phone.waitForSelector('.vote-option[data-option="0"][aria-pressed="true"]');
    assert.equal(await phone.$$eval('.vote-option[aria-pressed="true"]', (b) => b.length), 1);
    const view = await adminCall('GET', '/admin/class/poll');
    assert.equal(view.status, 200, JSON.stringify(view.body));
    const counts = view.body.rounds[0].counts;
    assert.equal(counts[0], 1, JSON.stringify(counts));
    assert.equal(counts.reduce((a, b) => a + b, 0), 1, JSON.stringify(counts));
    // The projector shows how many voted, never for what.
    await presenter.waitForFunction(() => document.querySelector('#voted').textContent === '1', null, { timeout: 5_000 });
    assert.equal(await presenter.$('.present-bar'), null, 'no counts per option before the reveal');
    await presenter.screenshot({ path: join(SHOTS, '33-present-open.png') });
    await phone.screenshot({ path: join(SHOTS, '34-vote-phone-voted.png') });
  });

  await t.test('reloaded, the phone still shows its vote; the dashboard shows the question on top', async () => {
    await phone.reload();
    await phone.waitForSelector('.vote-option[data-option="0"][aria-pressed="true"]', { timeout: 10_000 });
    dash = await newPhone();
    await dash.goto(`${base}/?room=${other.room}#token=${other.token}`);
    await dash.waitForSelector('#vote:not([hidden]) .vote-option', { timeout: 10_000 });
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
    assert.match(await phone.textContent('.reveal-landed'), /The run landed in/);
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
    await page.context().close();
  });

  await phone.context().close();
  await presenter.context().close();
  assert.equal((await adminCall('DELETE', '/admin/class')).status, 200);
});
