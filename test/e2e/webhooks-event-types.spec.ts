/**
 * Chatkit's webhook events end to end: a real server on its own data directory, webhooks
 * registered through the API, and local receivers that check every delivery as Chatkit's
 * receivers did (the raw body's hex HMAC-SHA1 against `webhook-signature`, then dispatch on
 * `metadata.event_type`) or with the standardwebhooks library. Every event type arrives, in the
 * order of the changes, with its payload, Chatkit's headers and a valid signature; a replay
 * sends the same event ids, and what was deleted since in its deleted form.
 *
 * The tests run in order, each making its changes and waiting for their deliveries before the
 * next deletes anything (a payload is read from the log when it is delivered).
 */
import { randomBytes } from 'node:crypto';
import { ChatkitWebhookReceiver, ReceivedWebhook } from '../support/chatkit-webhook-receiver';
import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('webhooks: every Chatkit event type, as Chatkit receivers check it', () => {
  let s: TestServer;
  let chatkit: ChatkitWebhookReceiver;
  let standard: ChatkitWebhookReceiver;
  let chatkitWebhookId: string;
  let standardWebhookId: string;
  const chatkitSecret = 'the chatkit webhook secret';
  const standardSecret = `whsec_${randomBytes(24).toString('base64')}`;
  let messageId: number;
  let secondMessageId: number;

  const as = (sub: string) => s.token({ sub });
  const webhooks = (path = '') => `/services/parley_webhooks/v1/${s.instanceId}/webhooks${path}`;
  // A generous correctness bound, not a timing assertion.
  const patience = { timeoutMs: 30_000, everyMs: 50 };
  const payloadOf = async (type: string, match: (p: Record<string, any>) => boolean = () => true) =>
    (await chatkit.ofType(type, (r) => match(r.event!.payload), patience)).event!.payload;
  const typesOf = (received: ReceivedWebhook[]) => received.map((r) => r.event!.metadata.event_type);
  const ok = async (method: string, path: string, status: number, options: { body?: unknown; token?: string } = {}) =>
    expect((await s.request(method, path, options)).status).toBe(status);

  beforeAll(async () => {
    chatkit = await ChatkitWebhookReceiver.start({ secret: chatkitSecret });
    standard = await ChatkitWebhookReceiver.start({ secret: standardSecret, standardWebhooks: true });
    s = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${chatkit.port},127.0.0.1:${standard.port}` } });
    const created = await s.request('POST', webhooks(), { body: { url: chatkit.url, secret: chatkitSecret, custom_data: { app: 'crm' } } });
    expect(created.status).toBe(201);
    chatkitWebhookId = created.body.id;
    const createdStandard = await s.request('POST', webhooks(), {
      body: { url: standard.url, secret: standardSecret, event_types: ['v1.messages_created'], standard_webhooks: true },
    });
    expect(createdStandard.status).toBe(201);
    standardWebhookId = createdStandard.body.id;
  }, 60_000);

  afterAll(async () => {
    await s?.close();
    await chatkit?.stop();
    await standard?.stop();
  });

  it('v1.users_created: the user as the API shows it, one event per user, batches included', async () => {
    await ok('POST', s.chat('/users'), 201, { body: { id: 'ann', name: 'Ann', custom_data: { team: 'red' } } });
    await ok('POST', s.chat('/batch_users'), 201, { body: { users: [{ id: 'ben', name: 'Ben' }, { id: 'cat', name: 'Cat', avatar_url: 'https://img.example/cat.png' }] } });
    expect(await payloadOf('v1.users_created', (p) => p.users[0].id === 'ann')).toEqual({
      users: [{ id: 'ann', name: 'Ann', custom_data: { team: 'red' }, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) }],
    });
    expect((await payloadOf('v1.users_created', (p) => p.users[0].id === 'cat')).users).toEqual([
      { id: 'cat', name: 'Cat', avatar_url: 'https://img.example/cat.png', created_at: expect.any(String), updated_at: expect.any(String) },
    ]);
    expect((await payloadOf('v1.users_created', (p) => p.users[0].id === 'ben')).users).toHaveLength(1);
  });

  it('v1.rooms_created, then its first members as v1.users_added_to_room', async () => {
    await ok('POST', s.chat('/rooms'), 201, { body: { id: 'general', name: 'General', user_ids: ['ben'], custom_data: { topic: 'all' } }, token: as('ann') });
    expect(await payloadOf('v1.rooms_created')).toEqual({
      rooms: [{ id: 'general', created_by_id: 'ann', name: 'General', private: false, custom_data: { topic: 'all' }, created_at: expect.any(String), updated_at: expect.any(String) }],
    });
    const firstMembers = await payloadOf('v1.users_added_to_room');
    expect(firstMembers.room).toMatchObject({ id: 'general', name: 'General', private: false, created_by_id: 'ann', custom_data: { topic: 'all' } });
    expect([...firstMembers.room.member_user_ids].sort()).toEqual(['ann', 'ben']);
    expect(firstMembers.users.map((u: any) => [u.id, u.name]).sort()).toEqual([
      ['ann', 'Ann'],
      ['ben', 'Ben'],
    ]);
  });

  it('v1.messages_created (the v6 message) and v1.message_sent_user_offline (the members without a register subscription, when any)', async () => {
    const sent = await s.request('POST', s.chat('/rooms/general/messages'), { body: { parts: [{ type: 'text/plain', content: 'hello @ben' }] }, token: as('ann') });
    expect(sent.status).toBe(201);
    messageId = sent.body.message_id;
    const message = { id: messageId, user_id: 'ann', room_id: 'general', parts: [{ type: 'text/plain', content: 'hello @ben' }], created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) };
    expect(await payloadOf('v1.messages_created')).toEqual({ messages: [message] });
    const offline = await payloadOf('v1.message_sent_user_offline');
    expect(offline).toEqual({ message, sender: expect.objectContaining({ id: 'ann', name: 'Ann' }), room: expect.objectContaining({ id: 'general', name: 'General' }), offline_user_ids: ['ben'] });
    // With ben online (a register subscription open, as a connected client keeps), no one is offline: no push event.
    const register = await openHttpSubscription(`${s.baseUrl}/services/chatkit_presence/v2/${s.instanceId}/users/ben/register`, { Authorization: `Bearer ${as('ben')}` });
    try {
      expect(register.status).toBe(200);
      const second = await s.request('POST', s.chat('/rooms/general/messages'), { body: { parts: [{ type: 'text/plain', content: 'ben is here' }] }, token: as('ann') });
      expect(second.status).toBe(201);
      secondMessageId = second.body.message_id;
      await payloadOf('v1.messages_created', (p) => p.messages[0].id === secondMessageId);
    } finally {
      await register.close();
    }
  });

  it('a Standard Webhooks webhook gets only the types it asked for, verified by the standardwebhooks library', async () => {
    const delivery = await standard.ofType('v1.messages_created', () => true, patience);
    expect(delivery.headers).toMatchObject({
      'webhook-id': delivery.event!.metadata.event_id,
      'webhook-webhook-id': standardWebhookId,
      'webhook-request-id': delivery.event!.metadata.event_id,
      'webhook-event-type': 'v1.messages_created',
      'webhook-timestamp': expect.stringMatching(/^\d+$/),
      'webhook-signature': expect.stringMatching(/^v1,/),
    });
    expect(delivery.event!.payload.messages[0]).toMatchObject({ id: messageId, parts: [{ type: 'text/plain', content: 'hello @ben' }] });
    // The same event as the Chatkit-signed webhook got, by its id.
    expect(delivery.event!.metadata.event_id).toBe((await chatkit.ofType('v1.messages_created', (r) => r.event!.payload.messages[0].id === messageId)).event!.metadata.event_id);
  });

  it('v1.messages_edited: the edited parts, with the sender and creation time', async () => {
    await ok('PUT', s.chat(`/rooms/general/messages/${messageId}`), 204, { body: { parts: [{ type: 'text/plain', content: 'hello @ben!' }] }, token: as('ann') });
    expect(await payloadOf('v1.messages_edited')).toEqual({
      messages: [{ id: messageId, user_id: 'ann', room_id: 'general', parts: [{ type: 'text/plain', content: 'hello @ben!' }], created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) }],
    });
  });

  it('v1.users_added_to_room, v1.users_removed_from_room and v1.user_left_room, each with the room as it was then', async () => {
    await ok('PUT', s.chat('/rooms/general/users/add'), 204, { body: { user_ids: ['cat'] } });
    await ok('PUT', s.chat('/rooms/general/users/remove'), 204, { body: { user_ids: ['ben'] } });
    await ok('POST', s.chat('/users/cat/rooms/general/leave'), 200, { token: as('cat') });
    const added = await payloadOf('v1.users_added_to_room', (p) => p.users[0].id === 'cat');
    expect(added.users).toEqual([expect.objectContaining({ id: 'cat', name: 'Cat' })]);
    expect([...added.room.member_user_ids].sort()).toEqual(['ann', 'ben', 'cat']);
    const removed = await payloadOf('v1.users_removed_from_room');
    expect(removed.users).toEqual([expect.objectContaining({ id: 'ben', name: 'Ben' })]);
    expect([...removed.room.member_user_ids].sort()).toEqual(['ann', 'cat']);
    const left = await payloadOf('v1.user_left_room');
    expect(left.user).toEqual(expect.objectContaining({ id: 'cat', name: 'Cat' }));
    expect(left.users).toEqual([left.user]);
    expect(left.room).toMatchObject({ id: 'general', name: 'General', member_user_ids: ['ann'] });
  });

  it('v1.messages_deleted, v1.rooms_deleted and v1.users_deleted', async () => {
    await ok('DELETE', s.chat(`/rooms/general/messages/${messageId}`), 204, { token: as('ann') });
    await ok('DELETE', s.chat('/rooms/general'), 204);
    await ok('DELETE', s.chat('/users/ben'), 204);
    expect(await payloadOf('v1.messages_deleted')).toEqual({ message_ids: [messageId], room_id: 'general' });
    expect(await payloadOf('v1.rooms_deleted')).toEqual({ room_ids: ['general'] });
    expect(await payloadOf('v1.users_deleted')).toEqual({ user_ids: ['ben'] });
  });

  it("every delivery came in the order of the changes, once, with Chatkit's headers and body and a signature the receiver verified", async () => {
    const accepted = chatkit.accepted();
    expect(typesOf(accepted)).toEqual([
      'v1.users_created',
      'v1.users_created',
      'v1.users_created',
      'v1.rooms_created',
      'v1.users_added_to_room',
      'v1.messages_created',
      'v1.message_sent_user_offline',
      'v1.messages_created', // ben was online: no v1.message_sent_user_offline
      'v1.messages_edited',
      'v1.users_added_to_room',
      'v1.users_removed_from_room',
      'v1.user_left_room',
      'v1.messages_deleted',
      'v1.rooms_deleted',
      'v1.users_deleted',
    ]);
    for (const r of accepted) {
      expect(r.headers).toMatchObject({
        'user-agent': 'pusher-webhooks',
        'content-type': 'application/json',
        'webhook-event-type': r.event!.metadata.event_type,
        'webhook-id': chatkitWebhookId,
        'webhook-request-id': r.event!.metadata.event_id,
      });
      expect(r.event!.metadata).toEqual({ created_at: expect.stringMatching(ISO), event_type: expect.any(String), event_id: expect.stringMatching(UUID), product: 'chatkit' });
      expect(r.event!.custom_data).toEqual({ app: 'crm' });
    }
    expect(new Set(accepted.map((r) => r.event!.metadata.event_id)).size).toBe(accepted.length);
    expect(chatkit.received.every((r) => r.verified)).toBe(true);
    expect(standard.received.every((r) => r.verified)).toBe(true);
    expect(typesOf(standard.accepted())).toEqual(['v1.messages_created', 'v1.messages_created']);
  });

  it('a replay sends the same event ids, and what was deleted since in its deleted form', async () => {
    const first = chatkit.accepted();
    await ok('POST', webhooks(`/${chatkitWebhookId}/replay`), 202, { body: { from_position: '' } });
    await eventually(() => typesOf(chatkit.accepted()).filter((t) => t === 'v1.users_deleted').length === 2, { what: 'the replay', ...patience });
    const replayed = chatkit.accepted().slice(first.length);
    const idsOf = (received: ReceivedWebhook[]) => received.filter((r) => r.event!.metadata.event_type !== 'v1.message_sent_user_offline').map((r) => r.event!.metadata.event_id);
    expect(idsOf(replayed)).toEqual(idsOf(first));
    const ofType = (type: string) => replayed.find((r) => r.event!.metadata.event_type === type && r.event!.payload.messages?.[0]?.id !== secondMessageId)!.event!.payload;
    expect(ofType('v1.messages_created').messages[0]).toMatchObject({ id: messageId, user_id: 'ann', parts: [] });
    expect(ofType('v1.messages_edited').messages[0]).toMatchObject({ id: messageId, parts: [] });
    expect(ofType('v1.rooms_created').rooms[0]).toMatchObject({ id: 'general', name: '' });
    expect(ofType('v1.rooms_created').rooms[0]).not.toHaveProperty('custom_data');
    const ben = replayed.find((r) => r.event!.payload.users?.[0]?.id === 'ben' && r.event!.metadata.event_type === 'v1.users_created')!;
    expect(ben.event!.payload.users[0]).toMatchObject({ id: 'ben', name: '' });
    expect(JSON.stringify(replayed.map((r) => r.body))).not.toMatch(/hello @ben|ben is here/);
  });
});
