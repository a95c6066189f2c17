// End-to-end: the packaged extension in a real VS Code (code-server) in Debian's Chromium,
// against the real agentd binary and the scripted fake model (test/models/e2e.json). Asserts on
// the screen, on the workspace files and on what the model was sent; screenshots go to
// test/artifacts/e2e/.
//
// Needs: AGENTD_BIN, FAKEMODEL_BIN, CS_DIR (and optionally VSIX, CHROMIUM). test/run.sh sets them.

import { scaled } from '../support/scale.mjs';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { EXT_DIR, setup } from './harness.mjs';
import {
  ask,
  command,
  expectStatus,
  lastRun,
  lastUserMessageSent,
  modelRequests,
  newSession,
  openRequest,
  panel,
  paletteInput,
  quickInput,
  quickOpen,
  reloadWindow,
  screenshot,
  statusBar,
  until,
  use,
} from './ui.mjs';

const ARTIFACTS = process.env.E2E_ARTIFACTS ?? path.join(EXT_DIR, 'test/artifacts/e2e');
let h;
let page;
describe('agentd in VS Code (code-server)', { timeout: scaled(600000) }, () => {
  before(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    h = await setup({ modelScript: path.join(EXT_DIR, 'test/models/e2e.json'), artifacts: ARTIFACTS });
    page = h.page;
    use({ page, h, artifacts: ARTIFACTS });
    // The extension activates, starts agentd and connects.
    await expectStatus(/agentd: ready/, 60000);
    await page.keyboard.press('Control+Alt+p');
    // A wider side bar, as someone who works in the panel would make it (and readable screenshots).
    const sb = await page.locator('.part.sidebar').boundingBox();
    await page.mouse.move(sb.x + sb.width + 1, sb.y + 300);
    await page.mouse.down();
    await page.mouse.move(sb.x + 520, sb.y + 300, { steps: 5 });
    await page.mouse.up();
    await panel().locator('#prompt:focus').waitFor();
  });

  // A failed scenario can leave its run waiting: later scenarios start in a new session then.
  let passed = true;
  beforeEach(() => (passed = false));
  afterEach(async () => {
    if (passed) return;
    await screenshot('failed').catch(() => undefined);
    for (let i = 0; i < 3; i++) await page.keyboard.press('Escape');
    // Its run must not go on working (or waiting) under the next scenarios.
    const cancel = panel().locator('#cancel:not([disabled])');
    if (await cancel.count().catch(() => 0)) {
      await cancel.click().catch(() => undefined);
      await panel().locator('#cancel[disabled]').waitFor({ timeout: scaled(10000) }).catch(() => undefined);
    }
    await page.keyboard.press('Control+Alt+p');
    await command('agentd: New Session').catch(() => undefined);
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

  it('answers a question in the panel; the command palette does not take it away', async () => {
    await ask('What is my name?');
    const q = openRequest('What is your name?');
    await q.waitFor();
    await expectStatus(/agentd: 1 waiting for you/);
    assert.equal(await page.locator('.quick-input-widget:visible').count(), 0, 'no quick input');
    assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'no modal');
    // Opening and leaving the command palette leaves the question where it is, half-typed answer included.
    await q.locator('input.answer-text').fill('Ad');
    await paletteInput('F1');
    await quickInput('>agentd');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'agentd:' }).first().waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await q.waitFor();
    assert.equal(await q.locator('input.answer-text').inputValue(), 'Ad');
    await expectStatus(/agentd: 1 waiting for you/);
    // The status bar takes you to it.
    await statusBar().click();
    await q.locator('input.answer-text:focus').waitFor();
    await page.keyboard.type('a');
    await page.keyboard.press('Enter');
    await lastRun().locator('.answer strong', { hasText: 'Ada' }).waitFor();
    assert.match(await lastRun().innerText(), /What is your name\?\s*— answered: Ada/);
    await lastRun().locator('.run-state-completed', { hasText: 'done' }).waitFor();
    await expectStatus(/agentd: done/);
    ok();
  });

  it('picks a choice with a button', async () => {
    await ask('What is my favourite colour?');
    const q = openRequest('Which colour?');
    await q.waitFor();
    assert.deepEqual((await q.locator('button.choice').allInnerTexts()).map((t) => t.trim()), ['red', 'blue']);
    assert.equal(await q.locator('input[placeholder^="Other"]').count(), 1, 'an "other" field, since the agent allows it');
    await q.locator('button.choice', { hasText: 'blue' }).click();
    await lastRun().locator('.answer', { hasText: 'You chose blue.' }).waitFor();
    assert.match(await lastRun().innerText(), /Which colour\?\s*— answered: blue/);
    ok();
  });

  it('rejects a write with a reason the model reads; the rejection is not a failure', async () => {
    await ask('Create the greeting file');
    const req = openRequest('greeting.txt');
    await req.waitFor();
    assert.match(await req.locator('.inline-diff').innerText(), /\+Hello from agentd!/);
    assert.match(await req.innerText(), /Asked because: mode ask: writes ask/);
    // The diff opens in VS Code's diff editor from the link.
    await req.locator('button', { hasText: 'Open diff' }).click();
    await page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'Hello from agentd!' }).waitFor();
    await req.locator('button', { hasText: 'Reject…' }).click();
    await req.locator('input.reason:focus').waitFor();
    await page.keyboard.type('call it hello.txt');
    await page.keyboard.press('Enter');
    await lastRun().locator('.answer', { hasText: 'I did not write greeting.txt' }).waitFor();
    assert.equal(fs.existsSync(path.join(h.ws, 'greeting.txt')), false);
    assert.match(await lastUserMessageSent('greeting file') ?? '', /greeting file/);
    const row = lastRun().locator('.tool', { hasText: 'greeting.txt' });
    assert.match(await row.locator('.tool-status').innerText(), /rejected by you/);
    assert.equal(await lastRun().locator('.tone-error').count(), 0, 'nothing reads as failed');
    await page.locator('.monaco-diff-editor').waitFor({ state: 'hidden' });
    ok();
  });

  it('edits a proposed write before accepting it', async () => {
    await ask('Write the notes file');
    const req = openRequest('notes.txt');
    await req.waitFor();
    await req.locator('button', { hasText: 'Edit before accepting' }).click();
    const modified = page.locator('.monaco-diff-editor .editor.modified');
    await modified.locator('.view-lines', { hasText: 'draft from the model' }).waitFor();
    // The proposed side has the focus.
    await page.locator('.monaco-diff-editor .editor.modified textarea:focus').waitFor();
    await page.keyboard.press('Control+a');
    await page.keyboard.type('notes edited by me');
    await req.locator('button', { hasText: 'Accept my version' }).waitFor();
    // The panel's change is now the user's version, not the model's text.
    const inline = req.locator('.inline-diff');
    await inline.locator('summary', { hasText: 'Your version' }).waitFor();
    // The panel follows the typing after it: on a loaded machine it showed "+notes edite" when read at once.
    await inline.filter({ hasText: '+notes edited by me' }).waitFor({ timeout: scaled(30000) });
    assert.match(await inline.innerText(), /\+notes edited by me/);
    assert.doesNotMatch(await inline.innerText(), /draft from the model/);
    await screenshot('write-edited');
    await req.locator('button', { hasText: 'Accept my version' }).click();
    await lastRun().locator('.answer', { hasText: 'Notes written with your version.' }).waitFor();
    assert.equal(fs.readFileSync(path.join(h.ws, 'notes.txt'), 'utf8'), 'notes edited by me');
    await page.locator('.monaco-diff-editor').waitFor({ state: 'hidden' });
    assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'closing the edited proposal asked nothing');
    ok();
  });

  it('shows a question, a write and a command at once, answered in any order', async () => {
    await ask('Set up the service');
    const question = openRequest('Which port should it listen on?');
    const write = openRequest('config.txt');
    const cmd = panel().locator('.tool', { hasText: 'touch ran.txt' }).locator('.request-open');
    await question.waitFor();
    await write.waitFor();
    await cmd.waitFor();
    await expectStatus(/agentd: 3 waiting for you/);
    const text = await lastRun().innerText();
    assert.equal(text.match(/touch ran\.txt && echo built/g).length, 1, 'the command line is shown once');
    assert.match(await cmd.innerText(), /Run this command\?[^]*in \. \(the workspace folder\)[^]*Asked because: mode ask: commands ask/);
    await screenshot('three-requests-waiting');
    await screenshot('three-requests-panel', '.part.sidebar');
    // The palette takes none of them away.
    await paletteInput('F1');
    await page.keyboard.press('Escape');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    assert.equal(await panel().locator('.request-open').count(), 3);
    // Newest first: the command, then the write, then the question.
    await cmd.locator('button', { hasText: /^Accept$/ }).click();
    await panel().locator('.tool', { hasText: 'touch ran.txt' }).locator('.tool-status', { hasText: 'done' }).waitFor();
    assert.equal(fs.existsSync(path.join(h.ws, 'ran.txt')), true, 'the accepted command ran');
    await expectStatus(/agentd: 2 waiting for you/);
    await write.locator('button', { hasText: /^Accept$/ }).click();
    await panel().locator('.tool', { hasText: 'config.txt' }).locator('.tool-status', { hasText: 'done' }).waitFor();
    assert.equal(fs.readFileSync(path.join(h.ws, 'config.txt'), 'utf8'), 'port = ?\n');
    await question.locator('input.answer-text').fill('8080');
    await question.locator('button', { hasText: 'Send' }).click();
    await lastRun().locator('.answer', { hasText: 'The service is set up on port 8080.' }).waitFor();
    await expectStatus(/agentd: done/);
    ok();
  });

  it('streams a running command\'s output into its row, shown once', async () => {
    // Only echo and sleep: the daemon runs it without asking.
    await ask('Watch the slow build');
    const live = lastRun().locator('details.tool[open] pre.tool-output-live');
    await live.filter({ hasText: 'step 1' }).waitFor({ timeout: scaled(15000) });
    assert.doesNotMatch(await live.textContent(), /built/, 'the output is shown before the command ends');
    await lastRun().locator('.answer', { hasText: 'The slow build finished.' }).waitFor({ timeout: scaled(30000) });
    const out = await lastRun().locator('details.tool pre.tool-output').textContent();
    assert.match(out, /step 1\n[^]*step 6\n[^]*built/);
    assert.equal(out.match(/step 1\n/g).length, 1, 'the streamed output is not duplicated');
    const summary = await lastRun().locator('details.tool summary').innerText();
    assert.match(summary, /\$ for i in[^]*done\s*8 lines/);
    ok();
  });

  it('cancels a run with the keybinding; the run reads cancelled, not failed', async () => {
    await ask('Think slowly');
    await lastRun().locator('.answer', { hasText: 'Thinking very slowly' }).waitFor();
    await expectStatus(/agentd: working/);
    assert.equal(await page.locator('.notifications-toasts .notification-toast').count(), 0, 'no toast over the editor');
    await page.keyboard.press('Control+Alt+k');
    await lastRun().locator('.run-state-cancelled', { hasText: 'cancelled' }).waitFor({ timeout: scaled(10000) });
    await expectStatus(/agentd: cancelled/);
    ok();
  });

  it('cancelling a run closes its open question, which reads cancelled', async () => {
    await ask('Ask then wait');
    await openRequest('Shall I go on?').waitFor();
    await panel().locator('#cancel').click();
    await lastRun().locator('.run-state-cancelled').waitFor();
    await openRequest('Shall I go on?').waitFor({ state: 'detached' });
    const done = lastRun().locator('.request-done', { hasText: 'Shall I go on?' });
    assert.match(await done.innerText(), /— cancelled/);
    assert.equal(await done.locator('xpath=self::*[contains(@class, "tone-neutral")]').count(), 1);
    ok();
  });

  it('attaches context: a file from the picker, the selection by keybinding, an @ mention', async () => {
    // The picker: + → Files… → cart.go.
    await panel().locator('#attach').click();
    await page.locator('.quick-input-widget', { hasText: 'agentd: Add context' }).waitFor();
    for (const label of ['Active file', 'Files…', 'Folder…', 'Problems', 'Terminal selection']) {
      if (label === 'Active file') continue; // only with an editor open
      await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor();
    }
    await quickInput('Files');
    await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: 'Files…' }).waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'agentd: Attach files' }).waitFor();
    await quickInput('cart.go');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'cart.go' }).first().waitFor();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'cart.go' }).first().click();
    await page.locator('.quick-input-widget', { hasText: '1 Selected' }).waitFor();
    await page.keyboard.press('Enter');
    await panel().locator('#chips .chip', { hasText: 'cart.go' }).waitFor();
    await ask('Explain the attached file');
    await lastRun().locator('.answer', { hasText: 'cart.go sums the prices.' }).waitFor();
    assert.equal(await lastRun().locator('.prompt .chip', { hasText: 'cart.go' }).count(), 1);

    // The selection: open cart.go, select lines 4–6, Ctrl+Alt+S.
    await quickOpen('cart.go');
    await page.locator('.monaco-editor .view-lines', { hasText: 'func Total' }).first().waitFor();
    await page.locator('.monaco-editor textarea:focus').waitFor({ state: 'attached' });
    await page.keyboard.press('Control+g');
    await quickInput(':4');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: /line 4/i }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Control+Alt+s');
    await panel().locator('#chips .chip', { hasText: 'cart.go:4–6' }).waitFor();
    await panel().locator('#prompt:focus').waitFor();
    await page.keyboard.type('What does this loop do?');
    await page.keyboard.press('Enter');
    await lastRun().locator('.answer', { hasText: 'That loop adds each price.' }).waitFor();

    // An @ mention, completed from the workspace's files.
    await page.keyboard.press('Control+Alt+a');
    await panel().locator('#prompt:focus').waitFor();
    await page.keyboard.type('Summarize @READ');
    await panel().locator('#mentions .mention', { hasText: 'README.md' }).waitFor();
    await screenshot('mention-completion', '.part.sidebar');
    await page.keyboard.press('Enter');
    assert.equal(await panel().locator('#prompt').inputValue(), 'Summarize @README.md ');
    await page.keyboard.type('please');
    await page.keyboard.press('Enter');
    await lastRun().locator('.answer', { hasText: 'The README describes a demo workspace.' }).waitFor();
    assert.match((await lastUserMessageSent('Summarize')) ?? '', /Files the user points at: README\.md/);
    ok();
  });

  it('attaches the Problems list and the terminal\'s selection', async () => {
    // A broken JSON file gives the Problems list an error (VS Code's own JSON support).
    await quickOpen('broken.json');
    await page.locator('.statusbar-item[id="status.problems"]', { hasText: /[1-9]/ }).waitFor({ timeout: scaled(30000) });
    // A terminal with something selected in it.
    await command('Terminal: Create New Terminal');
    await page.locator('.terminal-wrapper .xterm').first().waitFor();
    await page.locator('.terminal-wrapper .xterm-helper-textarea:focus').waitFor({ state: 'attached' });
    await page.keyboard.type('echo hello-terminal');
    await page.keyboard.press('Enter');
    const attach = async (item) => {
      await command('agentd: Add Context…');
      await page.locator('.quick-input-widget', { hasText: 'agentd: Add context' }).waitFor();
      await quickInput(item);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: item }).first().waitFor();
      await page.keyboard.press('Enter');
      // Attaching ends in the prompt box: wait for the focus to land there before going on.
      await panel().locator('#prompt:focus').waitFor();
      await page.waitForFunction(() => document.activeElement?.tagName === 'IFRAME');
    };
    await attach('Problems');
    // The terminal draws on a canvas: its text is read the way the picker reads it, by selecting
    // it, until the echo's output is there (the command line, the output and the next prompt).
    const chip = panel().locator('#chips .chip', { hasText: 'Terminal selection' });
    for (let tries = 0; ; tries++) {
      // The terminal takes the focus a moment after the click: wait for it, or it takes it back
      // from the palette opened next.
      await command('Terminal: Focus Terminal');
      await page.locator('.terminal-wrapper .xterm-helper-textarea:focus').waitFor({ state: 'attached' });
      await command('Terminal: Select All');
      await attach('Terminal selection');
      await chip.waitFor();
      if (/\((?:[3-9]|\d\d+) lines\)/.test(await chip.innerText())) break;
      assert.ok(tries < 20, `the terminal shows the echo: ${await chip.innerText()}`);
    }
    await panel().locator('#chips .chip', { hasText: /Problems \(\d+\)/ }).waitFor();
    await panel().locator('#chips .chip', { hasText: 'Terminal selection' }).waitFor();
    await screenshot('context-chips', '.part.sidebar');
    await ask('What went wrong here?');
    await lastRun().locator('.answer', { hasText: 'The JSON file is broken' }).waitFor();
    const sent = (await lastUserMessageSent('What went wrong here?')) ?? '';
    assert.match(sent, /Problems reported in the editor:\n```\nbroken\.json:2: error: /);
    assert.match(sent, /Selected in the terminal:\n```\n[^]*echo hello-terminal\nhello-terminal[^]*```/);
    await command('View: Hide Panel');
    ok();
  });

  it('shows the model\'s thinking folded, the instruction files the run was given, and the cached tokens', async () => {
    await ask('Why is the sky blue?');
    await lastRun().locator('.answer', { hasText: 'Rayleigh scattering.' }).waitFor();
    const thinking = lastRun().locator('details.thinking');
    assert.match(await thinking.locator('summary').innerText(), /^Thinking\s+Light scatters off the molecules of the air\.$/);
    assert.equal(await thinking.locator('.thinking-text').isVisible(), false, 'folded');
    await thinking.locator('summary').click();
    await thinking.locator('.thinking-text', { hasText: 'Blue light scatters the most.' }).waitFor();
    assert.doesNotMatch(await lastRun().locator('.answer').innerText(), /scatters/, 'the thinking is not in the answer');
    // The instruction files: one quiet line under the prompt, a link that opens the file.
    const line = lastRun().locator('.instructions');
    assert.equal(await line.count(), 1);
    assert.equal((await line.innerText()).trim(), 'Instructions: AGENTS.md');
    assert.match(await lastRun().locator('.run-footer .usage').innerText(), /^[\d,]+ tokens \(1,000 cached\)$/);
    await lastRun().locator('.run-footer').scrollIntoViewIfNeeded();
    await screenshot('thinking-and-instructions', '.part.sidebar');
    await line.locator('button', { hasText: 'AGENTS.md' }).click();
    await page.locator('.tab.active', { hasText: 'AGENTS.md' }).waitFor();
    await page.locator('.monaco-editor .view-lines', { hasText: 'Keep answers short.' }).first().waitFor();
    await command('View: Close All Editors');
    await page.locator('.tab', { hasText: 'AGENTS.md' }).waitFor({ state: 'detached' });
    ok();
  });

  it('the mode picker: a new conversation starts in the mode picked, and a change mid-session applies to the next run', async () => {
    await newSession();
    const mode = panel().locator('#mode');
    assert.deepEqual(await mode.locator('option').allInnerTexts(), ['Read only', 'Plan first (read only until approved)', 'Ask before changes', 'Auto-accept edits', 'Full auto']);
    await mode.selectOption('auto-edit');
    await ask('Write the auto file');
    await lastRun().locator('.answer', { hasText: 'Wrote auto.txt without asking.' }).waitFor();
    assert.equal(fs.readFileSync(path.join(h.ws, 'auto.txt'), 'utf8'), 'written without asking\n');
    assert.equal(await lastRun().locator('.request').count(), 0, 'nothing was asked');
    // Mid-session, back to asking: the session's next run asks before writing.
    await mode.selectOption('ask');
    await ask('Write the asked file');
    const req = openRequest('asked.txt');
    await req.waitFor();
    assert.equal(fs.existsSync(path.join(h.ws, 'asked.txt')), false);
    await req.locator('button', { hasText: /^Accept$/ }).click();
    await lastRun().locator('.answer', { hasText: 'Wrote asked.txt once you accepted.' }).waitFor();
    assert.equal(await mode.inputValue(), 'ask');
    ok();
  });

  it('switches the model mid-session without a restart; the run\'s next step names the new model and effort', async () => {
    await newSession();
    const model = panel().locator('#model');
    const effort = panel().locator('#effort');
    // The list comes from the endpoint's /models (agent/models).
    await model.locator('option', { hasText: 'fake-model-large' }).waitFor({ state: 'attached' });
    assert.deepEqual(await model.locator('option').allInnerTexts(), ['fake-model (default)', 'fake-model-large']);
    assert.deepEqual(await effort.locator('option').allInnerTexts(), ['Default effort', 'Low effort', 'Medium effort', 'High effort']);
    assert.equal(await model.inputValue(), '');
    const pids = h.daemonPids();
    await ask('Switch models midway');
    const q = openRequest('Go on with the bigger model?');
    await q.waitFor();
    await lastRun().locator('.run-footer .model', { hasText: /^fake-model$/ }).waitFor();
    // While the run waits on the question, the session switches model and effort.
    await model.selectOption('fake-model-large');
    await effort.selectOption('high');
    // The footer names the model the daemon says the run now uses (agent/configure's answer).
    await lastRun().locator('.run-footer .model', { hasText: 'fake-model-large' }).waitFor();
    await screenshot('pickers', '.part.sidebar');
    await q.locator('input.answer-text').fill('yes');
    await q.locator('input.answer-text').press('Enter');
    await lastRun().locator('.answer', { hasText: 'Going on with the bigger model.' }).waitFor();
    const reqs = (await modelRequests()).filter((r) => r.turn === 'switch' || r.turn === 'switch-after');
    assert.deepEqual(
      reqs.map((r) => [r.turn, r.model, r.reasoningEffort ?? '']),
      [
        ['switch', 'fake-model', ''],
        ['switch-after', 'fake-model-large', 'high'],
      ],
    );
    assert.deepEqual(h.daemonPids(), pids, 'the daemon was not restarted');
    ok();
  });

  it('a run paused because its state could not be saved says why; Resume goes on once it can be', async () => {
    await newSession();
    await ask('Save this if you can');
    await until(async () => (await modelRequests()).some((r) => r.turn === 'disk-slow'), 'the model to be asked');
    // While the model answers, the state directory stops taking writes (immutable, even for root).
    const chattr = (flag) => execFileSync('chattr', ['-R', flag, h.state], { stdio: 'pipe' });
    chattr('+i');
    try {
      const paused = lastRun().locator('.run-paused');
      await paused.waitFor({ timeout: scaled(30000) });
      assert.match(await paused.innerText(), /^Paused: state not saved: [^]*(operation not permitted|permission denied)[^]*\s+Resume$/i);
      assert.match(await lastRun().locator('.run-state').innerText(), /^paused$/);
      assert.equal(await lastRun().locator('.run-error, .tone-error').count(), 0, 'a pause, not a failure');
      await expectStatus(/agentd: paused/);
      await screenshot('paused-not-saved', '.part.sidebar');
    } finally {
      chattr('-i');
    }
    await lastRun().locator('.run-paused button', { hasText: 'Resume' }).click();
    await lastRun().locator('.answer', { hasText: 'Saved after all.' }).waitFor();
    await lastRun().locator('.run-state-completed').waitFor();
    assert.equal(await lastRun().locator('.run-paused').count(), 0);
    ok();
  });

  it('a run a daemon crash paused in the middle of a step goes on by itself once agentd is back', async () => {
    await newSession();
    await ask('Crash while you think');
    // The model takes 10 s to answer; 2.5 s after the request reached it, the daemon dies (kill -9).
    const slow = await until(async () => (await modelRequests()).find((r) => r.turn === 'crash-slow'), 'the slow model call');
    const arrived = Date.parse(slow.time);
    await until(() => Date.now() - arrived >= 2500, '2.5 s into the model call');
    assert.ok(Date.now() - arrived < 9000, 'the kill comes while the model is still answering');
    const [old] = h.daemonPids();
    process.kill(old, 'SIGKILL');
    await until(() => h.daemonPids().find((p) => p !== old), 'a new daemon');
    // agentd restored the run paused (the step was cut off); the extension resumes it, unasked.
    await lastRun().locator('.answer', { hasText: 'Thought it through after the crash.' }).waitFor({ timeout: scaled(60000) });
    await lastRun().locator('.run-state-completed').waitFor();
    assert.equal(await lastRun().locator('.run-paused').count(), 0, 'nothing left paused');
    assert.equal((await modelRequests()).filter((r) => r.turn?.startsWith('crash-')).length, 2, 'the step was asked again, once');
    await expectStatus(/agentd: done/);
    ok();
  });

  it('restores a two-run session after a daemon restart and after Reload Window, open question included; follow-ups continue it', async () => {
    await newSession();
    await ask('Remember the number 42');
    await lastRun().locator('.answer', { hasText: 'Noted: 42.' }).waitFor();
    await ask('Ask me for a colour');
    await openRequest('Which colour do you like?').waitFor();
    const prompts = panel().locator('.run .prompt-text');
    const expected = ['Remember the number 42', 'Ask me for a colour'];

    // The daemon dies (kill -9): the extension starts another, and the question comes back.
    const [old] = h.daemonPids();
    assert.ok(old, 'the daemon runs');
    process.kill(old, 'SIGKILL');
    const fresh = await until(() => h.daemonPids().find((p) => p !== old), 'a new daemon');
    await panel().locator('.daemon').waitFor({ state: 'detached' });
    await expectStatus(/agentd: 1 waiting for you/);
    await openRequest('Which colour do you like?').locator('input.answer-text').waitFor();
    assert.deepEqual(await prompts.allInnerTexts(), expected);

    // Reload Window: the panel keeps the session's id only and replays it from agent/history; a
    // half-typed answer is still there.
    await openRequest('Which colour do you like?').locator('input.answer-text').fill('gre');
    await reloadWindow();
    await expectStatus(/agentd: 1 waiting for you/, 60000);
    await openRequest('Which colour do you like?').waitFor({ timeout: scaled(30000) });
    assert.equal(await openRequest('Which colour do you like?').locator('input.answer-text').inputValue(), 'gre', 'the half-typed answer survives the reload');
    await until(() => h.daemonPids().every((p) => p !== fresh), 'the reload to restart the daemon');
    assert.deepEqual(await prompts.allInnerTexts(), expected);
    const first = panel().locator('.run').first();
    assert.match(await first.innerText(), /Noted: 42\./);
    assert.match(await first.locator('.instructions').innerText(), /AGENTS\.md/);
    assert.match(await first.locator('.run-state').innerText(), /done/);
    await screenshot('restored-two-run-session', '.part.sidebar');
    await openRequest('Which colour do you like?').locator('input.answer-text').fill('green');
    await openRequest('Which colour do you like?').locator('input.answer-text').press('Enter');
    await lastRun().locator('.answer', { hasText: 'Green it is.' }).waitFor();
    // A follow-up continues the restored session: the model sees the first run's prompt.
    await ask('What number did I say?');
    await lastRun().locator('.answer', { hasText: 'You said 42.' }).waitFor();
    assert.deepEqual(await prompts.allInnerTexts(), [...expected, 'What number did I say?']);
    ok();
  });

  it('lists the sessions (title, time, state, run count); opening one replays all its runs, and follow-ups continue it', async () => {
    await command('agentd: Show Sessions');
    const list = panel().locator('.sessions');
    const restored = list.locator('.session', { hasText: 'Remember the number 42' });
    await restored.waitFor();
    // (A suite run across midnight sees yesterday.)
    assert.match(await restored.locator('.session-meta').innerText(), /^(today|yesterday) \d\d:\d\d · done · 3 runs$/);
    const first = list.locator('.session', { hasText: 'What is my name?' });
    await first.waitFor();
    const meta = await first.locator('.session-meta').innerText();
    assert.match(meta, /^(today|yesterday) \d\d:\d\d · done · \d+ runs$/);
    assert.doesNotMatch(await list.innerText(), /requires_action|end_turn|T\d\d:|\.\d{3}Z/);
    await screenshot('session-list', '.part.sidebar');
    const count = Number(/(\d+) runs/.exec(meta)[1]);
    await first.click();
    await list.waitFor({ state: 'detached' });
    const prompts = panel().locator('.run .prompt-text');
    await until(async () => (await prompts.count()) === count, `the ${count} runs of the first session`);
    const texts = await prompts.allInnerTexts();
    assert.equal(texts[0], 'What is my name?');
    assert.ok(texts.includes('What went wrong here?'), 'a prompt sent with the Problems list reads as typed');
    const wrong = panel().locator('.run', { has: panel().locator('.prompt-text', { hasText: 'What went wrong here?' }) });
    assert.deepEqual((await wrong.locator('.prompt .chip').allInnerTexts()).map((t) => t.replace(/\(\d+( lines)?\)/, '(n$1)')), ['Problems (n)', 'Terminal selection (n lines)']);
    assert.match(await panel().locator('.run').first().innerText(), /Hello Ada, nice to meet you\./);
    assert.equal(await panel().locator('#mode').inputValue(), 'ask', 'the pickers show the session\'s settings');
    // A follow-up goes to the session opened.
    await ask('Anything else in this session?');
    await lastRun().locator('.answer', { hasText: 'This session began with your name.' }).waitFor();
    assert.equal(await prompts.count(), count + 1);
    ok();
  });
  it('undoes a turn whose command edited, deleted and created files; a file the user changed since is shown as a conflict and kept', async () => {
    const dir = path.join(h.ws, 'undo');
    const file = (n) => path.join(dir, n);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file('a.txt'), 'alpha\n');
    fs.writeFileSync(file('b.txt'), 'beta\n');
    await newSession();
    // Full auto: the command runs without asking, in the sandbox.
    await panel().locator('#mode').selectOption('full-auto');
    await ask('Tidy the undo folder');
    await lastRun().locator('.answer', { hasText: 'Tidied the undo folder.' }).waitFor();
    await lastRun().locator('.run-state-completed').waitFor();
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'ALPHA\n');
    assert.equal(fs.existsSync(file('b.txt')), false);
    assert.equal(fs.readFileSync(file('c.txt'), 'utf8'), 'gamma\n');
    const row = lastRun().locator('.tool', { hasText: 'sed -i' });
    await row.locator('button.restore', { hasText: 'Restore to here' }).waitFor();
    // The user changes a.txt after the agent did.
    fs.writeFileSync(file('a.txt'), 'ALPHA\nmine\n');
    await lastRun().locator('.run-actions button', { hasText: 'Undo this turn' }).click();
    const undo = lastRun().locator('.undo');
    const conflict = undo.locator('.undo-conflicts .conflict', { hasText: 'undo/a.txt' });
    await conflict.waitFor();
    assert.match(await undo.locator('.undo-summary').innerText(), /^2 files would be put back/);
    assert.match(await conflict.innerText(), /What the undo would do to it:[^]*-mine/);
    assert.match(await undo.innerText(), /undo\/b\.txt[^]*undo\/c\.txt/);
    assert.equal(fs.existsSync(file('b.txt')), false, 'the preview wrote nothing');
    await undo.locator('button', { hasText: 'Undo, keep my changes' }).waitFor();
    await undo.locator('button', { hasText: 'Undo and overwrite them' }).waitFor();
    await screenshot('undo-preview', '.part.sidebar');
    await undo.locator('button', { hasText: 'Undo, keep my changes' }).click();
    await undo.locator('.undo-done-text', { hasText: 'Done: 2 files put back' }).waitFor();
    assert.equal(fs.readFileSync(file('b.txt'), 'utf8'), 'beta\n');
    assert.equal(fs.existsSync(file('c.txt')), false);
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'ALPHA\nmine\n', 'the user\'s change is kept');
    assert.match(await undo.innerText(), /undo\/a\.txt/);
    // agent/checkpoints says the change was undone.
    await row.locator('.undone').waitFor();
    await screenshot('undo-done', '.part.sidebar');
    // The restore is a checkpoint too: undoing it (a checkpoint, previewed like the rest) redoes the command's changes.
    await undo.locator('button', { hasText: 'Undo this restore' }).click();
    await undo.locator('.request-title', { hasText: 'Restore to before this change' }).waitFor();
    await undo.locator('.undo-summary', { hasText: '2 files would be put back' }).waitFor();
    assert.equal(fs.readFileSync(file('b.txt'), 'utf8'), 'beta\n', 'the preview wrote nothing');
    await undo.locator('button', { hasText: /^Restore$/ }).click();
    await undo.locator('.undo-done-text', { hasText: 'Done: 2 files put back' }).waitFor();
    assert.equal(fs.existsSync(file('b.txt')), false);
    assert.equal(fs.readFileSync(file('c.txt'), 'utf8'), 'gamma\n');
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'ALPHA\nmine\n');
    // The command's change is in effect again: its row no longer reads undone.
    await row.locator('.undone').waitFor({ state: 'detached' });
    await row.locator('button.restore').waitFor();
    await undo.locator('button', { hasText: 'Close' }).click();
    await undo.waitFor({ state: 'detached' });
    ok();
  });

  it('rewinds the conversation to before a run: its file change undone, the run marked rewound, the next prompt continues without it', async () => {
    // The session of the tidy goes on (still in full auto).
    await ask('Write the rewind file');
    await lastRun().locator('.answer', { hasText: 'Wrote the rewind file.' }).waitFor();
    await lastRun().locator('.run-state-completed').waitFor();
    const written = path.join(h.ws, 'undo/rewind.txt');
    assert.equal(fs.readFileSync(written, 'utf8'), 'to be rewound\n');
    const run = panel().locator('.run', { has: panel().locator('.prompt-text', { hasText: 'Write the rewind file' }) });
    await run.locator('.run-actions button', { hasText: 'Rewind to here' }).click();
    const box = run.locator('.undo');
    await box.locator('.undo-summary', { hasText: 'The agent forgets this run and every later one (1 run)' }).waitFor();
    assert.match(await box.locator('.undo-summary').innerText(), /1 file would be put back/);
    await box.locator('button', { hasText: /^Rewind$/ }).click();
    await box.locator('.undo-done-text', { hasText: 'Rewound 1 run' }).waitFor();
    assert.equal(fs.existsSync(written), false, 'the run\'s file is undone');
    await run.locator('.rewound-note').waitFor();
    assert.equal(await run.locator('.run-actions').count(), 0, 'a rewound run offers nothing');
    await box.locator('button', { hasText: 'Close' }).click();
    await ask('What came after the tidy?');
    await lastRun().locator('.answer', { hasText: 'Nothing came after the tidy.' }).waitFor();
    const req = (await modelRequests()).find((r) => r.turn === 'after-rewind');
    const said = req.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
    assert.match(said, /Tidy the undo folder/, 'the run before is still in the conversation');
    assert.doesNotMatch(said, /Write the rewind file/, 'the rewound run is not');
    ok();
  });

  it('a command\'s confirmation shows its sandbox and network; "Allow without the sandbox" runs it with the user\'s rights', async () => {
    await newSession();
    await panel().locator('#mode').selectOption('ask');
    await ask('Touch a file outside');
    const cmd = panel().locator('.tool', { hasText: 'outside.txt' }).locator('.request-open');
    await cmd.waitFor();
    const text = await cmd.innerText();
    assert.match(text, /Runs in the workspace-write sandbox \(it can change the workspace only\), without the network\./);
    assert.match(text, /Allow without the sandbox\s+once, with your full rights and the network: /);
    assert.equal(await cmd.locator('button[data-decision="allow_once"]').getAttribute('title'), 'in the workspace-write sandbox');
    await screenshot('command-allow-full', '.part.sidebar');
    await cmd.locator('button', { hasText: 'Allow without the sandbox' }).click();
    await lastRun().locator('.answer', { hasText: 'Touched the file outside the workspace.' }).waitFor();
    assert.equal(fs.readFileSync(path.join(h.T, 'home/outside.txt'), 'utf8'), 'x', 'it ran outside the sandbox');
    assert.equal(await lastRun().locator('.tone-error').count(), 0);
    ok();
  });

  it('completes /commands from .agentd/commands (hint, description, a broken one with its reason) and runs one', async () => {
    const dir = path.join(h.ws, '.agentd/commands');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'review.md'), '---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\nReview $1 for bugs, briefly.\n');
    fs.writeFileSync(path.join(dir, 'release.md'), '---\ndescription: never closed\nReleases.\n');
    await newSession();
    await page.keyboard.press('Control+Alt+a');
    await panel().locator('#prompt:focus').waitFor();
    await page.keyboard.type('/re');
    const pop = panel().locator('#mentions');
    const review = pop.locator('.slash', { hasText: '/review' });
    await review.waitFor();
    assert.match(await review.innerText(), /^\/review <file>\s+workspace\s+Review a file for bugs$/);
    assert.match(await pop.locator('.slash.broken', { hasText: '/release' }).innerText(), /cannot be run: /);
    await pop.locator('.slash.active', { hasText: '/review' }).waitFor();
    await screenshot('command-completion', '.part.sidebar');
    await page.keyboard.press('Enter');
    await until(async () => (await panel().locator('#prompt').inputValue()) === '/review ', 'the command in the prompt box', 10000);
    await page.keyboard.type('cart.go');
    await page.keyboard.press('Enter');
    await lastRun().locator('.prompt-text', { hasText: '/review cart.go' }).waitFor();
    await lastRun().locator('.answer', { hasText: 'Reviewed cart.go: no bugs.' }).waitFor();
    assert.match((await lastUserMessageSent('Review cart.go')) ?? '', /^Review cart\.go for bugs, briefly\./);
    ok();
  });

  // Last: the MCP configuration it writes would ask in every later session.
  it('an MCP server of .mcp.json asks before it starts, in the panel; the MCP view shows it connected with its tools, and a failing one with its error', async () => {
    const mcpserver = process.env.MCPSERVER_BIN;
    assert.ok(mcpserver && fs.existsSync(mcpserver), 'MCPSERVER_BIN is built (test/run.sh)');
    const cfg = path.join(h.T, 'home/.config/agentd');
    fs.mkdirSync(cfg, { recursive: true });
    fs.writeFileSync(path.join(cfg, 'config.json'), JSON.stringify({ mcpServers: { notes: { command: mcpserver, args: ['-fail', 'no database at notes.sqlite'] } } }));
    fs.writeFileSync(path.join(h.ws, '.mcp.json'), JSON.stringify({ mcpServers: { helper: { command: mcpserver } } }));
    const before = h.daemonPids();
    await command('agentd: Restart Daemon');
    await until(() => h.daemonPids().some((p) => !before.includes(p)), 'a new daemon');
    await panel().locator('.daemon').waitFor({ state: 'detached' });
    await newSession();
    await ask('Use the MCP server');
    const req = openRequest('Start MCP server helper');
    await req.waitFor();
    const text = await req.innerText();
    assert.match(text, /^▶ Start MCP server helper\?/);
    assert.ok(text.includes(mcpserver), 'the command line it would start');
    assert.match(text, /Asked because: workspace MCP server: ask/);
    assert.doesNotMatch(text, /the workspace folder|Run a command/);
    // For the session: once disabled and enabled again, it starts without asking.
    await req.locator('button', { hasText: /^Accept for this session$/ }).click();
    await lastRun().locator('.answer', { hasText: 'The MCP server is ready.' }).waitFor();
    // The status bar follows the servers (mcp/changed) without the view ever opened.
    await page.locator('.statusbar-item', { hasText: 'MCP 1/2 · 1 failed' }).waitFor();
    await command('agentd: MCP Servers');
    const view = panel().locator('.mcp');
    const helper = view.locator('.mcp-server', { has: panel().locator('.mcp-name', { hasText: /^helper$/ }) });
    const notes = view.locator('.mcp-server', { has: panel().locator('.mcp-name', { hasText: /^notes$/ }) });
    await helper.locator('.tool-status', { hasText: 'connected' }).waitFor();
    await notes.locator('.tool-status', { hasText: 'failed' }).waitFor();
    assert.match(await helper.locator('summary').innerText(), /helper\s+connected\s+\d+ tools/);
    await helper.locator('summary').click();
    assert.match(await helper.innerText(), /\.mcp\.json · stdio · sandbox: read, no network[^]*echo[^]*Echo the text back\./);
    assert.match(await notes.innerText(), /notes\s+failed[^]*your config · stdio[^]*no database at notes\.sqlite/);
    await screenshot('mcp-status', '.part.sidebar');
    // Disable the helper: it stops, the status bar counts it out; enable it: it connects again.
    await helper.locator('button.mcp-action', { hasText: 'Disable' }).click();
    await helper.locator('.tool-status', { hasText: 'disabled' }).waitFor();
    await page.locator('.statusbar-item', { hasText: 'MCP 0/2 · 1 failed' }).waitFor();
    await helper.locator('button.mcp-action', { hasText: 'Enable' }).click();
    await helper.locator('.tool-status', { hasText: 'connected' }).waitFor();
    await page.locator('.statusbar-item', { hasText: 'MCP 1/2 · 1 failed' }).waitFor();
    // Restart the failing one (its row is open, showing why it failed): it is started again and
    // fails again, saying why.
    await notes.locator('.mcp-error').waitFor();
    await notes.locator('button.mcp-action', { hasText: 'Restart' }).click();
    await notes.locator('.mcp-facts', { hasText: /started [2-9] times/ }).waitFor();
    assert.match(await notes.innerText(), /no database at notes\.sqlite/);
    await screenshot('mcp-controls', '.part.sidebar');
    await view.locator('button', { hasText: 'Close' }).click();
    await view.waitFor({ state: 'detached' });
    ok();
  });
});
