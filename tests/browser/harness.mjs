// The browser tests' harness: one fleet (`oversell up`: redis-server, 3 instances, nginx,
// a lab lock store) and one headless Chromium (Debian's, driven by playwright-core) for every
// page's tests (all.test.mjs imports them), and the helpers they share. Screenshots go to
// artifacts/browser/. Env: OVERSELL_BIN (default target/debug/oversell), CHROMIUM (default
// /usr/bin/chromium).

import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = process.env.OVERSELL_BIN || join(ROOT, 'target/debug/oversell');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'artifacts/browser');
export const ROOM = 'browser';

let up; // the `oversell up` child
let upOutput = '';
export let base; // nginx URL
export let token;
export let browser;

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

/** Starts `oversell up` and resolves with its URL and admin token (read from the file its banner
 * names) once it prints `ready:`. */
function startFleet(port) {
  return new Promise((ok, fail) => {
    const env = { ...process.env, RUST_LOG: 'oversell=warn', BUSINESS_MS: '20', WAIT_DEADLINE_MS: '20000' };
    delete env.ADMIN_TOKEN;
    delete env.LOCK_TIER;
    // Its class dir in a temp dir of its own: a browser run keeps no class in the home directory.
    env.XDG_STATE_HOME = mkdtempSync(join(tmpdir(), 'oversell-browser-'));
    // `--lab`: a lock store of its own, where students' locks may run.
    up = spawn(BIN, ['up', '--instances', '3', '--port', String(port), '--lab'], {
      cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => fail(new Error(`oversell up not ready in 60s:\n${upOutput}`)), 60_000);
    const onData = (chunk) => {
      upOutput += chunk.toString();
      // The banner names the admin token's file; it prints no token.
      const file = upOutput.match(/^admin token file: (\S+)/m);
      const ready = upOutput.match(/^ready: (\S+)$/m);
      if (file && ready) {
        clearTimeout(timer);
        ok({ url: ready[1], token: readFileSync(file[1], 'utf8') });
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
export const pageErrors = [];

export async function newPage(locale) {
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
export async function figure(page, name) {
  const text = await page.textContent(`#fig-${name}`);
  return Number(String(text).replace(/[^\d-]/g, ''));
}

/** Waits until a figure satisfies `check` (`v === 0`, `v > 20`, …); fails with what the page
 * showed. The check goes to the page as data, not code: the pages' policy refuses `eval`. */
export async function waitFigure(page, name, check, what, timeout = 15_000) {
  const [, op, n] = check.match(/^v (===|>|>=|<|<=) (-?\d+)$/) || [];
  assert.ok(op, `waitFigure cannot read the check ${check}`);
  try {
    await page.waitForFunction(
      ([id, op, n]) => {
        const text = document.querySelector(`#fig-${id}`).textContent;
        const v = Number(text.replace(/[^\d-]/g, ''));
        const holds = { '===': v === n, '>': v > n, '>=': v >= n, '<': v < n, '<=': v <= n }[op];
        return text !== '–' && holds;
      },
      [name, op, Number(n)],
      { timeout },
    );
  } catch (err) {
    throw new Error(`${name} never became ${what}: showed ${await page.textContent(`#fig-${name}`)} (${err.message})`);
  }
}

export async function shot(page, name, { fullPage = false } = {}) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

export async function chooseTier(page, tier) {
  await page.selectOption('#tier-select', tier);
  await page.waitForFunction((want) => document.querySelector('#tier-name').textContent === want, tier, { timeout: 10_000 });
}

export async function resetStock(page, stock) {
  await page.fill('#reset-stock', String(stock));
  await page.click('#reset');
  await waitFigure(page, 'orders', 'v === 0', '0 after reset');
  await waitFigure(page, 'stock', `v === ${stock}`, `${stock} after reset`);
}

export async function fire(page, buyers) {
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

/** The page is no wider than its window: nothing to scroll sideways. */
export async function noSideScroll(page) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    width: window.innerWidth,
  }));
  assert.ok(scroll <= width, `the page is ${scroll} px wide in a ${width} px window`);
}

/** A new page at a phone's size (390 × 844, touch), its errors counted. */
export async function newPhone(locale = 'en-US') {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const phone = await context.newPage();
  phone.on('pageerror', (err) => {
    console.error(`page error: ${err.message}`);
    pageErrors.push(err.message);
  });
  return phone;
}

/** The boxes of `selector`'s elements, as the page lays them out. */
export function boxes(page, selector) {
  return page.$$eval(selector, (els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { id: e.id || e.className, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  }));
}

/** No two of `list`'s boxes overlap, and each lies inside the window's width. */
export function apart(list, width, what) {
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
export async function adminCall(method, path, body) {
  const resp = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: resp.status, body: await resp.json().catch(() => null) };
}
