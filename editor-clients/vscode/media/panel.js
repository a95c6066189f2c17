// The conversation panel's script (runs in the webview). The extension renders the conversation's
// HTML; this swaps it in while keeping what the user is doing: text typed in answer fields, the
// focused field and its caret, rows opened or closed, reject forms opened, the scroll position.
// It posts back the prompt, the answers and the clicks. Nothing here talks to agentd.
/* global acquireVsCodeApi */
(function () {
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  const conv = $('conversation');
  const prompt = $('prompt');
  const cancel = $('cancel');
  const chips = $('chips');
  const mentions = $('mentions');
  const pickers = { model: $('model'), effort: $('effort'), mode: $('mode') };
  const pickerError = $('picker-error');
  const waiting = $('waiting');
  const meter = $('meter');
  const imagesBox = $('images');
  /** Images for the next prompt: {mimeType, data (base64), name, thumb (a small data URL)}. */
  let pending = [];
  /** Thumbnails of the conversation's images, by id (agent/image, asked once each). */
  const thumbs = new Map();
  const asked = new Set();
  $('compact').addEventListener('click', () => post({ type: 'compact' }));
  const saved = vscode.getState() || {};
  if (saved.draft) prompt.value = saved.draft;
  // Half-typed answers (never a secret), by field, kept across a window reload as the draft is.
  const typed = saved.fields && typeof saved.fields === 'object' ? saved.fields : {};
  const toggled = new Set(); // reject forms the user opened, by data-toggle id
  let shownUndo = '';

  const post = (m) => vscode.postMessage(m);
  const saveDraft = () => vscode.setState({ draft: prompt.value, fields: typed });
  /** Forgets what was typed for a request once it is answered. */
  const forgetTyped = (id) => {
    for (const k of Object.keys(typed)) if (k.startsWith(`${id}-`)) delete typed[k];
    saveDraft();
  };

  // ---- the prompt box --------------------------------------------------------------------
  /** Sends the prompt: a new turn, or while a run works its steer; `queue` asks for a turn after it. */
  function send(queue) {
    const text = prompt.value.trim();
    if (!text && !pending.length) return;
    const images = pending.map((p) => ({ mimeType: p.mimeType, data: p.data, name: p.name }));
    const type = queue && steering ? 'queue' : 'ask';
    post(images.length ? { type, text, images } : { type, text });
    pending = [];
    renderImages();
    prompt.value = '';
    saveDraft();
    closeMentions();
  }

  // ---- images: pasted or dropped into the composer ---------------------------------------------
  const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
  /** A small data URL of an image, for the chips and the history (never the image sent). */
  function thumbnail(src) {
    return new Promise((resolve) => {
      const img = new Image();
      img.onload = () => {
        const scale = Math.min(1, 160 / Math.max(img.width, img.height));
        const c = document.createElement('canvas');
        c.width = Math.max(1, Math.round(img.width * scale));
        c.height = Math.max(1, Math.round(img.height * scale));
        c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
        resolve({ url: c.toDataURL('image/png'), width: img.width, height: img.height });
      };
      img.onerror = () => resolve({ url: src, width: 0, height: 0 });
      img.src = src;
    });
  }
  function addImageFile(file, name) {
    if (!file || !IMAGE_TYPES.includes(file.type)) return false;
    const reader = new FileReader();
    reader.onload = async () => {
      const url = String(reader.result);
      const t = await thumbnail(url);
      pending.push({ mimeType: file.type, data: url.slice(url.indexOf(',') + 1), name: name || file.name || 'pasted image', thumb: t.url, width: t.width, height: t.height });
      renderImages();
    };
    reader.readAsDataURL(file);
    return true;
  }
  function renderImages() {
    imagesBox.innerHTML = pending
      .map(
        (p, i) =>
          `<span class="chip image-chip"><img src="${p.thumb}" alt=""> ${escapeHtml(p.name)}${p.width ? ` <span class="desc">${p.width}×${p.height}</span>` : ''} <button class="chip-x" data-drop-image="${i}" title="Remove" aria-label="Remove ${escapeHtml(p.name)}">×</button></span>`,
      )
      .join('');
    imagesBox.hidden = !pending.length;
  }
  imagesBox.addEventListener('click', (e) => {
    const b = e.target.closest('[data-drop-image]');
    if (!b) return;
    pending.splice(Number(b.dataset.dropImage), 1);
    renderImages();
  });
  prompt.addEventListener('paste', (e) => {
    const items = [...(e.clipboardData?.items ?? [])].filter((it) => it.kind === 'file');
    let took = false;
    for (const it of items) took = addImageFile(it.getAsFile(), 'pasted image') || took;
    if (took) e.preventDefault();
  });
  const composer = $('composer');
  composer.addEventListener('dragover', (e) => {
    if ([...(e.dataTransfer?.items ?? [])].some((it) => it.kind === 'file')) e.preventDefault();
  });
  composer.addEventListener('drop', (e) => {
    const files = [...(e.dataTransfer?.files ?? [])];
    let took = false;
    for (const f of files) took = addImageFile(f) || took;
    if (took) e.preventDefault();
  });

  /** Fills the conversation's images from the cache, asking for those not seen yet. */
  function fillImages() {
    conv.querySelectorAll('img[data-image-id]').forEach((img) => {
      const id = img.dataset.imageId;
      const t = thumbs.get(id);
      if (t) {
        if (img.src !== t) img.src = t;
        return;
      }
      if (!asked.has(id)) {
        asked.add(id);
        post({ type: 'needImage', id });
      }
    });
  }
  $('send').addEventListener('click', () => send());
  $('queue').addEventListener('click', () => send(true));
  let steering = false;
  cancel.addEventListener('click', () => post({ type: 'cancel' }));
  $('attach').addEventListener('click', () => post({ type: 'pickContext' }));
  const FIELDS = { model: 'model', effort: 'reasoningEffort', mode: 'approvalPolicy' };
  for (const [key, select] of Object.entries(pickers)) {
    select.addEventListener('change', () => post({ type: 'setting', field: FIELDS[key], value: select.value }));
  }
  waiting.addEventListener('click', () => focusRequest());
  chips.addEventListener('click', (e) => {
    const b = e.target.closest('[data-detach]');
    if (b) post({ type: 'detach', key: b.dataset.detach });
  });

  // ---- @ mentions and / commands ----------------------------------------------------------
  // One pop-up for both: `@path` anywhere, `/name` as the prompt's first word (a custom command).
  let mention = null; // { start, query, kind: 'mention' | 'slash' }
  let items = [];
  let active = 0;
  function mentionAtCaret() {
    const before = prompt.value.slice(0, prompt.selectionStart);
    const s = /^(\s*)\/([^\s/]*)$/.exec(before);
    if (s) return { start: s[1].length, query: s[2], kind: 'slash' };
    const m = /(^|\s)@([^\s@`]*)$/.exec(before);
    return m ? { start: prompt.selectionStart - m[2].length - 1, query: m[2], kind: 'mention' } : null;
  }
  function closeMentions() {
    mention = null;
    items = [];
    mentions.hidden = true;
    mentions.innerHTML = '';
  }
  function showMentions() {
    if (!mention || !items.length) {
      mentions.hidden = true;
      return;
    }
    mentions.innerHTML = items
      .map((p, i) => {
        const cls = `mention${i === active ? ' active' : ''}`;
        if (typeof p === 'string') return `<div class="${cls}" role="option" data-index="${i}">${escapeHtml(p)}</div>`;
        // A custom command: its name, what to type after it, what it does (or why it is broken).
        const hint = p.argumentHint ? ` <span class="slash-hint">${escapeHtml(p.argumentHint)}</span>` : '';
        const desc = p.error ? `<span class="slash-error">cannot be run: ${escapeHtml(p.error)}</span>` : p.description ? `<span class="slash-desc">${escapeHtml(p.description)}</span>` : '';
        const src = `<span class="slash-source">${escapeHtml(p.source === 'user' ? 'yours' : p.source === 'workspace' ? 'workspace' : p.source)}</span>`;
        return `<div class="${cls} slash${p.error ? ' broken' : ''}" role="option" data-index="${i}"><span class="slash-name">/${escapeHtml(p.name)}</span>${hint} ${src}${desc ? `<div>${desc}</div>` : ''}</div>`;
      })
      .join('');
    mentions.hidden = false;
  }
  function acceptMention(i) {
    const p = items[i];
    if (!mention || p === undefined) return;
    if (typeof p !== 'string' && p.error) return; // a broken command: its reason is shown, nothing to insert
    const end = mention.start + 1 + mention.query.length;
    const insert = typeof p === 'string' ? `@${p}${p.endsWith('/') ? '' : ' '}` : `/${p.name} `;
    prompt.value = prompt.value.slice(0, mention.start) + insert + prompt.value.slice(end);
    const caret = mention.start + insert.length;
    prompt.setSelectionRange(caret, caret);
    closeMentions();
    saveDraft();
    prompt.focus();
  }
  prompt.addEventListener('input', () => {
    saveDraft();
    mention = mentionAtCaret();
    if (mention) post({ type: mention.kind, query: mention.query });
    else closeMentions();
  });
  mentions.addEventListener('mousedown', (e) => {
    const row = e.target.closest('[data-index]');
    if (!row) return;
    e.preventDefault();
    acceptMention(Number(row.dataset.index));
  });
  prompt.addEventListener('keydown', (e) => {
    if (!mentions.hidden && items.length) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        active = (active + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
        showMentions();
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        acceptMention(active);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        closeMentions();
        return;
      }
    }
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      send(e.altKey);
    }
  });

  // ---- answering requests ----------------------------------------------------------------
  function requestEl(id) {
    return conv.querySelector(`.request[data-request="${CSS.escape(id)}"]`);
  }
  function fieldOf(id, name) {
    return conv.querySelector(`[data-field="${CSS.escape(`${id}-${name}`)}"]`);
  }
  function disable(id) {
    const el = requestEl(id);
    if (el) el.querySelectorAll('button, input').forEach((x) => (x.disabled = true));
    forgetTyped(id);
  }
  function act(b) {
    const id = b.dataset.request;
    switch (b.dataset.action) {
      case 'reply': {
        const f = fieldOf(id, 'text');
        if (!f || (!f.value.trim() && f.type !== 'password') || f.value === '') {
          f && f.focus();
          return;
        }
        post({ type: 'reply', requestId: id, text: f.value });
        disable(id);
        return;
      }
      case 'choose':
        post({ type: 'reply', requestId: id, optionId: b.dataset.option });
        disable(id);
        return;
      case 'replyMany': {
        const el = requestEl(id);
        const answers = [...el.querySelectorAll('input[type=checkbox][data-option]')].filter((c) => c.checked).map((c) => c.dataset.option);
        if (!answers.length) return;
        post({ type: 'reply', requestId: id, answers });
        disable(id);
        return;
      }
      case 'confirm':
        post({ type: 'confirm', requestId: id, decision: b.dataset.decision });
        disable(id);
        return;
      case 'genericPick':
      case 'genericSend':
      case 'genericMany': {
        const f = fieldOf(id, 'text');
        const text = f ? f.value : undefined;
        const msg = { type: 'generic', requestId: id, text };
        if (b.dataset.action === 'genericPick') msg.optionId = b.dataset.option;
        if (b.dataset.action === 'genericMany') msg.answers = [...requestEl(id).querySelectorAll('input[type=checkbox][data-option]')].filter((c) => c.checked).map((c) => c.dataset.option);
        post(msg);
        disable(id);
        return;
      }
      case 'rejectForm': {
        const key = `${id}-reject`;
        const form = conv.querySelector(`[data-toggle="${CSS.escape(key)}"]`);
        if (!form) return;
        form.hidden = !form.hidden;
        if (form.hidden) toggled.delete(key);
        else {
          toggled.add(key);
          const r = form.querySelector('input');
          if (r) r.focus();
        }
        return;
      }
      case 'reject': {
        const f = fieldOf(id, 'reason');
        post({ type: 'confirm', requestId: id, decision: b.dataset.decision, reason: f ? f.value : '' });
        disable(id);
        return;
      }
      case 'openDiff':
        post({ type: 'openDiff', requestId: id, index: Number(b.dataset.index || 0) });
        return;
      case 'edit':
        post({ type: 'edit', requestId: id });
        return;
      case 'openSession':
        post({ type: 'openSession', sessionId: b.dataset.session });
        return;
      case 'openFile':
        post({ type: 'openFile', path: b.dataset.path, line: b.dataset.line ? Number(b.dataset.line) : undefined, column: b.dataset.column ? Number(b.dataset.column) : undefined });
        return;
      case 'cancelRun':
        b.disabled = true;
        post({ type: 'cancelRun', runId: b.dataset.run });
        return;
      case 'resume':
        b.disabled = true;
        post({ type: 'resume', runId: b.dataset.run });
        return;
      case 'undoRun':
      case 'rewind':
        post({ type: b.dataset.action, runId: b.dataset.run });
        return;
      case 'undoCheckpoint':
        post({ type: 'undoCheckpoint', runId: b.dataset.run || '', checkpoint: b.dataset.checkpoint });
        return;
      case 'undoApply':
        conv.querySelectorAll('.undo button').forEach((x) => (x.disabled = true));
        post({ type: 'undoApply', onConflict: b.dataset.onConflict });
        return;
      case 'autoDiff':
        post({ type: 'autoDiff', value: b.checked });
        return;
      case 'openTab':
      case 'closeTab':
      case 'sessionRename':
      case 'sessionDelete':
      case 'deleteConfirm':
        post({ type: b.dataset.action, sessionId: b.dataset.session || '' });
        return;
      case 'renameSave': {
        const f = conv.querySelector(`[data-field="${CSS.escape(`rename-${b.dataset.session}`)}"]`);
        if (!f || !f.value.trim()) return;
        post({ type: 'renameSave', sessionId: b.dataset.session, title: f.value });
        return;
      }
      case 'stopProcess':
        post({ type: 'stopProcess', sessionId: b.dataset.session || '', id: b.dataset.process || '' });
        break;
      case 'ruleEdit':
      case 'ruleRevoke':
        post({ type: b.dataset.action, id: b.dataset.rule || '' });
        return;
      case 'ruleSave': {
        const id = b.dataset.rule;
        const pattern = conv.querySelector(`[data-field="${CSS.escape(`rule-${id}-pattern`)}"]`);
        const action = conv.querySelector(`[data-field="${CSS.escape(`rule-${id}-action`)}"]`);
        post({ type: 'ruleSave', id, pattern: pattern ? pattern.value : undefined, action: action ? action.value : undefined });
        return;
      }
      case 'rulesRefresh':
      case 'closeRules':
        post({ type: b.dataset.action });
        return;
      case 'mcpAction':
        b.disabled = true;
        post({ type: 'mcpAction', name: b.dataset.name, action: b.dataset.mcpAction });
        return;
      case 'newSession':
      case 'closeSessions':
      case 'loadEarlier':
      case 'undoClose':
      case 'mcpRefresh':
      case 'closeMcp':
        post({ type: b.dataset.action });
        return;
    }
  }
  conv.addEventListener('click', (e) => {
    const b = e.target.closest('[data-action]');
    // A button in a row's summary acts without folding the row.
    if (b && b.closest('summary')) e.preventDefault();
    // A check box changes itself; it is not a button.
    if (b && b.type === 'checkbox' && b.dataset.action === 'autoDiff') {
      act(b);
      return;
    }
    if (b && !b.disabled) act(b);
  });
  let searchTimer;
  conv.addEventListener('input', (e) => {
    const f = e.target;
    if (f.dataset && f.dataset.field === 'sessions-query') {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => post({ type: 'sessionSearch', query: f.value }), 150);
      return;
    }
    if (!f.dataset || !f.dataset.field || f.type === 'password' || f.type === 'checkbox') return;
    typed[f.dataset.field] = f.value;
    const keys = Object.keys(typed);
    if (keys.length > 100) delete typed[keys[0]];
    saveDraft();
  });
  conv.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.shiftKey) return;
    const t = e.target;
    if (t.matches('input.answer-text:not(.generic-text)')) {
      e.preventDefault();
      act({ dataset: { action: 'reply', request: t.dataset.request } });
    } else if (t.dataset && t.dataset.submit === 'genericSend') {
      e.preventDefault();
      act({ dataset: { action: 'genericSend', request: t.dataset.request } });
    } else if (t.dataset && t.dataset.submit === 'renameSave') {
      e.preventDefault();
      act({ dataset: { action: 'renameSave', session: t.dataset.session } });
    } else if (t.matches('input.reason')) {
      e.preventDefault();
      act({ dataset: { action: 'reject', request: t.dataset.request, decision: 'reject_once' } });
    }
  });

  /** Scrolls to an open request (the given one, or the oldest) and puts the caret in it. */
  function focusRequest(id) {
    const el = id ? requestEl(id) : conv.querySelector('.request-open');
    if (!el) return false;
    el.scrollIntoView({ block: 'center' });
    const field = el.querySelector('input:not([disabled]), button:not([disabled])');
    (field || el).focus();
    el.classList.add('flash');
    setTimeout(() => el.classList.remove('flash'), 800);
    return true;
  }

  // ---- rendering -----------------------------------------------------------------------------
  function render(m) {
    const atBottom = conv.scrollHeight - conv.scrollTop - conv.clientHeight < 40;
    const open = new Set();
    const closed = new Set();
    const live = new Set();
    conv.querySelectorAll('details[data-id]').forEach((d) => {
      (d.open ? open : closed).add(d.dataset.id);
      if ('live' in d.dataset || 'waiting' in d.dataset) live.add(d.dataset.id);
    });
    const values = new Map();
    conv.querySelectorAll('[data-field]').forEach((f) => values.set(f.dataset.field, f.type === 'checkbox' ? f.checked : f.value));
    const focused = document.activeElement && conv.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = focused && focused.dataset.field;
    const caret = focused && typeof focused.selectionStart === 'number' ? [focused.selectionStart, focused.selectionEnd] : null;
    const outScroll = new Map();
    conv.querySelectorAll('pre.tool-output-live[data-id]').forEach((p) => {
      outScroll.set(p.dataset.id, p.scrollHeight - p.scrollTop - p.clientHeight < 20 ? -1 : p.scrollTop);
    });
    const scrollTop = conv.scrollTop;

    conv.innerHTML = m.html;

    conv.querySelectorAll('details[data-id]').forEach((d) => {
      // A row that just started streaming or waiting opens (the markup says so); after that the
      // user's choice wins.
      const fresh = ('live' in d.dataset || 'waiting' in d.dataset) && !live.has(d.dataset.id);
      if (fresh) return;
      if (open.has(d.dataset.id)) d.open = true;
      else if (closed.has(d.dataset.id)) d.open = false;
    });
    conv.querySelectorAll('[data-field]').forEach((f) => {
      if (!values.has(f.dataset.field)) {
        // A field shown for the first time in this webview (after a reload): what was typed.
        if (f.type !== 'password' && f.type !== 'checkbox' && typed[f.dataset.field] !== undefined) f.value = typed[f.dataset.field];
        return;
      }
      const v = values.get(f.dataset.field);
      if (f.type === 'checkbox') f.checked = v;
      else f.value = v;
    });
    conv.querySelectorAll('[data-toggle]').forEach((f) => (f.hidden = !toggled.has(f.dataset.toggle)));
    if (focusKey) {
      const f = conv.querySelector(`[data-field="${CSS.escape(focusKey)}"]`);
      if (f) {
        f.focus();
        if (caret) f.setSelectionRange(caret[0], caret[1]);
      }
    }
    conv.querySelectorAll('pre.tool-output-live[data-id]').forEach((p) => {
      const top = outScroll.get(p.dataset.id);
      p.scrollTop = top === undefined || top < 0 ? p.scrollHeight : top;
    });
    fillImages();
    conv.scrollTop = atBottom ? conv.scrollHeight : scrollTop;
    // An undo preview that just appeared (or changed step) is brought into view.
    const undo = conv.querySelector('.undo[data-undo]');
    const undoKey = undo ? `${undo.dataset.undo} ${undo.className}` : '';
    if (undo && undoKey !== shownUndo) undo.scrollIntoView({ block: 'nearest' });
    shownUndo = undoKey;

    cancel.disabled = !m.busy;
    chips.innerHTML = (m.chips || [])
      .map((c) => `<span class="chip">${escapeHtml(c.label)} <button class="chip-x" data-detach="${escapeHtml(c.key)}" title="Remove" aria-label="Remove ${escapeHtml(c.label)}">×</button></span>`)
      .join('');
    const p = m.pickers || {};
    for (const [key, select] of Object.entries(pickers)) {
      const picker = p[key];
      select.hidden = !picker;
      if (!picker) continue;
      // Options are rebuilt only when they change, so an open drop-down is not closed by a render.
      const options = JSON.stringify(picker.options);
      if (select.dataset.options !== options) {
        select.innerHTML = picker.options.map((x) => `<option value="${escapeHtml(x.value)}">${escapeHtml(x.label)}</option>`).join('');
        select.dataset.options = options;
      }
      if (select.value !== picker.value) select.value = picker.value;
    }
    renderMeter(m.meter);
    // While the conversation's run works, Enter steers it and Queue (Alt+Enter) sends the next prompt.
    steering = !!m.steering;
    $('queue').hidden = !steering;
    prompt.placeholder = steering
      ? 'Steer the agent: Enter gives it your words at its next step; Alt+Enter queues a new prompt instead'
      : 'Ask agentd… (@ to mention a file, / for your commands; paste or drop an image; Enter sends, Shift+Enter for a new line)';
    $('send').textContent = steering ? 'Steer' : 'Send';
    $('send').title = steering ? 'Give the running agent your words (Enter)' : 'Send (Enter)';
    pickerError.hidden = !p.error;
    pickerError.textContent = p.error || '';
    waiting.hidden = !m.waiting;
    waiting.textContent = m.waiting ? `${m.waiting} waiting for you` : '';
  }

  window.addEventListener('message', (e) => {
    const m = e.data;
    if (m.type === 'render') render(m);
    else if (m.type === 'mentions' || m.type === 'slash') {
      if (!mention || m.query !== mention.query || (m.type === 'slash') !== (mention.kind === 'slash')) return;
      items = m.items || [];
      // The first item that can be inserted (a broken command only shows its reason).
      active = Math.max(0, items.findIndex((x) => typeof x === 'string' || !x.error));
      showMentions();
    } else if (m.type === 'image') {
      thumbnail(`data:${m.mimeType};base64,${m.data}`).then((t) => {
        thumbs.set(m.id, t.url);
        fillImages();
      });
    } else if (m.type === 'setPrompt') {
      // The run could not start: the text comes back, nothing typed is lost (the images too).
      if (!prompt.value.trim()) prompt.value = m.text;
      if (m.images && !pending.length) {
        for (const im of m.images) thumbnail(`data:${im.mimeType};base64,${im.data}`).then((t) => {
          pending.push({ ...im, thumb: t.url, width: t.width, height: t.height });
          renderImages();
        });
      }
      saveDraft();
    } else if (m.type === 'focus') {
      if (m.target === 'request' && focusRequest(m.requestId)) return;
      prompt.focus();
    }
  });

  /** The context meter: how much of the model's window the conversation takes, and Compact. */
  function renderMeter(c) {
    meter.hidden = !c;
    if (!c) return;
    const k = (n) => (n >= 1000 ? `${(n / 1000).toFixed(n >= 10000 ? 0 : 1)}k` : String(n));
    const pct = Math.min(100, Math.round((100 * c.used) / c.window));
    meter.querySelector('.meter-fill').style.width = `${pct}%`;
    meter.querySelector('.meter-mark').style.left = `${Math.min(100, (100 * c.compactAt) / c.window)}%`;
    meter.classList.toggle('meter-high', c.used >= c.compactAt * 0.8);
    meter.querySelector('.meter-text').textContent = `Context ${k(c.used)} / ${k(c.window)} (${pct}%)${c.compacted ? ' · compacted' : ''}`;
    meter.title = `About ${c.used.toLocaleString('en-US')} tokens of the model's ${c.window.toLocaleString('en-US')}-token window: the system message, the tools and ${c.messages} messages. Past ${c.compactAt.toLocaleString('en-US')} agentd summarizes the older turns by itself.`;
    const compact = $('compact');
    compact.disabled = !!c.busy || c.messages <= 2;
    compact.title = c.busy ? 'Compact once the run is over' : c.messages <= 2 ? 'Nothing to compact yet' : 'Summarize the older turns now (the last turn is kept whole), so the conversation takes less of the model\'s window';
  }

  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  }

  renderImages();
  post({ type: 'ready' });
})();
