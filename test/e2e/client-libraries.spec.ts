import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startProcess, ServerProcess } from '../support/server-process';

/**
 * Parley's own client libraries as a user gets them: `npm pack` the project (dist is built by
 * `npm test`; the pack's prepack adds the client typings), install the tarball into a fresh
 * project, and from there drive a running server through `parley/chat-server` and
 * `parley/feeds` in a child `node` process (test/pack/client-consumer.js); its TypeScript
 * consumers type-check against the packed typings.
 */
const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);
const instance = 'clientlib';
const key = 'k:client-library-secret';

/* eslint-disable @typescript-eslint/no-explicit-any */
describe('parley/chat-server and parley/feeds, installed from the packed tarball', () => {
  const work = mkdtempSync(join(tmpdir(), 'parley-pack-'));
  const project = join(work, 'consumer');
  let server: ServerProcess;
  let result: any;
  let packedFiles: string[];

  beforeAll(async () => {
    const packAndInstall = async () => {
      await run('npm', ['run', '--silent', 'prepack'], { cwd: ROOT });
      const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT });
      const [packed] = JSON.parse(stdout);
      packedFiles = packed.files.map((f: { path: string }) => f.path);
      await run('mkdir', ['-p', project]);
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
      // The tarball's dependencies are in the npm cache from this repository's own install.
      await run(
        'npm',
        ['install', '--no-audit', '--no-fund', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-package-lock', join(work, packed.filename)],
        { cwd: project },
      );
    };
    const dataDir = join(work, 'data');
    const [, started] = await Promise.all([
      packAndInstall(),
      startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${instance}`, INSTANCE_KEY: key }),
    ]);
    server = started;
    copyFileSync(join(ROOT, 'test/pack/client-consumer.js'), join(project, 'consumer.js'));
    const { stdout } = await run(process.execPath, ['consumer.js'], {
      cwd: project,
      env: { ...process.env, PARLEY_PORT: String(server.port), PARLEY_INSTANCE: instance, PARLEY_KEY: key },
    });
    result = JSON.parse(stdout);
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('packs the built server and the client libraries with their typings, and no tests, sources or data', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'dist/src/main.js',
        'dist/src/client/chat-server.js',
        'dist/src/client/chat-server.d.ts',
        'dist/src/client/feeds.js',
        'dist/src/client/feeds.d.ts',
        'dist/src/client/index.d.ts',
      ]),
    );
    expect(packedFiles.filter((f) => /^(src|test|data)\/|^dist\/test\/|\.spec\.|\.map$|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('authenticate answers a token request with a token the chat API accepts', () => {
    const { chat } = result;
    expect(chat.auth).toEqual({ status: 200, headers: {}, token_type: 'bearer', expires_in: 86400 });
    expect(chat.withAuthToken).toEqual({ status: 200, body: expect.objectContaining({ id: 'alice', name: 'Alice', custom_data: { team: 'blue' } }) });
    expect(chat.suTokenListsRoles).toBe(200);
    expect(chat.userTokenCannotCreate.status).toBe(403);
    expect(chat.badGrant).toEqual({
      status: 422,
      headers: {},
      body: { error: 'token_provider/invalid_grant_type', error_description: 'The grant_type provided, password, is unsupported' },
    });
  });

  it('creates and reads users and rooms, sends and fetches messages', () => {
    const { chat } = result;
    expect(chat.alice).toEqual(chat.gotAlice);
    expect(chat.room).toEqual(expect.objectContaining({ name: 'general', created_by_id: 'alice', private: false, custom_data: { topic: 'all' } }));
    expect([...chat.room.member_user_ids].sort()).toEqual(['alice', 'bob']);
    expect(chat.gotRoom.id).toBe(chat.room.id);
    const [first, second] = chat.messageIds;
    expect(second).toBeGreaterThan(first);
    expect(chat.messages.map((m: any) => [m.id, m.user_id, m.parts])).toEqual([
      [second, 'bob', [{ type: 'text/plain', content: 'look' }, { type: 'image/png', url: 'https://example.com/cat.png' }]],
      [first, 'alice', [{ type: 'text/plain', content: 'hello' }]],
    ]);
    expect(chat.olderThanSecond.map((m: any) => m.id)).toEqual([first]);
  });

  it('searches messages as a member (their rooms) or as su (the instance), with highlights', () => {
    const { chat } = result;
    const [first, second] = chat.messageIds;
    expect(chat.searchedAsBob.results).toEqual([{ message: expect.objectContaining({ id: second, user_id: 'bob' }), highlights: [{ part: 0, start: 0, end: 4 }] }]);
    expect(chat.searchedAsBob.next).toBeUndefined();
    expect(chat.searchedAsSuFirstPage.results.map((r: any) => r.message.id)).toEqual([first]);
    expect(chat.searchedOutsider).toEqual({ results: [] });
  });

  it('pins, unpins and lists pinned messages', () => {
    const { chat } = result;
    const [, second] = chat.messageIds;
    expect(chat.pins).toEqual({
      pins: [{ message_id: second, pinned_by: 'bob', pinned_at: expect.any(String), until: expect.any(String), message: expect.objectContaining({ id: second }) }],
    });
  });

  it('reports messages and users, pages and resolves the review queue; mutes, lists and unmutes', () => {
    const { chat } = result;
    const [, second] = chat.messageIds;
    expect(chat.reportedAgain).toEqual({ id: chat.reportedId, status: 'open' });
    expect(chat.reportQueue.reports.map((r: any) => r.id)).toEqual([chat.reportedId]);
    expect(chat.reportQueueNext.reports).toHaveLength(1);
    expect(chat.resolvedReport).toMatchObject({ status: 'resolved', target: { kind: 'user', user_id: 'alice' }, resolution: { action: 'dismiss', note: 'fine' } });
    expect(chat.gotReport).toMatchObject({ status: 'open', reason: 'an advert', reporter_id: 'alice', target: { kind: 'message', message_id: second, user_id: 'bob' } });
    expect(chat.mutes).toEqual({ mutes: [{ user_id: 'bob', muted_at: expect.any(String) }] });
    expect(chat.mutesAfter).toEqual({ mutes: [] });
  });

  it('replies in a thread, pages the replies, sets a thread cursor and lists the user\'s threads with unread counts', () => {
    const { chat } = result;
    const [, second] = chat.messageIds;
    expect(chat.replies.map((m: any) => [m.user_id, m.parts[0].content])).toEqual([
      ['alice', 'in the thread'],
      ['bob', 'in both'],
    ]);
    expect(chat.threadCursor).toEqual({ room_id: chat.room.id, parent_id: second, user_id: 'alice', position: chat.replies[0].id, updated_at: expect.any(String) });
    expect(chat.aliceThreads.threads).toEqual([
      expect.objectContaining({ room_id: chat.room.id, parent_id: second, reply_count: 2, participants: ['bob', 'alice'], unread_count: 1 }),
    ]);
  });

  it('bans and unbans in a room and the instance, lists bans, freezes and unfreezes a room', () => {
    const { chat } = result;
    expect(chat.roomBan).toEqual({ user_id: 'bob', room_id: chat.room.id, reason: 'spam', shadow: false, banned_at: expect.any(String), until: expect.any(String) });
    expect(chat.instanceBan).toEqual({ user_id: 'alice', reason: '', shadow: true, banned_at: expect.any(String) });
    expect(chat.bans.map((page: any) => page.bans.map((b: any) => b.user_id))).toEqual([['bob'], ['alice']]);
    expect(chat.bansAfter).toEqual([{ bans: [] }, { bans: [] }]);
    expect([chat.frozen, chat.frozenAfter]).toEqual([true, false]);
  });

  it('adds, removes and lists reactions; fetched messages carry them', () => {
    const { chat } = result;
    expect(chat.reactionsPage).toEqual({ reactions: [{ type: '👍', user_id: 'bob', created_at: expect.any(String) }], next: expect.any(String) });
    expect(chat.reactionsNextPage).toEqual({ reactions: [{ type: ':tada:', user_id: 'bob', created_at: expect.any(String) }] });
    expect(chat.reactedMessage.reactions).toEqual({ counts: { '👍': 1, ':tada:': 1 }, mine: [], latest: expect.any(Array) });
  });

  it('rejects with ErrorResponse carrying the server’s status and error', () => {
    const { chat } = result;
    expect(chat.missingUser).toEqual(
      expect.objectContaining({ name: 'ErrorResponse', isErrorResponse: true, status: 404, error: 'services/chatkit/not_found/user_not_found' }),
    );
    expect(chat.deletedBob).toEqual(expect.objectContaining({ status: 404, error: 'services/chatkit/not_found/user_not_found' }));
    expect(chat.wrongKey).toEqual(expect.objectContaining({ isErrorResponse: true, status: 401 }));
    expect(chat.hostWithPort).toEqual(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/give the port as port/) }));
  });

  it('publishes, batches in order, paginates newest first with cursors, lists and deletes feeds', () => {
    const { feeds } = result;
    expect(feeds.published.item_ids).toHaveLength(1);
    expect(feeds.batch.item_ids).toHaveLength(3);
    const ids = [...feeds.published.item_ids, ...feeds.batch.item_ids];
    expect(feeds.firstPage.items.map((i: any) => i.data.headline)).toEqual(['four', 'three']);
    expect(feeds.firstPage.items.map((i: any) => i.id)).toEqual([ids[3], ids[2]]);
    expect(feeds.firstPage.remaining).toBe(2);
    expect(feeds.secondPage.items.map((i: any) => i.data.headline)).toEqual(['two', 'one']);
    expect(feeds.secondPage.next_cursor).toBeNull();
    expect(feeds.defaultPage.items).toHaveLength(4);
    expect(feeds.listed).toEqual([{ id: 'private-news', item_count: 1 }]);
    expect(feeds.afterDelete.items).toEqual([]);
    expect(feeds.badFeedId).toEqual(expect.objectContaining({ isErrorResponse: true }));
    expect(feeds.badFeedId.status).toBeGreaterThanOrEqual(400);
    expect(feeds.badFeedId.status).toBeLessThan(500);
  });

  it('authorizeFeed issues a read token for that private feed only, and refuses what it should', () => {
    const { feeds } = result;
    expect(feeds.asked).toEqual([['READ', 'private-news']]);
    expect(feeds.granted).toEqual({ token_type: 'bearer', expires_in: 86400, hasRefresh: true });
    expect(feeds.readWithGrant.status).toBe(200);
    expect(feeds.readWithGrant.body.items.map((i: any) => i.data)).toEqual([{ secret: true }]);
    expect(feeds.readOtherFeedWithGrant).toBe(403);
    expect(feeds.readWithoutToken).toBe(401);
    expect(feeds.publishWithReadGrant).toBe(403);
    expect(feeds.refreshedReads).toBe(200);
    expect(feeds.denied).toEqual(expect.objectContaining({ name: 'ClientError', message: 'Forbidden' }));
    expect(feeds.unsupportedGrant.name).toBe('UnsupportedGrantTypeError');
    expect(feeds.badRefresh.name).toBe('InvalidGrantTypeError');
    expect(feeds.writeAction.name).toBe('ClientError');
    expect(feeds.badPath.name).toBe('ClientError');
  });

  it('loads nothing of the server (no Nest, Fastify, SQLite or database drivers) into the app', () => {
    expect(result.rootExports).toEqual(['ChatServer', 'ClientError', 'ErrorResponse', 'Feeds', 'InvalidGrantTypeError', 'UnsupportedGrantTypeError']);
    const serverPackages = ['better-sqlite3', '@nestjs/core', '@nestjs/common', 'fastify', 'mongodb', '@eventstore/db-client', 'pino', 'ws'];
    expect(result.loadedPackages.filter((name: string) => serverPackages.includes(name))).toEqual([]);
    expect(result.loadedPackages).toContain('jsonwebtoken');
  });

  it('type-checks a TypeScript consumer against the packed typings (node16 exports and classic node resolution)', async () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      [
        "import { ChatServer, AuthenticationResponse, ErrorResponse } from 'parley/chat-server';",
        "import { Feeds, FeedPage, FeedsToken } from 'parley/feeds';",
        "const chat = new ChatServer({ instanceLocator: 'v1:local:i', key: 'k:s', host: 'localhost', port: 8443, tls: true });",
        "const auth: AuthenticationResponse = chat.authenticate({ userId: 'alice' });",
        'if (auth.status === 200) { const token: string = auth.body.access_token; void token; }',
        "const feeds = new Feeds({ instanceLocator: 'v1:local:i', key: 'k:s' });",
        "const page: Promise<FeedPage<{ n: number }>> = feeds.paginate<{ n: number }>('f', { limit: 2 });",
        "const token: Promise<FeedsToken> = feeds.authorizeFeed({ path: 'feeds/f/items', action: 'READ', grant_type: 'client_credentials' }, () => true);",
        "chat.getUser({ id: 'a' }).catch((e: unknown) => e instanceof ErrorResponse && e.error_description);",
        "import type { RetryOptions, WriteOptions } from 'parley';",
        "const retry: RetryOptions = { retries: 2, timeoutMs: 5_000, onRetry: ({ attempt, delayMs, error }) => void [attempt + delayMs, error] };",
        "const patient = new ChatServer({ instanceLocator: 'v1:local:i', key: 'k:s', retry });",
        "const once: WriteOptions = { idempotencyKey: 'job-7' };",
        "const sent: Promise<{ message_id: number }> = patient.sendSimpleMessage({ roomId: 'r', userId: 'a', text: 'hi', ...once });",
        "void feeds.publish('f', { n: 1 }, once); void feeds.publishBatch('f', [1], once); void feeds.delete('f', once); void sent;",
        '// @ts-expect-error',
        "void feeds.publish('f', 1, { idempotencyKey: 7 });",
        '// The typings are real, not `any`: a missing key is an error.',
        '// @ts-expect-error',
        "new Feeds({ instanceLocator: 'v1:local:i' });",
        'void page; void token;',
        '',
      ].join('\n'),
    );
    const compilerOptions = { noEmit: true, strict: true, types: [], lib: ['es2022'], target: 'es2022' };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
    const tsc = (module: string, resolution: string) =>
      run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.', '--module', module, '--moduleResolution', resolution], { cwd: project });
    await expect(tsc('node16', 'node16')).resolves.toBeDefined();
    await expect(tsc('commonjs', 'node10')).resolves.toBeDefined();
  }, 120_000);
});
