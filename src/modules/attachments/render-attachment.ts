import type { RenderedAttachment } from '../messages/presentation/attachments.port';
import type { AttachmentLinks } from './links/attachment-links';

/** An attachment part's attachment as a v6 read shows it, with links made now (also outside Nest: the webhook worker of a projector process or thread). */
export function renderAttachment(
  links: AttachmentLinks,
  origin: string,
  instanceId: string,
  roomId: string,
  attachment: { id: string; name?: string; size?: number; custom_data?: unknown },
): RenderedAttachment {
  const download = links.download(origin, instanceId, attachment.id);
  return {
    id: attachment.id,
    download_url: download.url,
    refresh_url: links.refresh(origin, instanceId, roomId, attachment.id),
    expiration: download.expiresAt!.toISOString(),
    name: attachment.name ?? attachment.id,
    size: attachment.size ?? 0,
    ...(attachment.custom_data !== undefined && { custom_data: attachment.custom_data }),
  };
}
