// reasons.js: why a workload waits, in words: the scheduler's sentence
// (phaseMessage) with its code (phaseReason, or the reason of a condition
// that is not met) as a tag beside it, and a plain sentence of our own
// when the server gives only the code.

import {h} from './dom.js';

const SENTENCES = {
  NonPreemptibleOverQuota: 'A non-preemptible workload runs only within its project\'s quota, and that quota is in use.',
  OverLimit: 'Its project or department has reached its GPU limit.',
  InsufficientResources: 'No node has enough free GPUs, CPU or memory for it right now.',
  GangNotSatisfiable: 'Not all of its pods can be placed at the same time.',
  NoMatchingNodePool: 'No node pool it may use has a node that fits it.',
  Suspended: 'It was suspended; resume it to run it again.',
  QueueFairShareReached: 'Its project is at its fair share; the idle GPUs go to projects below theirs.',
};

// {code, sentence} of a workload, either possibly ''.
export function pendingReason(w) {
  let code = w.phaseReason || '';
  // phaseReason holds only Run:ai's two reasons (NonPreemptibleOverQuota,
  // OverLimit); the others are the reason of a condition not met
  if (!code && Array.isArray(w.conditions)) {
    const c = w.conditions.find((x) => x && x.reason && String(x.status) === 'False') ||
      w.conditions.find((x) => x && x.reason);
    code = (c && c.reason) || '';
  }
  let sentence = (w.phaseMessage || '').trim();
  if (code && sentence.startsWith(`${code}:`)) sentence = sentence.slice(code.length + 1).trim();
  if (!sentence) sentence = SENTENCES[code] || '';
  return {code, sentence: reasonText(sentence)};
}

// A message as a sentence, ending with a full stop (its first word is often
// a name, so its case is kept).
export function reasonText(s) {
  const t = String(s || '').trim();
  if (!t) return '';
  return /[.!?)]$/.test(t) ? t : `${t}.`;
}

// The reason as shown: the sentence, then the code as a small tag.
export function reasonView(w, cls) {
  const r = pendingReason(w);
  if (!r.code && !r.sentence) return null;
  return h('span', {class: `reason ${cls || ''}`},
    r.sentence ? h('span', {class: 'reason-text'}, r.sentence) : null,
    r.code ? reasonTag(r.code) : null);
}

export function reasonTag(code) {
  return h('code', {class: 'tag', title: 'the scheduler\'s reason code'}, code);
}
