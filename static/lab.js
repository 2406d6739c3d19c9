// The lab: a room's own lock as steps (`GET /lab`), the ladder's rungs as starting points
// (`static/locks/<tier>/<step>.lua`), submitting it, and the grader's report card. The lab page
// (lab.html, lab-page.js) runs the editor; the dashboard shows a line on it and links there.
// Its strings join i18n.js's when this module loads; both tables have the same keys:
// workshop/tests/curriculum_text.rs checks them with i18n.js's.

import { t, language, addStrings } from './i18n.js';
import { Editor } from './editor.js';
import { openViewer, violationImage } from './violation.js';

const en = {
  'lab.contract': 'Each step is one Lua script, its own round trip. KEYS[1] the lock, KEYS[2] the fencing-token counter, ARGV[1] your unique value, ARGV[2] the lease in ms, ARGV[3] the release channel. Acquire: 1 goes on, 0 or {0, ms left} is busy, {depth, token} is held (a token above 0 is checked by the stock). Release: 1 goes on, 0 stops. Renew (every lease/3): 1 while still yours. Leave a step empty to skip it.',
  'lab.start': 'start from a rung…',
  'lab.load': 'Load',
  'lab.submit': 'Submit my lock',
  'lab.grade': 'Attack my lock',
  'lab.grading': 'attacking… (about half a minute)',
  'lab.queued': 'in line for the grader, place {place}: your card in about {secs} s (the class is graded a few rooms at a time)',
  'lab.running': 'attacking… about {secs} s left',
  'lab.lost': 'the grading was lost (an instance restarted): press again',
  'lab.submitted': 'Lock submitted: this room now sells under it (tier custom) on every instance.',
  'lab.page.title': 'oversell · the lab: your own lock',
  'lab.page.back': '← dashboard',
  'lab.page.steps': 'Your steps',
  'lab.page.contract': 'The contract',
  'lab.page.card': 'The report card',
  'lab.page.nocard': 'Submit your lock, then attack it: the grader\'s card shows here.',
  'lab.page.try': 'Watch it sell',
  'lab.page.trystock': 'items',
  'lab.page.trybuyers': 'buyers',
  'lab.page.tryhint': 'puts the items on sale again and sends the buyers through nginx: each sale is a bar on the timeline below.',
  'lab.loaded': 'Loaded the {tier} rung: edit it, then submit.',
  'lab.matches': 'Matches the ladder\'s rung: {tier}',
  'lab.best': 'Holds every attack a lock alone can hold; only a fencing token checked by the stock survives the pause (tier fenced).',
  'lab.nomatch': 'Matches no rung of the ladder.',
  'lab.replay': 'watch again',
  'lab.where': 'Where your lock broke: the first violation in the attack\'s history',
  'lab.viewer': 'Step through the attack',
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
  'lab.search': 'Search every schedule',
  'lab.searching': 'searching every schedule of two buyers on the model…',
  'lab.search.title': 'Every schedule (the model): ',
  'lab.search.broken': 'broken at depth {depth}: {what}',
  'lab.search.held': 'no schedule within its bounds breaks it ({states} states)',
  'lab.search.bound': 'no break found before its bound ({states} states): not a proof',
  'lab.search.attacks': 'The attacks on the model: {held} of {all} held',
};

