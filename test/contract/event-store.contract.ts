import { randomUUID } from 'node:crypto';
import { EventMetadata, LogPosition, RecordedEvent } from '../../src/shared/domain/event';
import {
  AppendResult,
  EventStore,
  EventToAppend,
  LogSubscription,
  WrongExpectedRevisionError,
} from '../../src/shared/ports/event-store.port';
import { eventually, sleep, within } from '../support/waiting';

/**
 * The behaviour every EventStore adapter must share. Each adapter binds it in a one-line spec
 * file. Every test uses its own stream names and event types (a random prefix), so the suite
 * also runs against a shared, non-empty server.
 */
export interface EventStoreContractOptions {
  /** The factory returns a store over an empty log, so whole-log assertions can be exact. */
  readonly emptyLogPerStore?: boolean;
  /** How long a test waits for a subscription before failing (default 15 s). */
  readonly waitMs?: number;
}

export function eventStoreContract(
  name: string,
  make: () => Promise<{ store: EventStore; cleanup(): Promise<void> }>,
  options: EventStoreContractOptions = {},
): void {
  const waitMs = options.waitMs ?? 15_000;

  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let cleanup: () => Promise<void>;
    let subscriptions: LogSubscription[];
    /** A fresh prefix per test: `ct<random>`; stream names are `<prefix><x>-<id>`. */
    let p: string;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
      subscriptions = [];
      p = `ct${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    });

    afterEach(async () => {
      await Promise.all(subscriptions.map((s) => s.close()));
      await cleanup();
    });

    const subscribe = (sub: LogSubscription): LogSubscription => {
      subscriptions.push(sub);
      return sub;
    };
    const n = (e: RecordedEvent): unknown => (e.data as { n?: unknown }).n;

    describe('append and expected revisions', () => {
      it('numbers a stream from revision 0 and returns the next expected revision', async () => {
        const s = `${p}-rev`;
        const first = await store.append(s, [ev('Happened', { n: 0 })], 'no_stream');
        expect(first.nextExpectedRevision).toBe(0);
        const next = await store.append(s, [ev('Happened', { n: 1 }), ev('Happened', { n: 2 }), ev('Happened', { n: 3 })], 0);
        expect(next.nextExpectedRevision).toBe(3);
        const events = await store.readStream(s);
        expect(events.map((e) => e.revision)).toEqual([0, 1, 2, 3]);
        expect(events.map(n)).toEqual([0, 1, 2, 3]);
        expect(events.every((e) => e.streamName === s && e.type === 'Happened')).toBe(true);
      });

      it("'no_stream' creates a stream and fails on an existing one with the actual revision", async () => {
        const s = `${p}-nostream`;
        await store.append(s, [ev('A'), ev('B')], 'no_stream');
        await expectWrongRevision(store.append(s, [ev('C')], 'no_stream'), s, 'no_stream', 1);
        expect(await store.readStream(s)).toHaveLength(2);
      });

      it("'stream_exists' fails on a missing stream (actual 'no_stream') and appends to an existing one", async () => {
        const s = `${p}-exists`;
        await expectWrongRevision(store.append(s, [ev('A')], 'stream_exists'), s, 'stream_exists', 'no_stream');
        expect(await store.readStream(s)).toEqual([]);
        await store.append(s, [ev('A')], 'any');
        const r = await store.append(s, [ev('B')], 'stream_exists');
        expect(r.nextExpectedRevision).toBe(1);
      });

      it("'any' appends whether or not the stream exists", async () => {
        const s = `${p}-any`;
        expect((await store.append(s, [ev('A')], 'any')).nextExpectedRevision).toBe(0);
        expect((await store.append(s, [ev('B'), ev('C')], 'any')).nextExpectedRevision).toBe(2);
      });

      it('a numeric revision appends only when it is the current revision', async () => {
        const s = `${p}-num`;
        await expectWrongRevision(store.append(s, [ev('A')], 0), s, 0, 'no_stream');
        await store.append(s, [ev('A'), ev('B'), ev('C')], 'no_stream'); // revisions 0..2
        await expectWrongRevision(store.append(s, [ev('X')], 1), s, 1, 2);
        await expectWrongRevision(store.append(s, [ev('X')], 3), s, 3, 2);
        await expectWrongRevision(store.append(s, [ev('X')], 0), s, 0, 2);
        const ok = await store.append(s, [ev('D')], 2);
        expect(ok.nextExpectedRevision).toBe(3);
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
      });

      it('a failed append writes nothing and does not disturb other streams', async () => {
        const s = `${p}-fail`;
        const other = `${p}-other`;
        await store.append(s, [ev('A')], 'no_stream');
        const results = await Promise.allSettled([
          store.append(s, [ev('X'), ev('Y')], 5),
          store.append(other, [ev('O')], 'no_stream'),
        ]);
        expect(results[0].status).toBe('rejected');
        expect(results[1].status).toBe('fulfilled');
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A']);
        expect((await store.readStream(other)).map((e) => e.type)).toEqual(['O']);
      });

      it('rejects an append with no events', async () => {
        await expect(store.append(`${p}-empty`, [], 'any')).rejects.toThrow();
      });

      it('concurrent appends with the same expected revision: exactly one wins', async () => {
        const s = `${p}-race`;
        await store.append(s, [ev('Start')], 'no_stream');
        const results = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) => store.append(s, [ev('Racer', { n: i })], 0)),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(5);
        for (const r of lost) {
          expect(r.reason).toBeInstanceOf(WrongExpectedRevisionError);
          expect((r.reason as WrongExpectedRevisionError).actual).toBe(1);
        }
        const events = await store.readStream(s);
        expect(events.map((e) => e.type)).toEqual(['Start', 'Racer']);
      });

      it("concurrent creations with 'no_stream': exactly one wins", async () => {
        const s = `${p}-create`;
        const results = await Promise.allSettled(
          Array.from({ length: 4 }, (_, i) => store.append(s, [ev('Created', { n: i }), ev('Named', { n: i })], 'no_stream')),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results) {
          if (r.status === 'rejected') {
            expect(r.reason).toBeInstanceOf(WrongExpectedRevisionError);
            expect((r.reason as WrongExpectedRevisionError).actual).toBe(1);
          }
        }
        const events = await store.readStream(s);
        expect(events).toHaveLength(2);
        expect(n(events[0])).toBe(n(events[1])); // both from the winning append
      });

      it('round-trips data, metadata and a given event id', async () => {
        const s = `${p}-roundtrip`;
        const id = randomUUID();
        const data = {
          text: 'héllo wörld ✓ 🎉 "quoted" \\ back\nslash',
          int: 42,
          negative: -7,
          float: 3.25,
          big: 9007199254740991,
          yes: true,
          no: false,
          nothing: null,
          list: [1, 'two', { three: [3] }, []],
          nested: { deeper: { deepest: 'x' }, empty: {} },
        };
        const metadata: EventMetadata = {
          occurred_at: '2026-11-05T10:20:30.123Z',
          instance_id: 'acme',
          actor: { user_id: 'alice', key_id: 'key-1', su: false },
          correlation_id: 'c-1',
          extra: { list: [1, 2] },
        };
        const head = await store.headPosition();
        const before = Date.now();
        await store.append(s, [{ id, type: 'Rich', data, metadata }], 'no_stream');
        await store.append(s, [{ type: 'Plain', data: {}, metadata: meta() }], 0);
        const [rich, plain] = await store.readStream(s);
        expect(rich.id).toBe(id);
        expect(rich.type).toBe('Rich');
        expect(rich.data).toEqual(data);
        expect(rich.metadata).toEqual(metadata);
        expect(plain.data).toEqual({});
        expect(typeof plain.id).toBe('string');
        expect(plain.id).not.toBe('');
        expect(plain.id).not.toBe(id);
        const recorded = Date.parse(rich.recordedAt);
        expect(Number.isNaN(recorded)).toBe(false);
        // A server's clock may differ from ours a little.
        expect(Math.abs(recorded - before)).toBeLessThan(5 * 60_000);
        // The same event read from the whole log is identical.
        const fromAll = await store.readAll({ after: head, filter: { streamPrefixes: [p] }, maxCount: 10 });
        expect(fromAll.map(strip)).toEqual([rich, plain].map(strip));
      });

      it('keeps a given recorded time (an import), beside the event id, data and metadata', async () => {
        const s = `${p}-recorded`;
        const id = randomUUID();
        const recordedAt = '2021-03-04T05:06:07.089Z';
        const metadata = meta();
        const head = await store.headPosition();
        await store.append(s, [{ id, type: 'Imported', data: { n: 1 }, metadata, recordedAt }], 'no_stream');
        await store.append(s, [{ type: 'Fresh', data: {}, metadata: meta() }], 0);
        const [imported, fresh] = await store.readStream(s);
        expect(imported).toMatchObject({ id, recordedAt, metadata, data: { n: 1 } });
        expect(fresh.recordedAt).not.toBe(recordedAt);
        const [fromAll] = await store.readAll({ after: head, filter: { streamPrefixes: [p] }, maxCount: 1 });
        expect(fromAll).toMatchObject({ id, recordedAt, metadata });
      });
    });

    describe('readStream', () => {
      const fill = async (s: string, count: number) => {
        await store.append(s, Array.from({ length: count }, (_, i) => ev('Numbered', { n: i })), 'no_stream');
      };

      it('returns [] for a stream that does not exist', async () => {
        expect(await store.readStream(`${p}-missing`)).toEqual([]);
        expect(await store.readStream(`${p}-missing`, { direction: 'backwards' })).toEqual([]);
      });

      it('reads forwards from an inclusive revision, up to maxCount', async () => {
        const s = `${p}-fwd`;
        await fill(s, 6);
        expect((await store.readStream(s)).map(n)).toEqual([0, 1, 2, 3, 4, 5]);
        expect((await store.readStream(s, { fromRevision: 2 })).map(n)).toEqual([2, 3, 4, 5]);
        expect((await store.readStream(s, { fromRevision: 2, maxCount: 3 })).map(n)).toEqual([2, 3, 4]);
        expect((await store.readStream(s, { maxCount: 1 })).map(n)).toEqual([0]);
        expect(await store.readStream(s, { fromRevision: 6 })).toEqual([]);
      });

      it('reads backwards from the end or from an inclusive revision, up to maxCount', async () => {
        const s = `${p}-bwd`;
        await fill(s, 6);
        expect((await store.readStream(s, { direction: 'backwards' })).map(n)).toEqual([5, 4, 3, 2, 1, 0]);
        expect((await store.readStream(s, { direction: 'backwards', maxCount: 1 })).map((e) => e.revision)).toEqual([5]);
        expect((await store.readStream(s, { direction: 'backwards', fromRevision: 3 })).map(n)).toEqual([3, 2, 1, 0]);
        expect((await store.readStream(s, { direction: 'backwards', fromRevision: 3, maxCount: 2 })).map(n)).toEqual([3, 2]);
      });

      it('reads only the named stream, not one sharing its prefix', async () => {
        const s = `${p}-same`;
        await store.append(s, [ev('Mine')], 'no_stream');
        await store.append(`${s}x`, [ev('Theirs')], 'no_stream');
        await store.append(`${p}-sam`, [ev('Theirs')], 'no_stream');
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(['Mine']);
      });
    });

    describe('positions, readAll and headPosition', () => {
      it('gives strictly increasing, fixed-width positions across streams; an append returns its last position', async () => {
        const before = await store.headPosition();
        const streams = [`${p}a-1`, `${p}b-1`, `${p}c-1`];
        const results: AppendResult[] = [];
        const lastIndex: number[] = [];
        let written = 0;
        for (let i = 0; i < 9; i++) {
          const count = i % 3 === 1 ? 2 : 1;
          written += count;
          lastIndex.push(written - 1);
          const events = Array.from({ length: count }, (_, j) => ev('Numbered', { n: `${i}.${j}` }));
          results.push(await store.append(streams[i % 3], events, 'any'));
        }
        const all = await store.readAll({ after: before, filter: { streamPrefixes: [p] }, maxCount: 100 });
        expect(all).toHaveLength(12);
        expectIncreasing(all.map((e) => e.position));
        expect(new Set(all.map((e) => e.position.length)).size).toBe(1);
        // Log order is append order, whatever the stream.
        expect(all.map(n)).toEqual(['0.0', '1.0', '1.1', '2.0', '3.0', '4.0', '4.1', '5.0', '6.0', '7.0', '7.1', '8.0']);
        expectIncreasing(results.map((r) => r.position));
        // Each append's position is the position of the last event it wrote.
        expect(results.map((r) => r.position)).toEqual(lastIndex.map((i) => all[i].position));
        // A stream read reports the same positions as the whole log.
        const fromStream = await store.readStream(streams[1]);
        expect(fromStream.map((e) => e.position)).toEqual(all.filter((e) => e.streamName === streams[1]).map((e) => e.position));
      });

      it('reads after an exclusive position, in log order, up to maxCount', async () => {
        const before = await store.headPosition();
        await store.append(`${p}a-1`, [ev('Numbered', { n: 0 }), ev('Numbered', { n: 1 })], 'any');
        await store.append(`${p}b-1`, [ev('Numbered', { n: 2 })], 'any');
        await store.append(`${p}a-1`, [ev('Numbered', { n: 3 })], 'any');
        const filter = { streamPrefixes: [p] };
        const all = await store.readAll({ after: before, filter });
        expect(all.map(n)).toEqual([0, 1, 2, 3]);
        expect((await store.readAll({ after: all[0].position, filter })).map(n)).toEqual([1, 2, 3]);
        expect((await store.readAll({ after: all[1].position, filter, maxCount: 1 })).map(n)).toEqual([2]);
        expect((await store.readAll({ after: all[0].position, filter, maxCount: 2 })).map(n)).toEqual([1, 2]);
        expect(await store.readAll({ after: all[3].position, filter })).toEqual([]);
      });

      it('readAll without a filter honours after and maxCount', async () => {
        const before = await store.headPosition();
        await store.append(`${p}a-1`, [ev('Numbered', { n: 0 }), ev('Numbered', { n: 1 }), ev('Numbered', { n: 2 })], 'any');
        const two = await store.readAll({ after: before, maxCount: 2 });
        expect(two).toHaveLength(2);
        const many = await store.readAll({ after: before, maxCount: 50 });
        expect(two).toEqual(many.slice(0, 2));
        for (const e of many) expect(before === null || e.position > before).toBe(true);
        expectIncreasing(many.map((e) => e.position));
        // Ours are there, in order (a shared server may interleave other events).
        expect(many.filter((e) => e.streamName.startsWith(p)).map(n)).toEqual([0, 1, 2]);
        if (options.emptyLogPerStore) expect(many.map(n)).toEqual([0, 1, 2]);
      });

      it('filters by exact event types', async () => {
        const before = await store.headPosition();
        const [A, B, C] = [`${p}.A`, `${p}.B`, `${p}.C`];
        await store.append(`${p}x-1`, [ev(A, { n: 0 }), ev(B, { n: 1 })], 'any');
        await store.append(`${p}y-1`, [ev(C, { n: 2 }), ev(`${A}x`, { n: 3 }), ev(A, { n: 4 })], 'any');
        await store.append(`other${p}-1`, [ev(A, { n: 5 })], 'any');
        expect((await store.readAll({ after: before, filter: { eventTypes: [A, C] } })).map(n)).toEqual([0, 2, 4, 5]);
        expect((await store.readAll({ after: before, filter: { eventTypes: [A], streamPrefixes: [p] } })).map(n)).toEqual([0, 4]);
        expect((await store.readAll({ after: before, filter: { eventTypes: [A, C], streamPrefixes: [p] }, maxCount: 2 })).map(n)).toEqual([0, 2]);
        expect(await store.readAll({ after: before, filter: { eventTypes: [`${p}.none`] } })).toEqual([]);
      });

      it('filters by stream-name prefixes (any of them)', async () => {
        const before = await store.headPosition();
        await store.append(`${p}x-1`, [ev('Numbered', { n: 0 })], 'any');
        await store.append(`${p}y-1`, [ev('Numbered', { n: 1 })], 'any');
        await store.append(`${p}z-1`, [ev('Numbered', { n: 2 })], 'any');
        await store.append(`${p}x-2`, [ev('Numbered', { n: 3 })], 'any');
        await store.append(`${p}xx-1`, [ev('Numbered', { n: 4 })], 'any');
        expect((await store.readAll({ after: before, filter: { streamPrefixes: [`${p}x`, `${p}y`] } })).map(n)).toEqual([0, 1, 3, 4]);
        expect((await store.readAll({ after: before, filter: { streamPrefixes: [`${p}x-`] } })).map(n)).toEqual([0, 3]);
        expect((await store.readAll({ after: before, filter: { streamPrefixes: [`${p}x-`] }, maxCount: 1 })).map(n)).toEqual([0]);
        expect(await store.readAll({ after: before, filter: { streamPrefixes: [`${p}none`] } })).toEqual([]);
      });

      it('headPosition is the position of the newest event', async () => {
        if (options.emptyLogPerStore) {
          expect(await store.headPosition()).toBeNull();
          expect(await store.readAll()).toEqual([]);
        }
        const first = await store.append(`${p}a-1`, [ev('A')], 'any');
        const head1 = await store.headPosition();
        expect(head1).not.toBeNull();
        expect(head1! >= first.position).toBe(true);
        const second = await store.append(`${p}b-1`, [ev('B'), ev('C')], 'any');
        const head2 = await store.headPosition();
        expect(head2! >= second.position).toBe(true);
        expect(head2! > head1!).toBe(true);
        if (options.emptyLogPerStore) {
          expect(head1).toBe(first.position);
          expect(head2).toBe(second.position);
          expect(await store.readAll({ after: head2 })).toEqual([]);
        }
        // Nothing of ours lies after the head.
        expect(await store.readAll({ after: head2, filter: { streamPrefixes: [p] } })).toEqual([]);
      });
    });

    describe('subscriptions', () => {
      it('subscribeToAll catches up, then goes live, with no gap and no duplicate at the switch', async () => {
        const before = await store.headPosition();
        const streams = [`${p}a-1`, `${p}b-1`];
        let next = 0;
        const write = async (count: number) => {
          const events = Array.from({ length: count }, () => ev('Numbered', { n: next++ }));
          await store.append(streams[next % 2], events, 'any');
        };
        for (let i = 0; i < 6; i++) await write(1 + (i % 2)); // 9 stored events

        const sub = subscribe(store.subscribeToAll({ after: before, filter: { streamPrefixes: [p] } }));
        const received: RecordedEvent[] = [];
        const consumer = (async () => {
          for await (const e of sub) {
            received.push(e);
            if (e.type === 'End') return;
          }
        })();
        const writer = (async () => {
          // Appends that race the catch-up...
          for (let i = 0; i < 8; i++) await write(1 + (i % 3));
          // ...then, once the consumer has drained everything and waits, live ones.
          await eventually(() => received.length >= next, { timeoutMs: waitMs, everyMs: 5 });
          await sleep(30);
          for (let i = 0; i < 8; i++) {
            await write(1 + (i % 2));
            if (i % 3 === 0) await sleep(5);
          }
          await store.append(streams[0], [ev('End')], 'any');
        })();
        await within(Promise.all([writer, consumer]), waitMs, 'subscribeToAll did not deliver every event');

        expect(received.slice(0, -1).map(n)).toEqual(Array.from({ length: next }, (_, i) => i));
        expect(received[received.length - 1].type).toBe('End');
        expectIncreasing(received.map((e) => e.position));
        // Exactly what the log holds.
        const stored = await store.readAll({ after: before, filter: { streamPrefixes: [p] }, maxCount: 1000 });
        expect(received.map(strip)).toEqual(stored.map(strip));
      });

      it('subscribeToAll starts strictly after `after` and applies the filter', async () => {
        const [A, B] = [`${p}.A`, `${p}.B`];
        const before = await store.headPosition();
        await store.append(`${p}a-1`, [ev(A, { n: 0 }), ev(B, { n: 1 }), ev(A, { n: 2 })], 'any');
        await store.append(`${p}b-1`, [ev(A, { n: 3 })], 'any');
        const stored = await store.readAll({ after: before, filter: { streamPrefixes: [p] } });
        const sub = subscribe(store.subscribeToAll({ after: stored[0].position, filter: { eventTypes: [A] } }));
        const it = sub[Symbol.asyncIterator]();
        expect(n((await within(it.next(), waitMs)).value)).toBe(2);
        expect(n((await within(it.next(), waitMs)).value)).toBe(3);
        await store.append(`${p}c-1`, [ev(B, { n: 4 }), ev(A, { n: 5 })], 'any');
        expect(n((await within(it.next(), waitMs)).value)).toBe(5);
      });

      it('subscribeToAll from the start (after: null) delivers the first events of the log', async () => {
        await store.append(`${p}a-1`, [ev('Numbered', { n: 0 }), ev('Numbered', { n: 1 })], 'any');
        const sub = subscribe(store.subscribeToAll({ filter: { streamPrefixes: [p] } }));
        const it = sub[Symbol.asyncIterator]();
        expect(n((await within(it.next(), waitMs)).value)).toBe(0);
        expect(n((await within(it.next(), waitMs)).value)).toBe(1);
        if (options.emptyLogPerStore) {
          const all = subscribe(store.subscribeToAll());
          const first = await within(all[Symbol.asyncIterator]().next(), waitMs);
          expect(n(first.value)).toBe(0);
        }
      });

      it('subscribeToStream catches up, then goes live, only for that stream, without gap or duplicate', async () => {
        const s = `${p}-live`;
        const other = `${p}-live2`;
        let next = 0;
        const write = async (count: number) => {
          const events = Array.from({ length: count }, () => ev('Numbered', { n: next++ }));
          await store.append(s, events, 'any');
          await store.append(other, [ev('Noise')], 'any');
        };
        for (let i = 0; i < 5; i++) await write(1 + (i % 2));
        const sub = subscribe(store.subscribeToStream(s));
        const received: RecordedEvent[] = [];
        const consumer = (async () => {
          for await (const e of sub) {
            received.push(e);
            if (e.type === 'End') return;
          }
        })();
        const writer = (async () => {
          for (let i = 0; i < 6; i++) await write(1 + (i % 3));
          await eventually(() => received.length >= next, { timeoutMs: waitMs, everyMs: 5 });
          await sleep(30);
          for (let i = 0; i < 6; i++) await write(1 + (i % 2));
          await store.append(s, [ev('End')], 'any');
        })();
        await within(Promise.all([writer, consumer]), waitMs, 'subscribeToStream did not deliver every event');
        expect(received.slice(0, -1).map(n)).toEqual(Array.from({ length: next }, (_, i) => i));
        expect(received.map((e) => e.revision)).toEqual(Array.from({ length: next + 1 }, (_, i) => i));
        expect(received.every((e) => e.streamName === s)).toBe(true);
      });

      it('subscribeToStream starts strictly after afterRevision, and waits for a stream that does not exist yet', async () => {
        const s = `${p}-after`;
        await store.append(s, [ev('Numbered', { n: 0 }), ev('Numbered', { n: 1 }), ev('Numbered', { n: 2 })], 'no_stream');
        const sub = subscribe(store.subscribeToStream(s, { afterRevision: 1 }));
        const it = sub[Symbol.asyncIterator]();
        expect((await within(it.next(), waitMs)).value.revision).toBe(2);

        const later = `${p}-later`;
        const lateSub = subscribe(store.subscribeToStream(later, { afterRevision: null }));
        const lateIt = lateSub[Symbol.asyncIterator]();
        const pending = lateIt.next();
        await sleep(50);
        await store.append(later, [ev('Numbered', { n: 7 })], 'no_stream');
        const got = await within(pending, waitMs);
        expect(got.value.revision).toBe(0);
        expect(n(got.value)).toBe(7);
      });

      it('close() ends an iteration that is waiting for live events', async () => {
        await store.append(`${p}a-1`, [ev('Numbered', { n: 0 })], 'any');
        for (const sub of [
          subscribe(store.subscribeToAll({ filter: { streamPrefixes: [p] } })),
          subscribe(store.subscribeToStream(`${p}a-1`)),
        ]) {
          const received: RecordedEvent[] = [];
          const consumer = (async () => {
            for await (const e of sub) received.push(e);
          })();
          await eventually(() => received.length === 1, { timeoutMs: waitMs, everyMs: 5 });
          await sleep(30);
          await sub.close();
          await within(consumer, 5_000, 'close() did not end the iteration');
          expect(received.map(n)).toEqual([0]);
        }
      });

      it('close() before iterating yields nothing', async () => {
        await store.append(`${p}a-1`, [ev('Numbered', { n: 0 })], 'any');
        const sub = subscribe(store.subscribeToAll({ filter: { streamPrefixes: [p] } }));
        await sub.close();
        const result = await within(sub[Symbol.asyncIterator]().next(), 5_000, 'a closed subscription kept waiting');
        expect(result.done).toBe(true);
      });
    });
  });
}

const meta = (extra: Record<string, unknown> = {}): EventMetadata => ({ occurred_at: new Date().toISOString(), ...extra });

const ev = (type: string, data: Record<string, unknown> = {}): EventToAppend => ({ type, data, metadata: meta() });

/** recordedAt is the server's clock; compare everything else. */
const strip = (e: RecordedEvent) => ({ ...e, recordedAt: undefined });


function expectIncreasing(positions: readonly LogPosition[]): void {
  for (let i = 1; i < positions.length; i++) {
    if (!(positions[i] > positions[i - 1])) {
      throw new Error(`positions not strictly increasing at ${i}: ${positions[i - 1]} then ${positions[i]}`);
    }
  }
}

async function expectWrongRevision(
  append: Promise<unknown>,
  streamName: string,
  expected: WrongExpectedRevisionError['expected'],
  actual: WrongExpectedRevisionError['actual'],
): Promise<void> {
  const error = await append.then(
    () => {
      throw new Error(`append to ${streamName} with expected ${String(expected)} should have failed`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WrongExpectedRevisionError);
  const wrong = error as WrongExpectedRevisionError;
  expect({ streamName: wrong.streamName, expected: wrong.expected, actual: wrong.actual }).toEqual({
    streamName,
    expected,
    actual,
  });
}
