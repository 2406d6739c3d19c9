// English and Chinese strings of the dashboard. `t(key)` looks up the current language;
// elements with data-i18n="key" get their text from here, data-i18n-title their tooltip.

export const TIERS = [
  'none', 'local', 'setnx', 'setnx-expire', 'atomic-expiry', 'uuid-owner',
  'lua-release', 'reentrant-watchdog', 'fenced', 'atomic-deduct',
];

// Tiers whose lock has a lease (an expiry worth marking on the timeline).
export const LEASED = new Set([
  'setnx-expire', 'atomic-expiry', 'uuid-owner', 'lua-release', 'reentrant-watchdog', 'fenced',
]);

const en = {
  title: 'oversell — distributed locks, measured',
  room: 'room',
  tier: 'tier',
  live: 'live',
  reconnecting: 'reconnecting…',
  unavailable: 'Redis unavailable',
  'lang.toggle': '中文',
  'fig.stock': 'stock',
  'fig.orders': 'orders',
  'fig.oversold': 'oversold',
  'fig.lost_updates': 'lost updates',
  'fig.overlaps': 'overlaps',
  'fig.foreign_releases': 'foreign releases',
  'fig.stale_writes_rejected': 'stale writes refused',
  'fig.lock_timeouts': '503s',
  'fig.throughput': 'orders/s',
  'fig.of': 'of',
  'timeline.title': 'Lock timeline',
  'timeline.hint': 'one lane per instance · a bar = one critical section (acquire → release)',
  'timeline.empty': 'No critical section yet: fire some buyers.',
  'timeline.show': 'show last',
  'timeline.sections': 'sections',
  'legend.ok': 'alone',
  'legend.overlap': 'overlapping',
  'legend.stale': 'stale (refused)',
  'legend.soldout': 'sold out',
  'legend.expiry': 'lease expired',
  'legend.renew': 'renewal',
  'legend.foreign': 'foreign release',
  'legend.label': 'label: #fencing token, or the stock read',
  'timeline.overlapband': 'at once',
  'chart.title': 'Throughput and stock',
  'chart.rps': 'orders/s',
  'chart.stock': 'stock',
  'inst.title': 'Per instance',
  'inst.instance': 'instance',
  'inst.orders': 'orders',
  'inst.sections': 'sections',
  'inst.overlaps': 'overlaps',
  'inst.foreign': 'foreign rel.',
  'inst.stale': 'stale',
  'inst.renewals': 'renewals',
  'inst.down': 'down',
  'admin.title': 'Controls',
  'admin.token': 'admin token',
  'admin.unlock': 'Unlock',
  'admin.lock': 'Forget',
  'admin.readonly': 'Read-only: enter the admin token to drive the fleet.',
  'admin.unlocked': 'Admin: controls unlocked for this tab.',
  'admin.badtoken': 'Wrong admin token.',
  'ctl.tier': 'Lock tier',
  'ctl.reset': 'Reset stock',
  'ctl.stock': 'stock',
  'ctl.timing': 'Business time / lease',
  'ctl.business': 'business ms',
  'ctl.ttl': 'TTL ms',
  'ctl.apply': 'Apply',
  'ctl.faults': 'Faults (one-shot, next lock holder)',
  'ctl.fault.ms': 'ms',
  'ctl.fault.target': 'instance',
  'ctl.fault.any': 'any',
  'ctl.fault.crash': 'Crash holder',
  'ctl.fault.crashexpire': 'Crash before EXPIRE',
  'ctl.fault.freeze': 'Freeze holder',
  'ctl.fault.gap': 'Release gap',
  'ctl.fault.clear': 'Clear faults',
  'ctl.fault.armed': 'armed',
  'ctl.burst': 'Fire buyers (from the server)',
  'ctl.buyers': 'buyers',
  'ctl.fire': 'Fire',
  'ctl.via.fleet': 'through nginx, all instances',
  'ctl.via.instance': 'one instance only',
  'ctl.scenario': 'Scenario',
  'ctl.run': 'Run',
  'ctl.running': 'running…',
  'ctl.noscenarios': 'No scenario catalog on this server.',
  'ctl.room': 'Go to room',
  'ctl.go': 'Go',
  pass: 'PASS',
  fail: 'FAIL',
  'burst.result': '{ok} sold · {sold_out} sold out · {unavailable} × 503 · {errors} errors · {ms} ms · {rps}/s',
  'done.tier': 'Tier set to {tier}.',
  'done.reset': 'Stock reset to {stock}.',
  'done.config': 'Settings applied.',
  'done.fault': 'Fault armed: {kind}.',
  'done.clear': 'Faults cleared.',
  error: 'Error',
};

