// dom.js: building DOM nodes without HTML strings, updating them in place
// (morph), formatting numbers and times, and the small shared widgets
// (status badges, notices, dialogs, CSV downloads). Text from the API only
// ever reaches the page as text nodes or attribute values.
//
// Refreshing in place: a page builds the tree it wants with h() and calls
// morph(current, wanted). Elements are kept where the wanted tree has an
// element of the same tag at the same place (children with data-key match
// by key), so keyboard focus, selection, scroll positions, open <details>
// and the text a user is typing survive a refresh. Event handlers are set
// as properties (el.onclick), which morph copies. An element marked
// data-keep is left alone once it exists (a chart's canvas, a log view
// that updates itself).

const HANDLERS = ['onclick', 'onchange', 'oninput', 'onsubmit', 'onkeydown', 'ontoggle'];

// h('td', {class: 'num', onclick: fn}, 'text', child, ...): one element.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el[k] = v;
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') { el.value = v; el.setAttribute('value', String(v)); }
    else if (k === 'checked' || k === 'selected' || k === 'disabled' || k === 'open') {
      el[k] = !!v;
      el.setAttribute(k, '');
    } else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// Replaces the children of el.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Makes el's children those given, keeping the elements that match (see
// the top of this file).
export function fillIn(el, ...children) {
  const want = document.createElement(el.tagName);
  append(want, children);
  morphChildren(el, want);
  return el;
}

function sameKind(a, b) {
  if (a.nodeType !== b.nodeType) return false;
  if (a.nodeType !== 1) return true;
  return a.tagName === b.tagName && (a.dataset.key || '') === (b.dataset.key || '') &&
    (a.tagName !== 'INPUT' || a.type === b.type);
}

