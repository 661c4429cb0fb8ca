import { dataKeyIds, DataKeySelector, ShredHistory, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import { ERASURE_CATEGORY } from './erasure.decider';
import { ErasureCompleted, ErasureProgressed, ErasureRequested } from './erasure.events';

/**
 * Every key the erased user incarnation owns: the subtree under it (its profile and whatever
 * else is sealed there) and the keys recorded with it as their owner (messages whose key was
 * made at the send). The incarnation is read from the erasure's first event.
 */
async function keysOfErasedUser(stream: string, history: ShredHistory): Promise<readonly DataKeySelector[]> {
  const parsed = parseStreamName(stream);
  if (!parsed || parsed.category !== ERASURE_CATEGORY) return [];
  const [first] = await history.readStream(stream, { fromRevision: 0, maxCount: 1 });
  if (first?.type !== 'ErasureRequested') return [];
  const { user_id, user_created_at } = first.data as ErasureRequested['data'];
  const owner = dataKeyIds.owner(parsed.instanceId, user_id, user_created_at);
  return [{ prefix: `${owner}/` }, { owner }];
}

/**
 * Once the user is deleted, its profile keys go at once (before the scan of its messages);
 * then, page by page, every version of the messages about to become tombstones, in one write
 * (their deletes find nothing left to destroy).
 */
export const erasureProgressShreds: ShredRule<ErasureProgressed> = {
  type: 'ErasureProgressed',
  destroys(event, stream, history) {
    if (event.data.step === 'user_erased') return keysOfErasedUser(stream, history);
    const parsed = parseStreamName(stream);
    const erasing = event.data.erasing ?? [];
    if (!parsed || parsed.category !== ERASURE_CATEGORY || erasing.length === 0) return [];
    return [{ prefixes: erasing.map((id) => dataKeyIds.message(parsed.instanceId, id)) }];
  },
};

/**
 * The completion destroys them again, with every key the user owns by then: a message whose
 * key was made at a send that raced the erasure is unreadable too.
 */
export const erasureCompletedShreds: ShredRule<ErasureCompleted> = {
  type: 'ErasureCompleted',
  destroys: (_event, stream, history) => keysOfErasedUser(stream, history),
};
