// End-to-end, issue 31: changes reviewed where the code is (the diff editor opening by itself,
// hunks accepted and rejected there, the title bar's Accept), the inline edit of a selection seen
// and decided in the buffer, the rules view, sessions searched, renamed and deleted, several
// conversations at once, and the context meter with Compact — in a real VS Code (code-server) in
// Chromium, driven by clicks and keys, against the real agentd and the scripted model
// (test/models/issue31.json). Screenshots go to test/artifacts/issue31/.

import { scaled } from '../support/scale.mjs';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { EXT_DIR, setup } from './harness.mjs';
import { ask, command, expectStatus, lastRun, modelRequests, newSession, openRequest, panel, paletteInput, quickInput, quickOpen, reloadWindow, screenshot, until, use } from './ui.mjs';

const ARTIFACTS = process.env.E2E_ARTIFACTS_31 ?? path.join(EXT_DIR, 'test/artifacts/issue31');
let h;
let page;

/** The CodeLens of the editor (the modified side of a diff editor, or the file) with this text. */
function lens(text, scope = '.editor-instance') {
  return page.locator(`${scope} .codelens-decoration a`, { hasText: text }).first();
}

describe('issue 31 in VS Code (code-server)', { timeout: scaled(600000) }, () => {
  before(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    // Auto save off (VS Code for the web saves after a delay by default): the inline edit shows in
    // the file itself; with auto save on it is reviewed in the diff editor.
    h = await setup({ modelScript: path.join(EXT_DIR, 'test/models/issue31.json'), artifacts: ARTIFACTS,
      settings: { 'files.autoSave': 'off' },
      // A first TypeScript check of a new file can take seconds on a loaded machine.
      daemonEnv: { AGENTD_DIAGNOSTICS_TIMEOUT: '15s' },
    });
    page = h.page;
    use({ page, h, artifacts: ARTIFACTS });
    await expectStatus(/agentd: ready/, 60000);
    await page.keyboard.press('Control+Alt+p');
    const sb = await page.locator('.part.sidebar').boundingBox();
    await page.mouse.move(sb.x + sb.width + 1, sb.y + 300);
    await page.mouse.down();
    await page.mouse.move(sb.x + 560, sb.y + 300, { steps: 5 });
    await page.mouse.up();
    await panel().locator('#prompt:focus').waitFor();
  });

  let passed = true;
  beforeEach(() => (passed = false));
  afterEach(async () => {
    if (passed) return;
    await screenshot('failed').catch(() => undefined);
    for (let i = 0; i < 3; i++) await page.keyboard.press('Escape');
  });
  const ok = () => (passed = true);

  after(async () => {
    if (page) await screenshot('final').catch(() => undefined);
    if (h) {
      try {
        fs.writeFileSync(path.join(ARTIFACTS, 'model-requests.json'), JSON.stringify(await modelRequests(), null, 1));
      } catch {}
      await h.teardown();
    }
  });

  it('changes open in the diff editor by themselves once asked to; one hunk accepted and one rejected there writes the mix', async () => {
    // A first change: shown in the panel only; the user asks for the diff editor from now on.
    await ask('Write the draft file');
    const draft = openRequest('draft.txt');
    await draft.waitFor();
    assert.equal(await page.locator('.monaco-diff-editor').count(), 0, 'no diff editor unless asked');
    await draft.locator('input[data-action="autoDiff"]').check();
    await until(async () => (await draft.locator('input[data-action="autoDiff"]').isChecked()) === true, 'the setting on');
    await draft.locator('button', { hasText: 'Reject…' }).click();
    await draft.locator('input.reason:focus').waitFor();
    await page.keyboard.press('Enter');
    await lastRun().locator('.answer', { hasText: 'Left the draft alone.' }).waitFor();

    // The next change opens by itself, the panel keeping the focus.
    await ask('Rename Total and document it');
    const diff = page.locator('.monaco-diff-editor');
    await diff.locator('.editor.modified .view-lines', { hasText: 'func Sum' }).waitFor();
    await panel().locator('#prompt').waitFor();
    const accept = lens(/Accept \(\+2 −2\)/, '.monaco-diff-editor .editor.modified');
    const rejectSecond = page.locator('.monaco-diff-editor .editor.modified .codelens-decoration', { hasText: 'Accept (+1 −1)' }).locator('a', { hasText: 'Reject' });
    await accept.waitFor();
    await rejectSecond.waitFor();
    await screenshot('review-hunks');
    // The second hunk (the return line) goes back as it was: the panel shows the user's version.
    await rejectSecond.click();
    await diff.locator('.editor.modified .view-lines', { hasText: 'return t // the sum' }).waitFor({ state: 'detached' });
    const req = openRequest('cart.go');
    await req.locator('.inline-diff summary', { hasText: 'Your version' }).waitFor();
    assert.doesNotMatch(await req.locator('.inline-diff').innerText(), /the sum/);
    await accept.click();
    await lastRun().locator('.answer', { hasText: 'Renamed Total to Sum; the return line stays as you had it.' }).waitFor();
    const cart = fs.readFileSync(path.join(h.ws, 'cart.go'), 'utf8');
    assert.match(cart, /\/\/ Sum adds up the prices\.\nfunc Sum\(prices \[\]int\) int \{/);
    assert.match(cart, /\n\treturn t\n\}/, 'the rejected hunk was not written');
    await diff.waitFor({ state: 'detached' });
    ok();
  });

  it('the diff editor\'s title bar accepts the whole change', async () => {
    await ask('Write the plan file');
    const diff = page.locator('.monaco-diff-editor');
    await diff.locator('.editor.modified .view-lines', { hasText: '1. rename' }).waitFor();
    await page.locator('.editor-actions a[aria-label="Accept Change"], .editor-actions .action-label[aria-label="Accept Change"]').first().click();
    await lastRun().locator('.answer', { hasText: 'The plan is written.' }).waitFor();
    assert.equal(fs.readFileSync(path.join(h.ws, 'plan.txt'), 'utf8'), '1. rename\n2. test\n');
    await diff.waitFor({ state: 'detached' });
    ok();
  });

  it('edits a selection inline: the change shows in the file, one hunk rejected, one accepted, the file written once', async () => {
    await quickOpen('cart.go');
    await page.locator('.monaco-editor .view-lines', { hasText: 'func Sum' }).first().waitFor();
    await page.keyboard.press('Control+g');
    await quickInput(':4');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: /line 4/i }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    for (let i = 0; i < 6; i++) await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Control+Alt+e');
    await page.locator('.quick-input-widget', { hasText: 'agentd: edit cart.go:4–9' }).waitFor();
    await quickInput('return early for an empty cart');
    await page.keyboard.press('Enter');
    // The proposal is in the buffer, unsaved, with the buttons of each hunk above it.
    const editor = page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.view-lines', { hasText: 'if len(prices) == 0' }).waitFor({ timeout: scaled(30000) });
    await lens('Accept all').waitFor();
    await lens('Reject all').waitFor();
    await page.locator('.tab.active.dirty, .tab.active .dirty-indicator, .tab.active[class*="dirty"]').first().waitFor().catch(() => undefined);
    assert.equal(fs.readFileSync(path.join(h.ws, 'cart.go'), 'utf8').includes('len(prices)'), false, 'nothing written yet');
    await screenshot('inline-edit');
    // Reject the second hunk (the comment on return), accept the early return.
    const hunks = page.locator('.editor-instance .codelens-decoration', { has: page.locator('a', { hasText: /Accept \(/ }) });
    await until(async () => (await hunks.count()) === 2, 'two hunks');
    await hunks.nth(1).locator('a').filter({ hasText: /^\s*Reject$/ }).click();
    await editor.locator('.view-lines', { hasText: 'return t // total' }).waitFor({ state: 'detached' });
    await until(async () => (await hunks.count()) === 1, 'one hunk left');
    await hunks.first().locator('a').filter({ hasText: /Accept \(\+3\)/ }).click();
    await until(() => fs.readFileSync(path.join(h.ws, 'cart.go'), 'utf8').includes('len(prices) == 0'), 'agentd to write the file');
    const cart = fs.readFileSync(path.join(h.ws, 'cart.go'), 'utf8');
    assert.match(cart, /if len\(prices\) == 0 \{\n\t\treturn 0\n\t\}/);
    assert.doesNotMatch(cart, /\/\/ total/, 'the rejected hunk was not written');
    await editor.locator('.view-lines', { hasText: 'if len(prices) == 0' }).waitFor();
    await lens('Accept all').waitFor({ state: 'detached' });
    // The buffer is the file again: clean, nothing left to save.
    await until(async () => (await page.locator('.tab.active.dirty').count()) === 0, 'a clean buffer');
    const sent = (await modelRequests()).find((r) => r.turn === 'inline');
    const asked = sent.messages.filter((m) => m.role === 'user').pop().content;
    assert.match(asked, /Edit lines 4–9 of cart\.go \(the selection\) as follows: return early for an empty cart/);
    ok();
  });

  it('the rules view: an "always" answer is listed, edited to a pattern, and revoked', async () => {
    await newSession();
    await ask('Run the formatter');
    const cmd = panel().locator('.tool', { hasText: 'npm run fmt' }).locator('.request-open');
    await cmd.waitFor();
    await cmd.locator('button', { hasText: 'Always accept' }).click();
    await lastRun().locator('.answer', { hasText: 'The formatter ran.' }).waitFor();
    await command('agentd: Rules');
    const view = panel().locator('.rules');
    const always = view.locator('.rules-group[data-scope="always"]');
    const rule = always.locator('.rule', { hasText: 'npm run fmt' });
    await rule.waitFor();
    // "Always" on `npm run fmt` stores its family, `npm run fmt *` (agentd's grants).
    assert.match(await rule.innerText(), /The command npm run fmt \*\s+allowed\s+Edit · Revoke/);
    assert.match(await view.locator('.rules-group[data-scope="built-in"]').innerText(), /Writing \*\*\/\.git\/\*\*\s+refused/);
    await rule.locator('button', { hasText: 'Edit' }).click();
    const edit = always.locator('.rule-edit');
    await edit.locator('input.rule-pattern').fill('npm run *');
    await edit.locator('select').selectOption('ask');
    await screenshot('rules-edit', '.part.sidebar');
    await edit.locator('button', { hasText: 'Save' }).click();
    const edited = always.locator('.rule', { hasText: 'npm run *' });
    await edited.waitFor();
    assert.match(await edited.innerText(), /asks first/);
    await edited.locator('button', { hasText: 'Revoke' }).click();
    await always.locator('.empty', { hasText: 'None: "Always accept" or "Always reject" on a request stores one here.' }).waitFor();
    const rules = JSON.parse(fs.readFileSync(path.join(h.state, fs.readdirSync(h.state).find((d) => fs.existsSync(path.join(h.state, d, 'rules.json'))) ?? '', 'rules.json'), 'utf8'));
    assert.deepEqual(rules.rules ?? [], [], 'the stored rule is gone from the state directory');
    await view.locator('button', { hasText: 'Close' }).click();
    ok();
  });

  it('sessions are searched by what was asked, renamed and deleted from the list', async () => {
    await command('agentd: Show Sessions');
    const list = panel().locator('.sessions');
    await list.locator('.session-row').first().waitFor();
    await list.locator('input.sessions-query').fill('formatter');
    await until(async () => (await list.locator('.session-row').count()) === 1, 'one session found');
    assert.match(await list.locator('.session-row').innerText(), /Run the formatter/);
    await list.locator('input.sessions-query').fill('nothing matches these words');
    await list.locator('.empty', { hasText: 'No session matches' }).waitFor();
    await list.locator('input.sessions-query').fill('plan file');
    const found = list.locator('.session-row', { hasText: 'Write the draft file' });
    await found.waitFor();
    assert.match(await found.locator('.session-match').innerText(), /Write the plan file/, 'found by a later prompt, quoted');
    // Rename it.
    await found.locator('button', { hasText: 'Rename' }).click();
    const box = list.locator('.session-rename input');
    await box.fill('Cart renaming');
    await box.press('Enter');
    await list.locator('input.sessions-query').fill('');
    await list.locator('.session-title', { hasText: 'Cart renaming' }).waitFor();
    await screenshot('sessions-search-rename', '.part.sidebar');
    // Delete the formatter's session.
    const fmt = list.locator('.session-row', { hasText: 'Run the formatter' });
    await fmt.locator('button', { hasText: 'Delete' }).click();
    await list.locator('.session-delete', { hasText: 'agentd forgets it for good' }).locator('button', { hasText: 'Delete' }).click();
    await fmt.waitFor({ state: 'detached' });
    await list.locator('.session-title', { hasText: 'Cart renaming' }).waitFor();
    await list.locator('button', { hasText: 'Close' }).click();
    ok();
  });

  it('after an edit agentd asks VS Code\'s language servers: the new TypeScript error shows under the edit, and the model read it', async () => {
    // A TypeScript file open, so VS Code's TypeScript server is up and has checked it (as in a real
    // project): its one error is in the Problems count.
    fs.writeFileSync(path.join(h.ws, 'tsconfig.json'), '{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["*.ts"]}\n');
    fs.writeFileSync(path.join(h.ws, 'util.ts'), "export const one: number = 'one';\n");
    await quickOpen('util.ts');
    await page.locator('[id="status.problems"]', { hasText: /1/ }).waitFor({ timeout: scaled(90000) });
    await newSession();
    await ask('Add the total function');
    const req = openRequest('app.ts');
    await req.waitFor();
    await req.locator('button', { hasText: /^Accept$/ }).click();
    await lastRun().locator('.answer', { hasText: 'Added total; the editor says Totl is undefined.' }).waitFor();
    const row = lastRun().locator('details.diagnostics');
    await row.waitFor();
    assert.match(await row.locator(':scope > summary').innerText(), /After the edits: 1 error \(1 new\) · the editor/);
    assert.match(await row.locator('.diag-list').innerText(), /app\.ts:2:10 error Cannot find name 'Totl'/);
    const read = (await modelRequests()).find((r) => r.turn === 'ts-after');
    const result = read.messages.filter((m) => m.role === 'tool').pop().content;
    assert.match(result, /Diagnostics after your edits \(the editor\)[^]*app\.ts:2:10: error: Cannot find name 'Totl'/);
    await screenshot('diagnostics-row', '.part.sidebar');
    // The problem's link opens the file where it is.
    await row.locator('.diag-list button', { hasText: 'app.ts:2:10' }).click();
    await page.locator('.tab.active', { hasText: 'app.ts' }).waitFor();
    ok();
  });

  it('several conversations at once: one works in its tab while another is asked and answered', async () => {
    await newSession();
    await ask('Think slowly in the background');
    await lastRun().locator('.answer', { hasText: 'Thinking in the background' }).waitFor();
    await panel().locator('.tabs .tab-new').click();
    await panel().locator('#prompt:focus').waitFor();
    await ask('Say hi quickly');
    await lastRun().locator('.answer', { hasText: 'Hi!' }).waitFor();
    const tabs = panel().locator('.tabs .tab');
    const slow = panel().locator('.tabs .tab', { has: panel().locator('.tab-open[title="Think slowly in the background"]') });
    await slow.locator('.spinner').waitFor();
    assert.match(await tabs.filter({ has: panel().locator('.tab-open') }).last().innerText(), /Say hi quickly/);
    await screenshot('two-conversations', '.part.sidebar');
    // Back to the first: its run still works; cancel it there.
    await slow.locator('.tab-open').click();
    await panel().locator('.run .prompt-text', { hasText: 'Think slowly in the background' }).waitFor();
    assert.equal(await panel().locator('.run .prompt-text', { hasText: 'Say hi quickly' }).count(), 0, 'one conversation at a time in the panel');
    await expectStatus(/agentd: working/);
    await panel().locator('#cancel').click();
    await lastRun().locator('.run-state-cancelled').waitFor();
    // And the other is where it was.
    await panel().locator('.tabs .tab-open[title="Say hi quickly"]').click();
    await lastRun().locator('.answer', { hasText: 'Hi!' }).waitFor();
    ok();
  });

  it('while a run works, Enter steers it (the words show inside the turn) and Alt+Enter queues the next prompt', async () => {
    await newSession();
    await ask('Count the files slowly');
    const first = panel().locator('.run', { has: panel().locator('.prompt-text', { hasText: 'Count the files slowly' }) });
    await first.locator('.tool', { hasText: 'sleep 4' }).locator('.tool-status', { hasText: 'running' }).waitFor();
    await panel().locator('#send', { hasText: 'Steer' }).waitFor();
    await panel().locator('#prompt').click();
    await page.keyboard.type('also count the hidden files');
    await page.keyboard.press('Enter');
    await first.locator('.steer', { hasText: 'also count the hidden files' }).waitFor();
    await page.keyboard.type('Then list them');
    await page.keyboard.press('Alt+Enter');
    const queued = panel().locator('.run', { has: panel().locator('.prompt-text', { hasText: 'Then list them' }) });
    await queued.locator('.run-queued', { hasText: 'Queued: starts when the run before it ends.' }).waitFor();
    await screenshot('steer-and-queue', '.part.sidebar');
    await first.locator('.answer', { hasText: 'Counted 3 files, hidden ones too.' }).waitFor({ timeout: scaled(30000) });
    await queued.locator('.answer', { hasText: 'Here they are: a, b, .c' }).waitFor({ timeout: scaled(30000) });
    assert.equal(await queued.locator('.run-queued').count(), 0);
    const steered = (await modelRequests()).find((r) => r.turn === 'steered');
    assert.ok(steered.messages.some((m) => m.role === 'tool' && /3 files/.test(m.content)), 'the command\'s result came first');
    assert.equal(steered.messages.filter((m) => m.role === 'user').pop().content.includes('also count the hidden files'), true);
    ok();
  });

  it('an image pasted into the chat goes with the prompt and shows under it, after a reload too', async () => {
    await newSession();
    // A red picture on the clipboard, as a screenshot tool leaves it; pasted into the prompt box.
    const prompt = panel().locator('#prompt');
    await prompt.click();
    await prompt.evaluate(async (el) => {
      const c = document.createElement('canvas');
      c.width = 40;
      c.height = 30;
      const g = c.getContext('2d');
      g.fillStyle = '#d22';
      g.fillRect(0, 0, 40, 30);
      const blob = await new Promise((r) => c.toBlob(r, 'image/png'));
      // The paste event a browser fires for Ctrl+V with a picture on the clipboard.
      const dt = new DataTransfer();
      dt.items.add(new File([blob], 'image.png', { type: 'image/png' }));
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    });
    const chip = panel().locator('#images .image-chip', { hasText: 'pasted image' });
    await chip.waitFor();
    assert.match(await chip.innerText(), /pasted image\s+40×30/);
    await page.keyboard.type('What is in this picture?');
    await page.keyboard.press('Enter');
    await lastRun().locator('.answer', { hasText: 'A red square.' }).waitFor();
    await chip.waitFor({ state: 'detached' });
    const shown = lastRun().locator('.prompt-image img[src^="data:image/png"]');
    await shown.waitFor();
    assert.match(await lastRun().locator('.prompt-image figcaption').innerText(), /pasted image · 40×30/);
    await screenshot('image-in-prompt', '.part.sidebar');
    // A reload: the history names the image and its bytes come back from agentd.
    await reloadWindow();
    await panel().locator('.run .prompt-text', { hasText: 'What is in this picture?' }).waitFor({ timeout: scaled(60000) });
    await panel().locator('.prompt-image img[src^="data:image/png"]').waitFor();
    ok();
  });

  it('the context meter says how full the window is; Compact summarizes the older turns', async () => {
    // A long answer, then a short turn: the long one is worth compacting.
    await ask('One more thing');
    await lastRun().locator('.answer', { hasText: 'Here is one more thing.' }).waitFor();
    await ask('Say hi quickly');
    await lastRun().locator('.answer', { hasText: 'Hi!' }).waitFor();
    const meter = panel().locator('#meter');
    await meter.waitFor();
    const text = await meter.locator('.meter-text').innerText();
    assert.match(text, /^Context [\d.]+k \/ 128k \(\d+%\)$/);
    assert.match(await meter.getAttribute('title'), /tokens of the model's 128,000-token window[^]*6 messages/);
    await screenshot('context-meter', '.part.sidebar');
    await meter.locator('#compact').click();
    await page.locator('.notifications-toasts', { hasText: /compacted the conversation, [\d.]+k → [\d.]+k tokens \(4 messages summarized/ }).waitFor();
    await meter.locator('.meter-text', { hasText: 'compacted' }).waitFor();
    await ask('What did we talk about?');
    await lastRun().locator('.answer', { hasText: 'A picture, and more.' }).waitFor();
    const after = (await modelRequests()).find((r) => r.turn === 'after-compact');
    assert.match(after.messages[1].content, /compacted at the user's request/, 'the summary heads what the model reads');
    assert.match(after.messages[1].content, /Say hi quickly/, 'the last turn is kept');
    ok();
  });
  it('a background process is listed with a stop button and a badge under its call; Stop stops it', async () => {
    await newSession();
    await panel().locator('#mode').selectOption('full-auto');
    await ask('Start the dev server');
    await lastRun().locator('.answer', { hasText: 'The dev server runs in the background.' }).waitFor();
    const badge = lastRun().locator('.proc-badge.proc-running', { hasText: 'running in the background (p1)' });
    await badge.waitFor();
    const list = panel().locator('details.processes');
    assert.match(await list.locator('summary').innerText(), /^Background processes \(1 running\)$/);
    const row = list.locator('.proc[data-proc="p1"]');
    assert.match(await row.innerText(), /p1\s+while true; do echo tick; sleep 1; done\s+running · started [\d:]+/);
    await screenshot('background-process', '.part.sidebar');
    await row.locator('button', { hasText: 'Stop' }).click();
    await list.locator('.proc.proc-stopped[data-proc="p1"]', { hasText: 'stopped by you' }).waitFor();
    assert.equal(await list.locator('button', { hasText: 'Stop' }).count(), 0, 'no stop button once it is over');
    await lastRun().locator('.proc-badge.proc-stopped', { hasText: 'background process p1: stopped by you' }).waitFor();
    assert.equal(await list.locator('summary').innerText(), 'Background processes');
    await screenshot('background-process-stopped', '.part.sidebar');
    ok();
  });

  it("a subagent's work shows under its task call, its question labelled with its task and answered there", async () => {
    await newSession();
    await ask('Delegate the cart question');
    const card = lastRun().locator('details.task', { hasText: 'Find the cart total' });
    const q = card.locator('.request-open', { hasText: 'Which currency should totals use?' });
    await q.waitFor();
    assert.equal(await q.locator('.request-from').innerText(), 'Subagent · Find the cart total');
    assert.match(await card.locator(':scope > summary').innerText(), /Subagent\s+Find the cart total\s+waiting for you\s+■ Stop/);
    await card.locator('.subagent-work .tool', { hasText: 'cart.go' }).waitFor();
    await screenshot('subagent-question', '.part.sidebar');
    await q.locator('input.answer-text').fill('EUR');
    await q.locator('input.answer-text').press('Enter');
    await lastRun().locator('.answer', { hasText: 'The subagent found where the total is computed.' }).waitFor();
    await card.locator('.subagent-work .answer', { hasText: 'totals use the currency you named' }).waitFor();
    assert.match(await card.locator(':scope > summary').innerText(), /Subagent\s+Find the cart total\s+done\s+[\d,]+ tokens · read 1 file/);
    const sub = (await modelRequests()).find((r) => r.turn === 'sub-answer');
    assert.match(sub.messages.filter((m) => m.role === 'tool').pop().content, /EUR/, "the subagent read the user's answer");
    const parent = (await modelRequests()).find((r) => r.turn === 'delegate-after');
    assert.match(parent.messages.filter((m) => m.role === 'tool').pop().content, /totals use the currency you named[^]*cart\.go/, "the parent read the subagent's answer and the files it read");
    await card.locator(':scope > summary').scrollIntoViewIfNeeded();
    await screenshot('subagent-done', '.part.sidebar');
    ok();
  });
  it('plan mode: the plan comes as a request to approve in the panel; approved, the run goes on in the mode picked, and the picker says so', async () => {
    await newSession();
    const mode = panel().locator('#mode');
    await mode.selectOption('plan');
    await ask('Plan the rename');
    const req = openRequest('Approve the plan?');
    await req.waitFor();
    await req.locator('.request-body h2', { hasText: 'Rename the total' }).waitFor();
    assert.match(await req.locator('.request-body').innerText(), /Rename Total to Sum in renamed\.txt\s+Run the tests/);
    assert.deepEqual(await req.locator('.decisions button').allInnerTexts(), ['Approve, and edit files without asking', 'Approve, and ask before each change', 'Approve, and run everything without asking', 'Keep planning']);
    assert.equal(fs.existsSync(path.join(h.ws, 'renamed.txt')), false, 'nothing written while planning');
    await screenshot('plan-to-approve', '.part.sidebar');
    await req.locator('button', { hasText: 'Approve, and edit files without asking' }).click();
    await lastRun().locator('.answer', { hasText: 'Renamed as planned.' }).waitFor();
    assert.equal(fs.readFileSync(path.join(h.ws, 'renamed.txt'), 'utf8'), 'Sum\n', 'written without asking: the session is in auto-edit now');
    assert.equal(await lastRun().locator('.request-open').count(), 0);
    await until(async () => (await mode.inputValue()) === 'auto-edit', 'the mode picker to follow the approved mode');
    ok();
  });
  it('a picture pasted while a run works goes with the steer: shown with the words inside the turn, read by the model', async () => {
    await newSession();
    await panel().locator('#mode').selectOption('full-auto');
    await ask('Check the page slowly');
    const run = panel().locator('.run', { has: panel().locator('.prompt-text', { hasText: 'Check the page slowly' }) });
    await run.locator('.tool', { hasText: 'sleep 4' }).locator('.tool-status', { hasText: 'running' }).waitFor();
    await panel().locator('#send', { hasText: 'Steer' }).waitFor();
    const prompt = panel().locator('#prompt');
    await prompt.click();
    await prompt.evaluate(async (el) => {
      const c = document.createElement('canvas');
      c.width = 40;
      c.height = 30;
      const g = c.getContext('2d');
      g.fillStyle = '#d22';
      g.fillRect(0, 0, 40, 30);
      const blob = await new Promise((r) => c.toBlob(r, 'image/png'));
      const dt = new DataTransfer();
      dt.items.add(new File([blob], 'image.png', { type: 'image/png' }));
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    });
    await panel().locator('#images .image-chip', { hasText: 'pasted image' }).waitFor();
    await page.keyboard.type('this is how it looks');
    await page.keyboard.press('Enter');
    const steer = run.locator('.steer', { hasText: 'this is how it looks' });
    await steer.locator('.prompt-image img[src^="data:image/png"]').waitFor();
    await run.locator('.answer', { hasText: 'I see a red square where the header should be.' }).waitFor();
    assert.equal(await panel().locator('.run', { has: panel().locator('.prompt-text', { hasText: 'this is how it looks' }) }).count(), 0, 'a steer, not a new prompt');
    await screenshot('steer-with-image', '.part.sidebar');
    const sent = (await modelRequests()).find((r) => r.turn === 'look-steered');
    const user = sent.messages.filter((m) => m.role === 'user').pop();
    assert.match(user.content, /this is how it looks/);
    assert.equal(user.images?.length, 1, 'the picture reached the model with the words');
    assert.match(user.images[0], /^data:image\/png;base64,/);
    ok();
  });
  it('a background process dies with a daemon killed with -9, and the next daemon lists it as lost', async () => {
    await newSession();
    await panel().locator('#mode').selectOption('full-auto');
    await ask('Start the watcher');
    await lastRun().locator('.answer', { hasText: 'The watcher runs.' }).waitFor();
    const row = panel().locator('details.processes .proc[data-proc="p1"]');
    await row.locator('button', { hasText: 'Stop' }).waitFor();
    // The watcher's shell, wherever it runs (in the sandbox's namespaces, still in this /proc).
    const watchers = () =>
      fs.readdirSync('/proc').filter((d) => {
        try {
          return /^\d+$/.test(d) && fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('echo watcher-e2e');
        } catch {
          return false;
        }
      });
    assert.ok(watchers().length > 0, 'the watcher runs');
    const [old] = h.daemonPids();
    process.kill(old, 'SIGKILL');
    await until(() => watchers().length === 0, 'the watcher to die with the daemon');
    await until(() => h.daemonPids().find((p) => p !== old), 'a new daemon');
    await panel().locator('.daemon').waitFor({ state: 'detached' });
    await row.locator('.proc-facts', { hasText: 'lost when agentd restarted' }).waitFor();
    assert.equal(await row.locator('button', { hasText: 'Stop' }).count(), 0);
    await lastRun().locator('.proc-badge', { hasText: 'background process p1: lost when agentd restarted' }).waitFor();
    await screenshot('background-process-lost', '.part.sidebar');
    ok();
  });
});
