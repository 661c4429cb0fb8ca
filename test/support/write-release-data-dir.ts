import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, chatPath, cursorsPath, Read, releaseEnv, send } from './release-data-dir';
import { startProcess } from './server-process';

/**
 * Writes test/fixtures/release-data-dir/: a data directory written by the release checked out
 * here, through its API as the SDKs do (users, public and private rooms with members and custom
 * data, v6 and v2 messages, an edit and a deletion, read cursors), and `answers.json`: what it
 * answered to every read of that data. Run it on a release's checkout, once built:
 *   npm run build && node dist/test/support/write-release-data-dir.js
 * and commit the directory; the next releases must read it all back the same
 * (test/e2e/release-data-dir.spec.ts).
 */
const FIXTURE = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'release-data-dir');

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-release-'));
  // Run from dist/test/support/, where startProcess resolves entries from dist/.
  const server = await startProcess('src/main.js', releaseEnv(dataDir));
  const port = server.port;
  const ok = async (method: string, path: string, options: { body?: unknown; sub?: string } = {}) => {
    const answer = await send(port, method, path, options);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const reads: Read[] = [];
  try {
    for (const [id, name] of [
      ['alice', 'Alice'],
      ['bob', 'Bob'],
      ['carol', 'Carol'],
    ]) {
      await ok('POST', chatPath('/users'), { body: { id, name, avatar_url: `https://example.com/${id}.png`, custom_data: { team: id === 'carol' ? 'ops' : 'dev' } } });
    }
    await ok('PUT', chatPath('/users/carol'), { body: { name: 'Carol C.' } });
    await ok('POST', chatPath('/rooms'), { sub: 'alice', body: { id: 'general', name: 'General', user_ids: ['bob', 'carol'], custom_data: { topic: 'all' } } });
    await ok('POST', chatPath('/rooms'), { sub: 'alice', body: { id: 'secret', name: 'Secret', private: true, user_ids: ['bob'] } });
    const sent: number[] = [];
    for (const [sub, text] of [
      ['alice', 'hello all'],
      ['bob', 'hi alice'],
      ['carol', 'morning'],
      ['alice', 'to be edited'],
      ['bob', 'to be deleted'],
    ]) {
      const { message_id } = await ok('POST', chatPath('/rooms/general/messages'), { sub, body: { parts: [{ type: 'text/plain', content: text }] } });
      sent.push(message_id);
    }
    const { message_id: v2 } = await ok('POST', chatPath('/rooms/secret/messages', 'v2'), { sub: 'bob', body: { text: 'a v2 message in private' } });
    await ok('PUT', chatPath(`/rooms/general/messages/${sent[3]}`, 'v2'), { sub: 'alice', body: { text: 'edited' } });
    await ok('DELETE', chatPath(`/rooms/general/messages/${sent[4]}`));
    await ok('PUT', cursorsPath('/cursors/0/rooms/general/users/bob'), { sub: 'bob', body: { position: sent[2] } });
    await ok('PUT', cursorsPath('/cursors/0/rooms/secret/users/alice'), { sub: 'alice', body: { position: v2 } });

    reads.push(
      { path: chatPath('/users') },
      ...['alice', 'bob', 'carol'].map((id) => ({ path: chatPath(`/users/${id}`) })),
      { path: chatPath('/rooms') },
      { path: chatPath('/rooms/general') },
      { path: chatPath('/rooms/secret') },
      ...['alice', 'bob', 'carol'].map((id) => ({ path: chatPath(`/users/${id}/rooms`), sub: id })),
      { path: chatPath('/users/carol/rooms?joinable=true'), sub: 'carol' },
      { path: chatPath('/rooms/general/messages?limit=100'), sub: 'bob' },
      { path: chatPath('/rooms/general/messages?limit=100', 'v2'), sub: 'bob' },
      { path: chatPath('/rooms/secret/messages?limit=100'), sub: 'alice' },
      { path: chatPath('/rooms/secret/messages?limit=100', 'v2'), sub: 'alice' },
      { path: chatPath('/rooms/secret/messages?limit=100'), sub: 'carol' },
      { path: cursorsPath('/cursors/0/rooms/general/users/bob'), sub: 'bob' },
      { path: cursorsPath('/cursors/0/rooms/secret/users/alice'), sub: 'alice' },
      { path: cursorsPath('/cursors/0/rooms/general') },
      { path: cursorsPath('/cursors/0/users/alice'), sub: 'alice' },
    );
    const answered = await answers(port, reads);
    await server.stop();
    rmSync(FIXTURE, { recursive: true, force: true });
    mkdirSync(FIXTURE, { recursive: true });
    for (const name of readdirSync(dataDir)) {
      if (name.endsWith('.lock') || name === 'lock') continue;
      cpSync(join(dataDir, name), join(FIXTURE, name), { recursive: true });
    }
    writeFileSync(join(FIXTURE, 'answers.json'), `${JSON.stringify(answered, null, 2)}\n`);
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: join(FIXTURE, '..'), encoding: 'utf8' }).trim();
    writeFileSync(join(FIXTURE, 'written-by.txt'), `Written by Parley ${commit} (test/support/write-release-data-dir.ts).\n`);
    console.log(`wrote ${FIXTURE}: ${readdirSync(FIXTURE).join(', ')}`);
  } finally {
    if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
    await server.stop().catch(() => undefined);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
