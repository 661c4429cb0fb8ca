/**
 * The benchmark's baseline: plain Fastify 5 (no Nest) over one better-sqlite3 file opened
 * with the same durability as Parley's event log (journal_mode=WAL, synchronous=FULL), so
 * every acknowledged write costs one commit and one fsync.
 *
 *   POST /users      {id, name}  -> one INSERT, 201 JSON
 *   GET  /users/:id              -> one SELECT by primary key, 200 JSON (404 when absent)
 *   GET  /health                 -> 200 once listening
 *
 * Started by run.ts as a child process: env PORT, HOST (default 127.0.0.1), DATA_DIR.
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { join } from 'node:path';

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

  const app = Fastify({ logger: false, forceCloseConnections: true });

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
