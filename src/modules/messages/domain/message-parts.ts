/**
 * Messages are stored in one canonical form, v6 parts, and shown through either API version
 * (wire study §2.8): a v2 message is a text part plus, optionally, a URL part; a multipart
 * message reads through v2 as its first text/plain part and its first URL or attachment part.
 */
export type MessagePart =
  | { readonly type: string; readonly content: string }
  /** `name`: the file name a v2 attachment was sent with (chatkit-client data attachments). */
  | { readonly type: string; readonly url: string; readonly name?: string }
  | {
      readonly type: string;
      readonly attachment: { readonly id: string; readonly name?: string; readonly size?: number; readonly custom_data?: unknown };
    };

export type V2AttachmentKind = 'image' | 'video' | 'audio' | 'file';
export const V2_ATTACHMENT_KINDS: readonly V2AttachmentKind[] = ['image', 'video', 'audio', 'file'];

/** The MIME type a v2 attachment kind is stored as, so that it reads back as the same kind. */
const MIME_OF_KIND: Record<V2AttachmentKind, string> = {
  image: 'image/*',
  video: 'video/*',
  audio: 'audio/*',
  file: 'application/octet-stream',
};

/** The coarse kind v2 shows for a MIME type (`file` for anything that is not image, video or audio). */
export const kindOfMime = (mime: string): V2AttachmentKind => {
  const top = mime.split('/')[0].toLowerCase();
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'file';
};

export const partsFromV2 = (
  text: string,
  attachment?: { resource_link: string; type: V2AttachmentKind; name?: string },
): MessagePart[] => [
  { type: 'text/plain', content: text },
  ...(attachment
    ? [
        {
          type: MIME_OF_KIND[attachment.type],
          url: attachment.resource_link,
          ...(attachment.name !== undefined && { name: attachment.name }),
        },
      ]
    : []),
];

/** The v2 fields of a message; `attachmentUrl` resolves an attachment part to a download link. */
export const v2View = (
  parts: readonly MessagePart[],
  attachmentUrl: (part: Extract<MessagePart, { attachment: unknown }>) => string,
): { text: string; attachment?: { resource_link: string; type: V2AttachmentKind; name?: string } } => {
  const text = parts.find((p): p is Extract<MessagePart, { content: string }> => 'content' in p && p.type.startsWith('text/plain'));
  const linked = parts.find((p) => 'url' in p || 'attachment' in p);
  return {
    text: text?.content ?? '',
    ...(linked && {
      attachment: {
        resource_link: 'url' in linked ? linked.url : attachmentUrl(linked as Extract<MessagePart, { attachment: unknown }>),
        type: kindOfMime(linked.type),
        ...('url' in linked && linked.name !== undefined && { name: linked.name }),
        ...('attachment' in linked && linked.attachment.name !== undefined && { name: linked.attachment.name }),
      },
    }),
  };
};

/** Inline content beyond this many UTF-8 bytes is refused (chatkit-server's tests expect about 5 000). */
export const MAX_INLINE_BYTES = 4_999;

export const inlineBytes = (parts: readonly MessagePart[]): number =>
  parts.reduce((n, p) => n + ('content' in p ? Buffer.byteLength(p.content, 'utf8') : 0), 0);
