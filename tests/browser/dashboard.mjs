// The dashboard: read-only without the token; unlock; tier `none`, reset, fire a server-side
// burst, see oversold > 0; `lua-release`, reset, fire, see 0; Chinese via the toggle and by
// default for a zh browser; another room sees none of it; last (it changes the room), a
// catalog scenario shows PASS/FAIL. On a phone (390 × 844): stacked, 20 sections a window,
// nothing overlapping or wider than the screen.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOM, SHOTS, adminCall, apart, base, boxes, browser, chooseTier, figure, fire, newPage, newPhone, noSideScroll, resetStock, shot, token, waitFigure } from './harness.mjs';

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
