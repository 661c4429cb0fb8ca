import { useState } from 'react';
import { paths, useSession } from '../api/session';
import { ErrorNote } from '../components/async';
import { MessageLine, type MessageRow } from '../components/message-line';
import { Pager, usePaged } from '../components/paged';
import { when } from '../components/table';

const REPLIES_PAGE = 20;

/**
 * A thread's first message's summary (count, of which shadowed, last reply, participants: metadata) and, once
 * opened, its replies newest first, a page at a time, read as the room's messages are: as
 * metadata, or with their content when the room's screen shows content (each such page a
 * recorded read naming the thread).
 */
export function Thread({ roomId, parent, content }: { roomId: string; parent: MessageRow; content: boolean }) {
  const [open, setOpen] = useState(false);
  const summary = parent.thread!;
  return (
    <div className="thread" aria-label={`thread of #${parent.id}`}>
      <span className="summary">
        Thread: {summary.reply_count} repl{summary.reply_count === 1 ? 'y' : 'ies'}
        {summary.shadow_reply_count ? ` (${summary.shadow_reply_count} shadowed)` : ''}, last <time>{when(summary.last_reply_at)}</time>, by {summary.participants.join(', ')}
      </span>{' '}
      <button type="button" className="small" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? 'Hide thread' : 'Show thread'}
      </button>
      {open && <Replies roomId={roomId} parentId={parent.id} content={content} />}
    </div>
  );
}

function Replies({ roomId, parentId, content }: { roomId: string; parentId: number; content: boolean }) {
  const session = useSession();
  const repliesPath = paths.admin(session.instance!.instanceId, `/rooms/${encodeURIComponent(roomId)}/messages/${parentId}/replies`);
  const paged = usePaged(
    async (before) => {
      const page = await session.instanceCall<{ messages: MessageRow[]; next?: number }>('GET', repliesPath, {
        query: { before, limit: REPLIES_PAGE, ...(content && { content: true }) },
      });
      return { items: page.messages, next: page.next === undefined ? undefined : String(page.next) };
    },
    [repliesPath, content],
  );
  return (
    <>
      <ErrorNote error={paged.error} />
      <ol className="message-list replies" aria-label={`replies to #${parentId}`}>
        {paged.items.map((reply) => (
          <MessageLine key={reply.id} message={reply} roomId={roomId}>
            {reply.also_in_room && <span className="hint">also in the room</span>}
          </MessageLine>
        ))}
        {paged.items.length === 0 && !paged.loading && <li className="hint">No replies</li>}
      </ol>
      {(paged.hasNext || paged.hasPrevious) && <Pager paged={paged} label={`reply pages of #${parentId}`} />}
    </>
  );
}
