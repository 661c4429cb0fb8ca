import PushNotifications from '@pusher/push-notifications-server';
import jwt from 'jsonwebtoken';
import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { folderTexts, freshExport } from '../support/fresh-export';
import { openMasterSealed } from '../support/master-sealed';
import { ServerProcess, startProcess } from '../support/server-process';
import { CERT_FILE, KEY_FILE } from '../support/test-server';
import { eventually } from '../support/waiting';
import { SecretBox } from '../../src/shared/crypto/secret-box';

/**
 * Deleting means gone, for Beams and Feeds: a real server from dist/ on the embedded default
 * (FEEDS_SEAL_ITEMS=true), a local HTTPS push service devices are registered at, markers in
 * notifications, push addresses and feed items. After each delete (a delivery, once the shred
 * sweep's pass has followed it; a device's delete, deleteUser, a feed's items delete, the wipe,
 * as soon as they are answered) a byte scan of every file under
 * DATA_DIR (WAL included, while running and after a stop), a fresh export, the API answers
 * (the audit API too) and the server's output finds none of the destroyed markers, and what
 * the master key opens in the export and the answers (push addresses are sealed under it too)
 * holds no destroyed address. What was not deleted still reads back.
 */
const INSTANCE = 'shred-beams';
const KEY_ID = 'sbf-key';
const SECRET = 'sbf-secret-3f9a1c7e5d';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

let dataDir: string;
let server: ServerProcess;
let box: SecretBox;
let pushService: Server;
let pushPort: number;
/** Paths the push service received, and the paths whose pushes it holds unanswered until released. */
const received: string[] = [];
const held = new Map<string, (() => void)[]>();
const holding = new Set<string>();

const base = () => `http://127.0.0.1:${server.port}`;
async function call(method: string, path: string, options: { body?: unknown; token?: string | null } = {}): Promise<{ status: number; text: string; body: any }> {
  const token = options.token === undefined ? su() : options.token;
  const response = await fetch(`${base()}${path}`, {
    method,
    headers: { ...(token && { authorization: `Bearer ${token}` }), ...(options.body !== undefined && { 'content-type': 'application/json' }) },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
}
const ok = async (...args: Parameters<typeof call>) => {
  const answer = await call(...args);
  if (answer.status >= 300) throw new Error(`${args[0]} ${args[1]}: ${answer.status} ${answer.text}`);
  return answer;
};
const su = () => jwt.sign({ instance: INSTANCE, iss: `api_keys/${KEY_ID}`, su: true }, SECRET, { algorithm: 'HS256', expiresIn: 3600 });
const feedsToken = () => {
  const now = Math.floor(Date.now() / 1000);
  return jwt.sign({ app: INSTANCE, iss: `api_keys/${KEY_ID}`, iat: now - 600, exp: now + 3600, feeds: { permission: { path: '*', action: '*' } } }, SECRET);
};
const beams = () => new PushNotifications({ instanceId: INSTANCE, secretKey: SECRET, endpoint: '127.0.0.1', port: server.port } as any);
const device = (path: string) => `/device_api/v1/instances/${INSTANCE}/devices/web${path}`;
const feeds = (path: string) => `/services/feeds/v1/${INSTANCE}${path}`;
const audit = (path: string) => `/services/parley_audit/v1/${INSTANCE}${path}`;
// A generous correctness bound, not a timing assertion.
const until = <T>(probe: () => Promise<T | undefined> | T | undefined) => eventually(probe, { timeoutMs: 20_000, everyMs: 50 });

/** A browser subscribed at the local push service, under a path holding `addressMarker`: its device id. */
async function register(addressMarker: string, interests: string[]): Promise<{ id: string; path: string }> {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const path = `/push/${addressMarker}`;
  const subscription = { endpoint: `https://localhost:${pushPort}${path}`, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } };
  const { body } = await ok('POST', device(''), { body: { token: Buffer.from(JSON.stringify(subscription)).toString('base64'), metadata: { sdkVersion: '2.1.0' } }, token: null });
  if (interests.length) await ok('PUT', device(`/${body.id}/interests`), { body: { interests }, token: null });
  return { id: body.id as string, path };
}

/** Recorded as delivered: the delivery worker's BeamsPublishDelivered, as the audit API shows it. */
const delivered = (publishId: string) =>
  until(async () => {
    const { body } = await call('GET', audit('/actors/key:beams_delivery?limit=1000'));
    return (body?.events as { type: string; stream?: string; data: unknown }[] | undefined)?.find((e) => e.type === 'BeamsPublishDelivered' && JSON.stringify(e).includes(publishId));
  });

/** Every answer a client or an operator reads Beams and Feeds through. */
async function answers(feedIds: readonly string[]): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  const paths = [
    audit(`/actors/key:${KEY_ID}?limit=1000`),
    audit('/actors/key:device_api?limit=1000'),
    audit('/actors/key:beams_delivery?limit=1000'),
    ...feedIds.map((feed) => feeds(`/feeds/${feed}/items`)),
  ];
  for (const path of paths) texts[path] = (await call('GET', path)).text;
  return texts;
}

