import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { constants, inflateRawSync } from 'node:zlib';
import { PACKED_FORMATS } from '../../src/adapters/event-store/sqlite/packed-texts';

/**
 * Where a destroyed marker was still found: a file (by its path under the scanned folder, or
 * as given) or a named text (an API answer, an export, a server log), and in which encoding.
 */
export interface MarkerFinding {
  readonly marker: string;
  readonly place: string;
  readonly encoding: MarkerEncoding;
}

export type MarkerEncoding = 'utf8' | 'utf16le' | 'base64' | 'base64url' | 'json-escaped';

/** What a byte scan looks through: every file under folders (WAL, blobs and all), single files, and texts by name. */
export interface ScanPlaces {
  readonly folders?: readonly string[];
  readonly files?: readonly string[];
  readonly texts?: Readonly<Record<string, string | Buffer>>;
}

/**
 * The byte forms a marker can take in a file or an answer: itself, UTF-16 (SQLite may store
 * text so), JSON-escaped (non-ASCII as \uXXXX), and base64 / base64url at each of the three
 * alignments a marker can have inside a longer base64 run (only the characters that do not
 * depend on the neighbouring bytes are searched).
 */
export function markerForms(marker: string): { encoding: MarkerEncoding; bytes: Buffer }[] {
  const raw = Buffer.from(marker, 'utf8');
  const forms: { encoding: MarkerEncoding; bytes: Buffer }[] = [
    { encoding: 'utf8', bytes: raw },
    { encoding: 'utf16le', bytes: Buffer.from(marker, 'utf16le') },
  ];
  const escaped = JSON.stringify(marker)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (escaped !== marker) forms.push({ encoding: 'json-escaped', bytes: Buffer.from(escaped, 'utf8') });
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), raw]);
    const encoded = padded.toString('base64');
    // The first characters mix in the padding bytes and the last ones the bytes after the marker.
    const start = shift === 0 ? 0 : Math.ceil((shift * 8) / 6);
    const end = Math.floor((padded.length * 8) / 6);
    const stable = encoded.slice(start, end);
    if (stable.length < 8) continue;
    forms.push({ encoding: 'base64', bytes: Buffer.from(stable, 'ascii') });
    const url = stable.replace(/\+/g, '-').replace(/\//g, '_');
    if (url !== stable) forms.push({ encoding: 'base64url', bytes: Buffer.from(url, 'ascii') });
  }
  return forms;
}

/** Every regular file under `folder`, recursively. */
function filesUnder(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

/** A file's bytes, or null when it went between the listing and the read (a running server removes files: a blob, a WAL). */
function readIfStillThere(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Bytes a packed event row may take in a page: its blob is inflated from at most these. */
const PACKED_BYTES_MAX = 64 * 1024;

/**
 * The texts of the event log's packed rows (src/adapters/event-store/sqlite/packed-texts.ts)
 * found in some bytes, inflated: a scan sees their words as a reader of the log does. Every
 * place a format's first byte occurs is tried (rarely elsewhere than before such a row);
 * what does not inflate is no row. A row larger than a page (several kilobytes deflated)
 * continues on overflow pages: only its first page's part is inflated.
 */
function packedTextsIn(bytes: Buffer): Buffer | null {
  const texts: Buffer[] = [];
  for (const format of PACKED_FORMATS) {
    for (let at = bytes.indexOf(format.byte); at >= 0; at = bytes.indexOf(format.byte, at + 1)) {
      try {
        const text = inflateRawSync(bytes.subarray(at + 1, at + 1 + PACKED_BYTES_MAX), {
          dictionary: format.dictionary,
          windowBits: format.windowBits,
          finishFlush: constants.Z_SYNC_FLUSH,
        });
        if (text.length) texts.push(text);
      } catch {
        // Not a packed row.
      }
    }
  }
  return texts.length ? Buffer.concat(texts) : null;
}

/**
 * Looks for each marker, in each of its byte forms, in every place: what a privacy-minded
 * operator would check after a delete. Returns every finding (empty when nothing is left).
 * Files are read whole as they are on disk at the moment of the scan (a running server's WAL
 * included).
 */
export function scanForMarkers(places: ScanPlaces, markers: readonly string[]): MarkerFinding[] {
  const contents: [place: string, bytes: Buffer][] = [];
  for (const folder of places.folders ?? []) {
    for (const file of filesUnder(folder)) {
      const bytes = readIfStillThere(file);
      if (bytes) contents.push([`${relative(folder, file) || file} (in ${folder})`, bytes]);
    }
  }
  for (const file of places.files ?? []) {
    const bytes = statSync(file, { throwIfNoEntry: false })?.isFile() ? readIfStillThere(file) : null;
    if (bytes) contents.push([file, bytes]);
  }
  for (const [name, text] of Object.entries(places.texts ?? {})) contents.push([name, Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8')]);
  for (const [place, bytes] of [...contents]) {
    const inflated = packedTextsIn(bytes);
    if (inflated) contents.push([`${place}, its packed event rows inflated`, inflated]);
  }

  const findings: MarkerFinding[] = [];
  for (const marker of markers) {
    const forms = markerForms(marker);
    for (const [place, bytes] of contents) {
      const form = forms.find((f) => bytes.includes(f.bytes));
      if (form) findings.push({ marker, place, encoding: form.encoding });
    }
  }
  return findings;
}
