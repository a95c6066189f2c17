// End-to-end: the packaged extension in a real VS Code (code-server) in Debian's Chromium,
// against the real agentd binary and the scripted fake model. Asserts on the screen and on the
// workspace files; screenshots go to test/artifacts/e2e/.
//
// Needs: AGENTD_BIN, FAKEMODEL_BIN, CS_DIR (and optionally VSIX, CHROMIUM). test/run.sh sets them.

import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { EXT_DIR, setup } from './harness.mjs';

const ARTIFACTS = process.env.E2E_ARTIFACTS ?? path.join(EXT_DIR, 'test/artifacts/e2e');
let h;
let page;
let shot = 0;

async function screenshot(name) {
  const file = path.join(ARTIFACTS, `${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Runs a command from the command palette. */
async function command(title) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible' });
  await page.keyboard.press('Enter');
}

/** The quick input (input box or quick pick) showing `text`. */
function quickInput(text) {
  return page.locator('.quick-input-widget', { hasText: text });
}

/** The conversation webview. */
function panel() {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

async function ask(prompt) {
  await command('agentd: Ask');
  const box = quickInput('agentd: Ask');
  await box.waitFor({ state: 'visible' });
  await page.keyboard.type(prompt);
  await page.keyboard.press('Enter');
}

function statusBar() {
  return page.locator('.statusbar-item', { hasText: 'agentd:' }).first();
}

async function expectStatus(re, timeout = 30000) {
  const t0 = Date.now();
  let text = '';
  while (Date.now() - t0 < timeout) {
    text = await statusBar().innerText().catch(() => '');
    if (re.test(text)) return text;
    await page.waitForTimeout(200);
  }
  throw new Error(`status bar says "${text}", expected ${re}`);
}

describe('agentd in VS Code (code-server)', { timeout: 600000 }, () => {
  before(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    h = await setup({ modelScript: path.join(EXT_DIR, 'test/models/e2e.json'), artifacts: ARTIFACTS });
    page = h.page;
    // The extension activates, starts agentd and connects.
    await expectStatus(/agentd: (idle|completed)/, 60000);
  });

  // A failed scenario can leave its run waiting: later scenarios start in a new session then.
  let passed = true;
  beforeEach(() => (passed = false));
  afterEach(async () => {
    if (passed) return;
    await screenshot('failed').catch(() => undefined);
    for (let i = 0; i < 3; i++) await page.keyboard.press('Escape');
    await command('agentd: New Session').catch(() => undefined);
  });
  const ok = () => (passed = true);

  after(async () => {
    if (page) await screenshot('final').catch(() => undefined);
    if (h) {
      try {
        const res = await fetch(`${h.modelUrl.replace(/\/v1$/, '')}/_requests`);
        fs.writeFileSync(path.join(ARTIFACTS, 'model-requests.json'), await res.text());
      } catch {}
      await h.teardown();
    }
  });

  it('answers a question in an input box', async () => {
    await ask('What is my name?');
    const box = quickInput('What is your name?');
    await box.waitFor({ state: 'visible' });
    await expectStatus(/1 waiting for you/);
    await screenshot('question-input-box');
    await page.keyboard.type('Ada');
    await page.keyboard.press('Enter');
    await box.waitFor({ state: 'hidden' });
    const answer = panel().locator('.answer strong', { hasText: 'Ada' });
    await answer.waitFor({ state: 'visible' });
    assert.match(await panel().locator('.run').last().innerText(), /Hello Ada, nice to meet you\./);
    await panel().locator('.run').last().locator('.run-state-completed').waitFor();
    await expectStatus(/agentd: completed/);
    await screenshot('question-answered');
    ok();
  });

  it('picks a choice in a quick pick', async () => {
    const prompt = panel().locator('#prompt');
    await prompt.click();
    await prompt.fill('What is my favourite colour?');
    await prompt.press('Enter');
    const pick = quickInput('Which colour?');
    await pick.waitFor({ state: 'visible' });
    const rows = pick.locator('.quick-input-list .monaco-list-row');
    await rows.first().waitFor();
    assert.deepEqual((await rows.allInnerTexts()).map((t) => t.trim()), ['red', 'blue']);
    await screenshot('choice-quick-pick');
    await rows.filter({ hasText: 'blue' }).click();
    await pick.waitFor({ state: 'hidden' });
    await panel().locator('.answer', { hasText: 'You chose blue.' }).waitFor();
    assert.match(await panel().locator('.run').last().locator('.request').innerText(), /Which colour\?.*answered/s);
    ok();
  });

  it('approves a write after looking at its diff', async () => {
    await ask('Create the greeting file');
    const diff = page.locator('.monaco-diff-editor');
    await diff.waitFor({ state: 'visible' });
    const modified = diff.locator('.editor.modified .view-lines');
    await modified.filter({ hasText: 'Hello from agentd!' }).waitFor();
    const tab = page.locator('.tabs-container .tab', { hasText: 'greeting.txt' });
    await tab.first().waitFor();
    // The decision is taken next to the request in the panel, so nothing covers the diff.
    const request = panel().locator('.run').last().locator('.request-open', { hasText: 'greeting.txt' });
    const buttons = request.locator('.decisions button');
    await buttons.first().waitFor();
    assert.deepEqual((await buttons.allInnerTexts()).map((t) => t.trim()), ['Allow', 'Allow for Session', 'Always Allow', 'Reject', 'Always Reject']);
    assert.equal(fs.existsSync(path.join(h.ws, 'greeting.txt')), false, 'nothing is written before the approval');
    await screenshot('write-diff-and-decision');
    await buttons.filter({ hasText: /^Allow$/ }).click();
    await panel().locator('.answer', { hasText: 'I wrote greeting.txt.' }).waitFor();
    assert.equal(fs.readFileSync(path.join(h.ws, 'greeting.txt'), 'utf8'), 'Hello from agentd!\nSecond line.\n');
    const run = panel().locator('.run').last();
    await run.locator('.files-changed', { hasText: 'greeting.txt' }).waitFor();
    assert.match(await run.locator('.files-changed .diff').first().textContent(), /\+Hello from agentd!/);
    assert.match(await run.locator('.plan').innerText(), /✓\s*Write greeting\.txt/);
    await diff.waitFor({ state: 'hidden' });
    await screenshot('write-applied');
    ok();
  });

  it('rejects a command shown in a modal with its cwd', async () => {
    await ask('Run the build');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible' });
    const text = await dialog.innerText();
    assert.match(text, /touch ran\.txt && echo built/);
    assert.match(text, /in the workspace folder \(\.\)|in \./);
    await screenshot('command-modal');
    await dialog.locator('.dialog-buttons a.monaco-button, .dialog-buttons .monaco-button', { hasText: /^Reject$/ }).click();
    await dialog.waitFor({ state: 'hidden' });
    await panel().locator('.answer', { hasText: 'I did not run the build.' }).waitFor();
    assert.equal(fs.existsSync(path.join(h.ws, 'ran.txt')), false, 'the rejected command did not run');
    assert.match(await panel().locator('.run').last().locator('.request').innerText(), /reject/);
    ok();
  });

  it('streams a running command\'s output into the panel', async () => {
    // Only echo and sleep: the daemon runs it without asking.
    await ask('Watch the slow build');
    const run = panel().locator('.run').last();
    // While the command runs, its output shows up piece by piece in the open tool call.
    const live = run.locator('details.tool[open] pre.tool-output-live');
    await live.filter({ hasText: 'step 1' }).waitFor({ timeout: 15000 });
    const early = await live.textContent();
    assert.doesNotMatch(early, /built/, 'the output is shown before the command ends');
    await live.filter({ hasText: 'step 3' }).waitFor({ timeout: 15000 });
    await screenshot('command-output-streaming');
    // The final output replaces the streamed one: each line once.
    await run.locator('.answer', { hasText: 'The slow build finished.' }).waitFor({ timeout: 30000 });
    assert.equal(await run.locator('pre.tool-output-live').count(), 0);
    const out = await run.locator('details.tool pre.tool-output').textContent();
    assert.match(out, /step 1\n[^]*step 6\n[^]*built/);
    assert.equal(out.match(/step 1\n/g).length, 1, 'the streamed output is not duplicated');
    assert.equal(await run.locator('details.tool[open]').count(), 1, 'the tool call stays open');
    await screenshot('command-output-final');
    ok();
  });

  it('cancels a run from its progress notification', async () => {
    await ask('Think slowly');
    await panel().locator('.run').last().locator('.answer', { hasText: 'Thinking very slowly' }).waitFor();
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'agentd' });
    await toast.waitFor({ state: 'visible' });
    await expectStatus(/agentd: running/);
    await screenshot('run-streaming');
    await toast.hover();
    await toast.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await panel().locator('.run').last().locator('.run-state-cancelled').waitFor({ timeout: 10000 });
    await expectStatus(/agentd: cancelled/);
    ok();
  });

  it('cancelling a run closes its open question', async () => {
    await ask('Ask then wait');
    const box = quickInput('Shall I go on?');
    await box.waitFor({ state: 'visible' });
    await panel().locator('#cancel').click();
    await box.waitFor({ state: 'hidden', timeout: 10000 });
    const run = panel().locator('.run').last();
    await run.locator('.run-state-cancelled').waitFor();
    assert.match(await run.locator('.request').innerText(), /cancelled/);
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'agentd' }).waitFor({ state: 'hidden', timeout: 5000 });
    await screenshot('cancelled-question');
    ok();
  });
});
