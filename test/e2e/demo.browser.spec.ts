import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import type { ElementHandle, Page } from 'puppeteer-core';
import { startBrowser, TestBrowser } from '../support/browser';
import { startTestServer, TestServer } from '../support/test-server';

/**
 * The demo chat (/demo) in a real headless Chromium, on the unmodified @pusher/chatkit-client
 * 1.14.1 that the page bundles: two people, each in a browser context of their own, chat
 * through the page over the server's plain HTTP port (the SDK's socket opened as ws://).
 */

/** A checkered PNG of `width` × `height`: a file the page shows as an image once its signed download link loads. */
function checkeredPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) rows.set((x >> 4) % 2 === (y >> 4) % 2 ? [54, 82, 217] : [229, 72, 77], y * (width * 3 + 1) + 1 + x * 3);
  }
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}
const PNG = checkeredPng(96, 64);

/** Waits (at most 20 s) until `check` holds in the page; fails naming `what`. */
async function until(page: Page, what: string, check: () => boolean): Promise<void> {
  try {
    await page.waitForFunction(check, { timeout: 20_000, polling: 50 });
  } catch {
    throw new Error(`Waited in vain for ${what}. The page shows: ${await page.evaluate(() => document.body.innerText)}`);
  }
}

async function signIn(page: Page, url: string, userId: string): Promise<void> {
  await page.goto(`${url}/demo`);
  await page.waitForSelector('[data-test=user-name]');
  await page.type('[data-test=user-name]', userId);
  await page.click('[data-test=sign-in] button[type=submit]');
  await page.waitForSelector('[data-test=chat]', { timeout: 20_000 });
}

/** The address of every WebSocket the page opens from now on. */
async function socketsOf(page: Page): Promise<string[]> {
  const urls: string[] = [];
  const cdp = await page.createCDPSession();
  cdp.on('Network.webSocketCreated', (event: { url: string }) => urls.push(event.url));
  await cdp.send('Network.enable');
  return urls;
}

