import type { ShredHistory } from './personal-data';

/** Events read per page of a stream. */
const PAGE = 1_000;

/**
 * The `created_at` of the incarnation an event written at `at` belongs to: that of the latest
 * `createdType` event in the stream created at or before `at` (the same id created again after
 * a delete is another incarnation). For events of logs written before events named their
 * incarnation; `created_at` is never sealed.
 */
export async function incarnationAt(history: ShredHistory, stream: string, createdType: string, at: string): Promise<string | undefined> {
  let found: string | undefined;
  for (let from = 0; ; from += PAGE) {
    const page = await history.readStream(stream, { fromRevision: from, maxCount: PAGE });
    for (const event of page) {
      const createdAt = event.type === createdType ? (event.data as { created_at?: unknown }).created_at : undefined;
      if (typeof createdAt === 'string' && createdAt <= at) found = createdAt;
    }
    if (page.length < PAGE) return found;
  }
}
