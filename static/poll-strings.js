// The class vote's strings beyond i18n.js's (which is full): the neutral label, how sure, why,
// the reveal's deciding figures, and the presenter's own notes. They join i18n.js's tables when
// a page that votes or presents loads. Both tables have the same keys:
// workshop/tests/curriculum_text.rs checks them with i18n.js's.

import { addStrings } from './i18n.js';

const en = {
  'vote.number': 'Question {n}',
  'vote.sure': 'Sure',
  'vote.unsure': 'Not sure',
  'vote.sure.ask': 'How sure are you?',
  'vote.why': 'Why? One line, if you like',
  'vote.why.send': 'Send',
  'vote.why.sent': 'Your reason is in with your vote.',
  'vote.why.first': 'Pick a letter first: the reason goes with your vote.',
  'vote.decided': 'What decided it: the run landed in {letter}, “{option}”',
  'vote.decided.none': 'The figures the options are judged by: the run lacks one, so it landed in none.',
  'vote.figures.rest': 'The rest of the run',
  'dash.scenario.hidden': 'Question {n}: hidden until the reveal',
  'present.notes.show': 'Show my notes (not for the projector)',
  'present.notes.hide': 'Hide my notes',
  'present.split': 'Round {round}: {voters} voted',
  'present.split.option': '{letter}: {n} ({share}), {sure} sure',
  'present.thumb': 'Rule of thumb on round 1\'s share right: below ~30 %, explain; 30–70 %, discuss and vote again; above 70 %, reveal. Which option is right is known only after the run.',
  'present.right': 'Round {round}: {share} right.',
  'present.advice.explain': 'Below 30 %: explain it.',
  'present.advice.discuss': '30–70 %: let them discuss, and vote again.',
  'present.advice.reveal': 'Above 70 %: reveal and move on.',
  'present.reasons': 'Reasons, a sample per option (round {round})',
  'present.reasons.hide': 'Hide the reasons',
  'present.reasons.show': 'Show the reasons',
  'present.reasons.none': 'No reasons given yet.',
  'present.reason.sure': 'sure',
  'present.reason.unsure': 'not sure',
};

const zh = {
  'vote.number': '第 {n} 题',
  'vote.sure': '确定',
  'vote.unsure': '不确定',
  'vote.sure.ask': '你有多确定？',
  'vote.why': '为什么？写一行（可不填）',
  'vote.why.send': '发送',
  'vote.why.sent': '你的理由已随这一票提交。',
  'vote.why.first': '请先选一个字母：理由随你的票一起提交。',
  'vote.decided': '决定结果的数字：这次运行落在 {letter}，“{option}”',
  'vote.decided.none': '判定各选项所依据的数字：这次运行缺了其中一项，所以不属于任何选项。',
  'vote.figures.rest': '这次运行的其他数字',
  'dash.scenario.hidden': '第 {n} 题（揭晓前隐藏）',
  'present.notes.show': '显示教师备注（不要投到屏幕上）',
  'present.notes.hide': '收起教师备注',
  'present.split': '第 {round} 轮：{voters} 票',
  'present.split.option': '{letter}：{n} 票（{share}），{sure} 人确定',
  'present.thumb': '经验法则（看第 1 轮答对的比例）：低于约 30%，讲解；30%～70%，讨论后再投一次；高于 70%，直接揭晓。哪个选项正确，要等运行之后才知道。',
  'present.right': '第 {round} 轮：答对 {share}。',
  'present.advice.explain': '低于 30%：讲解。',
  'present.advice.discuss': '30%～70%：让大家讨论，再投一次。',
  'present.advice.reveal': '高于 70%：揭晓，进入下一题。',
  'present.reasons': '理由（每个选项抽样，第 {round} 轮）',
  'present.reasons.hide': '隐藏理由',
  'present.reasons.show': '显示理由',
  'present.reasons.none': '还没有人写理由。',
  'present.reason.sure': '确定',
  'present.reason.unsure': '不确定',
};

addStrings({ en, zh });
