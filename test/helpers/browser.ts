import { access, constants, mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

/**
 * A real browser for tests of server-rendered pages: Debian's Chromium
 * (`apt-get install chromium`, which .ci/run does), driven headless by
 * playwright-core, which downloads no browser of its own. A machine without
 * it fails the test that asked for it, loudly: a browser test never skips.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * The flags this machine's Chromium needs: no sandbox (tests run as root),
 * no GPU, and none of the background connections to Google's services that
 * a closed network refuses many at a time (first-run, component updates,
 * sync, QUIC probing).
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** The two widths every page is looked at: a laptop and a phone (CSS pixels). */
export const VIEWPORTS = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where screenshots go (gitignored): to look at what a person would see. */
export const ARTIFACTS_DIR = join(root, 'test-artifacts');

/**
 * Starts headless Chromium. Playwright gives every launch a fresh, empty
 * `--user-data-dir` of its own (a temporary directory it deletes on close), so
 * no profile, cookie or cache survives from one run to the next. Close it in
 * `afterAll`.
 */
export async function launchChromium(): Promise<Browser> {
  try {
    await access(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `browser tests need Debian's Chromium at ${CHROMIUM_PATH}; install it with "apt-get install -y chromium" (.ci/run does)`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS] });
}

/**
 * A new context (cookies of its own) at the laptop width unless told
 * otherwise. Its actions and waits give up after 10 s, well inside a
 * test's own limit, so a page that never comes names what it waited for.
 */
export async function newContext(browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: VIEWPORTS.laptop, ...options });
  context.setDefaultTimeout(10_000);
  return context;
}

interface AxeNode {
  target: unknown[];
  html: string;
  failureSummary?: string;
}

interface AxeViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  helpUrl: string;
  nodes: AxeNode[];
}

/** The rules run: WCAG 2.0 to 2.2, levels A and AA, and axe's best practices. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

let axeSource: Promise<string> | undefined;

/**
 * Runs axe-core on the page as it is now and throws when it finds a serious
 * or critical violation, with a report naming each rule, the elements and
 * what to fix; returns the lesser ones for a test that wants to look. axe
 * is evaluated through the DevTools protocol, which the pages' CSP (no
 * inline script, none from elsewhere) does not apply to.
 */
export async function expectNoSeriousAxeViolations(page: Page, what: string): Promise<AxeViolation[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(await axeSource);
  const json = await page.evaluate<string>(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ['violations'] })
       .then((results) => JSON.stringify(results.violations))`,
  );
  const violations = JSON.parse(json) as AxeViolation[];
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  if (serious.length > 0) throw new Error(`${what}: axe-core found accessibility violations\n${axeReport(serious)}`);
  return violations;
}

/** A readable report of axe violations: one block per rule, one line per element. */
export function axeReport(violations: readonly AxeViolation[]): string {
  return violations
    .map((violation) =>
      [
        `- [${violation.impact ?? 'unknown'}] ${violation.id}: ${violation.help} (${violation.helpUrl})`,
        ...violation.nodes.map(
          (node) =>
            `    at ${node.target.map(String).join(' ')}: ${node.html.slice(0, 160)}` +
            (node.failureSummary === undefined ? '' : `\n      ${node.failureSummary.replace(/\n/g, '\n      ')}`),
        ),
      ].join('\n'),
    )
    .join('\n');
}

/**
 * Saves full-page screenshots of the page at the laptop and the phone width,
 * as `test-artifacts/<name>-laptop.png` and `-phone.png`, and puts the
 * viewport back as it was. Returns the files' paths.
 */
export async function saveScreenshots(page: Page, name: string): Promise<string[]> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const before = page.viewportSize();
  const files: string[] = [];
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    const path = join(ARTIFACTS_DIR, `${name}-${label}.png`);
    await page.screenshot({ path, fullPage: true });
    files.push(path);
  }
  if (before !== null) await page.setViewportSize(before);
  return files;
}

/**
 * Whether the page scrolls sideways at its current width: text that does not
 * wrap (WCAG 2.2, 1.4.10 Reflow).
 */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');
}

/**
 * Presses Tab until the focused element's text is `label`, as a keyboard
 * user moves through the page; throws after `maxPresses`. Returns how the
 * focus is drawn, so a test can check that it shows (WCAG 2.2, 2.4.7).
 */
export async function tabTo(page: Page, label: string, maxPresses = 30): Promise<{ outline: string }> {
  const seen: string[] = [];
  for (let presses = 0; presses < maxPresses; presses++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate<{ text: string; outline: string }>(
      `(() => { const el = document.activeElement; if (!el || el === document.body) return { text: '', outline: '' };
        const style = getComputedStyle(el); return { text: (el.textContent || '').trim(), outline: style.outlineStyle + ' ' + style.outlineWidth }; })()`,
    );
    if (focused.text === label) return { outline: focused.outline };
    seen.push(focused.text);
  }
  throw new Error(
    `no element "${label}" took the focus after ${maxPresses} Tab presses; focus went to: ${seen.join(' | ')}`,
  );
}

/**
 * What every console page must pass: no serious or critical axe violation at
 * each of {@link VIEWPORTS}' widths, then screenshots kept under the name
 * `console-<name>`, with the page left at the laptop width.
 */
export async function expectAccessibleAtEveryWidth(page: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await expectNoSeriousAxeViolations(page, `${name} at the ${width} width`);
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  await saveScreenshots(page, `console-${name}`);
}