const zh = {
  'lab.contract': '每一步是一段 Lua 脚本，单独一次往返。KEYS[1] 是锁，KEYS[2] 是围栏令牌计数器，ARGV[1] 是你的唯一值，ARGV[2] 是租约（毫秒），ARGV[3] 是释放通知的频道。加锁：返回 1 继续，返回 0 或 {0, 剩余毫秒} 表示锁被占用，返回 {重入次数, 令牌} 表示已持锁（令牌大于 0 时由库存一侧检查）。释放：返回 1 继续，返回 0 停止。续期（每隔租约的三分之一）：仍是你的锁就返回 1。留空的步骤会被跳过。',
  'lab.start': '从阶梯上的某一级开始…',
  'lab.load': '载入',
  'lab.submit': '提交我的锁',
  'lab.grade': '攻击我的锁',
  'lab.grading': '攻击中……（大约半分钟）',
  'lab.queued': '排队等待评分，第 {place} 位：大约 {secs} 秒后出结果（全班每次只评几个房间）',
  'lab.running': '攻击中……大约还剩 {secs} 秒',
  'lab.lost': '评分丢失了（有实例重启）：请再按一次',
  'lab.submitted': '锁已提交：这个房间的每个实例现在都用它来卖（custom 方案）。',
  'lab.page.title': 'oversell · 实验课：你自己的锁',
  'lab.page.back': '← 仪表盘',
  'lab.page.steps': '你的步骤',
  'lab.page.contract': '脚本约定',
  'lab.page.card': '成绩单',
  'lab.page.nocard': '先提交你的锁，再攻击它：评分器的成绩单会显示在这里。',
  'lab.page.try': '看它卖货',
  'lab.page.trystock': '件商品',
  'lab.page.trybuyers': '个买家',
  'lab.page.tryhint': '重新上架这些商品，再让这些买家经 nginx 下单：每一单都是下面时间线上的一条。',
  'lab.loaded': '已载入 {tier} 这一级：改好后再提交。',
  'lab.matches': '与阶梯上的这一级相同：{tier}',
  'lab.best': '所有单靠锁能挡住的攻击都挡住了；只有库存那一侧检查的围栏令牌才能扛住停顿（fenced 方案）。',
  'lab.nomatch': '与阶梯上的任何一级都不同。',
  'lab.replay': '再看一遍',
  'lab.where': '你的锁在哪里失守：这次攻击的历史中的第一个违规',
  'lab.viewer': '逐步查看这次攻击',
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
  'lab.search': '搜索所有调度',
  'lab.searching': '正在模型上搜索两个买家的所有调度……',
  'lab.search.title': '所有调度（模型）：',
  'lab.search.broken': '在第 {depth} 步被攻破：{what}',
  'lab.search.held': '界限内没有任何调度能攻破它（{states} 个状态）',
  'lab.search.bound': '到达界限前没有找到攻破（{states} 个状态）：这不是证明',
  'lab.search.attacks': '模型上的攻击：{all} 种中守住了 {held} 种',
};

addStrings({ en, zh });

/** The steps in the order the contract runs them. */
const STEPS = ['acquire-1', 'acquire-2', 'acquire-3', 'release-1', 'release-2', 'renew'];

/**
 * The editor whose step an error names ("acquire step 2: … user_script:3: …"), and the line:
 * a step is counted among those sent, and empty editors are not sent.
 */
function errorPlace(error, sent) {
  const step = /^(acquire step \d|release step \d|renew)\b/.exec(error || '');
  const line = /user_script:(\d+)/.exec(error || '');
  if (!step) return null;
  const [kind, n] = step[1].split(' step ');
  const editors = sent.filter((s) => s.startsWith(kind));
  const editor = kind === 'renew' ? 'renew' : editors[Number(n) - 1];
  return editor ? { editor, line: line ? Number(line[1]) : 0 } : null;
}

/**
 * Builds the lab's editor in the page and wires it to the page's helpers: `$` (a selector),
 * `call` (an API call in this room, with this tab's token) and `act` (runs an action with its
 * button disabled and says how it went). `onSubmitted(reply)` follows a submission. Returns
 * what the page calls when the language changes.
 */
