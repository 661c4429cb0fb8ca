/**
 * The benchmark's baseline: plain Fastify 5 (no Nest) over one better-sqlite3 file opened
 * with the same durability as Parley's event log (journal_mode=WAL, synchronous=FULL), so
 * every acknowledged write costs one commit and one fsync.
 *
 *   POST /users      {id, name}  -> one INSERT, 201 JSON
 *   GET  /users/:id              -> one SELECT by primary key, 200 JSON (404 when absent)
 *   POST /rooms/:roomId/messages {parts: [{content}]} -> one INSERT, committed with the other sends of
 *        the same turn of the event loop (one transaction, one fsync), 201 {message_id}. With an
 *        `Idempotency-Key` header: the key looked up first (a known key answers its stored answer),
 *        and its record written in the same transaction as the message.
 *   PUT  /webhooks   {urls, secret} -> every message committed from now on is POSTed to each URL
 *        (baseline-webhooks.ts, on a thread of its own); `{urls: []}` switches them off.
 *   GET  /health                 -> 200 once listening
 *
 * Started by run.ts as a child process: env PORT, HOST (default 127.0.0.1), DATA_DIR.
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) throw new Error('DATA_DIR is required');
  const port = Number(process.env.PORT ?? 0);
  const host = process.env.HOST || '127.0.0.1';

  const db = new Database(join(dataDir, 'baseline.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS users (
      id         TEXT PRIMARY KEY,
      name       TEXT NOT NULL,
      created_at TEXT NOT NULL
    )
  `);
  const insert = db.prepare('INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)');
  const select = db.prepare<[string], { id: string; name: string; created_at: string }>(
    'SELECT id, name, created_at FROM users WHERE id = ?',
  );

  db.exec(`
    CREATE TABLE IF NOT EXISTS messages (
      id         INTEGER PRIMARY KEY,
      room_id    TEXT NOT NULL,
      text       TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key        TEXT PRIMARY KEY,
      status     INTEGER NOT NULL,
      body       TEXT NOT NULL,
      created_at TEXT NOT NULL
    )
  `);
  const insertMessage = db.prepare('INSERT INTO messages (room_id, text, created_at) VALUES (?, ?, ?)');
  const selectKey = db.prepare<[string], { status: number; body: string }>('SELECT status, body FROM idempotency_keys WHERE key = ?');
  const insertKey = db.prepare('INSERT INTO idempotency_keys (key, status, body, created_at) VALUES (?, ?, ?, ?)');
  // Sends are committed in groups, as Parley's log commits them: every send that arrived in one
  // turn of the event loop goes into one transaction (one fsync), and each is answered after it.
  // That keeps the send floor bound by CPU, as Parley's sends are, not by one fsync per request.
  interface Pending {
    readonly roomId: string;
    readonly text: string;
    readonly key: string | undefined;
    readonly done: (answer: { status: number; body: string; replayed: boolean; committed?: { id: number; createdAt: string } }) => void;
  }
  let pending: Pending[] = [];
  const commitGroup = db.transaction((group: Pending[], createdAt: string) =>
    group.map((p) => {
      // A key sent twice in one group: the second answers the first's record.
      const stored = p.key === undefined ? undefined : selectKey.get(p.key);
      if (stored) return { status: stored.status, body: stored.body, replayed: true };
      const id = Number(insertMessage.run(p.roomId, p.text, createdAt).lastInsertRowid);
      const body = JSON.stringify({ message_id: id });
      if (p.key !== undefined) insertKey.run(p.key, 201, body, createdAt);
      return { status: 201, body, replayed: false, committed: { id, createdAt } };
    }),
  );
  const flush = (): void => {
    const group = pending;
    pending = [];
    const answers = commitGroup(group, new Date().toISOString());
    group.forEach((p, i) => p.done(answers[i]));
  };
  const send = (roomId: string, text: string, key: string | undefined) =>
    new Promise<Parameters<Pending['done']>[0]>((done) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ roomId, text, key, done });
    });
  const webhooks = new Worker(join(__dirname, 'baseline-webhooks.js'));
  let webhooksOn = false;

  const app = Fastify({ logger: false, forceCloseConnections: true });

  app.post<{ Params: { roomId: string } }>('/rooms/:roomId/messages', async (request, reply) => {
    const body = request.body as { parts?: { content?: unknown }[] } | undefined;
    const text = body?.parts?.[0]?.content;
    if (typeof text !== 'string') return reply.code(400).send({ error: 'invalid_body' });
    const key = request.headers['idempotency-key'];
    if (typeof key === 'string') {
      const stored = selectKey.get(key);
      if (stored) return reply.code(stored.status).header('idempotent-replayed', 'true').type('application/json').send(stored.body);
    }
    const answer = await send(request.params.roomId, text, typeof key === 'string' ? key : undefined);
    if (answer.committed && webhooksOn) webhooks.postMessage({ committed: { ...answer.committed, roomId: request.params.roomId, text } });
    if (answer.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(answer.status).type('application/json').send(answer.body);
  });

  app.put('/webhooks', async (request, reply) => {
    const body = request.body as { urls?: string[]; secret?: string } | undefined;
    const urls = Array.isArray(body?.urls) ? body.urls : [];
    webhooks.postMessage({ targets: urls, secret: body?.secret ?? '' });
    webhooksOn = urls.length > 0;
    return reply.code(204).send();
  });

  app.get('/health', async () => ({ status: 'ok' }));

  app.post('/users', async (request, reply) => {
    const body = request.body as { id?: unknown; name?: unknown } | undefined;
    if (!body || typeof body.id !== 'string' || body.id === '' || typeof body.name !== 'string') {
      return reply.code(400).send({ error: 'invalid_body' });
    }
    const createdAt = new Date().toISOString();
    try {
      insert.run(body.id, body.name, createdAt);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        return reply.code(409).send({ error: 'user_already_exists' });
      }
      throw error;
    }
    return reply.code(201).send({ id: body.id, name: body.name, created_at: createdAt, updated_at: createdAt });
  });

  app.get<{ Params: { id: string } }>('/users/:id', async (request, reply) => {
    const row = select.get(request.params.id);
    if (!row) return reply.code(404).send({ error: 'user_not_found' });
    return { id: row.id, name: row.name, created_at: row.created_at, updated_at: row.created_at };
  });

  await app.listen({ port, host });

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    app.close().then(
      () => {
        void webhooks.terminate();
        db.close();
        process.exit(0);
      },
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error) => {
  console.error(`baseline server could not start: ${error instanceof Error ? error.stack : String(error)}`);
  process.exit(1);
});
