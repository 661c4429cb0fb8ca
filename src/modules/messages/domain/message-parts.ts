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

/**
 * The part type a v2 attachment is stored as, which v6 shows: Chatkit's own. chatkit-client's
 * and chatkit-swift's tests read a v2 image as `image/x-pusher-img` and a v2 file as
 * `file/x-pusher-file`, links and uploads alike; video and audio (which no SDK test shows) take
 * the same shape. Each reads back through v2 as the kind it was sent as (`kindOfMime`).
 */
const PART_TYPE_OF_KIND: Record<V2AttachmentKind, string> = {
  image: 'image/x-pusher-img',
  video: 'video/x-pusher-video',
  audio: 'audio/x-pusher-audio',
  file: 'file/x-pusher-file',
};

/**
 * The types logs hold for v2 link attachments stored before they took Chatkit's, as they read
 * now. (A v2 `file` link was stored as `application/octet-stream`, which v6 senders use too:
 * that one reads as stored.)
 */
const PART_TYPE_OF_STORED: Readonly<Record<string, string>> = {
  'image/*': PART_TYPE_OF_KIND.image,
  'video/*': PART_TYPE_OF_KIND.video,
  'audio/*': PART_TYPE_OF_KIND.audio,
};

/** A stored part as it reads now (upcast on read: events are permanent). */
export const currentPart = (part: MessagePart): MessagePart =>
  'url' in part && PART_TYPE_OF_STORED[part.type] !== undefined ? { ...part, type: PART_TYPE_OF_STORED[part.type] } : part;

/** The coarse kind v2 shows for a MIME type (`file` for anything that is not image, video or audio). */
export const kindOfMime = (mime: string): V2AttachmentKind => {
  const top = mime.split('/')[0].toLowerCase();
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'file';
};

/**
 * The name a link reads back with through v2: its URL's last path segment, as Chatkit answered
 * (`cat` for `https://cataas.com/cat` in chatkit-client's tests, `rJbRKLU.gif` in
 * chatkit-swift's, which drops an attachment that has none); for a URL without a path, its
 * host; for text that is no URL, its last `/` segment.
 */
export const nameOfLink = (link: string): string => {
  let path = link.replace(/[?#][\s\S]*$/, '');
  let host = '';
  try {
    const url = new URL(link);
    path = url.pathname;
    host = url.hostname;
  } catch {
    // not a URL: named by its own text
  }
  const segment = path.split('/').filter((s) => s !== '').pop();
  if (segment === undefined) return host || link;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** A v2 message (text and an optional link attachment) as stored parts. */
export const partsFromV2 = (
  text: string,
  attachment?: { resource_link: string; type: V2AttachmentKind; name?: string },
): MessagePart[] => [
  { type: 'text/plain', content: text },
  ...(attachment
    ? [
        {
          type: PART_TYPE_OF_KIND[attachment.type],
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
): { text: string; attachment?: { resource_link: string; type: V2AttachmentKind; name: string } } => {
  const text = parts.find((p): p is Extract<MessagePart, { content: string }> => 'content' in p && p.type.startsWith('text/plain'));
  const linked = parts.find((p) => 'url' in p || 'attachment' in p);
  return {
    text: text?.content ?? '',
    ...(linked && {
      attachment: {
        resource_link: 'url' in linked ? linked.url : attachmentUrl(linked as Extract<MessagePart, { attachment: unknown }>),
        type: kindOfMime(linked.type),
        // Always named: chatkit-client reads `{link, type, name}`, chatkit-swift drops an attachment without a name.
        name: 'url' in linked ? (linked.name ?? nameOfLink(linked.url)) : (linked.attachment.name ?? linked.attachment.id),
      },
    }),
  };
};

/** Inline content beyond this many UTF-8 bytes is refused (chatkit-server's tests expect about 5 000). */
export const MAX_INLINE_BYTES = 4_999;

export const inlineBytes = (parts: readonly MessagePart[]): number =>
  parts.reduce((n, p) => n + ('content' in p ? Buffer.byteLength(p.content, 'utf8') : 0), 0);
