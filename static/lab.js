// The lab panel: a room's own lock as steps (`GET /lab`), the ladder's rungs as starting points
// (`static/locks/<tier>/<step>.lua`), submitting it, and the grader's report card. Loaded by
// app.js the first time the panel opens, with the page's helpers; its strings join i18n.js's.
// Both tables have the same keys: loadtest/tests/curriculum_text.rs checks them with i18n.js's.

import { t, language, addStrings } from './i18n.js';

const en = {
  'lab.contract': 'Each step is one Lua script, its own round trip. KEYS[1] the lock, KEYS[2] the fencing-token counter, ARGV[1] your unique value, ARGV[2] the lease in ms, ARGV[3] the release channel. Acquire: 1 goes on, 0 or {0, ms left} is busy, {depth, token} is held (a token above 0 is checked by the stock). Release: 1 goes on, 0 stops. Renew (every lease/3): 1 while still yours. Leave a step empty to skip it.',
  'lab.start': 'start from a rung…',
  'lab.load': 'Load',
  'lab.submit': 'Submit my lock',
  'lab.grade': 'Attack my lock',
  'lab.grading': 'attacking… (about half a minute)',
  'lab.submitted': 'Lock submitted: this room now sells under it (tier custom).',
  'lab.loaded': 'Loaded the {tier} rung: edit it, then submit.',
  'lab.lasterror': 'Your scripts last said: {error}',
  'lab.matches': 'Matches the ladder\'s rung: {tier}',
  'lab.best': 'Holds every attack a lock alone can hold; only a fencing token checked by the stock survives the pause (tier fenced).',
  'lab.nomatch': 'Matches no rung of the ladder.',
  'lab.replay': 'watch again',
  'lab.step.acquire-1': 'acquire 1',
  'lab.step.acquire-2': 'acquire 2',
  'lab.step.acquire-3': 'acquire 3',
  'lab.step.release-1': 'release 1',
  'lab.step.release-2': 'release 2',
  'lab.step.renew': 'renew',
  'lab.outcome.held': 'held',
  'lab.outcome.overlap': 'two holders',
  'lab.outcome.foreign-release': 'deleted another\'s lock',
  'lab.outcome.deadlock': 'deadlock',
  'lab.outcome.not-applicable': 'not applicable',
  'lab.outcome.failed': 'your scripts failed',
  'lab.attack.contention': 'plain contention',
  'lab.attack.holder-dies': 'the holder dies',
  'lab.attack.holder-dies-between-steps': 'the holder dies between acquire steps',
  'lab.attack.slow-work': 'work longer than the lease',
  'lab.attack.release-gap': 'a pause between release steps',
  'lab.attack.holder-pause': 'the holder pauses past its lease',
  'lab.attack.failover': 'the lock store fails over',
};

const zh = {
  'lab.contract': '每一步是一段 Lua 脚本，单独一次往返。KEYS[1] 是锁，KEYS[2] 是围栏令牌计数器，ARGV[1] 是你的唯一值，ARGV[2] 是租约（毫秒），ARGV[3] 是释放通知的频道。加锁：返回 1 继续，返回 0 或 {0, 剩余毫秒} 表示锁被占用，返回 {重入次数, 令牌} 表示已持锁（令牌大于 0 时由库存一侧检查）。释放：返回 1 继续，返回 0 停止。续期（每隔租约的三分之一）：仍是你的锁就返回 1。留空的步骤会被跳过。',
  'lab.start': '从阶梯上的某一级开始…',
  'lab.load': '载入',
  'lab.submit': '提交我的锁',
  'lab.grade': '攻击我的锁',
  'lab.grading': '攻击中……（大约半分钟）',
  'lab.submitted': '锁已提交：这个房间现在用它来卖（custom 方案）。',
  'lab.loaded': '已载入 {tier} 这一级：改好后再提交。',
  'lab.lasterror': '你的脚本最近报错：{error}',
  'lab.matches': '与阶梯上的这一级相同：{tier}',
  'lab.best': '所有单靠锁能挡住的攻击都挡住了；只有库存那一侧检查的围栏令牌才能扛住停顿（fenced 方案）。',
  'lab.nomatch': '与阶梯上的任何一级都不同。',
  'lab.replay': '再看一遍',
  'lab.step.acquire-1': '加锁 1',
  'lab.step.acquire-2': '加锁 2',
  'lab.step.acquire-3': '加锁 3',
  'lab.step.release-1': '释放 1',
  'lab.step.release-2': '释放 2',
  'lab.step.renew': '续期',
  'lab.outcome.held': '守住了',
  'lab.outcome.overlap': '两个持锁者',
  'lab.outcome.foreign-release': '误删了别人的锁',
  'lab.outcome.deadlock': '死锁',
  'lab.outcome.not-applicable': '不适用',
  'lab.outcome.failed': '你的脚本出错了',
  'lab.attack.contention': '普通并发',
  'lab.attack.holder-dies': '持锁者死掉',
  'lab.attack.holder-dies-between-steps': '持锁者死在两步加锁之间',
  'lab.attack.slow-work': '业务时间超过租约',
  'lab.attack.release-gap': '两步释放之间停顿',
  'lab.attack.holder-pause': '持锁者停顿超过租约',
  'lab.attack.failover': '锁存储主从切换',
};

addStrings({ en, zh });