export function startLab({ $, call, act, onSubmitted }) {
  let card = null; // the last report card, redrawn when the language changes
  let searched = null; // the last search's card, likewise
  const editors = {};
  let sent = []; // the editors last sent, in order: where an error's "step 2" is

  for (const step of STEPS) {
    const box = document.createElement('section');
    box.className = `step step-${step.split('-')[0]}`;
    const name = document.createElement('h3');
    name.dataset.i18n = `lab.step.${step}`;
    name.textContent = t(`lab.step.${step}`);
    box.appendChild(name);
    $('#lab-steps').appendChild(box);
    editors[step] = new Editor(box, `lab-${step}`);
    name.id = `lab-${step}-name`;
    editors[step].area.setAttribute('aria-labelledby', name.id);
  }
  // The rungs to start from: every tier with a preset folder, as the tier table lists them
  // (`GET /tiers`), in the ladder's order.
  call('GET', '/tiers').then(({ tiers }) => {
    for (const tier of tiers.filter((row) => row.preset)) {
      const opt = document.createElement('option');
      opt.value = tier.preset;
      opt.textContent = tier.id;
      $('#lab-start').appendChild(opt);
    }
  }).catch(() => {}); // the picker stays empty; loading a rung is not needed to write one

  let shownError = ''; // said again in the page's new language
  const showError = (error) => {
    shownError = error || '';
    $('#lab-error').textContent = error ? t('lab.lasterror', { error }) : '';
    const place = errorPlace(error, sent);
    for (const step of STEPS) editors[step].mark(place?.editor === step ? place.line : 0);
  };

  const given = (text) => text.trim() !== '';

  async function load() {
    try {
      const lab = await call('GET', '/lab');
      if (lab.lock) {
        const steps = Object.fromEntries(STEPS.map((s) => [s, '']));
        lab.lock.acquire.forEach((src, i) => { steps[`acquire-${i + 1}`] = src; });
        lab.lock.release.forEach((src, i) => { steps[`release-${i + 1}`] = src; });
        steps.renew = lab.lock.renew || '';
        // What the room holds is what is in the editors: a first visit, or after a grading.
        if (STEPS.every((s) => !given(editors[s].value))) {
          for (const step of STEPS) editors[step].value = steps[step];
        }
        sent = STEPS.filter((s) => given(steps[s]));
      }
      showError(lab.last_error);
    } catch { /* no lab on this fleet, or the room is gone: the editor stays empty */ }
  }

  /** The lock in the editor; a step is sent as typed (trimming its start would shift the
   * line numbers of Redis's errors), an empty one is left out. */
  function lock() {
    sent = STEPS.filter((s) => given(editors[s].value));
    const kind = (what) => sent.filter((s) => s.startsWith(what)).map((s) => editors[s].value);
    const submitted = { acquire: kind('acquire-'), release: kind('release-') };
    if (sent.includes('renew')) submitted.renew = editors.renew.value;
    return submitted;
  }

  function draw() {
    const box = $('#lab-card');
    box.replaceChildren();
    if (!card) {
      const hint = document.createElement('p');
      hint.className = 'muted';
      hint.textContent = t('lab.page.nocard');
      box.appendChild(hint);
      return;
    }
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
        // Watch the attack again: its run is then what the timeline below draws.
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
    // The first attack in which two holders were let in, drawn from its history (the fleet
    // keeps the histories of the attacks that broke the lock). A deadlock breaks no safety
    // the history could show: it is the sales that stop, which the card already says.
    const first = card.attacks.find((a) => a.run?.run_id && ['overlap', 'foreign-release'].includes(a.outcome));
    if (first) {
      const figure = document.createElement('figure');
      figure.className = 'where';
      const caption = document.createElement('figcaption');
      caption.textContent = t('lab.where');
      figure.appendChild(caption);
      // Every operation of that attack, the stores' state before and after each.
      const step = document.createElement('button');
      step.type = 'button';
      step.id = 'lab-viewer';
      step.textContent = t('lab.viewer');
      step.addEventListener('click', () => openViewer(first.run.run_id, language()));
      figure.appendChild(step);
      box.appendChild(figure);
      violationImage(first.run.run_id, language(), t('lab.where')).then((img) => {
        if (img) figure.appendChild(img); else figure.remove();
      });
    }
    if (card.attacks.length > 1) {
      const rung = document.createElement('div');
      rung.className = 'rung';
      rung.id = 'lab-rung';
      rung.textContent = card.matches ? t('lab.matches', { tier: card.matches })
        : card.as_good_as_a_lock_gets ? t('lab.best') : t('lab.nomatch');
      box.appendChild(rung);
    }
  }

  /** The search's card: the model's verdict on every schedule, the shortest break step by
   * step, and the sentence when every attack held but the search breaks the lock. */
  function drawSearch() {
    const box = $('#lab-search');
    box.replaceChildren();
    if (!searched) return;
    const zh = language() === 'zh';
    const { search } = searched;
    const head = document.createElement('p');
    head.className = 'search-verdict';
    head.dataset.verdict = search.verdict;
    const shortest = search.shortest;
    const said = search.verdict === 'broken' && shortest
      ? t('lab.search.broken', { depth: shortest.depth, what: zh ? shortest.zh : shortest.en })
      : t(search.verdict === 'no-break' ? 'lab.search.held' : 'lab.search.bound', { states: search.states });
    head.textContent = t('lab.search.title') + said;
    box.appendChild(head);
    if (shortest) {
      const steps = document.createElement('ol');
      for (const step of shortest.steps) {
        const li = document.createElement('li');
        li.textContent = zh ? step.note_zh : step.note;
        steps.appendChild(li);
      }
      box.appendChild(steps);
    }
    const held = searched.attacks.filter((a) => ['held', 'not-applicable'].includes(a.outcome)).length;
    const attacks = document.createElement('p');
    attacks.className = 'muted';
    attacks.textContent = t('lab.search.attacks', { held, all: searched.attacks.length });
    box.appendChild(attacks);
    if (searched.beyond) {
      const beyond = document.createElement('p');
      beyond.className = 'beyond';
      beyond.id = 'lab-beyond';
      beyond.textContent = zh ? searched.beyond.zh : searched.beyond.en;
      box.appendChild(beyond);
    }
  }

  async function searchEvery() {
    const box = $('#lab-search');
    box.dataset.result = 'running';
    box.textContent = t('lab.searching');
    try {
      searched = await call('POST', '/admin/lab/search');
    } finally {
      drawSearch();
      box.dataset.result = searched ? 'done' : '';
    }
    return '';
  }

  /** The grader's card. A room behind others in the class's line is answered its place
   * (202, `state`), shown in the card's box and asked about again until the card is there. */
  async function waitForCard(box, only) {
    let reply = await call('POST', '/admin/lab/grade', only ? { only } : undefined);
    // Asked by its job: a grading lost with its instance is said so, not shown an older card.
    const job = reply?.job;
    while (reply?.state === 'queued' || reply?.state === 'running') {
      box.textContent = reply.state === 'queued'
        ? t('lab.queued', { place: reply.place, secs: reply.estimate_s })
        : t('lab.running', { secs: reply.estimate_s });
      await new Promise((resolve) => setTimeout(resolve, 2000));
      reply = await call('GET', job === undefined ? '/admin/lab/grade' : `/admin/lab/grade?job=${job}`);
    }
    if (reply?.state === 'idle') throw new Error(t('lab.lost'));
    return reply;
  }

  async function grade(only) {
    const box = $('#lab-card');
    box.dataset.result = 'running';
    box.textContent = t('lab.grading');
    try {
      const graded = await waitForCard(box, only);
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
      editors[step].value = resp.ok ? await resp.text() : '';
    }
    showError('');
    return t('lab.loaded', { tier: rung });
  }));

  $('#lab-submit').addEventListener('click', (ev) => act(ev.target, async () => {
    // The server switches the room to tier custom with the submission (one request).
    let reply;
    try {
      reply = await call('PUT', '/admin/lab', lock());
    } catch (err) {
      showError(err.status === 400 ? err.message : '');
      throw err;
    }
    showError('');
    onSubmitted?.(reply);
    return t('lab.submitted');
  }));

  $('#lab-grade').addEventListener('click', (ev) => act(ev.target, () => grade()));
  $('#lab-search-every').addEventListener('click', (ev) => act(ev.target, () => searchEvery()));

  draw();
  load();
  return {
    translate() {
      draw();
      drawSearch();
      showError(shownError);
    },
  };
}