const zh = {
  title: 'oversell —— 分布式锁，用数字说话',
  room: '房间',
  tier: '锁方案',
  live: '实时',
  reconnecting: '重新连接中…',
  unavailable: 'Redis 不可用',
  'lang.toggle': 'English',
  'fig.stock': '库存',
  'fig.orders': '订单',
  'fig.oversold': '超卖',
  'fig.lost_updates': '丢失更新',
  'fig.overlaps': '临界区重叠',
  'fig.foreign_releases': '误删他人锁',
  'fig.stale_writes_rejected': '拒绝的过期写',
  'fig.lock_timeouts': '503 次数',
  'fig.throughput': '订单/秒',
  'fig.of': '共',
  'timeline.title': '锁时间线',
  'timeline.hint': '每个实例一条泳道 · 每个条块 = 一次临界区（加锁 → 释放）',
  'timeline.empty': '还没有临界区：先发起一批买家。',
  'timeline.show': '显示最近',
  'timeline.sections': '个临界区',
  'legend.ok': '独占',
  'legend.overlap': '重叠',
  'legend.stale': '过期（被拒）',
  'legend.soldout': '已售罄',
  'legend.expiry': '租约到期',
  'legend.renew': '续期',
  'legend.foreign': '误删他人锁',
  'legend.label': '标签：#围栏令牌，或读到的库存',
  'timeline.overlapband': '同时',
  'chart.title': '吞吐量与库存',
  'chart.rps': '订单/秒',
  'chart.stock': '库存',
  'inst.title': '各实例',
  'inst.instance': '实例',
  'inst.orders': '订单',
  'inst.sections': '临界区',
  'inst.overlaps': '重叠',
  'inst.foreign': '误删',
  'inst.stale': '过期',
  'inst.renewals': '续期',
  'inst.down': '离线',
  'admin.title': '控制台',
  'admin.token': '管理令牌',
  'admin.unlock': '解锁',
  'admin.lock': '清除',
  'admin.readonly': '只读：输入管理令牌后才能操作集群。',
  'admin.unlocked': '管理员：本标签页已解锁控制。',
  'admin.badtoken': '管理令牌错误。',
  'ctl.tier': '锁方案',
  'ctl.reset': '重置库存',
  'ctl.stock': '库存',
  'ctl.timing': '业务耗时 / 租约',
  'ctl.business': '业务毫秒',
  'ctl.ttl': 'TTL 毫秒',
  'ctl.apply': '应用',
  'ctl.faults': '故障（一次性，作用于下一个持锁者）',
  'ctl.fault.ms': '毫秒',
  'ctl.fault.target': '实例',
  'ctl.fault.any': '任意',
  'ctl.fault.crash': '持锁时崩溃',
  'ctl.fault.crashexpire': 'EXPIRE 前崩溃',
  'ctl.fault.freeze': '冻结持锁进程',
  'ctl.fault.gap': '释放间隙',
  'ctl.fault.clear': '清除故障',
  'ctl.fault.armed': '已布置',
  'ctl.burst': '发起买家（由服务端发出）',
  'ctl.buyers': '买家数',
  'ctl.fire': '发起',
  'ctl.via.fleet': '经 nginx，全部实例',
  'ctl.via.instance': '仅一个实例',
  'ctl.scenario': '场景',
  'ctl.run': '运行',
  'ctl.running': '运行中…',
  'ctl.noscenarios': '此服务器没有场景目录。',
  'ctl.room': '进入房间',
  'ctl.go': '进入',
  pass: '通过',
  fail: '失败',
  'burst.result': '成交 {ok} · 售罄 {sold_out} · 503 共 {unavailable} · 错误 {errors} · {ms} 毫秒 · {rps}/秒',
  'done.tier': '锁方案已切换为 {tier}。',
  'done.reset': '库存已重置为 {stock}。',
  'done.config': '设置已应用。',
  'done.fault': '已布置故障：{kind}。',
  'done.clear': '故障已清除。',
  error: '错误',
};

