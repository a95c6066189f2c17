// The end-to-end suites' hands: what a user does in code-server (the command palette, quick
// open, the panel's webview, the status bar) and what the tests read back (the model's requests),
// awaiting conditions rather than sleeping. Each suite binds them to its page and world: use(ctx).

import { scaled } from '../support/scale.mjs';
import path from 'node:path';

/** The live page and world of the suite (set in its before()). */
export const ctx = { page: undefined, h: undefined, artifacts: undefined };
let page;
let h;
const ARTIFACTS = () => ctx.artifacts;

/** Binds the helpers to the suite's page and world. */
export function use(world) {
  Object.assign(ctx, world);
  page = ctx.page;
  h = ctx.h;
}

let shot = 0;

export async function screenshot(name, clip) {
  const file = path.join(ARTIFACTS(), `${String(++shot).padStart(2, '0')}-${name}.png`);
  if (clip) await page.locator(clip).screenshot({ path: file });
  else await page.screenshot({ path: file });
  return file;
}

/**
 * Runs a command from the command palette. F1 opens it from the editor and the panel; a focused
 * terminal may keep F1 for the shell, and then Ctrl+Shift+P does. The title is filled in only
 * once the palette's input has the focus, so no keystroke goes elsewhere.
 */
export async function command(title) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  // The panel may take the focus back a moment after the palette opened (a command that focuses
  // the prompt box posts to the webview), which closes the palette: then it is opened again.
  for (let attempt = 1; ; attempt++) {
    try {
      await paletteInput('F1', 'Control+Shift+P');
      await input.fill(`>${title}`, { timeout: scaled(5000) });
      await row.waitFor({ state: 'visible', timeout: scaled(10000) });
      // On the input itself: if the palette closed meanwhile this fails instead of typing elsewhere.
      await input.press('Enter', { timeout: scaled(5000) });
      return;
    } catch (e) {
      if (attempt >= 3) throw e;
      // A palette left open (its list slow to filter, or Enter lost) is closed before the next
      // try, which waits for the quick input to be hidden.
      if (await page.locator('.quick-input-widget').isVisible()) await page.keyboard.press('Escape');
    }
  }
}

/**
 * Opens the quick input with `key` (or `fallback` when the focused part keeps the key) and waits for
 * its focus. A quick input still closing (a command just run from it) is awaited first: its input
 * keeps the focus while it hides, and text filled into it would be lost.
 */
export async function paletteInput(key, fallback) {
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  const focused = page.locator('.quick-input-widget .quick-input-box input:focus');
  await page.keyboard.press(key);
  try {
    await focused.waitFor({ state: 'visible', timeout: scaled(3000) });
  } catch {
    if (!fallback) throw new Error(`${key} opened no quick input`);
    await page.keyboard.press(fallback);
    await focused.waitFor({ state: 'visible' });
  }
}

/** Types into the open quick input once it has the focus (fill: nothing typed can go elsewhere). */
export async function quickInput(text) {
  const input = page.locator('.quick-input-widget .quick-input-box input:focus');
  await input.waitFor({ state: 'attached' });
  await input.fill(text);
}

/** Opens a workspace file with Quick Open (Ctrl+P), typed only once its input has the focus. */
export async function quickOpen(file) {
  await paletteInput('Control+p');
  await page.locator('.quick-input-widget .quick-input-box input').fill(file);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  await page.locator('.tab.active', { hasText: file }).waitFor();
}

/** Reloads the window and awaits the new workbench (never the old one, still on screen for a moment). */
export async function reloadWindow() {
  const navigated = page.waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame(), timeout: scaled(60000) });
  await command('Developer: Reload Window');
  await navigated;
  await page.waitForSelector('.monaco-workbench', { timeout: scaled(60000) });
}

/** Awaits a condition checked outside the page (processes, files), with a deadline. */
export async function until(pred, what, timeout = 30000) {
  const t0 = Date.now();
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() - t0 > scaled(timeout)) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The conversation webview. */
export function panel() {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

export function lastRun() {
  return panel().locator('.run').last();
}

/** Asks through the keybinding that focuses the prompt box. */
export async function ask(prompt) {
  // From wherever the focus is (often the panel itself, which forwards the keys to VS Code).
  await panel().locator('#prompt').evaluate((el) => el.blur());
  await page.keyboard.press('Control+Alt+a');
  await panel().locator('#prompt:focus').waitFor();
  await page.keyboard.type(prompt);
  await page.keyboard.press('Enter');
  await lastRun().locator('.prompt-text', { hasText: prompt.replace(/@\S*/, '').trim() }).waitFor();
}

export function statusBar() {
  return page.locator('.statusbar-item', { hasText: 'agentd:' }).first();
}

/** Awaits the status bar saying what `re` matches. */
export async function expectStatus(re, timeout = 30000) {
  try {
    await page.locator('.statusbar-item', { hasText: re }).first().waitFor({ timeout: scaled(timeout) });
  } catch {
    throw new Error(`status bar says "${await statusBar().innerText().catch(() => '')}", expected ${re}`);
  }
}

/** The open request whose text matches. */
export function openRequest(text) {
  return panel().locator('.request-open', { hasText: text });
}

/** The messages the model was sent, as recorded by the fake model. */
export async function modelRequests() {
  const res = await fetch(`${h.modelUrl.replace(/\/v1$/, '')}/_requests`);
  return res.json();
}

export async function lastUserMessageSent(containing) {
  const reqs = await modelRequests();
  for (const r of reqs.reverse()) {
    const user = [...r.messages].reverse().find((m) => m.role === 'user');
    if (user && user.content.includes(containing)) return user.content;
  }
  return undefined;
}


/** agentd: New Session, awaited: the panel shows the new conversation's tab in front. */
export async function newSession() {
  await command('agentd: New Session');
  // Its tab in front (or, with no other conversation open, the empty panel).
  await panel().locator('.tabs .tab.active', { hasText: 'New conversation' }).or(panel().locator('#conversation > .empty')).first().waitFor();
}
