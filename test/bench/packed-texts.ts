/**
 * What packing an event's texts costs (src/adapters/event-store/sqlite/packed-texts.ts): bytes,
 * and CPU per event to pack (an append, on the request thread) and to unpack (every read of the
 * log: a rebuild's, a projector's), on short messages' events shaped as the messages module
 * writes them (content sealed: random base64). In-process, rounds interleaved with a plain
 * JSON.parse pass as the reference. Times are CPU time (the machine is shared).
 *
 *   node dist/test/bench/packed-texts.js [events (20,000)] [rounds (5)]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { packEventTexts, unpackEventTexts } from '../../src/adapters/event-store/sqlite/packed-texts';

function shortMessage(n: number): { data: string; metadata: string } {
  const at = new Date(Date.UTC(2026, 10, 27) + n * 37).toISOString();
  const b64 = (bytes: number) => randomBytes(bytes).toString('base64');
  const user = `user-${n % 20}`;
  return {
    data: JSON.stringify({ id: n, user_id: user, user_created_at: at, room_created_at: at, created_at: at, sealed: { k: `acme/message/${n}/0`, iv: b64(12), tag: b64(16), ct: b64(53) } }),
    metadata: JSON.stringify({ instance_id: 'acme', actor: { key_id: 'key', user_id: user }, occurred_at: at, request_id: randomUUID() }),
  };
}

/** CPU microseconds of this process per event since `start` (CPU, not wall time: the machine is shared). */
const micros = (start: NodeJS.CpuUsage, count: number) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
};

function main(): void {
  const count = Number(process.argv[2] ?? 20_000);
  const rounds = Number(process.argv[3] ?? 5);
  const events = Array.from({ length: count }, (_, n) => shortMessage(n));
  const textBytes = events.reduce((sum, e) => sum + e.data.length + e.metadata.length, 0) / count;
  for (let round = 1; round <= rounds; round++) {
    let start = process.cpuUsage();
    const packed = events.map((e) => packEventTexts(e.data, e.metadata));
    const pack = micros(start, count);
    start = process.cpuUsage();
    let check = 0;
    for (const blob of packed) check += unpackEventTexts(blob).data.length;
    const unpack = micros(start, count);
    start = process.cpuUsage();
    for (const e of events) check += JSON.parse(e.data).id + JSON.parse(e.metadata).instance_id.length;
    const parse = micros(start, count);
    const bytes = packed.reduce((sum, b) => sum + b.length, 0) / count;
    console.log(
      `round ${round}: ${textBytes.toFixed(0)} B of JSON -> ${bytes.toFixed(1)} B packed; pack ${pack.toFixed(1)} µs, unpack ${unpack.toFixed(1)} µs per event ` +
        `(JSON.parse of both texts, for scale: ${parse.toFixed(1)} µs)${check ? '' : ' '}`,
    );
  }
}

main();
