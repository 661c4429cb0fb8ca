#!/usr/bin/env node
/**
 * An end-to-end smoke test of a running deployment, with Node's built-ins only (the CI's compose
 * job runs it against `docker compose up`; it runs as well against `npm start`):
 *
 *   create a user and a room (a su token signed with the instance key), subscribe to the room,
 *   send a message and see it arrive, restart the projector (a command given), send again and see
 *   that one arrive on the same subscription, and read both back.
 *
 *   INSTANCE_LOCATOR=v1:local:my-app INSTANCE_KEY=my-key:my-secret \
 *     node deploy/smoke.mjs [--url https://localhost:8443] [--restart 'docker compose restart projector']
 *
 * PARLEY_URL and SMOKE_RESTART may stand for the options. Node trusts a self-signed certificate
 * through NODE_EXTRA_CA_CERTS (e.g. deploy/certs/fullchain.pem). Each step waits for what it
 * needs, up to SMOKE_TIMEOUT_MS (default 120 s) in all. Exits 0 when every step passed, 1 with
 * the step that failed otherwise.
 */
import { execSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
  options: { url: { type: 'string' }, restart: { type: 'string' } },
});
const baseUrl = (options.url ?? process.env.PARLEY_URL ?? 'https://localhost:8443').replace(/\/$/, '');
const restart = options.restart ?? process.env.SMOKE_RESTART ?? '';
const deadline = Date.now() + Number(process.env.SMOKE_TIMEOUT_MS ?? 120_000);

const fail = (message) => {
  console.error(`smoke FAILED: ${message}`);
  process.exit(1);
};
const step = (message) => console.log(`smoke: ${message}`);
const left = () => Math.max(0, deadline - Date.now());
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const locator = /^v1:[^:]+:([A-Za-z0-9-]+)$/.exec(process.env.INSTANCE_LOCATOR ?? '');
const key = /^([^:]+):(.+)$/.exec(process.env.INSTANCE_KEY ?? '');
if (!locator || !key) fail('INSTANCE_LOCATOR (v1:<cluster>:<instance>) and INSTANCE_KEY (<key_id>:<secret>) must be set, as for the server');
const [, instanceId] = locator;
const [, keyId, secret] = key;

/** A Chatkit token for this instance, HS256 with the instance key. */
function token(claims) {
  const encode = (part) => Buffer.from(JSON.stringify(part)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ instance: instanceId, iss: `api_keys/${keyId}`, iat: now, exp: now + 600, ...claims })}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

const chat = (path) => `${baseUrl}/services/chatkit/v6/${instanceId}${path}`;