describe('the demo chat page (/demo) in a real browser', () => {
  let s: TestServer;
  let browser: TestBrowser;
  let files: string;

  beforeAll(async () => {
    files = mkdtempSync(join(tmpdir(), 'parley-demo-files-'));
    [s, browser] = await Promise.all([startTestServer(), startBrowser({ width: 1000, height: 640 })]);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    rmSync(files, { recursive: true, force: true });
  });

  it('two people chat through it: rooms, text, a file, typing, presence and a read receipt, with no page error', async () => {
    const alice = await browser.newPage();
    const bob = await browser.newPage();
    const aliceSockets = await socketsOf(alice);

    await alice.goto(`${s.baseUrl}/demo`);
    await alice.waitForSelector('[data-test=sign-in]');
    await browser.screenshot(alice, 'demo-sign-in');
    await signIn(alice, s.baseUrl, 'alice');

    // Alice creates a room; it opens with her in it, online.
    await alice.type('[data-test=room-name-input]', 'general');
    await alice.click('[data-test=new-room] button[type=submit]');
    await until(alice, 'the room "general" open with alice online', () =>
      document.querySelector('[data-test=room-name]')?.textContent === 'general' &&
      document.querySelector('[data-test=members] [data-user-id=alice]')?.getAttribute('data-presence') === 'online',
    );

    // Bob finds it among the rooms to join, joins, and both see him online in it.
    await signIn(bob, s.baseUrl, 'bob');
    await until(bob, 'the room "general" to join', () => [...document.querySelectorAll('[data-test=joinable-rooms] li')].some((li) => li.textContent?.startsWith('general')));
    await bob.click('[data-test=joinable-rooms] li button');
    await until(bob, 'the room "general" open', () => document.querySelector('[data-test=room-name]')?.textContent === 'general');
    await until(bob, 'bob and alice listed as members', () => document.querySelectorAll('[data-test=members] li').length === 2);
    await until(alice, 'bob online in the room', () => document.querySelector('[data-test=members] [data-user-id=bob]')?.getAttribute('data-presence') === 'online');
    await until(bob, 'the room "general" among his rooms', () => document.querySelector('[data-test=my-rooms]')?.textContent?.includes('general') === true);

    // Bob types: Alice sees it; Bob sends: Alice reads it, and Bob sees that she did.
    await bob.type('[data-test=message-text]', 'hello from bob');
    await until(alice, '"bob is typing…"', () => document.querySelector('[data-test=typing]')?.textContent === 'bob is typing…');
    await bob.click('[data-test=composer] button[type=submit]');
    await until(alice, "bob's message", () =>
      [...document.querySelectorAll('[data-test=messages] li[data-sender=bob] .text')].some((p) => p.textContent === 'hello from bob'),
    );
    await until(bob, 'the receipt "Seen by alice" under his message', () => {
      const mine = document.querySelector('[data-test=messages] li[data-sender=bob]');
      return mine?.querySelector('[data-test=receipt]')?.textContent === 'Seen by alice';
    });

    // Alice sends a file with a line of text: Bob sees both, and the image loads from its download link.
    const picture = join(files, 'checkered.png');
    writeFileSync(picture, PNG);
    await alice.type('[data-test=message-text]', 'a picture');
    const fileInput = (await alice.waitForSelector('input[data-test=message-file]')) as ElementHandle<HTMLInputElement>;
    await fileInput!.uploadFile(picture);
    await alice.click('[data-test=composer] button[type=submit]');
    await until(bob, "alice's picture, loaded", () => {
      const message = [...document.querySelectorAll('[data-test=messages] li[data-sender=alice]')].find((li) => li.querySelector('.text')?.textContent === 'a picture');
      const image = message?.querySelector('img');
      return message?.querySelector('[data-test=attachment]')?.textContent?.startsWith('checkered.png (') === true && image instanceof HTMLImageElement && image.complete && image.naturalWidth === 96;
    });
    const { label, bytes } = await bob.evaluate(async () => {
      const link = document.querySelector<HTMLAnchorElement>('[data-test=messages] [data-test=attachment]')!;
      return { label: link.textContent, bytes: [...new Uint8Array(await (await fetch(link.href)).arrayBuffer())] };
    });
    expect(label).toBe(PNG.length < 1024 ? `checkered.png (${PNG.length} B)` : `checkered.png (${(PNG.length / 1024).toFixed(1)} KiB)`);
    expect(Buffer.from(bytes)).toEqual(PNG);
    await until(alice, 'the receipt "Seen by bob" under her picture', () => {
      const last = [...document.querySelectorAll('[data-test=messages] li')].pop();
      return last?.getAttribute('data-sender') === 'alice' && last.querySelector('[data-test=receipt]')?.textContent === 'Seen by bob';
    });
    // Bob starts a reply: Alice sees him typing again (the shot for docs/demo.md).
    await bob.type('[data-test=message-text]', 'nice');
    await until(alice, '"bob is typing…" again', () => document.querySelector('[data-test=typing]')?.textContent === 'bob is typing…');
    await browser.screenshot(alice, 'demo-chat-alice');
    await browser.screenshot(bob, 'demo-chat-bob');

    expect({ alice: browser.errorsOf(alice), bob: browser.errorsOf(bob) }).toEqual({ alice: [], bob: [] });
    // The SDK's one socket, on the plain HTTP port the page came from.
    expect(aliceSockets).toEqual([`${s.baseUrl.replace(/^http:/, 'ws:')}/ws`]);

    // Bob leaves (his tab closes): Alice sees him go offline.
    await bob.close();
    await until(alice, 'bob offline', () => document.querySelector('[data-test=members] [data-user-id=bob]')?.getAttribute('data-presence') === 'offline');
    expect(browser.errorsOf(alice)).toEqual([]);
  }, 90_000);

  describe('over HTTPS', () => {
    let tls: TestServer;
    beforeAll(async () => {
      tls = await startTestServer({ https: true });
    }, 60_000);
    afterAll(() => tls?.close());

    it('chats over wss:// on the HTTPS port, as the SDK does by itself', async () => {
      const origin = `https://localhost:${tls.httpsPort}`;
      const carol = await browser.newPage();
      const sockets = await socketsOf(carol);
      await signIn(carol, origin, 'carol');
      await carol.type('[data-test=room-name-input]', 'secure');
      await carol.click('[data-test=new-room] button[type=submit]');
      await until(carol, 'the room "secure" open', () => document.querySelector('[data-test=room-name]')?.textContent === 'secure');
      await carol.type('[data-test=message-text]', 'over TLS');
      await carol.click('[data-test=composer] button[type=submit]');
      await until(carol, 'her message back from the room subscription', () =>
        [...document.querySelectorAll('[data-test=messages] li[data-sender=carol] .text')].some((p) => p.textContent === 'over TLS'),
      );
      expect(sockets).toEqual([`wss://localhost:${tls.httpsPort}/ws`]);
      expect(browser.errorsOf(carol)).toEqual([]);
    }, 60_000);
  });
});
