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
            parts: [{ type: 'text/plain', content: `message ${n + 1} of the long room` }],
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
