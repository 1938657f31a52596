// dom.js: building DOM nodes without HTML strings, formatting numbers and
// times, and the small shared widgets (status badges, notices, dialogs).
// Text from the API only ever reaches the page as text nodes.

// h('td', {class: 'num', onclick: fn}, 'text', child, ...): one element.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked' || k === 'selected' || k === 'disabled') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
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

export const $ = (sel, root = document) => root.querySelector(sel);

// GPUs as the API gives them (devices, maybe fractional): "1", "0.5", "-".
export function gpu(v) {
  if (v === null || v === undefined || Number.isNaN(Number(v))) return '-';
  const n = Number(v);
  if (n < 0) return 'unlimited';
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '');
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
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

const PHASE_CLASS = {
  Running: 'ok', Completed: 'done', Pending: 'warn', Creating: 'warn', Initializing: 'warn',
  Resuming: 'warn', Failed: 'bad', Degraded: 'bad', Stopped: 'done', Stopping: 'done',
  Deleting: 'done', Ready: 'ok', NotReady: 'bad', Unknown: 'bad', Empty: 'done',
};

export function badge(text, kind) {
  return h('span', {class: `badge ${kind || PHASE_CLASS[text] || 'done'}`}, text);
}

// A notice inside a section: kind is 'error', 'info' or 'empty'.
export function notice(kind, ...text) {
  return h('p', {class: `notice ${kind}`, role: kind === 'error' ? 'alert' : null}, ...text);
}

// The text of an error for the user: "GET /api/v1/x: 500 Internal error (details)".
export function errorText(e) {
  if (e && e.status !== undefined) {
    const d = e.details && e.details !== e.path ? ` (${e.details})` : '';
    return `${e.method} ${e.path}: ${e.status} ${e.message}${d}`;
  }
  return String((e && e.message) || e);
}

// A horizontal meter: used of total, with a text label beside it.
export function meter(used, total, label) {
  const frac = total > 0 ? Math.min(1, Math.max(0, used / total)) : 0;
  const bar = h('span', {class: 'meter-fill'});
  bar.style.width = `${(frac * 100).toFixed(1)}%`;
  if (used > total) bar.classList.add('over');
  return h('span', {class: 'meter-wrap'},
    h('span', {class: 'meter', role: 'img', 'aria-label': label}, bar),
    h('span', {class: 'meter-text'}, label));
}

// Opens a modal <dialog> with a form. fields: [{name, label, type, value,
// options, min, max, step, required, hint}]. onSubmit(values) returns a
// promise; a rejection shows its message in the dialog and keeps it open.
// preview(values, signal), when given, is asked again 400 ms after the
// last change (the previous ask aborted); the text it resolves to is shown
// above the buttons (an empty one hides it; a rejection shows its message).
export function formDialog({title, submitLabel, fields, onSubmit, intro, preview}) {
  const errorBox = h('p', {class: 'notice error', role: 'alert', hidden: true});
  const previewBox = h('p', {class: 'notice preview', role: 'status', 'aria-live': 'polite',
    hidden: true});
  const inputs = {};
  const rows = fields.map((f) => {
    if (f.type === 'heading') return h('h3', {class: 'form-heading'}, f.label);
    const id = `f-${f.name}-${Math.random().toString(36).slice(2, 8)}`;
    let input;
    if (f.type === 'select') {
      input = h('select', {id, name: f.name, required: f.required},
        f.options.map((o) => h('option', {value: o.value, selected: o.value === f.value}, o.label)));
    } else if (f.type === 'textarea') {
      input = h('textarea', {id, name: f.name, rows: 2}, f.value || '');
    } else {
      input = h('input', {id, name: f.name, type: f.type || 'text', value: f.value ?? '',
        min: f.min, max: f.max, step: f.step, required: f.required,
        placeholder: f.placeholder, autocomplete: 'off'});
    }
    inputs[f.name] = input;
    return h('div', {class: 'form-row'},
      h('label', {for: id}, f.label), input,
      f.hint ? h('small', {class: 'hint'}, f.hint) : null);
  });
  const titleId = `d-${Math.random().toString(36).slice(2, 8)}`;
  const submit = h('button', {type: 'submit', class: 'primary'}, submitLabel || 'Save');
  const cancel = h('button', {type: 'button'}, 'Cancel');
  const form = h('form', {method: 'dialog', class: 'dialog-form'},
    h('h2', {id: titleId}, title), intro ? h('p', {class: 'hint'}, intro) : null,
    ...rows, previewBox, errorBox, h('div', {class: 'dialog-actions'}, cancel, submit));
  const dlg = h('dialog', {'aria-labelledby': titleId}, form);
  const valuesNow = () => {
    const values = {};
    for (const [k, el] of Object.entries(inputs)) values[k] = el.value;
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
    later();
  }
  cancel.addEventListener('click', () => dlg.close());
  dlg.addEventListener('close', () => {
    clearTimeout(timer);
    if (asking) asking.abort();
    dlg.remove();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const values = valuesNow();
    submit.disabled = true;
    errorBox.hidden = true;
    try {
      await onSubmit(values);
      dlg.close();
    } catch (e) {
      errorBox.textContent = errorText(e);
      errorBox.hidden = false;
    } finally {
      submit.disabled = false;
    }
  });
  document.body.appendChild(dlg);
  dlg.showModal();
  return dlg;
}

// Asks a yes/no question in a modal; resolves true on confirm.
export function confirmDialog(question, yesLabel) {
  return new Promise((resolve) => {
    const yes = h('button', {type: 'button', class: 'danger'}, yesLabel || 'Confirm');
    const no = h('button', {type: 'button'}, 'Cancel');
    const id = `c-${Math.random().toString(36).slice(2, 8)}`;
    const dlg = h('dialog', {'aria-labelledby': id},
      h('p', {id}, question), h('div', {class: 'dialog-actions'}, no, yes));
    let answer = false;
    yes.addEventListener('click', () => { answer = true; dlg.close(); });
    no.addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => { dlg.remove(); resolve(answer); });
    document.body.appendChild(dlg);
    dlg.showModal();
  });
}
