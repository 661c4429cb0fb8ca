/**
 * The operator console (/console) in a real headless Chromium against a real server (issue 21):
 * signing in with an instance key (the browser signs its own su tokens), refusing a bad
 * credential and another instance's, creating a user and a room, sending as the user to an
 * unmodified chatkit-client in the room, the audit timeline naming the console user, a
 * thread's replies and the bans of a room and of the instance (listed, made and lifted), and a
 * screenshot of every screen (test/.screenshots/console-*.png).
 */
import { CommandBus } from '@nestjs/cqrs';
import PushNotifications from '@pusher/push-notifications-server';
import jwt from 'jsonwebtoken';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { CreateInstanceCommand } from '../../src/modules/instances/create-instance/create-instance.handler';
import { CreateKeyCommand } from '../../src/modules/instances/create-key/create-key.handler';
import { startBrowser, type TestBrowser } from '../support/browser';
import { ChatkitClients, HookRecorder, ROOM_HOOKS } from '../support/chatkit-client-harness';
import { untar } from '../support/tar-files';
import { startTestServer, type TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';
import { WebhookReceiver } from '../support/webhook-receiver';

const ADMIN_SECRET = 'console-admin-secret-of-at-least-32-characters';
const OPERATOR = 'Olivia Operator';
const OTHER_INSTANCE = 'other-instance';
const OTHER_KEY = { id: 'other-key', secret: 'a-secret-of-the-other-instance-0123456789' };

describe('the operator console in a real browser', () => {
  let s: TestServer;
  let browser: TestBrowser;
  const clients = new ChatkitClients(() => s);
  let origin: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    s = await startTestServer({
      https: true,
      env: { CONSOLE_ENABLED: 'true', CONSOLE_ADMIN_SECRET: ADMIN_SECRET, WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}` },
    });
    origin = `https://localhost:${s.httpsPort}`;
    const commands = s.server.app.get(CommandBus);
    await commands.execute(new CreateInstanceCommand(OTHER_INSTANCE, 'local', { key_id: 'test' }));
    await commands.execute(new CreateKeyCommand(OTHER_INSTANCE, OTHER_KEY.id, OTHER_KEY.secret, { key_id: 'test' }));
    browser = await startBrowser();
  }, 90_000);

  afterAll(async () => {
    clients.closeAll();
    await browser?.close();
    await s?.close();
    await receiver?.close();
  });

  const open = async (path = '/console/') => {
    const page = await browser.newPage();
    await page.goto(`${origin}${path}`, { waitUntil: 'domcontentloaded' });
    return page;
  };

  /** Types into an empty field (the forms are React-controlled: real key presses). */
  const fill = async (page: Page, selector: string, text: string) => {
    await page.locator(selector).fill(text);
  };

  const textShown = (page: Page, text: string, timeout = 15_000) => page.waitForFunction((t) => document.body.innerText.includes(t), { timeout }, text);

  const alertOf = async (page: Page, form: string) => {
    const alert = await page.waitForSelector(`form[aria-label="${form}"] [role="alert"]`, { timeout: 15_000 });
    return alert!.evaluate((node) => node.textContent ?? '');
  };

  /** The text of a form's result once it shows one (`status`: done; `alert`: refused). */
  const alertOrStatus = async (page: Page, form: string, role: 'status' | 'alert' = 'status') => {
    const shown = await page.waitForSelector(`form[aria-label="${form}"] [role="${role}"]`, { timeout: 15_000 });
    return shown!.evaluate((node) => node.textContent ?? '');
  };

  const signInToInstance = async (page: Page, locator: string, key: string) => {
    await fill(page, 'input[name="console_user"]', OPERATOR);
    await fill(page, 'input[name="locator"]', locator);
    await fill(page, 'input[name="key"]', key);
    await page.click('form[aria-label="instance sign-in"] button[type="submit"]');
  };

  /** Every request a page sends: where to, its headers and body. */
  const recordRequests = (page: Page) => {
    const sent: { url: string; wire: string }[] = [];
    page.on('request', (request) => sent.push({ url: request.url(), wire: `${request.url()} ${JSON.stringify(request.headers())} ${request.postData() ?? ''}` }));
    return sent;
  };

  const storedCredentials = (page: Page) => page.evaluate(() => sessionStorage.getItem('parley-console-credentials'));

  it('refuses a wrong key secret: the sign-in stays, nothing is kept', async () => {
    const page = await open();
    await page.waitForSelector('form[aria-label="instance sign-in"]');
    await browser.screenshot(page, 'console-sign-in');
    await signInToInstance(page, s.locator, `${s.keyId}:not-the-secret`);
    expect(await alertOf(page, 'instance sign-in')).toMatch(/401|invalid/i);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(await storedCredentials(page)).toBeNull();
    await browser.screenshot(page, 'console-sign-in-refused');
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it('an instance credential sees nothing of another instance: its key is refused there, and the other key here', async () => {
    const page = await open();
    // This instance's key offered for the other instance.
    await signInToInstance(page, `v1:local:${OTHER_INSTANCE}`, `${s.keyId}:${s.secret}`);
    expect(await alertOf(page, 'instance sign-in')).toMatch(/401|invalid|key/i);
    expect(await storedCredentials(page)).toBeNull();
    // The other instance's key offered for this one.
    const other = await open();
    await signInToInstance(other, s.locator, `${OTHER_KEY.id}:${OTHER_KEY.secret}`);
    expect(await alertOf(other, 'instance sign-in')).toMatch(/401|invalid|key/i);
    expect(await storedCredentials(other)).toBeNull();
  });

  it('signs in with an instance key, creates a user and a room, sends as the user to an SDK client, and shows it in the audit timeline', async () => {
    const page = await browser.newPage();
    const requests = recordRequests(page);
    await page.goto(`${origin}/console/`, { waitUntil: 'domcontentloaded' });
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    expect(new URL(page.url()).pathname).toBe('/console/users');
    // The secret never left the tab: no request carried it (each carried a token it signed).
    const stored = JSON.parse((await storedCredentials(page))!);
    expect(stored.instance).toMatchObject({ instanceId: s.instanceId, keyId: s.keyId, name: OPERATOR });

    // Create a user.
    await fill(page, 'form[aria-label="create user"] input[name="id"]', 'ada');
    await fill(page, 'form[aria-label="create user"] input[name="name"]', 'Ada Lovelace');
    await page.click('form[aria-label="create user"] button[type="submit"]');
    await page.waitForFunction(() => location.pathname === '/console/users/ada', { timeout: 15_000 });
    await textShown(page, 'Ada Lovelace');
    expect((await s.request('GET', s.chat('/users/ada'))).body).toMatchObject({ id: 'ada', name: 'Ada Lovelace' });
    await browser.screenshot(page, 'console-user');

    // Create a room, created by ada.
    await page.click('nav a[href="/console/rooms"]');
    await page.waitForSelector('form[aria-label="create room"]');
    await fill(page, 'form[aria-label="create room"] input[name="id"]', 'lobby');
    await fill(page, 'form[aria-label="create room"] input[name="name"]', 'The lobby');
    await fill(page, 'form[aria-label="create room"] input[name="creator"]', 'ada');
    await page.click('form[aria-label="create room"] button[type="submit"]');
    await page.waitForFunction(() => location.pathname === '/console/rooms/lobby', { timeout: 15_000 });
    await textShown(page, 'The lobby');
    expect((await s.request('GET', s.chat('/rooms/lobby'))).body).toMatchObject({ id: 'lobby', name: 'The lobby', created_by_id: 'ada', member_user_ids: ['ada'] });

    // ada's SDK client in the room hears what the console sends as her.
    const ada = await clients.connect('ada');
    const heard = new HookRecorder();
    await ada.currentUser.subscribeToRoomMultipart({ roomId: 'lobby', hooks: heard.hooks(...ROOM_HOOKS), messageLimit: 0 });
    await page.waitForSelector('form[aria-label="send as"] select option[value="ada"]');
    await fill(page, 'form[aria-label="send as"] input[name="text"]', 'Hello from the console');
    await page.click('form[aria-label="send as"] button[type="submit"]');
    await textShown(page, 'Sent as ada');
    const [message] = await heard.waitFor('onMessage');
    expect(message.senderId).toBe('ada');
    expect(message.parts[0].payload).toMatchObject({ type: 'text/plain', content: 'Hello from the console' });
    // The room's messages: metadata until "Show content", which the server records first.
    const listed = await page.waitForSelector('ol[aria-label="messages"] li[data-message-id="1"]', { timeout: 15_000 });
    const metadata = await listed!.evaluate((li) => li.textContent ?? '');
    expect(metadata).toContain('text/plain, 22 bytes');
    expect(metadata).not.toContain('Hello from the console');
    await browser.screenshot(page, 'console-room');
    await page.locator('button::-p-text(Show content)').click();
    await page.waitForFunction(() => document.querySelector('ol[aria-label="messages"] li[data-message-id="1"] .content')?.textContent === 'Hello from the console', {
      timeout: 15_000,
    });
    await browser.screenshot(page, 'console-room-content');
    // The live tail shows what an SDK user sends meanwhile, without a reload.
    await page.locator('button::-p-text(Hide content)').click();
    await page.locator('input[name="live"]').click();
    await ada.currentUser.sendSimpleMessage({ roomId: 'lobby', text: 'Sent from the SDK' });
    const tailed = await page.waitForSelector('ol[aria-label="messages"] li[data-message-id="2"]', { timeout: 15_000 });
    expect(await tailed!.evaluate((li) => li.textContent ?? '')).toContain('text/plain, 17 bytes');

    // The room's history: the message sent, by the console user acting as ada.
    await page.click('a[href="/console/audit/rooms/lobby"]');
    await page.waitForSelector('ol[aria-label="timeline"] li[data-event-type="MessageSent"]', { timeout: 15_000 });
    const sent = await page.$eval('ol[aria-label="timeline"] li[data-event-type="MessageSent"]', (li) => li.textContent ?? '');
    expect(sent).toContain(OPERATOR);
    expect(sent).toContain(`key ${s.keyId} as ada`);
    // Content stays out of the timeline (it needs the recorded "show content" read).
    expect(sent).not.toContain('Hello from the console');
    // The content read is in the history too, by the console user, naming no content.
    const read = await page.$eval('ol[aria-label="timeline"] li[data-event-type="MessageContentRead"]', (li) => li.textContent ?? '');
    expect(read).toContain(OPERATOR);
    expect(read).toContain('"message_count": 1');
    expect(read).not.toContain('Hello from the console');
    const created = await page.$eval('ol[aria-label="timeline"] li[data-event-type="RoomCreated"]', (li) => li.textContent ?? '');
    expect(created).toContain(OPERATOR);
    await browser.screenshot(page, 'console-audit');

    // ada's read cursor, set through her SDK, on the room's cursors screen.
    await ada.currentUser.setReadCursor({ roomId: 'lobby', position: 2 });
    await page.goto(`${origin}/console/cursors?room=lobby`, { waitUntil: 'domcontentloaded' });
    await eventually(async () => {
      const rows = await page.$$eval('table[aria-label="cursors"] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)));
      if (rows.some((row) => row[0] === 'ada' && row[2] === '#2')) return true;
      await page.reload({ waitUntil: 'domcontentloaded' });
      return false;
    }, { what: "ada's cursor listed", everyMs: 250 });
    await browser.screenshot(page, 'console-cursors');
    expect(browser.errorsOf(page)).toEqual([]);
    // The key's secret never went over the wire, and every API call was to this instance.
    const apiCalls = requests.filter((r) => new URL(r.url).pathname.startsWith('/services/'));
    expect(apiCalls.length).toBeGreaterThan(10);
    expect(requests.filter((r) => r.wire.includes(s.secret))).toEqual([]);
    expect(apiCalls.filter((r) => !new URL(r.url).pathname.includes(`/${s.instanceId}/`)).map((r) => r.url)).toEqual([]);
  });

  it('refuses a wrong administrator secret; with the right one, manages instances and keys, shows health, downloads an export to disk and imports it', async () => {
    const downloads = mkdtempSync(join(tmpdir(), 'parley-console-downloads-'));
    const page = await browser.newPage({ downloadPath: downloads });
    const requests = recordRequests(page);
    await page.goto(`${origin}/console/`, { waitUntil: 'domcontentloaded' });
    await fill(page, 'input[name="console_user"]', OPERATOR);
    await fill(page, 'input[name="admin_secret"]', 'not-the-administrator-secret-at-all-0000');
    await page.click('form[aria-label="deployment sign-in"] button[type="submit"]');
    expect(await alertOf(page, 'deployment sign-in')).toMatch(/401|403|invalid/i);
    expect(await storedCredentials(page)).toBeNull();

    await fill(page, 'input[name="admin_secret"]', ADMIN_SECRET);
    await page.click('form[aria-label="deployment sign-in"] button[type="submit"]');
    await page.waitForSelector('table[aria-label="instances"] tbody tr', { timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe('/console/instances');
    await textShown(page, s.locator);

    // A new instance: its first key's secret is shown once, and works.
    await fill(page, 'form[aria-label="create instance"] input[name="id"]', 'made-in-console');
    await page.click('form[aria-label="create instance"] button[type="submit"]');
    const key = await (await page.waitForSelector('[data-testid="new-key"]', { timeout: 15_000 }))!.evaluate((n) => n.textContent ?? '');
    const [keyId, ...rest] = key.split(':');
    const token = jwt.sign({ instance: 'made-in-console', iss: `api_keys/${keyId}`, su: true }, rest.join(':'), { algorithm: 'HS256', expiresIn: 60 });
    expect((await s.request('POST', '/services/chatkit/v6/made-in-console/users', { token, body: { id: 'u1', name: 'U' } })).status).toBe(201);
    await textShown(page, ':made-in-console');

    // The test token provider switch of that instance.
    const tokenProvider = () => s.request('POST', '/services/chatkit_token_provider/v1/made-in-console/token', { token: null, body: { grant_type: 'client_credentials', user_id: 'u1' } });
    expect((await tokenProvider()).status).not.toBe(200);
    await page.click('input[aria-label="made-in-console token provider"]');
    await textShown(page, 'Test token provider of made-in-console on');
    expect((await tokenProvider()).status).toBe(200);

    // A second key, then the first disabled (after confirming): its tokens stop working.
    page.on('dialog', (dialog) => void dialog.accept());
    const row = 'table[aria-label="instances"] tr:has(input[aria-label="made-in-console token provider"])';
    await page.locator(`${row} button::-p-text(new key)`).click();
    await page.waitForFunction((first) => (document.querySelector('[data-testid="new-key"]')?.textContent ?? first) !== first, { timeout: 15_000 }, key);
    const second = await page.$eval('[data-testid="new-key"]', (n) => n.textContent ?? '');
    const secondToken = jwt.sign({ instance: 'made-in-console', iss: `api_keys/${second.split(':')[0]}`, su: true }, second.split(':').slice(1).join(':'), { algorithm: 'HS256', expiresIn: 60 });
    expect((await s.request('GET', '/services/chatkit/v6/made-in-console/users/u1', { token: secondToken })).status).toBe(200);
    await page.locator(`${row} li:has(code) button::-p-text(disable)`).click();
    await textShown(page, `Key ${keyId} disabled`);
    expect((await s.request('GET', '/services/chatkit/v6/made-in-console/users/u1', { token })).status).toBe(401);
    expect((await s.request('GET', '/services/chatkit/v6/made-in-console/users/u1', { token: secondToken })).status).toBe(200);
    await browser.screenshot(page, 'console-instances');

    await page.click('nav a[href="/console/health"]');
    await page.waitForSelector('table[aria-label="projections"] tbody tr', { timeout: 15_000 });
    expect(await page.$eval('[data-testid="health-status"]', (n) => n.textContent)).toBe('ok');
    await browser.screenshot(page, 'console-health');

    // Export: the browser follows a one-use link and saves the archive to disk itself.
    await page.click('nav a[href="/console/export"]');
    await fill(page, 'input[aria-label="instance id"]', 'made-in-console');
    await page.locator('button::-p-text(Download export)').click();
    await textShown(page, 'Download of made-in-console started');
    const archiveName = await eventually(() => readdirSync(downloads).find((name) => /^parley-export-made-in-console-.+\.tar$/.test(name)), { what: 'the archive on disk' });
    const archive = join(downloads, archiveName);
    const files = await untar(readFileSync(archive));
    expect(JSON.parse(files.get('manifest.json')!.toString())).toMatchObject({ format: 'parley-instance-export', instance_id: 'made-in-console', complete: true });
    const exportedTypes = files.get('events.ndjson')!.toString().trim().split('\n').map((line) => JSON.parse(line).type);
    expect(exportedTypes).toEqual(expect.arrayContaining(['InstanceCreated', 'KeyCreated', 'UserCreated', 'InstanceExported']));
    await browser.screenshot(page, 'console-export');

    // Import: the archive uploaded, the job followed to its end. Into the server it came from, all of it is there already.
    await page.click('nav a[href="/console/import"]');
    await (await page.waitForSelector('input[type="file"][aria-label="archive"]'))!.uploadFile(archive);
    await page.waitForFunction(() => (document.querySelector('input[aria-label="instance id"]') as HTMLInputElement | null)?.value === 'made-in-console');
    await page.click('form[aria-label="import"] button[type="submit"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="import-status"]')?.textContent === 'done', { timeout: 15_000 });
    await textShown(page, `0 events appended, ${exportedTypes.length} already here`);
    await browser.screenshot(page, 'console-import');
    // What is no archive: refused with the API's error, nothing written.
    const notAnArchive = join(downloads, 'notes.tar');
    writeFileSync(notAnArchive, 'not a tar archive at all\n'.repeat(40));
    await (await page.$('input[type="file"][aria-label="archive"]'))!.uploadFile(notAnArchive);
    await page.click('form[aria-label="import"] button[type="submit"]');
    expect(await (await page.waitForSelector('section > [role="alert"]', { timeout: 15_000 }))!.evaluate((n) => n.textContent ?? '')).toMatch(/bad_archive/);
    rmSync(downloads, { recursive: true, force: true });
    // The administrator secret never went over the wire (nor the wrong one).
    expect(requests.filter((r) => r.wire.includes(ADMIN_SECRET) || r.wire.includes('not-the-administrator-secret'))).toEqual([]);
    expect(requests.filter((r) => new URL(r.url).pathname.startsWith('/services/parley_operator/')).length).toBeGreaterThan(5);
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it('edits a user, adds and removes a room member, deletes the room, erases a user on request and deletes another, after confirming', async () => {
    for (const id of ['grace', 'linus']) expect((await s.request('POST', s.chat('/users'), { body: { id, name: id } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { token: s.token({ sub: 'grace' }), body: { id: 'attic', name: 'Attic' } })).status).toBe(201);
    const page = await open();
    page.on('dialog', (dialog) => void dialog.accept());
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');

    await page.goto(`${origin}/console/users/grace`, { waitUntil: 'domcontentloaded' });
    await fill(page, 'form[aria-label="edit user"] input[name="name"]', 'Grace Hopper');
    await page.click('form[aria-label="edit user"] button[type="submit"]');
    await textShown(page, 'Saved');
    expect((await s.request('GET', s.chat('/users/grace'))).body.name).toBe('Grace Hopper');

    await page.goto(`${origin}/console/rooms/attic`, { waitUntil: 'domcontentloaded' });
    await fill(page, 'form[aria-label="add member"] input[name="member"]', 'linus');
    await page.click('form[aria-label="add member"] button[type="submit"]');
    await textShown(page, 'Added linus');
    expect((await s.request('GET', s.chat('/rooms/attic'))).body.member_user_ids.sort()).toEqual(['grace', 'linus']);
    await page.click('button[aria-label="remove linus"]');
    await textShown(page, 'Removed linus');
    expect((await s.request('GET', s.chat('/rooms/attic'))).body.member_user_ids).toEqual(['grace']);

    await page.locator('button::-p-text(Delete room)').click();
    await page.waitForFunction(() => location.pathname === '/console/rooms', { timeout: 15_000 });
    expect((await s.request('GET', s.chat('/rooms/attic'))).status).toBe(404);
    // grace erased on request: the erasure runs to completion, followed from her page.
    await page.goto(`${origin}/console/users/grace`, { waitUntil: 'domcontentloaded' });
    await page.locator('button::-p-text(Erase user)').click();
    await page.waitForSelector('[data-testid="erasure-status"]', { timeout: 15_000 });
    await eventually(async () => {
      await page.locator('button::-p-text(Refresh)').click();
      return (await page.$eval('[data-testid="erasure-status"]', (n) => n.textContent ?? '')).includes('completed');
    }, { what: 'the erasure completed', everyMs: 250, timeoutMs: 20_000 });
    expect((await s.request('GET', s.chat('/users/grace'))).status).toBe(404);

    await page.goto(`${origin}/console/users/linus`, { waitUntil: 'domcontentloaded' });
    await page.locator('button::-p-text(Delete user)').click();
    await page.waitForFunction(() => location.pathname === '/console/users', { timeout: 15_000 });
    expect((await s.request('GET', s.chat('/users/linus'))).status).toBe(404);
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it('shows the Beams devices of a user and the interests with their subscriber counts, publishes a test notification with its delivery report, and finds any publish\'s report by id', async () => {
    const devices = (path = '') => `/device_api/v1/instances/${s.instanceId}/devices/fcm${path}`;
    const register = async () =>
      (await s.request('POST', devices(), { body: { token: `APA91b${randomBytes(40).toString('base64url')}`, knownPreviousClientIds: [], metadata: {} }, token: null })).body.id as string;
    const beamsToken = new PushNotifications({ instanceId: s.instanceId, secretKey: s.secret } as any).generateToken('hedy').token;
    const [phone, tablet] = [await register(), await register()];
    for (const device of [phone, tablet]) expect((await s.request('PUT', devices(`/${device}/user`), { token: beamsToken })).status).toBe(200);
    expect((await s.request('PUT', devices(`/${phone}/interests`), { body: { interests: ['console-alerts', 'console-news'] }, token: null })).status).toBe(200);
    expect((await s.request('PUT', devices(`/${tablet}/interests`), { body: { interests: ['console-news'] }, token: null })).status).toBe(200);

    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.goto(`${origin}/console/beams?user=hedy`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => document.querySelectorAll('ul[aria-label="devices"] li code').length === 2, { timeout: 15_000 });
    const shown = await page.$$eval('ul[aria-label="devices"] li', (items) => items.map((li) => li.textContent ?? ''));
    expect(shown.map((line) => line.split(' ')[0]).sort()).toEqual([phone, tablet].sort());
    expect(shown.every((line) => line.includes('fcm'))).toBe(true);
    await fill(page, 'input[aria-label="search interests"]', 'console-');
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="interests"] tbody tr').length === 2, { timeout: 15_000 });
    const counts = await page.$$eval('table[aria-label="interests"] tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    expect(counts).toEqual([
      ['console-alerts', '1'],
      ['console-news', '2'],
    ]);
    // A test publish to hedy's devices, with the console's su token (no key secret sent), and its
    // delivery report, asked for again until the publish is delivered.
    await page.click('form[aria-label="test publish"] button[type="submit"]');
    await textShown(page, 'Published: ');
    const publishId = (await page.$eval('section[aria-label="publish report"] h3 code', (node) => node.textContent ?? '')).trim();
    await page.waitForSelector('section[aria-label="publish report"] dd[data-status="delivered"]', { timeout: 20_000 });
    const report = (await s.request('GET', `/services/parley_admin/v1/${s.instanceId}/beams/publishes/${publishId}`)).body;
    expect(report).toMatchObject({ publish_id: publishId, status: 'delivered', target: { kind: 'users', users: ['hedy'] }, delivery: { devices: 2 } });
    const shownReport = await page.$eval('section[aria-label="publish report"]', (node) => node.textContent ?? '');
    expect(shownReport).toContain('users hedy');
    expect(shownReport).toContain(`2 devices: ${report.delivery.delivered} delivered, ${report.delivery.failed} failed, ${report.delivery.removed} removed`);
    await browser.screenshot(page, 'console-beams');

    // Any publish's report by its id: one the server SDK made, to an interest.
    const beams = new PushNotifications({ instanceId: s.instanceId, secretKey: s.secret, endpoint: '127.0.0.1', port: s.server.httpPort } as any);
    const { publishId: sdkPublish } = await beams.publishToInterests(['console-news'], { web: { notification: { title: 'From the SDK' } } } as any);
    await fill(page, 'input[aria-label="publish id"]', sdkPublish);
    await page.click('form[aria-label="find publish"] button[type="submit"]');
    await page.waitForSelector('section[aria-label="found publish report"] dd[data-status="delivered"]', { timeout: 20_000 });
    const found = await page.$eval('section[aria-label="found publish report"]', (node) => node.textContent ?? '');
    expect(found).toContain(sdkPublish);
    expect(found).toContain('interests console-news');
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it('adds a webhook, shows its deliveries and redelivers one', async () => {
    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.click('nav a[href="/console/webhooks"]');
    await fill(page, 'input[aria-label="url"]', receiver.url('/console-hook'));
    await fill(page, 'input[aria-label="secret"]', 'a-webhook-signing-secret');
    await page.click('form[aria-label="create webhook"] button[type="submit"]');
    await textShown(page, receiver.url('/console-hook'));
    const created = () => receiver.requests.filter((r) => r.path === '/console-hook' && JSON.parse(r.body).metadata?.event_type === 'v1.users_created');
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'hooked', name: 'Hooked' } })).status).toBe(201);
    await eventually(() => created().length === 1, { what: 'the users_created delivery' });

    await page.locator(`button::-p-text(${receiver.url('/console-hook')})`).click();
    await eventually(async () => {
      await page.locator('button::-p-text(Refresh deliveries)').click();
      return page.$$eval('table[aria-label="deliveries"] tbody tr', (rows) => rows.some((r) => r.textContent?.includes('v1.users_created') && r.textContent.includes('delivered')));
    }, { what: 'the delivery listed', everyMs: 250 });
    await browser.screenshot(page, 'console-webhooks');
    await page.locator('table[aria-label="deliveries"] button::-p-text(redeliver)').click();
    await textShown(page, 'Redelivery queued');
    await eventually(() => created().length === 2, { what: 'the redelivery' });
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it('replays a webhook from a log position and from a time, the result shown, and pages through its pull feed', async () => {
    const path = '/console-replay';
    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.click('nav a[href="/console/webhooks"]');
    await fill(page, 'input[aria-label="url"]', receiver.url(path));
    await fill(page, 'input[aria-label="secret"]', 'a-webhook-signing-secret');
    await page.click('form[aria-label="create webhook"] button[type="submit"]');
    await textShown(page, receiver.url(path));
    const deliveriesOf = (userId: string) =>
      receiver.requests.filter((r) => r.path === path && JSON.parse(r.body).metadata?.event_type === 'v1.users_created' && JSON.parse(r.body).payload.users[0].id === userId);
    // More events than a page of the feed holds come first.
    for (let i = 0; i < 30; i++) expect((await s.request('POST', s.chat('/users'), { body: { id: `feed-filler-${i}`, name: `Filler ${i}` } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'replay-a', name: 'Replayed first' } })).status).toBe(201);
    await eventually(() => deliveriesOf('replay-a').length === 1, { what: "replay-a's users_created" });
    // The first user's event was recorded before its delivery came; the clock passes on twice, so the time lies strictly between the two users' events.
    const delivered = Date.now();
    await eventually(() => Date.now() > delivered, { what: 'the clock past the first event' });
    const between = new Date().toISOString();
    await eventually(() => Date.now() > Date.parse(between), { what: 'the clock past the time' });
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'replay-b', name: 'Replayed second' } })).status).toBe(201);
    await eventually(() => deliveriesOf('replay-b').length === 1, { what: "replay-b's users_created" });
    const eventIds = ['replay-a', 'replay-b'].map((id) => JSON.parse(deliveriesOf(id)[0].body).metadata.event_id as string);

    await page.locator(`button::-p-text(${receiver.url(path)})`).click();
    // The pull feed starts at the start of the log: the webhook carries every earlier event of the instance too, so the two users are pages later.
    await page.waitForSelector('table[aria-label="webhook feed"] tbody tr td code', { timeout: 15_000 });
    const feedText = () => page.$eval('table[aria-label="webhook feed"] tbody', (node) => node.textContent ?? '');
    let pages = 1;
    while (!(await feedText()).includes(eventIds[1])) {
      expect(pages).toBeLessThan(40);
      const before = await feedText();
      await page.locator('nav[aria-label="pages"] button::-p-text(Next)').click();
      await page.waitForFunction((previous) => document.querySelector('table[aria-label="webhook feed"] tbody')?.textContent !== previous, { timeout: 15_000 }, before);
      pages++;
    }
    expect(pages).toBeGreaterThan(1);
    const rows = await page.$$eval('table[aria-label="webhook feed"] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    expect(rows.find((cells) => cells[2] === eventIds[1])?.[1]).toContain('v1.users_created');
    // Metadata only: the payload's size, not the user's name.
    expect(await feedText()).not.toContain('Replayed second');

    // From a log position (the first user's event, exclusive, as the delivery log shows it): the second user's event again, with its event id.
    const webhooks = (await s.request('GET', `/services/parley_webhooks/v1/${s.instanceId}/webhooks`)).body as { id: string; url: string }[];
    const webhookId = webhooks.find((w) => w.url === receiver.url(path))!.id;
    const log = (await s.request('GET', `/services/parley_webhooks/v1/${s.instanceId}/webhooks/${webhookId}/deliveries`)).body as { event_id: string; position: string }[];
    const fromPosition = log.find((d) => d.event_id === eventIds[0])!.position;
    await page.select('select[aria-label="replay from"]', 'position');
    await fill(page, 'input[aria-label="replay position"]', fromPosition);
    await page.click('form[aria-label="replay webhook"] button[type="submit"]');
    expect(await alertOrStatus(page, 'replay webhook')).toContain(`after position ${fromPosition}`);
    await eventually(() => deliveriesOf('replay-b').length === 2, { what: 'the replay from a position' });
    expect(JSON.parse(deliveriesOf('replay-b')[1].body).metadata.event_id).toBe(eventIds[1]);

    // From a time between the two: the second user's event again, not the first's.
    await page.select('select[aria-label="replay from"]', 'time');
    await fill(page, 'input[aria-label="replay time"]', between);
    await page.click('form[aria-label="replay webhook"] button[type="submit"]');
    await page.waitForFunction(() => document.querySelector('form[aria-label="replay webhook"] [role="status"]')?.textContent?.startsWith('Replay 2 '), { timeout: 15_000 });
    await eventually(() => deliveriesOf('replay-b').length === 3, { what: 'the replay from a time' });
    expect(deliveriesOf('replay-a')).toHaveLength(1);
    await browser.screenshot(page, 'console-webhook-replay');

    // A time that is not one: the server's 400, shown.
    await fill(page, 'input[aria-label="replay time"]', 'yesterday');
    await page.click('form[aria-label="replay webhook"] button[type="submit"]');
    expect(await alertOrStatus(page, 'replay webhook', 'alert')).toContain('invalid_replay');
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it("finds a room's attachment and its download link", async () => {
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { token: s.token({ sub: 'ann' }), body: { id: 'shelf', name: 'Shelf' } })).status).toBe(201);
    const bytes = Buffer.from('{"the":"attached bytes"}');
    const announced = await s.request('POST', s.chat('/rooms/shelf/attachments'), {
      token: s.token({ sub: 'ann' }),
      body: { content_type: 'application/json', content_length: bytes.length, name: 'notes.json' },
    });
    expect(announced.status).toBe(201);
    expect((await fetch(announced.body.upload_url, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/json' } })).status).toBeLessThan(300);

    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.goto(`${origin}/console/files?room=shelf`, { waitUntil: 'domcontentloaded' });
    await fill(page, 'input[aria-label="file"]', announced.body.attachment_id);
    await page.click('form[aria-label="find file"] button[type="submit"]');
    const link = await (await page.waitForSelector('.found a::-p-text(Download)', { timeout: 15_000 }))!.evaluate((a) => (a as HTMLAnchorElement).href);
    expect(Buffer.from(await (await fetch(link)).arrayBuffer())).toEqual(bytes);
    await browser.screenshot(page, 'console-files');
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it("resolves reports on the Moderation screen (deleting a reported message), and the room's screen shows its messages' reactions and pins", async () => {
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users: ['mona', 'moe'].map((id) => ({ id, name: id })) } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { token: s.token({ sub: 'mona' }), body: { id: 'modroom', name: 'Mod room', user_ids: ['moe'] } })).status).toBe(201);
    const send = async (text: string, user: string) =>
      (await s.request('POST', s.chat('/rooms/modroom/messages'), { token: s.token({ sub: user }), body: { parts: [{ type: 'text/plain', content: text }] } })).body
        .message_id as number;
    const kept = await send('a pinned announcement', 'mona');
    const spam = await send('buy cheap watches here', 'moe');
    expect((await s.request('PUT', s.chat(`/rooms/modroom/messages/${kept}/reactions/${encodeURIComponent('👍')}`), { token: s.token({ sub: 'moe' }) })).status).toBe(204);
    expect((await s.request('PUT', s.chat(`/rooms/modroom/messages/${kept}/pin`), { token: s.token({ sub: 'moe' }) })).status).toBe(204);
    const reported = await s.request('POST', s.chat(`/rooms/modroom/messages/${spam}/reports`), { token: s.token({ sub: 'mona' }), body: { category: 'spam', reason: 'an advert again' } });
    expect(reported.status).toBe(201);
    const userReport = await s.request('POST', s.chat('/users/moe/reports'), { token: s.token({ sub: 'mona' }), body: { category: 'harassment' } });
    expect(userReport.status).toBe(201);

    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.click('nav a[href="/console/moderation"]');
    const item = `li[data-report-id="${reported.body.id}"]`;
    await page.waitForSelector(item, { timeout: 15_000 });
    const shown = await page.$eval(item, (li) => (li as HTMLElement).innerText);
    for (const text of ['spam', 'mona', 'buy cheap watches here', 'an advert again']) expect(shown).toContain(text);
    await page.select(`form[aria-label="resolve report ${reported.body.id}"] select[name="action"]`, 'delete_message');
    await fill(page, `form[aria-label="resolve report ${reported.body.id}"] input[name="note"]`, 'removed from the console');
    await page.click(`form[aria-label="resolve report ${reported.body.id}"] button[type="submit"]`);
    await page.waitForFunction((sel) => !document.querySelector(sel), { timeout: 15_000 }, item);
    const resolved = await s.request('GET', `/services/parley_admin/v1/${s.instanceId}/reports/${reported.body.id}`, { token: s.token({ su: true }) });
    expect(resolved.body).toMatchObject({ status: 'resolved', resolution: { action: 'delete_message', note: 'removed from the console' }, target: { message: null } });
    expect((await s.request('GET', s.chat(`/rooms/modroom/messages/${spam}`), { token: s.token({ sub: 'mona' }) })).status).toBe(404);
    await page.waitForSelector(`li[data-report-id="${userReport.body.id}"]`, { timeout: 15_000 });
    await page.select('select[aria-label="report status"]', 'resolved');
    await page.waitForSelector(`li[data-report-id="${reported.body.id}"] .resolution`, { timeout: 15_000 });
    await browser.screenshot(page, 'console-moderation');

    await page.goto(`${origin}/console/rooms/modroom`, { waitUntil: 'domcontentloaded' });
    const row = `ol[aria-label="messages"] li[data-message-id="${kept}"]`;
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent?.includes('pinned by moe'), { timeout: 15_000 }, row);
    expect(await page.$eval(row, (li) => li.textContent)).toContain('1 reaction');
    expect(await page.$eval(row, (li) => li.textContent)).not.toContain('👍'); // a reaction's type is content
    await page.click('button::-p-text(Show content)');
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent?.includes('👍 1'), { timeout: 15_000 }, row);
    await browser.screenshot(page, 'console-room-reactions-pins');
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it("shows a thread's summary and opens its replies on the room's screen; lists the room's and the instance's bans, freezes the room, bans and lifts bans", async () => {
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users: ['tess', 'theo', 'tom'].map((id) => ({ id, name: id })) } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { token: s.token({ sub: 'tess' }), body: { id: 'threadroom', name: 'Thread room', user_ids: ['theo', 'tom'] } })).status).toBe(201);
    const post = async (path: string, user: string, text: string, extra: object = {}) => {
      const sent = await s.request('POST', s.chat(`/rooms/threadroom/messages${path}`), { token: s.token({ sub: user }), body: { parts: [{ type: 'text/plain', content: text }], ...extra } });
      expect(sent.status).toBe(201);
      return sent.body.message_id as number;
    };
    const parent = await post('', 'tess', 'who brings the cake?');
    const threadOnly = await post(`/${parent}/replies`, 'theo', 'a reply in the thread alone');
    const alsoInRoom = await post(`/${parent}/replies`, 'tom', 'I do, said in the room too', { also_in_room: true });
    const ban = await s.request('PUT', s.chat('/rooms/threadroom/bans/tom'), { body: { reason: 'flooding the room' } });
    expect(ban.status).toBe(200);
    expect((await s.request('PUT', `/services/parley_admin/v1/${s.instanceId}/bans/theo`, { body: { reason: 'a spam bot', shadow: true } })).status).toBe(200);

    const page = await open();
    page.on('dialog', (dialog) => void dialog.accept());
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.goto(`${origin}/console/rooms/threadroom`, { waitUntil: 'domcontentloaded' });

    // The room's messages: the parent with its summary, the reply also in the room, not the thread-only one.
    const roomList = 'ol[aria-label="messages"] > li';
    const thread = `[aria-label="thread of #${parent}"]`;
    await page.waitForSelector(thread, { timeout: 15_000 });
    expect(await page.$eval(thread, (node) => (node as HTMLElement).innerText)).toMatch(/2 replies, last .*, by tess, theo, tom/);
    expect(await page.$$eval(roomList, (items) => items.map((li) => Number(li.getAttribute('data-message-id'))))).toEqual([alsoInRoom, parent]);
    expect(await page.$eval(`${roomList}[data-message-id="${alsoInRoom}"]`, (li) => li.textContent)).toContain(`reply in the thread of #${parent}`);
    // Opening the thread: its replies as metadata, then with content (a recorded read naming the thread).
    await page.click(`${thread} button::-p-text(Show thread)`);
    const replies = `ol[aria-label="replies to #${parent}"]`;
    await page.waitForSelector(`${replies} li[data-message-id="${threadOnly}"]`, { timeout: 15_000 });
    expect(await page.$$eval(`${replies} > li`, (items) => items.map((li) => Number(li.getAttribute('data-message-id'))))).toEqual([alsoInRoom, threadOnly]);
    const metadata = await page.$eval(replies, (node) => (node as HTMLElement).innerText);
    expect(metadata).toContain('text/plain, 27 bytes');
    expect(metadata).not.toContain('a reply in the thread alone');
    await page.click('button::-p-text(Show content)');
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent?.includes('a reply in the thread alone'), { timeout: 15_000 }, replies);
    expect(await page.$eval(`${replies} li[data-message-id="${alsoInRoom}"]`, (li) => li.textContent)).toContain('also in the room');
    const audit = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/threadroom?limit=1000`);
    expect(audit.body.events.filter((e: any) => e.type === 'MessageContentRead').map((e: any) => e.data)).toContainEqual(
      expect.objectContaining({ parent_id: parent, first_message_id: threadOnly, last_message_id: alsoInRoom, message_count: 2 }),
    );
    // A thread-only reply's history: its send and the read just recorded (the thread's link names its room; the audit API finds it without).
    await page.click(`${replies} li[data-message-id="${threadOnly}"] a::-p-text(history)`);
    await page.waitForFunction(() => document.body.innerText.includes('MessageContentRead') && document.body.innerText.includes('MessageSent'), { timeout: 15_000 });
    await page.goBack({ waitUntil: 'domcontentloaded' });

    // The room's bans and frozen state.
    const roomBan = 'ul[aria-label="room bans"] li[data-user-id="tom"]';
    await page.waitForSelector(roomBan, { timeout: 15_000 });
    expect(await page.$eval(roomBan, (li) => li.textContent)).toMatch(/tom banned .*no end.*flooding the room/);
    await page.waitForSelector('[data-frozen="false"]', { timeout: 15_000 });
    await page.click('section[aria-label="restrictions"] button::-p-text(Freeze)');
    await page.waitForSelector('[data-frozen="true"]', { timeout: 15_000 });
    expect((await s.request('GET', s.chat('/rooms/threadroom/freeze'))).body).toEqual({ frozen: true });
    expect((await s.request('POST', s.chat('/rooms/threadroom/messages'), { token: s.token({ sub: 'tess' }), body: { parts: [{ type: 'text/plain', content: 'frozen?' }] } })).status).toBe(403);
    await browser.screenshot(page, 'console-room-thread-bans');
    await page.click('section[aria-label="restrictions"] button::-p-text(Unfreeze)');
    await page.waitForSelector('[data-frozen="false"]', { timeout: 15_000 });
    expect((await s.request('GET', s.chat('/rooms/threadroom/freeze'))).body).toEqual({ frozen: false });
    // Lifting the room ban (after the confirmation): tom takes part again.
    await page.click('button[aria-label="lift the ban of tom"]');
    await page.waitForFunction((sel) => !document.querySelector(sel), { timeout: 15_000 }, roomBan);
    expect((await s.request('GET', s.chat('/rooms/threadroom/bans'))).body).toEqual({ bans: [] });
    expect((await s.request('POST', s.chat('/rooms/threadroom/messages'), { token: s.token({ sub: 'tom' }), body: { parts: [{ type: 'text/plain', content: 'back' }] } })).status).toBe(201);

    // The instance's bans on the Moderation screen: theo's shadow ban listed and lifted; tom banned from the form.
    await page.click('nav a[href="/console/moderation"]');
    const instanceBan = 'ul[aria-label="instance bans"] li[data-user-id="theo"]';
    await page.waitForSelector(instanceBan, { timeout: 15_000 });
    expect(await page.$eval(instanceBan, (li) => li.textContent)).toMatch(/theo shadow banned .*no end.*a spam bot/);
    await fill(page, 'form[aria-label="ban user"] input[name="user"]', 'tom');
    await fill(page, 'form[aria-label="ban user"] input[name="reason"]', 'banned from the console');
    await page.click('form[aria-label="ban user"] button[type="submit"]');
    expect(await alertOrStatus(page, 'ban user')).toBe('Banned tom from the instance');
    await page.waitForSelector('ul[aria-label="instance bans"] li[data-user-id="tom"]', { timeout: 15_000 });
    await browser.screenshot(page, 'console-moderation-bans');
    await page.click('button[aria-label="lift the ban of theo"]');
    await page.waitForFunction((sel) => !document.querySelector(sel), { timeout: 15_000 }, instanceBan);
    const standing = (await s.request('GET', `/services/parley_admin/v1/${s.instanceId}/bans`)).body.bans;
    expect(standing).toEqual([expect.objectContaining({ user_id: 'tom', reason: 'banned from the console', shadow: false })]);
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it("shows moderators a shadow-banned user's message and thread reply on the room's screen, marked shadowed, which the room's members do not see", async () => {
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users: ['shade-ann', 'shade-sam'].map((id) => ({ id, name: id })) } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { token: s.token({ sub: 'shade-ann' }), body: { id: 'shadowroom', name: 'Shadow room', user_ids: ['shade-sam'] } })).status).toBe(201);
    const post = async (path: string, user: string, text: string) => {
      const sent = await s.request('POST', s.chat(`/rooms/shadowroom/messages${path}`), { token: s.token({ sub: user }), body: { parts: [{ type: 'text/plain', content: text }] } });
      expect(sent.status).toBe(201);
      return sent.body.message_id as number;
    };
    const parent = await post('', 'shade-ann', 'the agenda');
    expect((await s.request('PUT', s.chat('/rooms/shadowroom/bans/shade-sam'), { body: { reason: 'spam', shadow: true } })).status).toBe(200);
    const shadowed = await post('', 'shade-sam', 'buy cheap watches');
    const shadowReply = await post(`/${parent}/replies`, 'shade-sam', 'cheap watches here too');
    // The room's other member sees neither.
    const asAnn = await s.request('GET', s.chat('/rooms/shadowroom/messages'), { token: s.token({ sub: 'shade-ann' }) });
    expect(asAnn.body.map((m: any) => m.id)).toEqual([parent]);

    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.goto(`${origin}/console/rooms/shadowroom`, { waitUntil: 'domcontentloaded' });
    const roomList = 'ol[aria-label="messages"] > li';
    const shadowLine = `${roomList}[data-message-id="${shadowed}"]`;
    await page.waitForSelector(shadowLine, { timeout: 15_000 });
    expect(await page.$$eval(roomList, (items) => items.map((li) => Number(li.getAttribute('data-message-id'))))).toEqual([shadowed, parent]);
    expect(await page.$eval(shadowLine, (li) => li.textContent)).toContain('shadowed: only its sender sees it');
    expect(await page.$(`${roomList}[data-message-id="${parent}"] > .shadowed`)).toBeNull();
    // The parent's thread counts the shadowed reply, saying so; opened, the reply shows marked.
    const thread = `[aria-label="thread of #${parent}"]`;
    expect(await page.$eval(thread, (node) => (node as HTMLElement).innerText)).toMatch(/1 reply \(1 shadowed\), last .*, by shade-ann, shade-sam/);
    await page.click(`${thread} button::-p-text(Show thread)`);
    const replyLine = `ol[aria-label="replies to #${parent}"] li[data-message-id="${shadowReply}"]`;
    await page.waitForSelector(replyLine, { timeout: 15_000 });
    expect(await page.$eval(replyLine, (li) => li.textContent)).toContain('shadowed: only its sender sees it');
    // Content on request, as for any message.
    await page.click('button::-p-text(Show content)');
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent?.includes('buy cheap watches'), { timeout: 15_000 }, shadowLine);
    await browser.screenshot(page, 'console-room-shadowed');
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it('changes roles and publishes to a feed through the documented APIs', async () => {
    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.click('nav a[href="/console/roles"]');
    await fill(page, 'input[aria-label="role name"]', 'moderator');
    await fill(page, 'input[aria-label="permissions"]', 'room:delete, room:update');
    await page.click('form[aria-label="create role"] button[type="submit"]');
    await textShown(page, 'Role moderator created');
    const roles = (await s.request('GET', `/services/chatkit_authorizer/v2/${s.instanceId}/roles`)).body as { name: string; permissions: string[] }[];
    expect(roles.find((r) => r.name === 'moderator')?.permissions.sort()).toEqual(['room:delete', 'room:update']);

    await page.click('nav a[href="/console/feeds"]');
    await fill(page, 'input[aria-label="feed id"]', 'console-news');
    await fill(page, 'input[aria-label="item"]', '{"headline":"Published from the console"}');
    await page.click('form[aria-label="publish item"] button[type="submit"]');
    await textShown(page, 'Published to console-news');
    await page.waitForFunction(() => document.querySelector('ol[aria-label="items"]')?.textContent?.includes('Published from the console'), { timeout: 15_000 });
    const items = (await s.request('GET', `/services/feeds/v1/${s.instanceId}/feeds/console-news/items`, { token: null })).body as { items: { data: unknown }[] };
    expect(items.items.map((i) => i.data)).toEqual([{ headline: 'Published from the console' }]);
    await browser.screenshot(page, 'console-feeds');
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it('the instance screens, paged: users (two pages of a prefix search), rooms, roles, a user\'s history', async () => {
    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    // Users a page at a time, searched by prefix: 30 of them are two pages of 25.
    const users = Array.from({ length: 30 }, (_, i) => ({ id: `pager-${String(i).padStart(2, '0')}`, name: `Paged ${i}` }));
    for (const batch of [users.slice(0, 25), users.slice(25)]) expect((await s.request('POST', s.chat('/batch_users'), { body: { users: batch } })).status).toBe(201);
    await fill(page, 'input[aria-label="search users"]', 'pager-');
    const rowsShown = () => page.$$eval('table[aria-label="users"] tbody tr', (rows) => rows.map((r) => r.querySelector('td')?.textContent ?? ''));
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="users"] tbody tr').length === 25, { timeout: 15_000 });
    expect(await rowsShown()).toEqual(users.slice(0, 25).map((u) => u.id));
    await page.locator('button::-p-text(Next →)').click();
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="users"] tbody tr').length === 5, { timeout: 15_000 });
    expect(await rowsShown()).toEqual(users.slice(25).map((u) => u.id));
    await page.locator('button::-p-text(← Previous)').click();
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="users"] tbody tr').length === 25, { timeout: 15_000 });

    const screens: [string, string][] = [
      ['users', 'table[aria-label="users"]'],
      ['rooms', 'table[aria-label="rooms"]'],
      ['roles', 'table[aria-label="roles"] tbody tr'],
      ['audit/users/pager-00', 'ol[aria-label="timeline"] li[data-event-type]'],
    ];
    for (const [path, ready] of screens) {
      await page.goto(`${origin}/console/${path}`, { waitUntil: 'domcontentloaded' });
      await page.waitForSelector(ready, { timeout: 15_000 });
      await browser.screenshot(page, `console-${path.replace(/\?.*/, '').replace(/\//g, '-')}`);
    }
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it("pages past the first page: a room's members, its read cursors, Feeds by prefix; a user's rooms and a message's history from Parley's routes", async () => {
    const crowd = Array.from({ length: 30 }, (_, i) => `crowd-${String(i).padStart(2, '0')}`);
    for (const batch of [crowd.slice(0, 25), crowd.slice(25)]) expect((await s.request('POST', s.chat('/batch_users'), { body: { users: batch.map((id) => ({ id, name: id })) } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'crowd', name: 'Crowd', user_ids: crowd }, token: s.token({ sub: crowd[0] }) })).status).toBe(201);
    for (const user of crowd) expect((await s.request('PUT', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/rooms/crowd/users/${user}`, { body: { position: 1 } })).status).toBe(201);
    const sent = await s.request('POST', s.chat('/rooms/crowd/messages'), { body: { parts: [{ type: 'text/plain', content: 'first words' }] }, token: s.token({ sub: crowd[0] }) });
    const messageId = sent.body.message_id as number;
    const edited = await s.request('PUT', `/services/chatkit/v6/${s.instanceId}/rooms/crowd/messages/${messageId}`, { body: { parts: [{ type: 'text/plain', content: 'better words' }] }, token: s.token({ sub: crowd[0] }) });
    expect(edited.status).toBeLessThan(300);
    const now = Math.floor(Date.now() / 1000);
    const feedsToken = jwt.sign({ app: s.instanceId, iss: `api_keys/${s.keyId}`, iat: now - 60, exp: now + 600, feeds: { permission: { path: '*', action: '*' } } }, s.secret);
    const feeds = Array.from({ length: 26 }, (_, i) => `paged-feed-${String(i).padStart(2, '0')}`);
    for (const feed of feeds) expect((await s.request('POST', `/services/feeds/v1/${s.instanceId}/feeds/${feed}/items`, { body: { items: [{ n: 1 }] }, token: feedsToken })).status).toBe(200);

    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    const texts = (selector: string) => page.$$eval(selector, (nodes) => nodes.map((n) => n.textContent ?? ''));
    const count = (selector: string, n: number) => page.waitForFunction((sel, k) => document.querySelectorAll(sel).length === k, { timeout: 15_000 }, selector, n);

    // The room's members: 25 on the first page, the other 5 on the next.
    await page.goto(`${origin}/console/rooms/crowd`, { waitUntil: 'domcontentloaded' });
    await textShown(page, 'Members (30)');
    await count('ul[aria-label="members"] li', 25);
    expect((await texts('ul[aria-label="members"] li a')).slice(0, 2)).toEqual(['crowd-00', 'crowd-01']);
    await page.locator('nav[aria-label="member pages"] button::-p-text(Next →)').click();
    await count('ul[aria-label="members"] li', 5);
    expect(await texts('ul[aria-label="members"] li a')).toEqual(crowd.slice(25));
    // "Send as" offers the members of the page shown.
    expect(await texts('form[aria-label="send as"] select option')).toEqual(crowd.slice(25));
    await browser.screenshot(page, 'console-room-members-page-2');

    // The message's history, from the server's message audit: its send and its edit.
    await page.click(`a[href="/console/audit/messages/${messageId}"]`);
    await page.waitForSelector('ol[aria-label="timeline"] li[data-event-type="MessageEdited"]', { timeout: 15_000 });
    expect(await page.$$eval('ol[aria-label="timeline"] li', (lis) => lis.map((li) => li.getAttribute('data-event-type')))).toEqual(['MessageSent', 'MessageEdited']);
    await browser.screenshot(page, 'console-audit-message');

    // A member's page lists the user's rooms a page at a time (Parley's route, no member ids).
    await page.goto(`${origin}/console/users/crowd-00`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => document.querySelector('ul[aria-label="user rooms"]')?.textContent?.includes('Crowd'), { timeout: 15_000 });

    // The room's read cursors, page by page.
    await page.goto(`${origin}/console/cursors?room=crowd`, { waitUntil: 'domcontentloaded' });
    await count('table[aria-label="cursors"] tbody tr', 25);
    await page.locator('nav[aria-label="pages"] button::-p-text(Next →)').click();
    await count('table[aria-label="cursors"] tbody tr', 5);
    expect((await texts('table[aria-label="cursors"] tbody tr td:first-child')).map((t) => t.trim())).toEqual(crowd.slice(25));

    // Feeds by prefix, page by page.
    await page.click('nav a[href="/console/feeds"]');
    await fill(page, 'input[aria-label="search feeds"]', 'paged-feed-');
    await count('ul[aria-label="feeds"] li button', 25);
    await page.locator('nav[aria-label="feed pages"] button::-p-text(Next →)').click();
    await count('ul[aria-label="feeds"] li button', 1);
    expect(await texts('ul[aria-label="feeds"] li button')).toEqual(['paged-feed-25 (1)']);
    expect(browser.errorsOf(page)).toEqual([]);
  });

  it("pages past a webhook's newest 50 deliveries", async () => {
    const hooks = `/services/parley_webhooks/v1/${s.instanceId}/webhooks`;
    const url = receiver.url('/paged-hook');
    const hook = await s.request('POST', hooks, { body: { url, secret: 'a-webhook-signing-secret', event_types: ['v1.messages_created'] } });
    expect(hook.status).toBeLessThan(300);
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'chatty', name: 'Chatty' } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'chatter', name: 'Chatter' }, token: s.token({ sub: 'chatty' }) })).status).toBe(201);
    for (let i = 0; i < 52; i++) {
      expect((await s.request('POST', s.chat('/rooms/chatter/messages'), { body: { parts: [{ type: 'text/plain', content: `hook ${i}` }] }, token: s.token({ sub: 'chatty' }) })).status).toBe(201);
    }
    await eventually(async () => ((await s.request('GET', `${hooks}/${hook.body.id}/deliveries?limit=500`)).body as unknown[]).length === 52, { what: '52 deliveries in the log' });

    const page = await open();
    await signInToInstance(page, s.locator, `${s.keyId}:${s.secret}`);
    await page.waitForSelector('input[aria-label="search users"]');
    await page.click('nav a[href="/console/webhooks"]');
    await page.locator(`button::-p-text(${url})`).click();
    const rows = (n: number) => page.waitForFunction((k) => document.querySelectorAll('table[aria-label="deliveries"] tbody tr').length === k, { timeout: 15_000 }, n);
    await rows(50);
    await page.locator('nav[aria-label="delivery pages"] button::-p-text(Next →)').click();
    await rows(2);
    const positions = async () => page.$$eval('table[aria-label="deliveries"] tbody tr .hint', (hints) => hints.map((h) => h.textContent ?? ''));
    const older = await positions();
    await page.locator('nav[aria-label="delivery pages"] button::-p-text(← Previous)').click();
    await rows(50);
    // The second page holds the two oldest deliveries, none of the first page's.
    expect((await positions()).filter((p) => older.includes(p))).toEqual([]);
    expect(browser.errorsOf(page)).toEqual([]);
  });
});