/** Everything a destroyed marker may not be in: DATA_DIR's every file, a fresh export, the answers, what the master key opens in them, the server's output. */
async function everywhere(feedIds: readonly string[]): Promise<{ places: Parameters<typeof scanForMarkers>[0]; opened: Record<string, string>; done: () => void }> {
  const exported = (await freshExport(dataDir, INSTANCE)).folder;
  const texts = await answers(feedIds);
  const opened = openMasterSealed({ ...texts, ...folderTexts(exported) }, box);
  return {
    places: { folders: [dataDir, exported], texts: { ...texts, ...opened, 'server output': server.output.join('\n') } },
    opened,
    done: () => rmSync(join(exported, '..'), { recursive: true, force: true }),
  };
}

describe('Beams notifications, push addresses and feed items are shredded by their deletes', () => {
  beforeAll(async () => {
    pushService = createServer({ cert: readFileSync(CERT_FILE), key: readFileSync(KEY_FILE) }, (request, response) => {
      request.resume();
      request.on('end', () => {
        received.push(request.url!);
        const answer = () => response.writeHead(201).end();
        if (holding.has(request.url!)) held.set(request.url!, [...(held.get(request.url!) ?? []), answer]);
        else answer();
      });
    });
    await new Promise<void>((resolve) => pushService.listen(0, '127.0.0.1', resolve));
    pushPort = (pushService.address() as AddressInfo).port;
    dataDir = mkdtempSync(join(tmpdir(), 'parley-shred-beams-'));
    server = await startProcess('dist/src/main.js', {
      DATA_DIR: dataDir,
      INSTANCE_LOCATOR: `v1:local:${INSTANCE}`,
      INSTANCE_KEY: `${KEY_ID}:${SECRET}`,
      MASTER_KEY: '',
      BEAMS_WEB_PUSH_HOSTS: 'localhost',
      FEEDS_SEAL_ITEMS: 'true',
    });
    box = SecretBox.fromFile(join(dataDir, 'master.key'));
  }, 120_000);

  afterAll(async () => {
    for (const answers of held.values()) answers.forEach((answer) => answer());
    await server?.stop('SIGKILL');
    await new Promise((resolve) => pushService?.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const destroyed: string[] = [];

  it("keeps a publish's notification out of the log, destroys it once delivered, and a device's push address with the device's delete", async () => {
    const [notification, address, keptAddress] = ['notification', 'address', 'kept-address'].map(marker);
    const doomed = await register(address, ['news']);
    await register(keptAddress, ['sport']);
    const { publishId } = await beams().publishToInterests(['news'], { web: { notification: { title: notification } } });
    await delivered(publishId);
    expect(received).toContain(doomed.path);
    // The delivery only records it; the shred sweep's next pass destroys the key (every 2 s:
    // docs/privacy.md). The log holds it sealed all along, so what shows the destroy is the API
    // answers (the audit opens events) no longer carrying it.
    await until(async () => scanForMarkers({ texts: await answers([]) }, [notification]).length === 0 || undefined);

    const afterDelivery = await everywhere([]);
    expect(scanForMarkers(afterDelivery.places, [notification])).toEqual([]);
    // The live devices' push addresses still open (delivery reads them), in the export and the audit.
    expect(scanForMarkers({ texts: afterDelivery.opened }, [address, keptAddress]).length).toBeGreaterThan(0);
    afterDelivery.done();

    await ok('DELETE', device(`/${doomed.id}`), { token: null });
    expect(scanForMarkers({ folders: [dataDir] }, [notification])).toEqual([]); // as soon as it is answered
    const afterDelete = await everywhere([]);
    expect(scanForMarkers(afterDelete.places, [notification, address])).toEqual([]);
    expect(scanForMarkers({ texts: afterDelete.opened }, [keptAddress])).not.toEqual([]);
    afterDelete.done();
    destroyed.push(notification, address);
  }, 120_000);

  it("deleteUser destroys the user's devices' push addresses and the undelivered publishes to the user, and no other user's", async () => {
    const [notification, address, otherAddress, otherNotification] = ['user-notification', 'user-address', 'other-address', 'other-notification'].map(marker);
    const grace = await register(address, []);
    const heidi = await register(otherAddress, []);
    const associate = async (id: string, user: string) =>
      ok('PUT', device(`/${id}/user`), { token: beams().generateToken(user).token as string });
    await associate(grace.id, 'grace');
    await associate(heidi.id, 'heidi');
    // Grace's push service holds the push: the publish to her stays undelivered meanwhile.
    holding.add(grace.path);
    const { publishId } = await beams().publishToUsers(['grace'], { web: { notification: { title: notification } } });
    await until(() => held.has(grace.path) || undefined);

    await beams().deleteUser('grace');
    expect(scanForMarkers({ folders: [dataDir] }, [notification])).toEqual([]); // as soon as it is answered
    const gone = await everywhere([]);
    expect(scanForMarkers(gone.places, [notification, address])).toEqual([]);
    expect(scanForMarkers({ texts: gone.opened }, [otherAddress])).not.toEqual([]);
    gone.done();

    // The held push is answered: the delivery is recorded, and Heidi's device still receives.
    holding.delete(grace.path);
    held.get(grace.path)!.forEach((answer) => answer());
    held.delete(grace.path);
    await delivered(publishId);
    const toHeidi = await beams().publishToUsers(['heidi'], { web: { notification: { title: otherNotification } } });
    await delivered(toHeidi.publishId);
    expect(received).toContain(heidi.path);
    destroyed.push(notification, address, otherNotification);
  }, 120_000);

  it("seals feed items in the log (FEEDS_SEAL_ITEMS) and destroys a feed's items with its items delete; other feeds and later items read back", async () => {
    const [item, keptItem, laterItem] = ['feed-item', 'kept-item', 'later-item'].map(marker);
    await ok('POST', feeds('/feeds/doomed/items'), { body: { items: [{ text: item }, { text: `${item}-2` }] }, token: feedsToken() });
    await ok('POST', feeds('/feeds/kept/items'), { body: { items: [{ text: keptItem }] }, token: feedsToken() });
    const logFiles = ['events.sqlite', 'events.sqlite-wal'].map((f) => join(dataDir, f));
    expect(scanForMarkers({ files: logFiles }, [item, keptItem])).toEqual([]);

    await ok('DELETE', feeds('/feeds/doomed/items'), { token: feedsToken() });
    expect(scanForMarkers({ folders: [dataDir] }, [item])).toEqual([]); // as soon as it is answered
    const gone = await everywhere(['doomed', 'kept']);
    expect(scanForMarkers(gone.places, [item])).toEqual([]);
    expect((gone.places.texts as Record<string, string>)[feeds('/feeds/kept/items')]).toContain(keptItem);
    expect(scanForMarkers({ folders: [gone.places.folders![1]] }, [keptItem])).not.toEqual([]);
    gone.done();

    // Ids go on above the deleted items, and what is published after the delete is read.
    const { body } = await ok('POST', feeds('/feeds/doomed/items'), { body: { items: [{ text: laterItem }] }, token: feedsToken() });
    expect(body).toEqual({ item_ids: ['3'] });
    expect((await call('GET', feeds('/feeds/doomed/items'), { token: null })).text).toContain(laterItem);
    destroyed.push(item);
  }, 120_000);

  it('the wipe destroys the rest: live push addresses and feed items; after a stop nothing destroyed is in DATA_DIR', async () => {
    const [address, item] = ['wiped-address', 'wiped-item'].map(marker);
    await register(address, ['news']);
    await ok('POST', feeds('/feeds/wiped/items'), { body: { items: [{ text: item }] }, token: feedsToken() });
    await ok('DELETE', `/services/chatkit/v6/${INSTANCE}/resources`);
    expect(scanForMarkers({ folders: [dataDir] }, [item])).toEqual([]); // as soon as it is answered
    const gone = await everywhere(['wiped']);
    expect(scanForMarkers(gone.places, [address, item, ...destroyed])).toEqual([]);
    gone.done();

    await server.stop('SIGTERM');
    expect(scanForMarkers({ folders: [dataDir] }, [address, item, ...destroyed])).toEqual([]);
  }, 120_000);
});
