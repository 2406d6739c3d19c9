// The run viewer, as `loadtest check --html` writes it and a student opens it from disk (no
// fleet, no network): the slow-business run (its first violation a lease that ran out under
// a working holder) beside the fenced one. Hovering (a mouse) or tapping (a phone) an
// operation shows the stores' state just before and after it; "jump to first violation"
// selects the checker's first violation and scrolls it into view; at a desktop's size, a
// projector's (1920 × 1080) and 390 × 844, in English and Chinese. Then the same viewer from
// the fleet (GET /admin/runs/{id}/view) for a chapter it ran, opened from a dashboard tab as
// the lab card opens it, under the pages' policy (no inline script runs: /viewer.js does).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, SHOTS, adminCall, base, newPage, newPhone, noSideScroll, pageErrors, shot, token } from './harness.mjs';

const LOADTEST = process.env.LOADTEST_BIN || join(dirname(process.env.OVERSELL_BIN || join(ROOT, 'target/debug/oversell')), 'loadtest');
const SLOW = join(ROOT, 'workshop/tests/histories/lua-release-slow-business.jsonl');
const FENCED = join(ROOT, 'workshop/tests/histories/clean-fenced.jsonl');

/** The store's rows of the panel: {row: [before, after]}. */
function storeRows(page, run) {
  return page.$$eval(`section.run[data-run="${run}"] .panel tr[data-row]`, (rows) => Object.fromEntries(
    rows.map((r) => [r.dataset.row, [r.querySelector('.before').textContent, r.querySelector('.after').textContent]])));
}

/** The selected bar lies inside the timeline's visible box (the window around it shown). */
async function inView(page, run, id) {
  const { bar, box } = await page.evaluate(([run, id]) => {
    const s = document.querySelector(`section.run[data-run="${run}"]`);
    const rect = (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right }; };
    return { bar: rect(s.querySelector(`.op[data-op="${id}"] .bar`)), box: rect(s.querySelector('.scroll')) };
  }, [run, id]);
  assert.ok(bar.right > box.left && bar.left < box.right, `${id} (${bar.left}–${bar.right}) is outside the timeline's window (${box.left}–${box.right})`);
}

test('the viewer: a run written by loadtest check --html, opened from disk', async (t) => {
  const out = join(SHOTS, 'viewer-slow-beside-fenced.html');
  const written = spawnSync(LOADTEST, ['check', SLOW, '--html', out, '--beside', FENCED], { encoding: 'utf8' });
  assert.equal(written.status, 1, `the slow run is violated (exit 1, whatever runs beside it): ${written.stderr}`);
  const url = pathToFileURL(out).href;

  const projector = async () => {
    const page = await newPage('en-US');
    await page.setViewportSize({ width: 1920, height: 1080 });
    return page;
  };
  for (const [size, open] of [['desktop', () => newPage('en-US')], ['projector', projector], ['phone', () => newPhone('en-US')]]) {
    await t.test(`${size}: an operation's state before and after, then the first violation`, async () => {
      const page = await open();
      await page.goto(url);
      const second = page.locator('section.run[data-run="0"] .op[data-op="s1"]');
      if (size === 'phone') await second.tap(); else await second.hover();
      await page.waitForSelector('section.run[data-run="0"] .panel[data-op="s1"]');
      const rows = await storeRows(page, 0);
      // B came in on the store's word while A still worked inside: two believe, one holds.
      assert.deepEqual(rows.holders, ['app2:1', 'nobody']);
      assert.deepEqual(rows.believers, ['app1:1', 'nobody']);
      assert.deepEqual(rows.stock, ['5', '4']);
      assert.deepEqual(rows.fence, ['none', 'none']);
      // Beside the state, what the checker said of this operation.
      assert.match(await page.textContent('section.run[data-run="0"] .panel .said .violation'), /only a fence helps/);
      await shot(page, `viewer-${size}-hover`);

      await page.click('section.run[data-run="0"] .jump');
      await page.waitForFunction(() => document.querySelector('section.run[data-run="0"]').dataset.selected === 's0');
      assert.equal(await page.getAttribute('section.run[data-run="0"] .panel', 'data-op'), 's0');
      assert.equal(await page.locator('section.run[data-run="0"] .op.selected').getAttribute('data-op'), 's0');
      assert.match(await page.textContent('section.run[data-run="0"] .finding'), /only a fence helps/);
      await inView(page, 0, 's0');
      // The run beside holds: nothing to jump to.
      assert.ok(await page.locator('section.run[data-run="1"] .jump').isDisabled());
      await noSideScroll(page);
      if (size === 'phone') {
        // Words at the page's own size, not scaled into the screen.
        const px = await page.$eval('section.run[data-run="0"] .panel td', (e) => parseFloat(getComputedStyle(e).fontSize));
        assert.ok(px >= 14, `the panel's words are ${px} px`);
      }
      await shot(page, `viewer-${size}-first-violation`);

      await page.click('#lang');
      await page.waitForFunction(() => document.querySelector('section.run[data-run="0"] .jump').textContent === '跳到第一个违反');
      // The selection stays through the language switch; the rows say it in Chinese.
      assert.equal(await page.getAttribute('section.run[data-run="0"] .panel', 'data-op'), 's0');
      assert.match(await page.textContent('section.run[data-run="0"] .panel tr[data-row="holders"] th'), /持锁者/);
      await noSideScroll(page);
      await shot(page, `viewer-${size}-zh`);

      await page.fill('#filter', 'app2');
      const dimmed = await page.$$eval('section.run[data-run="0"] .op.dim', (els) => els.map((e) => e.dataset.op));
      assert.ok(dimmed.includes('s0') && !dimmed.includes('s1'), `filtered on app2, dimmed: ${dimmed}`);
      await page.context().close();
    });
  }
});

