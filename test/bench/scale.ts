/**
 * The `scale` scenario's set-up and measurements: a data directory holding a room of a
 * million messages and an instance of a million users, written through the event store port
 * (as the log would hold them after years of use, without sending them over HTTP), and
 * sequential sends timed one by one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { EventToAppend } from '../../src/shared/ports/event-store.port';
import { messageIdsStream, messagesStream } from '../../src/modules/messages/domain/message.decider';
import { roomStream } from '../../src/modules/rooms/domain/room.decider';
import { userStream } from '../../src/modules/users/domain/user.decider';

export interface ScaleShape {
  readonly instanceId: string;
  readonly roomId: string;
  /** A room with the same members and no history, to tell a cold process from a long room. */
  readonly emptyRoomId: string;
  readonly users: number;
  readonly messages: number;
  /** Members of the room who send; the first `senders` of the users. */
  readonly senders: number;
}

export const senderId = (n: number) => `sender-${n}`;
const userId = (n: number, senders: number) => (n < senders ? senderId(n) : `user-${n}`);

/** Appends in flight at once: the store commits each tick's appends as one transaction. */
const IN_FLIGHT = 10_000;
const MESSAGE_BATCH = 10_000;

/** Writes the users, the two rooms with the senders as members, the long room's timeline and the id reservation that covers it. */
export async function fillScale(dataDir: string, shape: ScaleShape, progress: (line: string) => void): Promise<{ events: number; ms: number }> {
  const started = performance.now();
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'), { synchronous: 'NORMAL' });
  const at = new Date(Date.UTC(2020, 0, 1)).toISOString();
  const metadata = { instance_id: shape.instanceId, actor: { key_id: 'bench-fill' }, occurred_at: at };
  let events = 0;
  try {
    for (let from = 0; from < shape.users; from += IN_FLIGHT) {
      const appends: Promise<unknown>[] = [];
      for (let n = from; n < Math.min(shape.users, from + IN_FLIGHT); n++) {
        const id = userId(n, shape.senders);
        const created: EventToAppend = { type: 'UserCreated', data: { id, name: `User ${n}`, created_at: at }, metadata };
        appends.push(store.append(userStream(shape.instanceId, id), [created], 'no_stream'));
      }
      await Promise.all(appends);
      events += appends.length;
      if (from % 200_000 === 0) progress(`  fill     users: ${from.toLocaleString('en-US')} of ${shape.users.toLocaleString('en-US')}`);
    }
    const members = Array.from({ length: shape.senders }, (_, n) => ({ user_id: senderId(n), user_created_at: at }));
    for (const roomId of [shape.roomId, shape.emptyRoomId]) {
      await store.append(
        roomStream(shape.instanceId, roomId),
        [
          { type: 'RoomCreated', data: { id: roomId, name: roomId, private: false, created_by_id: senderId(0), created_at: at }, metadata },
          { type: 'RoomMembersAdded', data: { members, added_at: at }, metadata },
        ],
        'no_stream',
      );
      events += 2;
    }
    let revision = -1;
    for (let from = 0; from < shape.messages; from += MESSAGE_BATCH) {
      const batch: EventToAppend[] = [];
      for (let n = from; n < Math.min(shape.messages, from + MESSAGE_BATCH); n++) {
        batch.push({
          type: 'MessageSent',
          data: {
            id: n + 1,
            user_id: senderId(n % shape.senders),
            parts: [{ type: 'text/plain', content: scaleMessageText(n) }],
            room_created_at: at,
            created_at: at,
          },
          metadata,
        });
      }
      revision = (await store.append(messagesStream(shape.instanceId, shape.roomId), batch, revision < 0 ? 'no_stream' : revision))
        .nextExpectedRevision;
      events += batch.length;
      if (from % 200_000 === 0) progress(`  fill     messages: ${from.toLocaleString('en-US')} of ${shape.messages.toLocaleString('en-US')}`);
    }
    // The ids the timeline used were reserved, as the server would have: new blocks lie above them.
    await store.append(
      messageIdsStream(shape.instanceId),
      [{ type: 'MessageIdsReserved', data: { first: 1, last: shape.messages }, metadata }],
      'no_stream',
    );
    events += 1;
  } finally {
    await store.close();
  }
  return { events, ms: performance.now() - started };
}

