import { openHttpSubscription, openWsSubscription, WsBridgeClient, wsUrlOf } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

describe('room subscriptions over HTTP SUBSCRIBE and /ws', () => {
  let s: TestServer;
  const as = (sub: string, su = false) => s.token({ sub, su });
  const auth = (sub: string) => ({ authorization: `Bearer ${as(sub)}` });
  const send = async (room: string, text: string, user = 'ann') =>
    (await s.request('POST', s.chat(`/rooms/${room}/messages`, 'v2'), { body: { text }, token: as(user) })).body.message_id as number;

  beforeAll(async () => {
    s = await startTestServer({ env: { KEEPALIVE_INTERVAL_MS: '300' } });
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat'].map((id) => ({ id, name: id })) } });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['ben'] }, token: as('ann') });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'vault', name: 'vault', private: true }, token: as('ann') });
  });
  afterAll(() => s.close());

  it('replays the last message_limit messages oldest first, then delivers live ones (HTTP)', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send('lobby', `m${i}`));
    const sub = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=3')}`, auth('ben'));
    try {
      expect(sub.status).toBe(200);
      const replay = [await sub.nextEvent(), await sub.nextEvent(), await sub.nextEvent()];
      expect(replay.map((e) => e.id)).toEqual(ids.slice(2).map(String));
      expect(replay.map((e) => e.body.event_name)).toEqual(['new_message', 'new_message', 'new_message']);
      expect(replay[0].body.data).toMatchObject({ id: ids[2], user_id: 'ann', room_id: 'lobby', parts: [{ type: 'text/plain', content: 'm2' }] });
      const live = await send('lobby', 'live!', 'ben');
      const event = await sub.nextEvent();
      expect(event.id).toBe(String(live));
      expect(event.body).toEqual({ event_name: 'new_message', data: expect.objectContaining({ id: live, user_id: 'ben' }), timestamp: expect.any(String) });
    } finally {
      await sub.close();
    }
  });

  it('shows a message live exactly as a later replay shows it, in v2 and in v6', async () => {
    await s.request('POST', s.chat('/rooms'), { body: { id: 'gallery', name: 'gallery', user_ids: ['ben'] }, token: as('ann') });
    const subscribe = (version: 'v2' | 'v6', limit: number) =>
      openHttpSubscription(`${s.baseUrl}${s.chat(`/rooms/gallery?message_limit=${limit}`, version)}`, auth('ben'));
    const post = async (version: 'v2' | 'v6', body: object, user: string) =>
      (await s.request('POST', s.chat('/rooms/gallery/messages', version), { body, token: as(user) })).body.message_id as number;
    const shown = async (sub: Awaited<ReturnType<typeof subscribe>>, count: number) => {
      const events = [];
      for (let i = 0; i < count; i++) {
        const { id, body } = await sub.nextEvent();
        events.push({ id, event_name: body.event_name, data: body.data });
      }
      return events;
    };

    const live = { v2: await subscribe('v2', 0), v6: await subscribe('v6', 0) };
    try {
      const ids = [
        await post('v2', { text: 'plain' }, 'ann'),
        await post('v2', { text: 'see', attachment: { resource_link: 'https://x.test/a.png', type: 'image' } }, 'ben'),
        await post(
          'v6',
          {
            parts: [
              { type: 'text/plain', content: 'caption' },
              { type: 'text/markdown', content: '*two*' },
              { type: 'application/json', url: 'https://x.test/data.json' },
            ],
          },
          'ann',
        ),
      ];
      for (const version of ['v2', 'v6'] as const) {
        const liveShown = await shown(live[version], ids.length);
        expect(liveShown.map((e) => e.id)).toEqual(ids.map(String));
        const replay = await subscribe(version, ids.length);
        try {
          expect(await shown(replay, ids.length)).toEqual(liveShown);
        } finally {
          await replay.close();
        }
      }
    } finally {
      await Promise.all([live.v2.close(), live.v6.close()]);
    }
  });

  it('sends keep-alive frames while idle and v2 message shapes on v2 streams', async () => {
    const sub = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=1', 'v2')}`, auth('ben'));
    try {
      const first = await sub.nextEvent();
      expect(first.body.data).toEqual(expect.objectContaining({ text: expect.any(String) }));
      expect(first.body.data).not.toHaveProperty('parts');
      expect(await sub.next()).toEqual([0, expect.any(String)]);
    } finally {
      await sub.close();
    }
  });

  it('resumes after Last-Event-Id with exactly the messages after it', async () => {
    const a = await send('lobby', 'r1');
    const b = await send('lobby', 'r2');
    const c = await send('lobby', 'r3');
    const sub = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=50')}`, {
      ...auth('ben'),
      'last-event-id': String(a),
    });
    try {
      expect((await sub.nextEvent()).id).toBe(String(b));
      expect((await sub.nextEvent()).id).toBe(String(c));
      expect(await sub.quietFor(150)).toBe(true);
    } finally {
      await sub.close();
    }
  });

  it('works over the WebSocket bridge with exact frames, and tells v6 subscribers about deletions', async () => {
    const sub = await openWsSubscription(s.baseUrl, s.chat('/rooms/lobby?message_limit=0'), auth('ben'), 7);
    try {
      expect(sub.status).toBe(200);
      const id = await send('lobby', 'to be deleted');
      const frame = await sub.next();
      expect(frame).toHaveLength(5);
      expect(frame.slice(0, 4)).toEqual([102, 7, String(id), {}]);
      expect(frame[4].event_name).toBe('new_message');
      expect((await s.request('DELETE', s.chat(`/rooms/lobby/messages/${id}`))).status).toBe(204);
      const deleted = await sub.nextEvent();
      expect(deleted.body).toMatchObject({ event_name: 'message_deleted', data: { message_id: id } });
    } finally {
      await sub.close();
    }
  });

  it('delivers edits live as message_updated to subscribers that ask for them (parley_events=edits), and nothing new to others', async () => {
    const asking = await openWsSubscription(s.baseUrl, s.chat('/rooms/lobby?message_limit=0&parley_events=edits'), auth('ben'));
    const askingV2 = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=0&parley_events=edits', 'v2')}`, auth('ben'));
    const plain = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=0')}`, auth('ben'));
    try {
      const id = await send('lobby', 'first draft');
      for (const sub of [asking, askingV2, plain]) expect((await sub.nextEvent()).body.data.id).toBe(id);
      const edit = await s.request('PUT', s.chat(`/rooms/lobby/messages/${id}`), {
        body: { parts: [{ type: 'text/plain', content: 'final text' }] },
        token: as('ann'),
      });
      expect(edit.status).toBe(204);

      const updated = await asking.nextEvent();
      expect(updated.body).toEqual({
        event_name: 'message_updated',
        data: expect.objectContaining({ id, user_id: 'ann', room_id: 'lobby', parts: [{ type: 'text/plain', content: 'final text' }] }),
        timestamp: expect.any(String),
      });
      expect(updated.body.data.updated_at > updated.body.data.created_at).toBe(true);
      const updatedV2 = await askingV2.nextEvent();
      expect(updatedV2.body).toMatchObject({ event_name: 'message_updated', data: { id, user_id: 'ann', text: 'final text' } });

      // A subscription that did not ask sees only Chatkit's events: the next thing it receives is the next message.
      const next = await send('lobby', 'after the edit');
      const seen = await plain.nextEvent();
      expect(seen.body).toMatchObject({ event_name: 'new_message', data: { id: next } });
    } finally {
      await Promise.all([asking.close(), askingV2.close(), plain.close()]);
    }
  });

  it('refuses an unknown parley_events family with a 422 before the stream opens', async () => {
    const sub = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?parley_events=edits,gossip')}`, auth('ben'));
    try {
      expect(sub.status).toBe(422);
      expect(sub.body).toMatchObject({ error: expect.stringContaining('invalid_parley_events'), error_description: expect.stringContaining('gossip') });
    } finally {
      await sub.close();
    }
  });

  it('gives v2 subscribers the DELETED tombstone, never the content', async () => {
    const sub = await openWsSubscription(s.baseUrl, s.chat('/rooms/lobby?message_limit=0', 'v2'), auth('ben'));
    try {
      const id = await send('lobby', 'classified');
      expect((await sub.nextEvent()).body.data.text).toBe('classified');
      expect((await s.request('DELETE', s.chat(`/messages/${id}`, 'v2'))).status).toBe(204);
      const tomb = await sub.nextEvent();
      expect(tomb.body).toMatchObject({ event_name: 'new_message', data: { id, text: 'DELETED', user_id: 'ann' } });
      // A new subscriber's replay shows the tombstone, not the content.
      const later = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=5', 'v2')}`, auth('ben'));
      const texts: string[] = [];
      for (let i = 0; i < 5; i++) texts.push((await later.nextEvent()).body.data.text);
      await later.close();
      expect(texts).not.toContain('classified');
      expect(texts).toContain('DELETED');
    } finally {
      await sub.close();
    }
  });

  it('delivers typing indicators as is_typing', async () => {
    const sub = await openWsSubscription(s.baseUrl, s.chat('/rooms/lobby?message_limit=0'), auth('ben'));
    try {
      expect((await s.request('POST', s.chat('/rooms/lobby/typing_indicators'), { token: as('ann') })).status).toBe(200);
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'is_typing', data: { user_id: 'ann' } });
    } finally {
      await sub.close();
    }
  });

  it('refuses private rooms to non-members as unknown rooms (404), bad limits (422) and bad tokens (401)', async () => {
    const priv = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/vault')}`, auth('cat'));
    expect(priv.status).toBe(404);
    expect(priv.body.error).toBe('services/chatkit/not_found/room_not_found');
    expect((await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/nowhere')}`, auth('cat'))).status).toBe(404);
    expect((await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=101')}`, auth('cat'))).status).toBe(422);
    expect((await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby')}`, { authorization: 'Bearer nope' })).status).toBe(401);
    const ws = await openWsSubscription(s.baseUrl, s.chat('/rooms/vault'), auth('cat'));
    expect(ws.status).toBe(404);
    await ws.close();
  });

  it('ends the stream when the room is deleted, and carries many subscriptions on one socket', async () => {
    await s.request('POST', s.chat('/rooms'), { body: { id: 'temp', name: 'temp' }, token: as('ann') });
    const client = await WsBridgeClient.connect(wsUrlOf(s.baseUrl));
    try {
      const a = client.subscribe(1, s.chat('/rooms/temp?message_limit=0'), auth('ann'));
      const b = client.subscribe(2, s.chat('/rooms/lobby?message_limit=0'), auth('ann'));
      expect(await a.next()).toEqual([101, 1, 200, {}]);
      expect(await b.next()).toEqual([101, 2, 200, {}]);
      client.send([16, 12345, null, null]);
      expect(await client.control.next()).toEqual([17, 12345]);
      await s.request('DELETE', s.chat('/rooms/temp'));
      const eos = await a.next();
      expect(eos).toHaveLength(5);
      expect(eos.slice(0, 3)).toEqual([199, 1, 404]);
      const id = await send('lobby', 'still here');
      expect((await b.next())[2]).toBe(String(id));
    } finally {
      await client.close();
    }
  });
});
