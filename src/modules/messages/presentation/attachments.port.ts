import { MessagePart } from '../domain/message-parts';

/** An attachment part as v6 clients read it: links that are signed and expire. */
export interface RenderedAttachment {
  id: string;
  download_url: string;
  refresh_url: string;
  /** RFC 3339; never less than 30 minutes ahead when rendered. */
  expiration: string;
  name: string;
  size: number;
  custom_data?: unknown;
}

/**
 * What messages need from attachments: turning an uploaded attachment into a stored part,
 * and a stored part into the links a client reads. Implemented by the attachments use cases.
 */
export interface AttachmentResolver {
  /** The stored part for `{type, attachment: {id}}` as sent; throws a DomainError when the upload is unknown or incomplete. */
  toStoredPart(instanceId: string, roomId: string, part: { type: string; attachment: { id: string } }): Promise<MessagePart>;
  /**
   * The URL part a v2 attachment became, when it links to a file this server keeps (a files
   * API upload in this room), as the attachment part it stands for (of the same type), so that
   * reads show a link serving the bytes; null for any other link (stored as the URL it is).
   */
  fromV2Link(instanceId: string, roomId: string, link: { type: string; url: string }): Promise<MessagePart | null>;
  render(
    instanceId: string,
    roomId: string,
    attachment: { id: string; name?: string; size?: number; custom_data?: unknown },
  ): RenderedAttachment;
}

export const ATTACHMENT_RESOLVER = Symbol('AttachmentResolver');
