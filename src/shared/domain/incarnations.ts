import { eventsOfStream, ShredHistory } from './personal-data';

/**
 * The `created_at` of the incarnation an event written at `at` belongs to: that of the latest
 * `createdType` event in the stream created at or before `at` (the same id created again after
 * a delete is another incarnation). For events of logs written before events named their
 * incarnation; `created_at` is never sealed.
 */
export async function incarnationAt(history: ShredHistory, stream: string, createdType: string, at: string): Promise<string | undefined> {
  let found: string | undefined;
  for await (const event of eventsOfStream(history, stream)) {
    const createdAt = event.type === createdType ? (event.data as { created_at?: unknown }).created_at : undefined;
    if (typeof createdAt === 'string' && createdAt <= at) found = createdAt;
  }
  return found;
}
