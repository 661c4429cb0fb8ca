/**
 * Stream names are `<category>-<instance>.<id>`: EventStoreDB takes the category from the text
 * before the first `-`, and instance ids never contain `.`, so the first `.` after the category
 * ends the instance id whatever the entity id holds.
 */
export const streamName = (category: string, instanceId: string, id: string): string =>
  `${category}-${instanceId}.${id}`;

export const parseStreamName = (name: string): { category: string; instanceId: string; id: string } | null => {
  const dash = name.indexOf('-');
  if (dash < 0) return null;
  const rest = name.slice(dash + 1);
  const dot = rest.indexOf('.');
  if (dot < 0) return { category: name.slice(0, dash), instanceId: rest, id: '' };
  return { category: name.slice(0, dash), instanceId: rest.slice(0, dot), id: rest.slice(dot + 1) };
};

/** What JSON.stringify writes as it is inside quotes (no quote, backslash, control character or surrogate). */
const VERBATIM = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * Read-model document ids: a JSON array keeps composite keys unambiguous whatever the parts
 * contain. Exactly JSON.stringify's text; parts it would write verbatim are joined by hand,
 * which costs a third less (several ids per event in a rebuild).
 */
export const documentId = (...parts: string[]): string => {
  let id = '["';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (typeof part !== 'string' || !VERBATIM.test(part)) return JSON.stringify(parts);
    id += i === 0 ? part : `","${part}`;
  }
  return parts.length === 0 ? '[]' : `${id}"]`;
};

/** The parts a `documentId` was made of, in order. */
export const documentIdParts = (id: string): string[] => JSON.parse(id) as string[];

/** Instance ids: what every SDK accepts (feeds-client allows only `[a-zA-Z0-9-]`). */
export const INSTANCE_ID_PATTERN = /^[a-zA-Z0-9-]{1,64}$/;