const isEditing = (el) => el === document.activeElement &&
  (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT');

// Makes element old look like element want (same tag); returns old.
export function morph(old, want) {
  if (old.dataset && old.dataset.keep !== undefined) return old;
  // style is synced through the CSSOM: a style attribute is inline style to the CSP
  for (const a of [...old.attributes]) {
    if (a.name !== 'style' && !(a.name === 'open' && old.tagName === 'DETAILS') &&
        !want.hasAttribute(a.name)) old.removeAttribute(a.name);
  }
  for (const a of [...want.attributes]) {
    if (a.name === 'style' || (a.name === 'open' && old.tagName === 'DETAILS')) continue;
    if (old.getAttribute(a.name) !== a.value) old.setAttribute(a.name, a.value);
  }
  if (want.style.cssText !== old.style.cssText) old.style.cssText = want.style.cssText;
  for (const k of HANDLERS) if (old[k] !== want[k]) old[k] = want[k];
  if (!isEditing(old)) {
    if ((old.tagName === 'INPUT' || old.tagName === 'TEXTAREA') && old.value !== want.value) {
      old.value = want.value;
    }
    if (old.tagName === 'INPUT' && (old.type === 'checkbox' || old.type === 'radio') &&
        old.checked !== want.checked) old.checked = want.checked;
  }
  if (old.tagName === 'CANVAS') return old;
  morphChildren(old, want);
  if (old.tagName === 'SELECT' && !isEditing(old)) {
    const sel = [...want.options].findIndex((o) => o.selected);
    if (sel >= 0 && old.selectedIndex !== sel) old.selectedIndex = sel;
  }
  return old;
}

function morphChildren(old, want) {
  const keyed = new Map();
  for (const c of old.children) if (c.dataset.key) keyed.set(c.dataset.key, c);
  let cursor = old.firstChild;
  for (const w of [...want.childNodes]) {
    let match = null;
    if (w.nodeType === 1 && w.dataset.key) {
      match = keyed.get(w.dataset.key) || null;
      if (match && !sameKind(match, w)) match = null;
    } else if (cursor && sameKind(cursor, w) && !(cursor.nodeType === 1 && cursor.dataset.key)) {
      match = cursor;
    }
    if (!match) {
      old.insertBefore(w, cursor);
      continue;
    }
    if (match !== cursor) old.insertBefore(match, cursor);
    else cursor = cursor.nextSibling;
    if (w.nodeType === 3) {
      if (match.data !== w.data) match.data = w.data;
    } else if (w.nodeType === 1) {
      morph(match, w);
    }
    if (match.nodeType === 1 && match.dataset.key) keyed.delete(match.dataset.key);
  }
  while (cursor) {
    const next = cursor.nextSibling;
    cursor.remove();
    cursor = next;
  }
}

export const $ = (sel, root = document) => root.querySelector(sel);

// GPUs as the API gives them (devices, maybe fractional): "1", "0.5", "-".
export function gpu(v) {
  if (v === null || v === undefined || v === '' || Number.isNaN(Number(v))) return '-';
  const n = Number(v);
  if (n < 0) return 'unlimited';
  return Number(Number.isInteger(n) ? n : n.toFixed(2)).toLocaleString('en-US', {maximumFractionDigits: 2});
}

// A count as cards and tables show it alike: 10,024.
export function num(v) {
  const n = Number(v || 0);
  return Number.isFinite(n) ? n.toLocaleString('en-US', {maximumFractionDigits: 2}) : String(v);
}

export function pct(num, den) {
  if (!den || den <= 0) return num > 0 ? 'over (no quota)' : '-';
  return `${Math.round((100 * num) / den)}%`;
}

export function time(iso) {
  if (!iso) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function ago(iso) {
  if (!iso) return '';
  const s = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  return `${duration(s)} ago`;
}

// Seconds as "45s", "12m", "3h", "2d".
export function duration(s) {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const PHASE_CLASS = {
  Running: 'ok', Completed: 'done', Pending: 'warn', Creating: 'warn', Initializing: 'warn',
  Resuming: 'warn', Failed: 'bad', Degraded: 'bad', Stopped: 'done', Stopping: 'done',
  Deleting: 'done', Ready: 'ok', NotReady: 'bad', Unknown: 'bad', Empty: 'done',
};

export function badge(text, kind) {
  return h('span', {class: `badge ${kind || PHASE_CLASS[text] || 'done'}`}, text);
}

// A notice inside a section: kind is 'error', 'info', 'warn' or 'empty'.
export function notice(kind, ...text) {
  return h('p', {class: `notice ${kind}`, role: kind === 'error' ? 'alert' : null}, ...text);
}

// The text of an error for the user, in plain words first: what went wrong,
// then the server's own message; the request is kept for a title.
export function errorText(e) {
  if (e && e.status !== undefined) {
    const d = e.details && e.details !== e.path ? `: ${e.details}` : '';
    const lead = PLAIN[e.status];
    if (lead) return `${lead} (${e.message}${d})`;
    return `${e.method} ${e.path}: ${e.status} ${e.message}${d}`;
  }
  return String((e && e.message) || e);
}

const PLAIN = {
  0: 'The server did not answer; check that allotd is running',
  400: 'The server refused the request',
  403: 'You are not allowed to do this: an access rule is missing (ask an administrator)',
  404: 'It does not exist (any more)',
  409: 'It conflicts with what is there',
  413: 'The request is too large',
  429: 'Too many requests; wait a moment',
  500: 'The server failed',
  501: 'The server does not support this',
  503: 'The server cannot take this now',
  507: 'The server\'s disk is full',
};

// A horizontal meter: used of total, with a text label beside it.
export function meter(used, total, label) {
  const frac = total > 0 ? Math.min(1, Math.max(0, used / total)) : 0;
  const bar = h('span', {class: `meter-fill${used > total ? ' over' : ''}`});
  bar.style.width = `${(frac * 100).toFixed(1)}%`;
  return h('span', {class: 'meter-wrap'},
    h('span', {class: 'meter', role: 'img', 'aria-label': label}, bar),
    h('span', {class: 'meter-text'}, label));
}

let uid = 0;
export const newId = (p) => `${p}-${++uid}`;

// A page's filter form with one search box (id, placeholder; label names
// the form): the box starts at the URL's q=, and typing keeps filt.q and
// the URL's q= (replacing the history entry, not adding one). The box is
// the form's .search.
export function searchForm(ctx, params, filt, {id, label, placeholder}) {
  const box = h('input', {id, type: 'search', autocomplete: 'off', placeholder});
  takeSearch(params, filt, box);
  box.oninput = () => {
    filt.q = box.value.trim();
    ctx.setParams({q: filt.q}, {push: false});
  };
  const form = h('form', {class: 'filters', role: 'search', 'aria-label': label, onsubmit: (e) => e.preventDefault()},
    h('span', {class: 'filter'}, h('label', {for: id}, 'Find'), box));
  form.search = box;
  return form;
}

// The URL's q= into filt.q, and into the box unless it is being typed in.
export function takeSearch(params, filt, box) {
  filt.q = params.get('q') || '';
  if (box && document.activeElement !== box) box.value = filt.q;
}

// A labelled form row around an input: {label, input, hint, error}.
export function formRow(label, input, hint, cls) {
  if (!input.id) input.id = newId('f');
  return h('div', {class: `form-row ${cls || ''}`},
    h('label', {for: input.id}, label), input,
    hint ? h('small', {class: 'hint', id: `${input.id}-hint`}, hint) : null);
}

// Opens a modal <dialog>. body: elements (or fields, see below); onSubmit
// returns a promise: a rejection shows its message in the dialog and keeps
// it open. fields: [{name, label, type, value, options, min, max, step,
// required, hint}] build simple rows; getValues reads them back.
export function formDialog({title, submitLabel, fields, body, onSubmit, intro, wide, extraActions, preview}) {
  const errorBox = h('p', {class: 'notice error', role: 'alert', hidden: true});
  const previewBox = h('p', {class: 'notice preview', role: 'status', 'aria-live': 'polite', hidden: true});
  const inputs = {};
  const rows = (fields || []).map((f) => {
    if (f.type === 'heading') return h('h3', {class: 'form-heading'}, f.label);
    let input;
    if (f.type === 'select') {
      input = h('select', {name: f.name, required: f.required},
        f.options.map((o) => h('option', {value: o.value, selected: o.value === f.value}, o.label)));
    } else if (f.type === 'textarea') {
      input = h('textarea', {name: f.name, rows: 2}, f.value || '');
    } else if (f.type === 'checkbox') {
      input = h('input', {name: f.name, type: 'checkbox', checked: !!f.value});
    } else {
      input = h('input', {name: f.name, type: f.type || 'text', value: f.value ?? '',
        min: f.min, max: f.max, step: f.step, required: f.required,
        placeholder: f.placeholder, autocomplete: 'off'});
    }
    inputs[f.name] = input;
    return formRow(f.label, input, f.hint);
  });
  const titleId = newId('d');
  const submit = h('button', {type: 'submit', class: 'primary'}, submitLabel || 'Save');
  const cancel = h('button', {type: 'button'}, 'Cancel');
  const form = h('form', {method: 'dialog', class: 'dialog-form'},
    h('h2', {id: titleId}, title), intro ? h('p', {class: 'hint'}, intro) : null,
    ...rows, ...(body || []), errorBox,
    // the preview's verdict sits beside the buttons, which stay in view
    h('div', {class: 'dialog-actions'}, previewBox, ...(extraActions || []), cancel, submit));
  const dlg = h('dialog', {'aria-labelledby': titleId, class: wide ? 'wide' : null}, form);
  // preview(values, signal), when given, is asked again 400 ms after the last
  // change (the previous ask aborted); the text it resolves to is shown
  // above the buttons (an empty one hides it; a rejection shows its message).
  const valuesNow = () => {
    const values = {};
    for (const [k, el] of Object.entries(inputs)) values[k] = el.type === 'checkbox' ? el.checked : el.value;
    return values;
  };
  let timer = null;
  let asking = null;
  const ask = async () => {
    if (asking) asking.abort();
    const ctl = new AbortController();
    asking = ctl;
    let text;
    try {
      text = await preview(valuesNow(), ctl.signal);
    } catch (e) {
      if (e.name === 'AbortError') return;
      text = errorText(e);
    }
    if (ctl.signal.aborted) return;
    previewBox.textContent = text || '';
    previewBox.hidden = !text;
  };
  if (preview) {
    const later = () => { clearTimeout(timer); timer = setTimeout(ask, 400); };
    form.addEventListener('input', later);
    form.addEventListener('change', later);
    form.addEventListener('click', later); // the pool order's buttons
    later();
  }
  cancel.onclick = () => dlg.close();
  dlg.addEventListener('close', () => {
    clearTimeout(timer);
    if (asking) asking.abort();
    dlg.remove();
  });
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const values = {};
    for (const [k, el] of Object.entries(inputs)) values[k] = el.type === 'checkbox' ? el.checked : el.value;
    submit.disabled = true;
    errorBox.hidden = true;
    try {
      await onSubmit(values);
      dlg.close();
    } catch (e) {
      errorBox.textContent = errorText(e);
      errorBox.hidden = false;
      errorBox.scrollIntoView({block: 'nearest'});
    } finally {
      submit.disabled = false;
    }
  };
  document.body.appendChild(dlg);
  dlg.showModal();
  dlg.submitButton = submit;
  dlg.errorBox = errorBox;
  return dlg;
}

// Asks a yes/no question in a modal; resolves true on confirm.
export function confirmDialog(question, yesLabel) {
  return new Promise((resolve) => {
    const yes = h('button', {type: 'button', class: 'danger'}, yesLabel || 'Confirm');
    const no = h('button', {type: 'button'}, 'Cancel');
    const id = newId('c');
    const dlg = h('dialog', {'aria-labelledby': id},
      h('p', {id}, question), h('div', {class: 'dialog-actions'}, no, yes));
    let answer = false;
    yes.onclick = () => { answer = true; dlg.close(); };
    no.onclick = () => dlg.close();
    dlg.addEventListener('close', () => { dlg.remove(); resolve(answer); });
    document.body.appendChild(dlg);
    dlg.showModal();
  });
}

// CSV of rows (arrays of cells) with a header line; quotes as RFC 4180.
export function csv(header, rows) {
  const cell = (v) => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

// Offers text as a file download.
export function download(name, text, type = 'text/csv') {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const a = h('a', {href: url, download: name, hidden: true});
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
