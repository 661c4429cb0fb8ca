import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type BrowserContext, type ConsoleMessage, type Page } from 'puppeteer-core';

/**
 * A real headless Chromium for the tests of the pages Parley serves (/console, /demo). The
 * browser comes inside the `@sparticuz/chromium` npm package (unpacked to the temp folder on
 * first use), so `npm ci` brings everything; puppeteer-core drives it.
 *
 *   const browser = await startBrowser();
 *   const page = await browser.newPage();          // an isolated context: its own storage
 *   await page.goto(`${server.url}/demo`);
 *   await browser.screenshot(page, 'demo-rooms');   // test/.screenshots/demo-rooms.png
 *   await browser.close();
 *
 * Errors a page logs, and scripts that throw, are kept: `errorsOf(page)` lists them, so a test
 * can assert that a page ran clean.
 */
export interface TestBrowser {
  readonly browser: Browser;
  /** A page in a fresh incognito-like context (cookies and storage of its own); downloads go to `downloadPath` when given. */
  newPage(options?: { downloadPath?: string }): Promise<Page>;
  /** Writes `<SCREENSHOT_DIR>/<name>.png` (full page) and answers its path. */
  screenshot(page: Page, name: string): Promise<string>;
  /** Console errors and uncaught exceptions of a page so far (HTTP error answers it fetched are not counted). */
  errorsOf(page: Page): readonly string[];
  close(): Promise<void>;
}

/** Where screenshots go: `PARLEY_SCREENSHOT_DIR`, or test/.screenshots (git-ignored). */
export const SCREENSHOT_DIR = resolve(process.env.PARLEY_SCREENSHOT_DIR ?? join(__dirname, '..', '.screenshots'));

interface PackagedChromium {
  readonly executablePath: string;
  readonly args: string[];
}
let packaged: PackagedChromium | undefined;

/**
 * The packaged Chromium's path and flags. `@sparticuz/chromium` is an ES module, which Jest's
 * module loader cannot load: a short Node process asks it (and unpacks the browser the first time).
 */
function packagedChromium(): PackagedChromium {
  packaged ??= JSON.parse(
    execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const { default: c } = await import('@sparticuz/chromium'); console.log(JSON.stringify({ executablePath: await c.executablePath(), args: c.args }))"],
      { cwd: join(__dirname, '..', '..'), encoding: 'utf8', timeout: 120_000 },
    ),
  ) as PackagedChromium;
  return packaged;
}

/**
 * The package's flags, less two made for serverless functions that would make the tests lie:
 * `--single-process` (one renderer: a second browser context crashes it) and
 * `--disable-web-security` (no same-origin policy: CORS would pass untested).
 */
function browserFlags(packagedFlags: readonly string[]): string[] {
  const unwanted = new Set(['--single-process', '--disable-web-security', '--disable-site-isolation-trials', '--allow-running-insecure-content']);
  return [...packagedFlags.filter((flag) => !unwanted.has(flag)), '--ignore-certificate-errors'];
}

export async function startBrowser(options: { width?: number; height?: number } = {}): Promise<TestBrowser> {
  const chromium = packagedChromium();
  const browser = await puppeteer.launch({
    executablePath: chromium.executablePath,
    args: browserFlags(chromium.args),
    headless: true,
    defaultViewport: { width: options.width ?? 1280, height: options.height ?? 800 },
  });
  const errors = new WeakMap<Page, string[]>();
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newPage({ downloadPath }: { downloadPath?: string } = {}) {
      const context = await browser.createBrowserContext(downloadPath ? { downloadBehavior: { policy: 'allow', downloadPath } } : {});
      contexts.push(context);
      const page = await context.newPage();
      const seen: string[] = [];
      errors.set(page, seen);
      page.on('console', (message: ConsoleMessage) => {
        // Chromium also logs every HTTP answer of 400 or more that the page fetched ("Failed to load
        // resource"): an answer the page handles (a room it showed deleted meanwhile) is no error of
        // the page's own; its scripts' errors and console.error calls are.
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of')) seen.push(message.text());
      });
      page.on('pageerror', (error: unknown) => seen.push(error instanceof Error ? error.message : String(error)));
      return page;
    },
    async screenshot(page, name) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      const path = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: path as `${string}.png`, fullPage: true });
      return path;
    },
    errorsOf: (page) => errors.get(page) ?? [],
    async close() {
      await Promise.allSettled(contexts.map((context) => context.close()));
      await browser.close();
    },
  };
}
