import { ChatApiVersion } from '../../../shared/http/chatkit-route';
import { MessageDocument } from '../../../../projections/messages/messages.projection';
import { currentPart, v2View } from '../domain/message-parts';
import { AttachmentResolver } from './attachments.port';

export type MessageResponse = Record<string, unknown>;

/**
 * A message as v6 (parts) or v2 (text and attachment) shows it. Attachment parts get fresh
 * signed links every time they are shown, so a link handed out never outlives the message.
 */
export const presentMessage = (
  version: ChatApiVersion,
  doc: MessageDocument,
  attachments: AttachmentResolver,
): MessageResponse => {
  const { parts } = doc;
  const common = { id: doc.id, user_id: doc.user_id, room_id: doc.room_id };
  const times = {
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    ...(doc.deleted_at !== undefined && { deleted_at: doc.deleted_at }),
  };
  if (version === 2) {
    const view = v2View(parts, (p) => attachments.render(doc.instance_id, doc.room_id, p.attachment).download_url);
    return { ...common, ...view, ...times };
  }
  return {
    ...common,
    parts: parts.map((p) =>
      'attachment' in p ? { type: p.type, attachment: attachments.render(doc.instance_id, doc.room_id, p.attachment) } : currentPart(p),
    ),
    ...times,
    // Additive (a thread reply also shown in the room): the original SDKs ignore fields they do not know.
    ...(doc.parent_id !== undefined && { parent_id: doc.parent_id }),
  };
};
