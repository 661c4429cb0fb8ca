import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../../../../test/support/byte-scan';
import { eventTextsOf, packEventTexts, unpackEventTexts } from './packed-texts';
import { SqliteEventStore } from './sqlite-event-store';

describe('packed event texts', () => {
  it('give back the very texts packed: any JSON, line feeds and non-ASCII escaped or not, empty, or larger than the window', () => {
    const big = { text: randomBytes(48 * 1024).toString('base64'), again: 'x'.repeat(20_000) };
    for (const [data, metadata] of [
      [{ text: 'line\nfeed, "quotes", é ü 💬' }, { occurred_at: '2026-01-01T00:00:00.000Z' }],
      [null, {}],
      [big, { request_id: 'r' }],
      [[1, 2, 3], { nested: { deep: [{}] } }],
    ]) {
      const texts = { data: JSON.stringify(data), metadata: JSON.stringify(metadata) };
      expect(unpackEventTexts(packEventTexts(texts.data, texts.metadata))).toEqual(texts);
    }
    expect(eventTextsOf('{"as":"text"}', '{}')).toEqual({ data: '{"as":"text"}', metadata: '{}' });
  });

  it('refuse a blob of a format this version does not know', () => {
    const blob = packEventTexts('{}', '{}');
    blob[0] = 0xf9;
    expect(() => unpackEventTexts(blob)).toThrow('an event row packed in format 249, which this version of Parley does not know');
  });

  describe('in the log file', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'parley-packed-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('leave their words visible to a byte scan of the log and its WAL, in data and metadata, and no longer as plain bytes', async () => {
      const words = { said: `MARKER-said-${randomBytes(6).toString('hex')}`, by: `MARKER-by-${randomBytes(6).toString('hex')}` };
      const store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
      try {
        await store.append('s-1', [{ type: 'Said', data: { text: words.said }, metadata: { occurred_at: '2026-01-01T00:00:00.000Z', request_id: words.by } }], 'no_stream');
        const findings = scanForMarkers({ folders: [dir] }, Object.values(words));
        expect(findings.map((f) => [f.marker, f.place])).toEqual([
          [words.said, `events.sqlite-wal (in ${dir}), its packed event rows inflated`],
          [words.by, `events.sqlite-wal (in ${dir}), its packed event rows inflated`],
        ]);
      } finally {
        await store.close();
      }
    });
  });
});
