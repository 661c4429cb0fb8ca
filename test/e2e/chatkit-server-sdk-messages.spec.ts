/**
 * Drives the unmodified `@pusher/chatkit-server` 2.4.0 against a real Parley server on HTTPS for
 * every message, attachment and read-cursor method (wire-compat §2.2, §2.8, §6): v2 sendMessage /
 * editMessage / getRoomMessages, v6 multipart send, fetch, edit and delete, the attachment upload
 * flow (POST /rooms/:r/attachments, then a `got` PUT of the bytes to upload_url), the v2/v6 cross
 * reads the SDK's own suite relies on, the inline size limit, cursors, and the generic requests.
 * The certificate is trusted through NODE_EXTRA_CA_CERTS (set by `npm test`).
 */
import Chatkit, { ErrorResponse } from '@pusher/chatkit-server';
import { startTestServer, TestServer } from '../support/test-server';
import { sleep } from '../support/waiting';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const ids = (list: Array<{ id: number }>) => list.map((m) => m.id);

interface Sent {
  message_id: number;
}

describe('@pusher/chatkit-server 2.4.0 messages and cursors over HTTPS', () => {
  let s: TestServer;
  let chatkit: Chatkit;

  /** `host` must be a bare hostname and the port a separate number (wire-compat §1). */
  const newClient = () =>
    new Chatkit({ instanceLocator: s.locator, key: `${s.keyId}:${s.secret}`, host: 'localhost', port: s.httpsPort });

  /** A fresh room created by alice with bob in it, so that every test reads only its own messages. */
  const room = async (id: string, isPrivate = false) => {
    await chatkit.createRoom({ id, creatorId: 'alice', name: id, userIds: ['bob'], isPrivate });
    return id;
  };

  const send = async (roomId: string, text: string, userId = 'alice'): Promise<number> => {
    const sent: Sent = await chatkit.sendMessage({ roomId, userId, text });
    return sent.message_id;
  };

  /** The GET the SDK's download step would be: no Authorization, the URL exactly as served. */
  const download = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  beforeAll(async () => {
    s = await startTestServer({ https: true });
    expect(s.httpsPort).toEqual(expect.any(Number));
    chatkit = newClient();
    await chatkit.createUsers({
      users: ['alice', 'bob', 'carol'].map((id) => ({ id, name: id.toUpperCase() })),
    });
  });

  // s.close() force-closes every connection, so the SDK's keep-alive (`forever`) sockets and got's
  // agent sockets end with it and nothing is left to keep jest alive.
  afterAll(() => s.close());

  describe('sending and reading', () => {
    it('sendMessage (v2) resolves with a numeric message_id; getRoomMessages shows the v2 message', async () => {
      const roomId = await room('v2-plain');
      const sent: Sent = await chatkit.sendMessage({ roomId, userId: 'alice', text: 'hello v2' });
      expect(sent).toEqual({ message_id: expect.any(Number) });
      expect(Number.isInteger(sent.message_id)).toBe(true);

      const messages = await chatkit.getRoomMessages({ roomId });
      expect(messages).toEqual([
        {
          id: sent.message_id,
          user_id: 'alice',
          room_id: roomId,
          text: 'hello v2',
          created_at: expect.stringMatching(ISO),
          updated_at: messages[0].created_at,
        },
      ]);
    });

    it('sendMessage (v2) with a link attachment {resourceLink, type} reads back as {resource_link, type, name}', async () => {
      const roomId = await room('v2-link');
      const image: Sent = await chatkit.sendMessage({
        roomId,
        userId: 'bob',
        text: 'a kitten',
        attachment: { resourceLink: 'https://placekitten.com/200/300', type: 'image' },
      });
      const file: Sent = await chatkit.sendMessage({
        roomId,
        userId: 'alice',
        text: 'the report',
        attachment: { resourceLink: 'https://example.com/report.pdf', type: 'file' },
      });
      expect(file.message_id).toBeGreaterThan(image.message_id);

      const messages = await chatkit.getRoomMessages({ roomId });
      expect(messages).toEqual([
        {
          id: file.message_id,
          user_id: 'alice',
          room_id: roomId,
          text: 'the report',
          attachment: { resource_link: 'https://example.com/report.pdf', type: 'file', name: 'report.pdf' },
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
        {
          id: image.message_id,
          user_id: 'bob',
          room_id: roomId,
          text: 'a kitten',
          attachment: { resource_link: 'https://placekitten.com/200/300', type: 'image', name: '300' },
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      ]);
    });

    it('sendSimpleMessage sends one text/plain part (v6); fetchMultipartMessage returns it', async () => {
      const roomId = await room('simple');
      const sent: Sent = await chatkit.sendSimpleMessage({ roomId, userId: 'bob', text: 'simple text' });
      expect(sent).toEqual({ message_id: expect.any(Number) });

      const message = await chatkit.fetchMultipartMessage({ roomId, messageId: String(sent.message_id) });
      expect(message).toEqual({
        id: sent.message_id,
        user_id: 'bob',
        room_id: roomId,
        parts: [{ type: 'text/plain', content: 'simple text' }],
        created_at: expect.stringMatching(ISO),
        updated_at: message.created_at,
      });
      expect((await chatkit.getRoomMessages({ roomId }))[0]).toMatchObject({ id: sent.message_id, text: 'simple text' });
    });

    it('sendMultipartMessage passes inline and URL parts through unchanged', async () => {
      const roomId = await room('multipart');
      const parts = [
        { type: 'text/plain', content: 'caption' },
        { type: 'text/markdown', content: '**bold** and _italic_' },
        { type: 'image/png', url: 'https://example.com/cat.png' },
        { type: 'application/json', url: 'https://example.com/data.json' },
      ];
      const sent: Sent = await chatkit.sendMultipartMessage({ roomId, userId: 'alice', parts });
      expect(sent).toEqual({ message_id: expect.any(Number) });

      const message = await chatkit.fetchMultipartMessage({ roomId, messageId: String(sent.message_id) });
      expect(message).toEqual({
        id: sent.message_id,
        user_id: 'alice',
        room_id: roomId,
        parts,
        created_at: expect.stringMatching(ISO),
        updated_at: message.created_at,
      });
      expect(await chatkit.fetchMultipartMessages({ roomId })).toEqual([message]);
    });

    it('sendMultipartMessage / editMultipartMessage with no parts reject locally with a TypeError', async () => {
      await expect(chatkit.sendMultipartMessage({ roomId: 'multipart', userId: 'alice', parts: [] })).rejects.toThrow(
        new TypeError('message must contain at least one part'),
      );
      await expect(chatkit.editMultipartMessage('multipart', '1', { userId: 'alice', parts: [] })).rejects.toThrow(TypeError);
    });

    it('fetchMultipartMessage of a missing message rejects with 404 services/chatkit/not_found/message_not_found', async () => {
      const roomId = await room('lookup');
      const err = await chatkit.fetchMultipartMessage({ roomId, messageId: '999999999' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ErrorResponse);
      expect(err).toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/message_not_found',
        error_description: expect.any(String),
      });

      // A message that exists, but in another room, is not found through this room either.
      const elsewhere = await send('v2-plain', 'not in lookup');
      await expect(chatkit.fetchMultipartMessage({ roomId, messageId: String(elsewhere) })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/message_not_found',
      });
    });

    it('works as the first calls of a fresh client, which sends JSON bodies with no Content-Type (§2.2 quirk 1)', async () => {
      const roomId = await room('untyped');
      const fresh = newClient();
      const v2: Sent = await fresh.sendMessage({ roomId, userId: 'bob', text: 'untyped v2' });
      const v6: Sent = await fresh.sendSimpleMessage({ roomId, userId: 'bob', text: 'untyped v6' });
      await fresh.editMessage(roomId, String(v2.message_id), { userId: 'bob', text: 'untyped edit' });
      await fresh.setReadCursor({ roomId, userId: 'bob', position: v6.message_id });
      expect((await fresh.getRoomMessages({ roomId })).map((x: { text: string }) => x.text)).toEqual([
        'untyped v6',
        'untyped edit',
      ]);
      expect(await fresh.getReadCursor({ roomId, userId: 'bob' })).toMatchObject({ position: v6.message_id });
    });

    it('sending to a missing room rejects with 404 room_not_found', async () => {
      await expect(chatkit.sendMessage({ roomId: 'no-such-room', userId: 'alice', text: 'x' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/room_not_found',
      });
      await expect(chatkit.sendSimpleMessage({ roomId: 'no-such-room', userId: 'alice', text: 'x' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/room_not_found',
      });
    });
  });

  describe('paging: getRoomMessages (v2) and fetchMultipartMessages (v6)', () => {
    let roomId: string;
    let m: number[];

    beforeAll(async () => {
      roomId = await room('paging');
      m = [];
      m.push(await send(roomId, 'm0'));
      m.push(await send(roomId, 'm1', 'bob'));
      m.push((await chatkit.sendSimpleMessage({ roomId, userId: 'alice', text: 'm2' })).message_id);
      m.push(
        (await chatkit.sendMultipartMessage({ roomId, userId: 'bob', parts: [{ type: 'text/plain', content: 'm3' }] }))
          .message_id,
      );
      m.push(await send(roomId, 'm4'));
      for (let i = 1; i < m.length; i++) expect(m[i]).toBeGreaterThan(m[i - 1]);
    });

    it('with no options both list every message newest first, v2 with text and v6 with parts', async () => {
      const v2 = await chatkit.getRoomMessages({ roomId });
      expect(ids(v2)).toEqual([...m].reverse());
      expect(v2.map((x: { text: string }) => x.text)).toEqual(['m4', 'm3', 'm2', 'm1', 'm0']);
      expect(v2.map((x: { user_id: string }) => x.user_id)).toEqual(['alice', 'bob', 'alice', 'bob', 'alice']);

      const v6 = await chatkit.fetchMultipartMessages({ roomId });
      expect(ids(v6)).toEqual([...m].reverse());
      expect(v6.map((x: { parts: unknown }) => x.parts)).toEqual(
        ['m4', 'm3', 'm2', 'm1', 'm0'].map((content) => [{ type: 'text/plain', content }]),
      );
      for (const x of v6) {
        expect(x).toEqual({
          id: expect.any(Number),
          user_id: expect.any(String),
          room_id: roomId,
          parts: expect.any(Array),
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        });
      }
    });

    it('limit takes the newest; initialId is exclusive and pages backwards (the SDK suite’s walk)', async () => {
      for (const fetchPage of [
        (o: { limit?: number; initialId?: string; direction?: string }) => chatkit.getRoomMessages({ roomId, ...o }),
        (o: { limit?: number; initialId?: string; direction?: string }) => chatkit.fetchMultipartMessages({ roomId, ...o }),
      ]) {
        const first = await fetchPage({ limit: 2 });
        expect(ids(first)).toEqual([m[4], m[3]]);
        const next = await fetchPage({ initialId: String(first[1].id), limit: 2 });
        expect(ids(next)).toEqual([m[2], m[1]]);
        const rest = await fetchPage({ initialId: String(next[1].id) });
        expect(ids(rest)).toEqual([m[0]]);
        expect(await fetchPage({ initialId: String(m[0]) })).toEqual([]);
        expect(ids(await fetchPage({ initialId: String(m[3]) }))).toEqual([m[2], m[1], m[0]]);

        expect(ids(await fetchPage({ direction: 'older', limit: 3 }))).toEqual([m[4], m[3], m[2]]);
        expect(ids(await fetchPage({ direction: 'older', initialId: String(m[2]) }))).toEqual([m[1], m[0]]);
      }
    });

    it("direction 'newer' pages forwards from initialId (exclusive)", async () => {
      expect(ids(await chatkit.getRoomMessages({ roomId, direction: 'newer', initialId: String(m[1]), limit: 2 }))).toEqual([
        m[2],
        m[3],
      ]);
      expect(
        ids(await chatkit.fetchMultipartMessages({ roomId, direction: 'newer', initialId: String(m[1]), limit: 2 })),
      ).toEqual([m[2], m[3]]);
      expect(ids(await chatkit.getRoomMessages({ roomId, direction: 'newer', initialId: String(m[2]) }))).toEqual([
        m[3],
        m[4],
      ]);
      expect(await chatkit.fetchMultipartMessages({ roomId, direction: 'newer', initialId: String(m[4]) })).toEqual([]);
    });

    it('an empty room lists no messages, and a missing room rejects with 404 room_not_found', async () => {
      const empty = await room('paging-empty');
      expect(await chatkit.getRoomMessages({ roomId: empty })).toEqual([]);
      expect(await chatkit.fetchMultipartMessages({ roomId: empty })).toEqual([]);
      await expect(chatkit.getRoomMessages({ roomId: 'no-such-room' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/room_not_found',
      });
      await expect(chatkit.fetchMultipartMessages({ roomId: 'no-such-room' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/room_not_found',
      });
    });
  });

  describe('editing', () => {
    it('editMessage (v2) replaces text and attachment; created_at stays, updated_at moves', async () => {
      const roomId = await room('edit-v2');
      const id = await send(roomId, 'draft');
      const [before] = await chatkit.getRoomMessages({ roomId });
      await sleep(5);

      expect(await chatkit.editMessage(roomId, String(id), { userId: 'alice', text: 'final' })).toBeUndefined();
      const [after] = await chatkit.getRoomMessages({ roomId });
      expect(after).toEqual({
        id,
        user_id: 'alice',
        room_id: roomId,
        text: 'final',
        created_at: before.created_at,
        updated_at: expect.stringMatching(ISO),
      });
      expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));

      await chatkit.editMessage(roomId, String(id), {
        userId: 'alice',
        text: 'with a link',
        attachment: { resourceLink: 'https://example.com/clip.mp4', type: 'video' },
      });
      expect((await chatkit.getRoomMessages({ roomId }))[0]).toMatchObject({
        id,
        text: 'with a link',
        attachment: { resource_link: 'https://example.com/clip.mp4', type: 'video', name: 'clip.mp4' },
      });
      const asV6 = await chatkit.fetchMultipartMessage({ roomId, messageId: String(id) });
      expect(asV6.parts).toEqual([
        { type: 'text/plain', content: 'with a link' },
        { type: 'video/x-pusher-video', url: 'https://example.com/clip.mp4' },
      ]);
    });

    it('editSimpleMessage (v6) replaces every part with one text/plain part', async () => {
      const roomId = await room('edit-simple');
      const { message_id: id }: Sent = await chatkit.sendMultipartMessage({
        roomId,
        userId: 'bob',
        parts: [
          { type: 'text/plain', content: 'one' },
          { type: 'image/gif', url: 'https://example.com/x.gif' },
        ],
      });
      const before = await chatkit.fetchMultipartMessage({ roomId, messageId: String(id) });
      await sleep(5);

      expect(await chatkit.editSimpleMessage(roomId, String(id), { userId: 'bob', text: 'two' })).toBeUndefined();
      const after = await chatkit.fetchMultipartMessage({ roomId, messageId: String(id) });
      expect(after).toEqual({
        id,
        user_id: 'bob',
        room_id: roomId,
        parts: [{ type: 'text/plain', content: 'two' }],
        created_at: before.created_at,
        updated_at: expect.stringMatching(ISO),
      });
      expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
      expect((await chatkit.getRoomMessages({ roomId }))[0]).toEqual({
        id,
        user_id: 'bob',
        room_id: roomId,
        text: 'two',
        created_at: before.created_at,
        updated_at: after.updated_at,
      });
    });

    it('editMultipartMessage (v6) replaces the parts, and v2 reads the edit', async () => {
      const roomId = await room('edit-multi');
      const id = await send(roomId, 'plain v2', 'bob');
      const parts = [
        { type: 'text/plain', content: 'now multipart' },
        { type: 'image/jpeg', url: 'https://example.com/photo.jpg' },
        { type: 'text/html', content: '<b>hi</b>' },
      ];
      expect(await chatkit.editMultipartMessage(roomId, String(id), { userId: 'bob', parts })).toBeUndefined();
      expect((await chatkit.fetchMultipartMessage({ roomId, messageId: String(id) })).parts).toEqual(parts);
      expect((await chatkit.getRoomMessages({ roomId }))[0]).toMatchObject({
        id,
        text: 'now multipart',
        attachment: { resource_link: 'https://example.com/photo.jpg', type: 'image', name: 'photo.jpg' },
      });
    });

    it('editing a missing message rejects with 404 message_not_found', async () => {
      const roomId = await room('edit-missing');
      await expect(chatkit.editMessage(roomId, '999999999', { userId: 'alice', text: 'x' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/message_not_found',
      });
      await expect(chatkit.editSimpleMessage(roomId, '999999999', { userId: 'alice', text: 'x' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/message_not_found',
      });
    });
  });

  describe('deleteMessage', () => {
    it('removes the message from getRoomMessages, fetchMultipartMessages and fetchMultipartMessage', async () => {
      const roomId = await room('delete');
      const keep1 = await send(roomId, 'keep 1');
      const doomed = (await chatkit.sendSimpleMessage({ roomId, userId: 'bob', text: 'doomed' })).message_id as number;
      const keep2 = await send(roomId, 'keep 2');

      expect(await chatkit.deleteMessage({ roomId, messageId: String(doomed) })).toBeUndefined();

      const v2 = await chatkit.getRoomMessages({ roomId });
      expect(ids(v2)).toEqual([keep2, keep1]);
      expect(JSON.stringify(v2)).not.toContain('doomed');
      expect(ids(await chatkit.fetchMultipartMessages({ roomId }))).toEqual([keep2, keep1]);
      await expect(chatkit.fetchMultipartMessage({ roomId, messageId: String(doomed) })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/message_not_found',
      });
      // Paging across the gap still works.
      expect(ids(await chatkit.getRoomMessages({ roomId, initialId: String(keep2) }))).toEqual([keep1]);

      await expect(chatkit.deleteMessage({ roomId, messageId: String(doomed) })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/message_not_found',
      });
    });
  });

  describe('v2/v6 cross-version reads (wire-compat §2.8)', () => {
    it('a multipart message with a text/plain part and URL parts reads through v2 as text + the first link', async () => {
      const roomId = await room('cross-url');
      const json: Sent = await chatkit.sendMultipartMessage({
        roomId,
        userId: 'alice',
        parts: [
          { type: 'application/json', url: 'https://example.com/data.json' },
          { type: 'text/plain', content: 'the data' },
          { type: 'image/png', url: 'https://example.com/second.png' },
        ],
      });
      const image: Sent = await chatkit.sendMultipartMessage({
        roomId,
        userId: 'bob',
        parts: [
          { type: 'text/plain', content: 'a picture' },
          { type: 'image/png', url: 'https://example.com/pic.png' },
        ],
      });
      expect(await chatkit.getRoomMessages({ roomId })).toEqual([
        {
          id: image.message_id,
          user_id: 'bob',
          room_id: roomId,
          text: 'a picture',
          attachment: { resource_link: 'https://example.com/pic.png', type: 'image', name: 'pic.png' },
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
        {
          id: json.message_id,
          user_id: 'alice',
          room_id: roomId,
          text: 'the data',
          attachment: { resource_link: 'https://example.com/data.json', type: 'file', name: 'data.json' },
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      ]);
    });

    it('a message sent with sendMessage (v2) reads through fetchMultipartMessages as parts', async () => {
      const roomId = await room('cross-v2');
      const plain = await send(roomId, 'v2 sends');
      const linked: Sent = await chatkit.sendMessage({
        roomId,
        userId: 'bob',
        text: 'v6 receives',
        attachment: { resourceLink: 'https://example.com/a.png', type: 'image' },
      });
      const messages = await chatkit.fetchMultipartMessages({ roomId });
      expect(messages).toEqual([
        {
          id: linked.message_id,
          user_id: 'bob',
          room_id: roomId,
          parts: [
            { type: 'text/plain', content: 'v6 receives' },
            { type: 'image/x-pusher-img', url: 'https://example.com/a.png' },
          ],
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
        {
          id: plain,
          user_id: 'alice',
          room_id: roomId,
          parts: [{ type: 'text/plain', content: 'v2 sends' }],
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      ]);
      expect(await chatkit.fetchMultipartMessage({ roomId, messageId: String(plain) })).toEqual(messages[1]);
    });
  });

  describe('attachments: file parts (upload flow, then got PUT to upload_url)', () => {
    const json = Buffer.from(JSON.stringify({ hello: 'world', n: [1, 2, 3] }));
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i));

    const attachmentShape = (name: string, size: number, customData?: unknown) => ({
      id: expect.any(String),
      download_url: expect.any(String),
      refresh_url: expect.any(String),
      expiration: expect.stringMatching(ISO),
      name,
      size,
      ...(customData !== undefined && { custom_data: customData }),
    });

    it('sendMultipartMessage uploads Buffer parts; v6 shows attachment parts whose download_url serves the bytes', async () => {
      const roomId = await room('files');
      const sent: Sent = await chatkit.sendMultipartMessage({
        roomId,
        userId: 'alice',
        parts: [
          { type: 'text/plain', content: 'see attached' },
          { type: 'application/json', file: json, name: 'data.json', customData: { source: 'test' } },
          { type: 'image/png', file: binary, name: 'bytes.png' },
        ],
      });
      expect(sent).toEqual({ message_id: expect.any(Number) });

      const message = await chatkit.fetchMultipartMessage({ roomId, messageId: String(sent.message_id) });
      expect(message).toEqual({
        id: sent.message_id,
        user_id: 'alice',
        room_id: roomId,
        parts: [
          { type: 'text/plain', content: 'see attached' },
          { type: 'application/json', attachment: attachmentShape('data.json', json.length, { source: 'test' }) },
          { type: 'image/png', attachment: attachmentShape('bytes.png', binary.length) },
        ],
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      const [, jsonPart, pngPart] = message.parts;
      expect(jsonPart.attachment.id).not.toBe(pngPart.attachment.id);
      // Links are signed and expire, but not before 30 minutes from now (attachments port).
      expect(Date.parse(jsonPart.attachment.expiration)).toBeGreaterThan(Date.now() + 29 * 60_000);

      const gotJson = await download(jsonPart.attachment.download_url);
      expect(gotJson.status).toBe(200);
      expect(gotJson.bytes.equals(json)).toBe(true);
      const gotPng = await download(pngPart.attachment.download_url);
      expect(gotPng.status).toBe(200);
      expect(gotPng.bytes.equals(binary)).toBe(true);

      expect(await chatkit.fetchMultipartMessages({ roomId })).toEqual([message]);
    });

    it('getRoomMessages (v2) shows the text part and the application/json attachment as {resource_link, type: file}, serving the bytes', async () => {
      const roomId = await room('files-v2');
      const sent: Sent = await chatkit.sendMultipartMessage({
        roomId,
        userId: 'bob',
        parts: [
          { type: 'text/plain', content: 'json inside' },
          { type: 'application/json', file: json, name: 'data.json' },
        ],
      });
      const [v2] = await chatkit.getRoomMessages({ roomId });
      expect(v2).toEqual({
        id: sent.message_id,
        user_id: 'bob',
        room_id: roomId,
        text: 'json inside',
        // v2 attachments carry the file name when there is one (wire study §2.8).
        attachment: { resource_link: expect.any(String), type: 'file', name: 'data.json' },
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      const got = await download(v2.attachment.resource_link);
      expect(got.status).toBe(200);
      expect(got.bytes.equals(json)).toBe(true);
    });

    it('editMultipartMessage uploads a Buffer part too', async () => {
      const roomId = await room('files-edit');
      const id = await send(roomId, 'before the file');
      const replacement = Buffer.from('plain bytes\n\u00e9\u0000end', 'utf8');
      await chatkit.editMultipartMessage(roomId, String(id), {
        userId: 'alice',
        parts: [
          { type: 'text/plain', content: 'after the file' },
          { type: 'text/csv', file: replacement, name: 'table.csv' },
        ],
      });
      const message = await chatkit.fetchMultipartMessage({ roomId, messageId: String(id) });
      expect(message.parts).toEqual([
        { type: 'text/plain', content: 'after the file' },
        { type: 'text/csv', attachment: attachmentShape('table.csv', replacement.length) },
      ]);
      const got = await download(message.parts[1].attachment.download_url);
      expect(got.status).toBe(200);
      expect(got.bytes.equals(replacement)).toBe(true);
    });
  });

  describe('inline size limit', () => {
    it('an inline part of 5 000+ characters rejects with message_size_limit_exceeded; a modest one is fine', async () => {
      const roomId = await room('size');
      const big = 'x'.repeat(5000);

      const simple = await chatkit.sendSimpleMessage({ roomId, userId: 'alice', text: big }).catch((e: unknown) => e);
      expect(simple).toBeInstanceOf(ErrorResponse);
      expect((simple as ErrorResponse).status).toBeGreaterThanOrEqual(400);
      expect((simple as ErrorResponse).error).toContain('message_size_limit_exceeded');

      await expect(
        chatkit.sendMultipartMessage({
          roomId,
          userId: 'alice',
          parts: [
            { type: 'text/plain', content: 'small' },
            { type: 'text/markdown', content: 'y'.repeat(6000) },
          ],
        }),
      ).rejects.toMatchObject({ error: expect.stringContaining('message_size_limit_exceeded') });

      const ok = await chatkit.sendSimpleMessage({ roomId, userId: 'alice', text: 'z'.repeat(1000) });
      await expect(chatkit.editSimpleMessage(roomId, String(ok.message_id), { userId: 'alice', text: big })).rejects.toMatchObject({
        error: expect.stringContaining('message_size_limit_exceeded'),
      });
      const messages = await chatkit.fetchMultipartMessages({ roomId });
      expect(messages).toHaveLength(1);
      expect(messages[0].parts).toEqual([{ type: 'text/plain', content: 'z'.repeat(1000) }]);
    });
  });

  describe('read cursors (chatkit_cursors v2)', () => {
    const cursor = (room_id: string, user_id: string, position: number) => ({
      cursor_type: 0,
      room_id,
      user_id,
      position,
      updated_at: expect.stringMatching(ISO),
    });
    const byRoomThenUser = (list: Array<{ room_id: string; user_id: string }>) =>
      [...list].sort((a, b) => (a.room_id + '\u0000' + a.user_id).localeCompare(b.room_id + '\u0000' + b.user_id));

    let m: number[];
    beforeAll(async () => {
      await room('cursors-a');
      await room('cursors-b', true);
      m = [];
      for (let i = 0; i < 4; i++) m.push(await send('cursors-a', `c${i}`, i % 2 ? 'bob' : 'alice'));
    });

    it('getReadCursor resolves with null when no cursor is set', async () => {
      expect(await chatkit.getReadCursor({ roomId: 'cursors-a', userId: 'alice' })).toBeNull();
      expect(await chatkit.getReadCursor({ roomId: 'cursors-b', userId: 'carol' })).toBeNull();
    });

    it('setReadCursor sets a cursor that getReadCursor returns', async () => {
      expect(await chatkit.setReadCursor({ roomId: 'cursors-a', userId: 'alice', position: m[1] })).toBeUndefined();
      expect(await chatkit.getReadCursor({ roomId: 'cursors-a', userId: 'alice' })).toEqual(cursor('cursors-a', 'alice', m[1]));
    });

    it('cursors only move forward', async () => {
      await chatkit.setReadCursor({ roomId: 'cursors-a', userId: 'bob', position: m[2] });
      const before = await chatkit.getReadCursor({ roomId: 'cursors-a', userId: 'bob' });
      expect(before).toEqual(cursor('cursors-a', 'bob', m[2]));

      // A lower or equal position is accepted and changes nothing.
      await sleep(5);
      await chatkit.setReadCursor({ roomId: 'cursors-a', userId: 'bob', position: m[0] });
      await chatkit.setReadCursor({ roomId: 'cursors-a', userId: 'bob', position: m[2] });
      expect(await chatkit.getReadCursor({ roomId: 'cursors-a', userId: 'bob' })).toEqual(before);

      await chatkit.setReadCursor({ roomId: 'cursors-a', userId: 'bob', position: m[3] });
      const after = await chatkit.getReadCursor({ roomId: 'cursors-a', userId: 'bob' });
      expect(after).toEqual(cursor('cursors-a', 'bob', m[3]));
      expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    });

    it('getReadCursorsForUser lists the user’s cursors across rooms', async () => {
      await chatkit.setReadCursor({ roomId: 'cursors-b', userId: 'alice', position: 7 });
      const forAlice = await chatkit.getReadCursorsForUser({ userId: 'alice' });
      expect(byRoomThenUser(forAlice)).toEqual([cursor('cursors-a', 'alice', m[1]), cursor('cursors-b', 'alice', 7)]);
      expect(await chatkit.getReadCursorsForUser({ userId: 'carol' })).toEqual([]);
    });

    it('getReadCursorsForRoom lists every user’s cursor in the room', async () => {
      const forRoom = await chatkit.getReadCursorsForRoom({ roomId: 'cursors-a' });
      expect(byRoomThenUser(forRoom)).toEqual([cursor('cursors-a', 'alice', m[1]), cursor('cursors-a', 'bob', m[3])]);
      expect(await chatkit.getReadCursorsForRoom({ roomId: 'cursors-b' })).toEqual([cursor('cursors-b', 'alice', 7)]);
      const fresh = await room('cursors-none');
      expect(await chatkit.getReadCursorsForRoom({ roomId: fresh })).toEqual([]);
    });

    it('setReadCursor for an unknown user or room rejects with 404', async () => {
      await expect(chatkit.setReadCursor({ roomId: 'cursors-a', userId: 'ghost', position: 1 })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit_cursors/not_found/user_not_found',
      });
      await expect(chatkit.setReadCursor({ roomId: 'no-such-room', userId: 'alice', position: 1 })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit_cursors/not_found/room_not_found',
      });
    });
  });

  describe('generic requests', () => {
    it('apiRequest sends a raw v6 request (default server token) and resolves with the response; body is a string', async () => {
      const roomId = await room('generic');
      const first = await send(roomId, 'raw one');
      const second = await send(roomId, 'raw two');

      const one = await chatkit.apiRequest({ method: 'GET', path: `/rooms/${roomId}/messages/${first}` });
      expect(one.statusCode).toBe(200);
      expect(typeof one.body).toBe('string');
      expect(JSON.parse(one.body)).toEqual(await chatkit.fetchMultipartMessage({ roomId, messageId: String(first) }));

      const page = await chatkit.apiRequest({ method: 'GET', path: `/rooms/${roomId}/messages`, qs: { limit: 1 } });
      expect(ids(JSON.parse(page.body))).toEqual([second]);

      await expect(chatkit.apiRequest({ method: 'GET', path: `/rooms/${roomId}/messages/999999999` })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/message_not_found',
      });
    });

    it('cursorsRequest sends a raw chatkit_cursors v2 request', async () => {
      await chatkit.setReadCursor({ roomId: 'generic', userId: 'bob', position: 3 });
      const res = await chatkit.cursorsRequest({ method: 'GET', path: '/cursors/0/rooms/generic/users/bob' });
      expect(res.statusCode).toBe(200);
      expect(typeof res.body).toBe('string');
      expect(JSON.parse(res.body)).toEqual(await chatkit.getReadCursor({ roomId: 'generic', userId: 'bob' }));
      expect(JSON.parse(res.body)).toMatchObject({ cursor_type: 0, room_id: 'generic', user_id: 'bob', position: 3 });
    });
  });
});
