import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packEventTexts } from '../../src/adapters/event-store/sqlite/packed-texts';
import { scanForMarkers } from './byte-scan';

describe('scanForMarkers', () => {
  const marker = 'MARKER-ann-7f3a9c';

  it('finds a marker in plain text, UTF-16, and base64 at every alignment inside a longer run', () => {
    for (const prefix of ['', 'x', 'xy', 'xyz']) {
      const inside = Buffer.from(`${prefix}{"name":"${marker}"}tail`, 'utf8').toString('base64');
      expect(scanForMarkers({ texts: { answer: `{"b":"${inside}"}` } }, [marker])).toEqual([{ marker, place: 'answer', encoding: 'base64' }]);
    }
    expect(scanForMarkers({ texts: { plain: `..${marker}..` } }, [marker])[0].encoding).toBe('utf8');
    expect(scanForMarkers({ texts: { wide: Buffer.from(`..${marker}..`, 'utf16le') } }, [marker])[0].encoding).toBe('utf16le');
  });

  it('finds a non-ASCII marker as JSON escapes it, and nothing where the marker is absent', () => {
    expect(scanForMarkers({ texts: { json: JSON.stringify({ n: 'é-marker-ünïcode' }).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) } }, ['é-marker-ünïcode'])).toHaveLength(1);
    expect(scanForMarkers({ texts: { other: 'MARKER-bob-000000 and some text' } }, [marker])).toEqual([]);
  });

  it('reads every file under a folder, nested ones included, and names where it found each marker', () => {
    const folder = mkdtempSync(join(tmpdir(), 'parley-scan-'));
    try {
      mkdirSync(join(folder, 'blobs', 'acme'), { recursive: true });
      writeFileSync(join(folder, 'events.sqlite-wal'), Buffer.concat([Buffer.alloc(100), Buffer.from(marker), Buffer.alloc(100)]));
      writeFileSync(join(folder, 'blobs', 'acme', 'a1'), 'nothing here');
      const findings = scanForMarkers({ folders: [folder] }, [marker, 'MARKER-absent-123']);
      expect(findings).toEqual([{ marker, place: `events.sqlite-wal (in ${folder})`, encoding: 'utf8' }]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("sees the words of the event log's packed rows, as a page holds them among other bytes, in data and metadata", () => {
    const row = packEventTexts(JSON.stringify({ text: `said ${marker}` }), JSON.stringify({ request: 'MARKER-meta-42a7' }));
    const page = Buffer.concat([Buffer.from([0x0d, 0xf1, 0x00, 0xf1]), row, Buffer.from([0xf1, 0x05, 0x2a])]);
    expect(scanForMarkers({ texts: { 'events.sqlite': page } }, [marker, 'MARKER-meta-42a7', 'MARKER-absent-123'])).toEqual([
      { marker, place: 'events.sqlite, its packed event rows inflated', encoding: 'utf8' },
      { marker: 'MARKER-meta-42a7', place: 'events.sqlite, its packed event rows inflated', encoding: 'utf8' },
    ]);
  });
});