// One paragraph per tier: the technique and its defect.
export const TIER_TEXT = {
  en: {
    none: 'No lock at all. Every buyer reads the stock, works, and writes stock − 1. Two buyers that read the same number both sell: the counter loses updates and more items are sold than exist. This is the race every other tier tries to stop.',
    local: 'An in-process mutex per instance. Inside one process the sections take turns, so with a single instance nothing is oversold. Behind nginx with two or more instances each process has its own mutex: sections on different lanes overlap and the stock is oversold again.',
    setnx: 'SETNX takes the lock, DEL releases it, waiters retry. Exclusion holds across the fleet while every holder lives. But the lock has no lease: a holder that crashes never releases it, and every buyer after it waits until its deadline and gets a 503 — a deadlock.',
    'setnx-expire': 'SETNX, then EXPIRE as a second command, so a dead holder\'s lock times out. The two commands are not atomic: a holder that dies between them leaves a lock with no expiry, and the fleet deadlocks exactly as with plain SETNX.',
    'atomic-expiry': 'SET key value NX PX ttl takes the lock and its lease in one command, and DEL releases it. No more deadlock. But when the work outlasts the lease, the lock expires, B takes it, and A\'s DEL then deletes B\'s lock — a foreign release that lets C in too.',
    'uuid-owner': 'Each holder writes a unique value and checks it before deleting: GET, compare, DEL as separate commands. It never deletes a lock it can see is foreign — yet the lease can expire between GET and DEL, and the DEL then removes the next holder\'s lock.',
    'lua-release': 'A unique value and a Lua script that compares and deletes atomically: only the owner can release. But the lease still runs out when the business work is longer than the TTL: a second holder gets in while the first is still working, and both sell.',
    'reentrant-watchdog': 'A Redis hash of owner → hold count (the same holder can re-enter), a watchdog that renews the lease every TTL/3 while the holder runs, and pub/sub to wake waiters. Long work is safe — but a whole-process pause (a GC-like stop) longer than the lease stops the watchdog too: a second holder gets in and the paused one writes stale data when it wakes.',
    fenced: 'The watchdog lock plus a fencing token: every holder gets a number that only grows, and the stock accepts a write only with the highest token it has seen. The frozen holder wakes with an old token and its write is refused — counted under stale writes, never sold twice.',
    'atomic-deduct': 'No lock at all: one Lua script checks the stock, decrements it and records the order in a single atomic step. Nothing to expire, nothing to release, one round trip — the right tool when the whole state lives in Redis.',
  },
  zh: {
    none: '完全不加锁。每个买家读库存、处理业务、再写回库存 − 1。两个买家读到同一个数字就都会卖出：计数器丢失更新，卖出的比实际库存还多。其余所有方案都是为了阻止这个竞态。',
    local: '每个实例一把进程内互斥锁。同一进程内的临界区轮流执行，单实例时不会超卖。但 nginx 后面有两个及以上实例时，每个进程各有各的锁：不同泳道上的临界区会重叠，又开始超卖。',
    setnx: '用 SETNX 加锁、DEL 释放，等待者循环重试。只要每个持锁者都活着，整个集群就能互斥。但锁没有租约：持锁者一旦崩溃就永远不会释放，之后的买家都等到超时拿到 503 —— 死锁。',
    'setnx-expire': '先 SETNX，再用第二条命令 EXPIRE，让死掉的持锁者的锁能过期。但两条命令不是原子的：持锁者恰好死在两者之间，锁就没有过期时间，集群和单纯 SETNX 一样死锁。',
    'atomic-expiry': '用 SET key value NX PX ttl 一条命令同时加锁和设置租约，DEL 释放。不再死锁。但业务耗时超过租约时，锁过期，B 拿到锁，随后 A 的 DEL 删掉了 B 的锁 —— 误删他人锁，C 也跟着进来了。',
    'uuid-owner': '每个持锁者写入唯一值，删除前先核对：GET、比较、DEL 是三条独立命令。它不会删除明显属于别人的锁 —— 但租约可能恰好在 GET 与 DEL 之间过期，这时 DEL 删掉的是下一个持锁者的锁。',
    'lua-release': '唯一值加一段 Lua 脚本，原子地比较并删除：只有持有者能释放。但业务耗时超过 TTL 时租约照样到期：第一个持锁者还在处理，第二个已经进来，两个都卖出。',
    'reentrant-watchdog': 'Redis 哈希记录 持有者 → 重入次数（同一持有者可重入），持锁期间看门狗每 TTL/3 续期一次，用 pub/sub 唤醒等待者。长业务也安全 —— 但整个进程暂停（类似 GC 停顿）超过租约时，看门狗也停了：第二个持锁者进入，暂停的那个醒来后写入过期数据。',
    fenced: '看门狗锁加围栏令牌：每个持锁者拿到一个只增不减的编号，库存只接受携带所见最大令牌的写入。被冻结的持锁者醒来时令牌已旧，写入被拒绝 —— 记为拒绝的过期写，绝不重复卖出。',
    'atomic-deduct': '完全不用锁：一段 Lua 脚本在一个原子步骤里检查库存、扣减并记录订单。没有过期、没有释放，一次往返 —— 当全部状态都在 Redis 里时，这才是正确的工具。',
  },
};

const STRINGS = { en, zh };

let lang = pickLanguage();

function pickLanguage() {
  const saved = sessionStorage.getItem('oversell.lang') || localStorage.getItem('oversell.lang');
  if (saved === 'en' || saved === 'zh') return saved;
  const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || 'en'];
  return String(langs[0]).toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export function language() {
  return lang;
}

export function setLanguage(next) {
  lang = next === 'zh' ? 'zh' : 'en';
  localStorage.setItem('oversell.lang', lang);
  apply();
}

/** The string for `key`, with {name} placeholders filled from `vars`. */
export function t(key, vars = {}) {
  const text = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

/** Fills every data-i18n element of the document. */
export function apply(root = document) {
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  document.title = t('title');
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
}
