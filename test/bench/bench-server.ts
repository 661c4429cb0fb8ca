import jwt from 'jsonwebtoken';
import { spawn } from 'node:child_process';

/** The instance every bench's Parley server is started with (INSTANCE_LOCATOR, INSTANCE_KEY). */
export const INSTANCE_ID = 'bench';
export const KEY_ID = 'key';
export const KEY_SECRET = 'bench-key-secret-0123';

/** An access token of the bench instance, signed with its key. */
export const mintToken = (claims: { sub?: string; su?: boolean }) =>
  jwt.sign({ instance: INSTANCE_ID, iss: `api_keys/${KEY_ID}`, ...claims }, KEY_SECRET, { algorithm: 'HS256', expiresIn: '12h' });

/** The environment of a bench's Parley server on `dataDir`, beside the bench's own (PORT, HOST, …). */
export const parleyEnv = (dataDir: string): Record<string, string> => ({
  DATA_DIR: dataDir,
  INSTANCE_LOCATOR: `v1:bench:${INSTANCE_ID}`,
  INSTANCE_KEY: `${KEY_ID}:${KEY_SECRET}`,
  LOG_LEVEL: 'warn',
  // The bench measures capacity, which the caps on one caller would otherwise refuse beyond: one
  // sender's token, 10,000 idle subscriptions of few users, 1,000 feed subscribers and devices
  // registered from one address.
  RATE_LIMIT_PER_USER: '0',
  RATE_LIMIT_PER_INSTANCE: '0',
  // The send scenario's webhooks go to receivers on this host.
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  RATE_LIMIT_ANONYMOUS_PER_ADDRESS: '0',
  RATE_LIMIT_ANONYMOUS_PER_INSTANCE: '0',
  SUBSCRIPTIONS_PER_CONNECTION: '0',
  SUBSCRIPTIONS_PER_USER: '0',
  ANONYMOUS_SUBSCRIPTIONS_PER_CONNECTION: '0',
  ANONYMOUS_SUBSCRIPTIONS_PER_ADDRESS: '0',
});

/**
 * A webhook receiver in a process of its own (not competing with autocannon's loop) that answers
 * every POST 200 and counts them; resolves with its port and a way to read the count and stop it.
 */
export async function startWebhookReceiver(): Promise<{ port: number; received(): Promise<number>; stop(): void }> {
  const code = `let n = 0; const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => { n++; r.writeHead(200).end(); }); });
    s.listen(0, '127.0.0.1', () => console.log(s.address().port)); process.stdin.on('data', () => console.log(n));`;
  const proc = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  proc.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const nextLine = () => new Promise<string>((resolve) => (lines.length ? resolve(lines.shift()!) : waiters.push(resolve)));
  const port = Number(await nextLine());
  return {
    port,
    received: async () => {
      proc.stdin!.write('?\n');
      return Number(await nextLine());
    },
    stop: () => void proc.kill(),
  };
}