/** The steps in the order the contract runs them, and the ladder's rungs to start from. */
const STEPS = ['acquire-1', 'acquire-2', 'acquire-3', 'release-1', 'release-2', 'renew'];
const RUNGS = ['setnx', 'setnx-expire', 'atomic-expiry', 'uuid-owner', 'lua-release', 'reentrant-watchdog', 'fair', 'fenced'];

/**
 * Builds the panel and wires it to the page's helpers: `$` (a selector), `call` (an API call
 * in this room, with this tab's token) and `act` (runs an action with its button disabled and
 * says how it went). Returns what app.js calls when the language changes.
 */
export function startLab({ $, call, act }) {
  let card = null; // the last report card, redrawn when the language changes

  for (const step of STEPS) {
    const label = document.createElement('label');
    const name = document.createElement('span');
    name.dataset.i18n = `lab.step.${step}`;
    name.textContent = t(`lab.step.${step}`);
    const area = document.createElement('textarea');
    area.id = `lab-${step}`;
    area.spellcheck = false;
    area.rows = 3;
    label.append(name, area);
    $('#lab-steps').appendChild(label);
  }
  for (const rung of RUNGS) {
    const opt = document.createElement('option');
    opt.value = rung;
    opt.textContent = rung;
    $('#lab-start').appendChild(opt);
  }

  const showError = (error) => {
    $('#lab-error').textContent = error ? t('lab.lasterror', { error }) : '';
  };

  async function load() {
    try {
      const lab = await call('GET', '/lab');
      if (lab.lock) {
        const steps = Object.fromEntries(STEPS.map((s) => [s, '']));
        lab.lock.acquire.forEach((src, i) => { steps[`acquire-${i + 1}`] = src; });
        lab.lock.release.forEach((src, i) => { steps[`release-${i + 1}`] = src; });
        steps.renew = lab.lock.renew || '';
        for (const step of STEPS) $(`#lab-${step}`).value = steps[step];
      }
      showError(lab.last_error);
    } catch { /* no lab on this fleet, or the room is gone: the panel stays empty */ }
  }

  /** The lock in the editor; a step is sent as typed (trimming its start would shift the
   * line numbers of Redis's errors), an empty one is left out. */
  function lock() {
    const value = (step) => $(`#lab-${step}`).value;
    const given = (text) => text.trim() !== '';
    const kind = (what) => STEPS.filter((s) => s.startsWith(what)).map(value).filter(given);
    const submitted = { acquire: kind('acquire-'), release: kind('release-') };
    if (given(value('renew'))) submitted.renew = value('renew');
    return submitted;
  }

  function draw() {
    const box = $('#lab-card');
    box.replaceChildren();
    if (!card) return;
    const list = document.createElement('ul');
    for (const a of card.attacks) {
      const li = document.createElement('li');
      li.dataset.attack = a.attack;
      li.dataset.outcome = a.outcome;
      const broke = !['held', 'not-applicable', 'failed'].includes(a.outcome);
      const badge = document.createElement('span');
      badge.className = `outcome ${broke ? 'broke' : a.outcome}`;
      badge.textContent = t(`lab.outcome.${a.outcome}`);
      li.append(badge, t(`lab.attack.${a.attack}`));
      if (broke) {
        // Watch the attack again: its run is then what the timeline above draws.
        const again = document.createElement('button');
        again.type = 'button';
        again.textContent = t('lab.replay');
        again.addEventListener('click', (ev) => act(ev.target, () => grade(a.attack)));
        li.appendChild(again);
      }
      const why = a.note || (language() === 'zh' ? a.hole_zh : a.hole_en);
      if (why) {
        const hole = document.createElement('span');
        hole.className = 'hole';
        hole.textContent = why;
        li.appendChild(hole);
      }
      list.appendChild(li);
    }
    box.appendChild(list);
    if (card.attacks.length > 1) {
      const rung = document.createElement('div');
      rung.className = 'rung';
      rung.id = 'lab-rung';
      rung.textContent = card.matches ? t('lab.matches', { tier: card.matches })
        : card.as_good_as_a_lock_gets ? t('lab.best') : t('lab.nomatch');
      box.appendChild(rung);
    }
  }

  async function grade(only) {
    const box = $('#lab-card');
    box.dataset.result = 'running';
    box.textContent = t('lab.grading');
    try {
      const graded = await call('POST', '/admin/lab/grade', only ? { only } : undefined);
      // One attack watched again keeps the whole card, with that attack's new outcome.
      card = only && card
        ? { ...card, attacks: card.attacks.map((a) => (a.attack === only ? graded.attacks[0] : a)) }
        : graded;
    } finally {
      draw();
      box.dataset.result = card ? 'done' : '';
    }
    await load();
    return '';
  }

  $('#lab-load').addEventListener('click', (ev) => act(ev.target, async () => {
    const rung = $('#lab-start').value;
    if (!rung) return '';
    for (const step of STEPS) {
      const resp = await fetch(`locks/${rung}/${step}.lua`);
      $(`#lab-${step}`).value = resp.ok ? await resp.text() : '';
    }
    return t('lab.loaded', { tier: rung });
  }));

  $('#lab-submit').addEventListener('click', (ev) => act(ev.target, async () => {
    await call('PUT', '/admin/lab', lock());
    await call('PUT', '/admin/tier', { tier: 'custom' });
    showError('');
    return t('lab.submitted');
  }));

  $('#lab-grade').addEventListener('click', (ev) => act(ev.target, () => grade()));

  load();
  return { translate: draw };
}
