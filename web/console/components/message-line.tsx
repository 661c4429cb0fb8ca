import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { when } from './table';

/** A message part: metadata (type, size) until content is asked for (a recorded read). */
export interface Part {
  readonly type: string;
  readonly bytes?: number;
  readonly content?: string;
  readonly url?: string;
  readonly attachment?: { readonly id: string; readonly name?: string; readonly size?: number };
}

/** A message as the console's reads answer it (a room's messages, a thread's replies). */
export interface MessageRow {
  readonly id: number;
  readonly user_id: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly deleted: boolean;
  readonly parts: Part[];
  /** How many reactions; `reactions` (counts per type) only with the content, a reaction's type being content. */
  readonly reaction_count?: number;
  readonly reactions?: Readonly<Record<string, number>>;
  readonly pinned?: { readonly by?: string; readonly at: string; readonly until?: string };
  /** On a thread's first message: its summary (metadata, shown without a content read), counting the replies sent under a shadow ban (`shadow_reply_count` of them). */
  readonly thread?: { readonly reply_count: number; readonly last_reply_at: string; readonly participants: readonly string[]; readonly shadow_reply_count?: number };
  /** On a reply: its thread's first message; `also_in_room` when it shows in the room too. */
  readonly parent_id?: number;
  readonly also_in_room?: true;
  /** Sent under a shadow ban: only its sender (and the console's moderators) see it. */
  readonly shadow?: true;
}

function PartView({ part }: { part: Part }) {
  if (part.content !== undefined) return <span className="content">{part.content}</span>;
  if (part.url !== undefined) return <a href={part.url}>{part.url}</a>;
  if (part.attachment) return <span>📎 {part.attachment.name ?? part.attachment.id} ({part.attachment.size ?? '?'} bytes)</span>;
  return (
    <span className="meta">
      {part.type}
      {part.bytes !== undefined ? `, ${part.bytes} bytes` : ''}
    </span>
  );
}

/** A message's shadow mark, reactions and pin, beside its parts. */
function Extras({ message }: { message: MessageRow }) {
  return (
    <>
      {message.shadow && (
        <span className="shadowed" title="Sent under a shadow ban: the room's other members do not see it">
          shadowed: only its sender sees it
        </span>
      )}{' '}
      {message.reaction_count !== undefined && (
        <span className="reactions" title="reactions">
          {message.reactions
            ? Object.entries(message.reactions)
                .map(([type, n]) => `${type} ${n}`)
                .join(' · ')
            : `${message.reaction_count} reaction${message.reaction_count === 1 ? '' : 's'}`}
        </span>
      )}{' '}
      {message.pinned && (
        <span className="pinned" title={`pinned ${when(message.pinned.at)}${message.pinned.until ? `, until ${when(message.pinned.until)}` : ''}`}>
          📌 pinned{message.pinned.by ? ` by ${message.pinned.by}` : ''}
        </span>
      )}
    </>
  );
}

/**
 * One message of a list (`li`, `data-message-id`): id, sender, time, its parts (or "deleted"),
 * its shadow mark, reactions and pin, a link to its history (naming `roomId` when given); then `children` (what the list adds: a thread's
 * summary and replies, where a reply shows).
 */
export function MessageLine({ message, roomId, children }: { message: MessageRow; roomId?: string; children?: ReactNode }) {
  // The audit API finds a message's room by its id (a thread-only reply's too); naming it (`<room>:<id>`, where the list knows it) spares that look-up.
  const history = roomId === undefined ? String(message.id) : `${encodeURIComponent(roomId)}:${message.id}`;
  return (
    <li data-message-id={message.id} className={[message.deleted && 'deleted', message.shadow && 'shadow'].filter(Boolean).join(' ')}>
      <span className="id">#{message.id}</span> <Link to={`/users/${encodeURIComponent(message.user_id)}`}>{message.user_id}</Link> <time>{when(message.created_at)}</time>{' '}
      {message.deleted ? <em>deleted</em> : message.parts.map((part, i) => <PartView key={i} part={part} />)} <Extras message={message} />{' '}
      <Link className="small" to={`/audit/messages/${history}`}>
        history
      </Link>
      {children}
    </li>
  );
}