async function call(method, path, body, claims) {
  const response = await fetch(chat(path), {
    method,
    headers: { authorization: `Bearer ${token(claims)}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(Math.max(1, left())),
  }).catch((error) => fail(`${method} ${path} got no answer: ${error?.cause?.code ?? error?.message ?? error}`));
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, body: json };
}

/** Polls GET /health until it answers 200. */
async function healthy(what) {
  let last = 'no answer';
  while (left() > 0) {
    try {
      const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(5_000) });
      if (response.status === 200) return step(`${what}: /health answers 200`);
      last = `${response.status} ${(await response.text()).slice(0, 300)}`;
    } catch (error) {
      last = String(error?.cause?.code ?? error?.message ?? error);
    }
    await sleep(1_000);
  }
  fail(`${what}: /health never answered 200 (last: ${last})`);
}

/** SUBSCRIBE to a path: its event frames `[1, id, headers, body]` as they arrive. */
async function subscribe(path, claims) {
  const controller = new AbortController();
  const response = await fetch(chat(path), { method: 'SUBSCRIBE', headers: { authorization: `Bearer ${token(claims)}` }, signal: controller.signal });
  if (response.status !== 200) fail(`SUBSCRIBE ${path} answered ${response.status} ${(await response.text()).slice(0, 300)}`);
  const events = [];
  let ended = null;
  (async () => {
    const decoder = new TextDecoder();
    let text = '';
    for await (const bytes of response.body) {
      text += decoder.decode(bytes, { stream: true });
      let newline;
      while ((newline = text.indexOf('\n')) >= 0) {
        const line = text.slice(0, newline).trim();
        text = text.slice(newline + 1);
        if (!line) continue;
        const frame = JSON.parse(line);
        if (frame[0] === 1) events.push(frame[3]);
        if (frame[0] === 255) ended = `the stream ended: ${JSON.stringify(frame)}`;
      }
    }
    ended ??= 'the stream ended';
  })().catch((error) => {
    if (!controller.signal.aborted) ended = `the stream failed: ${error?.message ?? error}`;
  });
  return {
    async arrives(messageId, what) {
      while (left() > 0) {
        if (events.some((e) => e.event_name === 'new_message' && e.data?.id === messageId)) return step(`${what} arrived on the subscription`);
        if (ended) fail(`${what} never arrived: ${ended}`);
        await sleep(100);
      }
      fail(`${what} (message ${messageId}) did not arrive on the subscription in time`);
    },
    close: () => controller.abort(),
  };
}

/** Sends a text message and answers its id; anything but 201 fails the smoke (a send is never resent). */
async function send(roomId, user, content) {
  const sent = await call('POST', `/rooms/${encodeURIComponent(roomId)}/messages`, { parts: [{ type: 'text/plain', content }] }, { sub: user });
  if (sent.status === 201) return sent.body.message_id;
  fail(`sending "${content}" answered ${sent.status} ${JSON.stringify(sent.body)}`);
}

await healthy('before');
// The API creates INSTANCE_LOCATOR's instance and key at start; the projector folds them soon after.
for (;;) {
  const answer = await call('GET', '/users?limit=1', undefined, { su: true });
  if (answer.status === 200) break;
  if (left() < 1_000) fail(`the instance ${instanceId} never answered: GET /users ${answer.status} ${JSON.stringify(answer.body)}`);
  await sleep(500);
}
step(`instance ${instanceId} answers`);
const user = `smoke-${randomUUID().slice(0, 8)}`;
const created = await call('POST', '/users', { id: user, name: 'Smoke test' }, { su: true });
if (created.status !== 201) fail(`creating user ${user} answered ${created.status} ${JSON.stringify(created.body)}`);
step(`created user ${user}`);
const room = await call('POST', '/rooms', { name: user }, { sub: user });
if (room.status !== 201) fail(`creating a room answered ${room.status} ${JSON.stringify(room.body)}`);
const roomId = room.body.id;
step(`created room ${roomId}`);

const subscription = await subscribe(`/rooms/${encodeURIComponent(roomId)}?message_limit=10`, { sub: user });
const first = await send(roomId, user, 'before the restart');
step(`sent message ${first}`);
await subscription.arrives(first, 'the first message');

if (restart) {
  step(`restarting the projector: ${restart}`);
  try {
    execSync(restart, { stdio: 'inherit', timeout: left() });
  } catch (error) {
    fail(`the restart command failed: ${error?.message ?? error}`);
  }
  await healthy('after the restart');
} else {
  step('no restart command given (--restart): the projector is not restarted');
}

const second = await send(roomId, user, 'after the restart');
step(`sent message ${second}`);
await subscription.arrives(second, 'the second message');
subscription.close();

const read = await call('GET', `/rooms/${encodeURIComponent(roomId)}/messages?limit=10`, undefined, { sub: user });
const ids = Array.isArray(read.body) ? read.body.map((m) => m.id) : [];
if (read.status !== 200 || !ids.includes(first) || !ids.includes(second)) {
  fail(`reading the room back answered ${read.status} with messages ${JSON.stringify(ids)}, not ${first} and ${second}`);
}
step(`read both messages back (${ids.join(', ')})`);
console.log('smoke passed');
process.exit(0);
