import { notFound } from '../../../shared/domain/errors';

/** Message ids in paths are whole numbers; anything else names no message. */
export const parseMessageId = (raw: string): number => {
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id)) throw notFound('message_not_found', `There is no message "${raw}"`);
  return id;
};