test('the viewer draws the clocks\' bound the history states as a band at each lease\'s ends', async () => {
  const bounded = join(SHOTS, 'viewer-bounded.jsonl');
  const text = readFileSync(SLOW, 'utf8').replace('"fault": "launcher"}', '"fault": "launcher", "bound_us": 2000}');
  assert.notEqual(text, readFileSync(SLOW, 'utf8'), 'the run line took the bound');
  writeFileSync(bounded, text);
  const out = join(SHOTS, 'viewer-bounded.html');
  const written = spawnSync(LOADTEST, ['check', bounded, '--html', out], { encoding: 'utf8' });
  assert.equal(written.status, 1, written.stderr);
  const page = await newPage('en-US');
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('.op.lease');
  assert.match(await page.textContent('section.run[data-run="0"] .exit'), /clock bound ± 2 ms/);
  // Three leases, each with a grant and a deadline: six bands, each as wide as 4 ms reads.
  const bands = await page.$$eval('.op.lease .bound', (els) => els.map((e) => Number(e.getAttribute('width'))));
  assert.equal(bands.length, 6);
  assert.ok(bands.every((w) => w > 5), `bands ${bands}`);
  await shot(page, 'viewer-bounded');
  await page.context().close();
});

test('the viewer on the fleet: a chapter run, opened from a dashboard tab under the pages\' policy', async () => {
  const room = 'viewer-browser';
  const ran = await adminCall('POST', `/admin/scenario?room=${room}`, { id: 'lua-release-slow-business' });
  assert.equal(ran.status, 200, JSON.stringify(ran.body));
  const runId = ran.body.run_id;
  assert.ok(runId, JSON.stringify(ran.body));
  const page = await newPage('en-US');
  const refused = [];
  const watch = (p) => p.on('console', (msg) => { if (/Content Security Policy/i.test(msg.text())) refused.push(msg.text()); });
  watch(page);
  await page.goto(`${base}/?room=${room}`);
  await page.fill('#token', token);
  await page.click('#unlock');
  await page.waitForSelector('#admin-status.unlocked');
  const [tab] = await Promise.all([
    page.waitForEvent('popup'),
    page.evaluate((id) => import('/violation.js').then((m) => m.openViewer(id, 'en')), runId),
  ]);
  tab.on('pageerror', (err) => pageErrors.push(`viewer tab: ${err.message}`));
  watch(tab);
  await tab.waitForSelector('section.run[data-run="0"] .op[data-op="s0"]', { timeout: 15_000 });
  const data = await tab.evaluate(() => JSON.parse(document.querySelector('#viewer-data').textContent));
  const drawn = await tab.$$eval('section.run[data-run="0"] .op', (els) => els.length);
  assert.equal(drawn, data.runs[0].ops.length, 'every operation of the kept run is drawn');
  const first = data.runs[0].findings[data.runs[0].first_violation];
  assert.ok(first, 'the slow-business chapter breaks mutual exclusion on the fleet too');
  await tab.click('section.run[data-run="0"] .jump');
  await tab.waitForFunction((id) => document.querySelector('section.run[data-run="0"]').dataset.selected === id, first.ops[0]);
  assert.equal(await tab.getAttribute('section.run[data-run="0"] .panel', 'data-op'), first.ops[0]);
  await shot(tab, 'viewer-fleet-first-violation');
  assert.deepEqual(refused, [], 'the pages\' policy refused nothing');
  await page.context().close();
});