/**
 * The long room's words: a vocabulary of made-up words drawn about as often as words of a
 * language are (the k-th most common about 1/k as often: Zipf), six to eight a message, and a
 * CJK phrase in one message of ten, so searches meet words found in a third of the history and
 * words found a few times.
 */
const SYLLABLES = 'b c d f g h j k l m n p r s t v w y z'.split(' ').flatMap((c) => 'a e i o u'.split(' ').map((v) => c + v));
export const SCALE_VOCABULARY: readonly string[] = Array.from({ length: 20_000 }, (_, k) => {
  const parts = [SYLLABLES[k % 95], SYLLABLES[Math.floor(k / 95) % 95]];
  if (k >= 95 * 95 || k % 3 === 0) parts.push(SYLLABLES[(k * 7) % 95]);
  return `${parts.join('')}${k >= 95 * 95 ? 'x' : ''}`;
});
const CJK_PHRASES = ['東京タワー', '会議の資料', '서울에서 만나요', '京都の天気'];

/** A deterministic pseudo-random number in [0, 1) from two integers. */
const noise = (n: number, salt: number): number => {
  let x = (n * 0x9e3779b1 + salt * 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 2 ** 32;
};

/** The text of the long room's n-th message. */
export function scaleMessageText(n: number): string {
  const count = 6 + Math.floor(noise(n, 0) * 3);
  const words: string[] = [];
  for (let i = 1; i <= count; i++) {
    // Zipf over the vocabulary: rank = N^u - 1 has P(rank = k) about 1/(k+1).
    const rank = Math.floor(Math.pow(SCALE_VOCABULARY.length, noise(n, i))) - 1;
    words.push(SCALE_VOCABULARY[rank]);
  }
  if (n % 10 === 0) words.splice(2, 0, CJK_PHRASES[(n / 10) % CJK_PHRASES.length]);
  return words.join(' ');
}

/** What the bench searches the long room for: from the most common word down to one it never holds. */
export const SCALE_SEARCHES: readonly string[] = [
  SCALE_VOCABULARY[0],
  SCALE_VOCABULARY[3],
  SCALE_VOCABULARY[30],
  SCALE_VOCABULARY[300],
  SCALE_VOCABULARY[3_000],
  SCALE_VOCABULARY[15_000],
  `${SCALE_VOCABULARY[1]} ${SCALE_VOCABULARY[2]}`,
  `${SCALE_VOCABULARY[10]} ${SCALE_VOCABULARY[200]}`,
  '東京',
  '資料',
  '서울',
  'nowhereword',
];

export interface Latencies {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;

/** Times one request at a time; every answer must be 201. */
export async function sequentialSends(send: () => Promise<Response>, count: number): Promise<Latencies> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await timedSend(send));
  times.sort((a, b) => a - b);
  return { count, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times[times.length - 1] };
}

/** Times one search at a time, every query of SCALE_SEARCHES in turn; every answer must be 200. */
export async function sequentialSearches(search: (q: string) => Promise<Response>, count: number): Promise<Latencies & { results: number }> {
  const times: number[] = [];
  let results = 0;
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const response = await search(SCALE_SEARCHES[i % SCALE_SEARCHES.length]);
    const body = await response.text();
    times.push(performance.now() - start);
    if (response.status !== 200) throw new Error(`search answered ${response.status}: ${body.slice(0, 300)}`);
    results += (JSON.parse(body) as { results: unknown[] }).results.length;
  }
  times.sort((a, b) => a - b);
  return { count, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times[times.length - 1], results };
}

/** One send, timed from the request leaving to its answer; throws unless 201. */
export async function timedSend(send: () => Promise<Response>): Promise<number> {
  const start = performance.now();
  const response = await send();
  const body = await response.text();
  const ms = performance.now() - start;
  if (response.status !== 201) throw new Error(`send answered ${response.status}: ${body.slice(0, 300)}`);
  return ms;
}

/**
 * CPU seconds a process has used so far (user + system, from /proc): the fold's cost per
 * event on a shared machine, where wall-clock rates depend on what else runs. Linux only;
 * NaN elsewhere.
 */
export function cpuSeconds(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces, so split after its closing paren).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** USER_HZ: 100 on every Linux that Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;
