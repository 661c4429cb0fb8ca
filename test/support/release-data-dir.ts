import jwt from 'jsonwebtoken';
import { answerOf } from './json-call';

/**
 * A data directory written by a release of Parley, and what that release answered when asked
 * for everything in it: test/fixtures/release-data-dir/ (written by
 * write-release-data-dir.ts), read back by the next releases in test/e2e/release-data-dir.spec.ts.
 */
export const RELEASE_INSTANCE = 'release';
const SECRET = 'release-fixture-secret';

/** The environment the release ran with: the new code runs with the same. */
export const releaseEnv = (dataDir: string, extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  INSTANCE_LOCATOR: `v1:local:${RELEASE_INSTANCE}`,
  INSTANCE_KEY: `k:${SECRET}`,
  ...extra,
});

const tokenFor = (sub: string | undefined) =>
  jwt.sign({ instance: RELEASE_INSTANCE, iss: 'api_keys/k', ...(sub ? { sub } : { su: true }) }, SECRET, { algorithm: 'HS256', expiresIn: 600 });

/** One request as a user (`sub`) or the instance's superuser (no `sub`). */
export interface Read {
  readonly path: string;
  readonly sub?: string;
}

/** What a release answered a read. */
export interface Answered extends Read {
  readonly status: number;
  readonly body: unknown;
}

export const chatPath = (path: string, version: 'v2' | 'v6' = 'v6') => `/services/chatkit/${version}/${RELEASE_INSTANCE}${path}`;
export const cursorsPath = (path: string) => `/services/chatkit_cursors/v2/${RELEASE_INSTANCE}${path}`;

export async function send(port: number, method: string, path: string, { body, sub }: { body?: unknown; sub?: string } = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokenFor(sub)}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return answerOf(response);
}

/** Asks a server every read, in order. */
export async function answers(port: number, reads: readonly Read[]): Promise<Answered[]> {
  const out: Answered[] = [];
  for (const read of reads) {
    const { status, body } = await send(port, 'GET', read.path, { sub: read.sub });
    out.push({ ...read, status, body });
  }
  return out;
}
