// The lab page, reached from the dashboard with the tab's token: a rung loaded with its line
// numbers, submitted (the room switches to custom), buyers sold through it onto the page's
// timeline, graded twice, in Chinese, a compile error's line marked; at 390 px, one column and
// no sideways scroll, in English and Chinese.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, base, browser, newPage, noSideScroll, pageErrors, shot, token } from './harness.mjs';

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
    // Work past the lease let two holders in: the card steps through that attack's run.
    await page.waitForSelector('#lab-viewer');
    const [tab] = await Promise.all([page.waitForEvent('popup'), page.click('#lab-viewer')]);
    tab.on('pageerror', (err) => pageErrors.push(`viewer tab: ${err.message}`));
    await tab.waitForSelector('section.run[data-run="0"] .op', { timeout: 15_000 });
    await tab.click('section.run[data-run="0"] .jump');
    await tab.waitForFunction(() => document.querySelector('section.run[data-run="0"]').dataset.selected);
    await shot(tab, '22-lab-viewer');
    await tab.close();
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

test('searching every schedule on a phone (390 px): the break no attack made, said plainly', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const phone = await context.newPage();
  phone.on('pageerror', (err) => pageErrors.push(err.message));
  await phone.goto(`${base}/lab.html?room=lab-search`);
  await phone.fill('#token', token);
  await phone.click('#unlock');
  await phone.waitForSelector('#admin-status.unlocked');
  // fenced's acquire and renew, and a release that takes the lease off before it deletes:
  // every attack holds, but a buyer dead between the two release steps never lets go.
  await loadRung(phone, 'fenced');
  await phone.fill('#lab-release-1', "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end\nredis.call('PERSIST', KEYS[1])\nreturn 1");
  await phone.fill('#lab-release-2', "redis.call('DEL', KEYS[1])\nreturn 1");
  await submitLock(phone);
  await phone.click('#lab-search-every');
  await phone.waitForSelector('#lab-search[data-result="done"]', { timeout: 60_000 });
  assert.match(await phone.textContent('#lab-search .search-verdict'), /^Every schedule \(the model\): broken at depth 5: nobody can take the lock again/);
  assert.match(await phone.textContent('#lab-search ol'), /A dies between two release steps/);
  assert.match(await phone.textContent('#lab-beyond'), /a schedule none of the attacks made$/);
  await noSideScroll(phone);
  await phone.screenshot({ path: join(SHOTS, '26-lab-phone-search.png'), fullPage: true });
  await phone.click('#lang-toggle');
  await phone.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.match(await phone.textContent('#lab-beyond'), /任何一种攻击都没有构造出的调度/);
  await noSideScroll(phone);
  await phone.screenshot({ path: join(SHOTS, '27-lab-phone-search-zh.png'), fullPage: true });
  await context.close();
});
