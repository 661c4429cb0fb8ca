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

/** Read-model document ids: a JSON array keeps composite keys unambiguous whatever the parts contain. */
export const documentId = (...parts: string[]): string => JSON.stringify(parts);

/** The parts a `documentId` was made of, in order. */
export const documentIdParts = (id: string): string[] => JSON.parse(id) as string[];

/** Instance ids: what every SDK accepts (feeds-client allows only `[a-zA-Z0-9-]`). */
export const INSTANCE_ID_PATTERN = /^[a-zA-Z0-9-]{1,64}$/;
