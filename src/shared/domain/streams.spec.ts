import { documentId, documentIdParts } from './streams';

describe('documentId', () => {
  // Stored ids are JSON arrays: the hand-joined fast path must write exactly JSON.stringify's text.
  const cases: string[][] = [
    [],
    [''],
    ['', ''],
    ['bench', 'user-1'],
    ['00000000000000000001', 'bench', 'key:bench-fill'],
    ['a"b', 'c'],
    ['a\\b'],
    ['tab\there', 'new\nline', '\u0000', '\u001f', '\u007f'],
    ['x\u2028y', '\u00e9t\u00e9', '\u{1F600}'],
    ['lone \ud800 surrogate', '\udfff'],
    ['","', '[', ']'],
  ];

  it.each(cases.map((parts) => [JSON.stringify(parts), parts]))('writes %s as JSON.stringify does', (_, parts) => {
    expect(documentId(...parts)).toBe(JSON.stringify(parts));
    expect(documentIdParts(documentId(...parts))).toEqual(parts);
  });
});
