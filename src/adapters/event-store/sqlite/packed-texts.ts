import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * An event's two JSON texts (data and metadata) as `event_rows` keeps them since schema version
 * 3: one blob in the `data` column, its first byte the format, the rest the raw deflate stream
 * of `metadata`, a line feed, then `data` (JSON.stringify never writes a raw line feed, so the
 * first one divides them), deflated with the format's preset dictionary. The row's `metadata`
 * column then holds an empty blob. A short message's two texts, about 495 bytes, take about
 * 216 (its sealed content is random base64, which deflate takes only to about three quarters).
 *
 * A format never changes once rows use it: its dictionary and window size are fixed for ever. A
 * better dictionary is a new format byte beside the old one (rows of every format stay readable).
 */
export interface PackedFormat {
  /** The first byte of every blob of the format. */
  readonly byte: number;
  readonly dictionary: Buffer;
  /** zlib's windowBits: the inflater's window must be at least the deflater's. */
  readonly windowBits: number;
}

/**
 * Format 1's dictionary: the keys and shapes of the log's most frequent events, the most
 * frequent last (deflate finds the nearest copy: those cost the fewest bits). Values an instance
 * chooses (its id, users' and rooms' ids) are not in it; times and UUIDs only as their shapes.
 * Never to be edited: files hold rows deflated with exactly these bytes.
 */
const DICTIONARY_1 = [
  '{"id":"","cluster":"","name":"","custom_data":{},"avatar_url":"https://","private":false,"created_by_id":"","room_id":"","message_id":1,',
  '"parts":[{"type":"text/plain","content":"","url":"","attachment":{"id":"","name":"","size":1}}],"deleted_at":"","updated_at":"",',
  '"read_state":{"cursor":1},"first":1,"last":1000,"members":[{"user_id":"","user_created_at":"2026-01-01T00:00:00.000Z"}],',
  '"secret":{"alg":"aes-256-gcm","iv":"","tag":"==","ciphertext":""},"profile_key":"/profile/","sealed":{"k":"/room/","iv":"","tag":"==","ct":""}}\n',
  '{"instance_id":"","actor":{"key_id":"system"},"occurred_at":"2026-01-01T00:00:00.000Z"}\n',
  '{"instance_id":"","actor":{"key_id":"","user_id":"","su":true},"occurred_at":"2026-01-01T00:00:00.000Z","request_id":"00000000-0000-0000-0000-000000000000"}\n',
  '{"id":1,"user_id":"","user_created_at":"2026-01-01T00:00:00.000Z","room_created_at":"2026-01-01T00:00:00.000Z","created_at":"2026-01-01T00:00:00.000Z",',
  '"sealed":{"k":"/message/1/0","iv":"","tag":"==","ct":"=="}}',
].join('');

/**
 * Every format a row may have, by its first byte; the last one is written. The bytes are of the
 * rarest in SQLite's files (never in text, about one in 6,000 of a log's file): a byte scan
 * (test/support/byte-scan.ts) tries to inflate after each one it finds.
 */
export const PACKED_FORMATS: readonly PackedFormat[] = [{ byte: 0xf1, dictionary: Buffer.from(DICTIONARY_1, 'utf8'), windowBits: 12 }];

const WRITTEN = PACKED_FORMATS[PACKED_FORMATS.length - 1];
const FORMATS = new Map(PACKED_FORMATS.map((format) => [format.byte, format]));

/** What a packed row's `metadata` column holds: its metadata is in `data`'s blob. */
export const PACKED_METADATA = Buffer.alloc(0);

/** The blob of an event's data and metadata texts (JSON). */
export function packEventTexts(data: string, metadata: string): Buffer {
  const deflated = deflateRawSync(`${metadata}\n${data}`, { dictionary: WRITTEN.dictionary, windowBits: WRITTEN.windowBits });
  const blob = Buffer.allocUnsafe(deflated.length + 1);
  blob[0] = WRITTEN.byte;
  deflated.copy(blob, 1);
  return blob;
}

/** The data and metadata texts of a packed blob; throws on a format this version does not know. */
export function unpackEventTexts(blob: Uint8Array): { data: string; metadata: string } {
  const format = FORMATS.get(blob[0]);
  if (!format) throw new Error(`an event row packed in format ${blob[0]}, which this version of Parley does not know`);
  const text = inflateRawSync(blob.subarray(1), { dictionary: format.dictionary, windowBits: format.windowBits }).toString('utf8');
  const divide = text.indexOf('\n');
  return { metadata: text.slice(0, divide), data: text.slice(divide + 1) };
}

/** A row's data and metadata texts, packed or not (rows written before version 3 hold them as text). */
export function eventTextsOf(data: string | Uint8Array, metadata: string | Uint8Array): { data: string; metadata: string } {
  return typeof data === 'string' ? { data, metadata: metadata as string } : unpackEventTexts(data);
}
