import { useEffect, useRef, useState, type FormEvent } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction } from '../components/async';
import { MessageLine, type MessageRow } from '../components/message-line';
import { Pager, usePaged } from '../components/paged';
import { Thread } from './Thread';

const PAGE_SIZE = 20;
const TAIL_EVERY_MS = 2000;

/**
 * A room's messages, newest first, as metadata; "Show content" asks again with `content=true`,
 * which the server records in the log before it answers (each page shown with content is one
 * recorded read). "Live" polls for newer messages (`after=`) as metadata, and reads their
 * content only when new ones came while content is shown. "Send as" posts as a member of the
 * members page shown. A thread's first message shows its summary and opens its replies.
 */
export function RoomMessages({ roomId, members }: { roomId: string; members: readonly string[] }) {
  const session = useSession();
  const instanceId = session.instance!.instanceId;
  const messagesPath = paths.admin(instanceId, `/rooms/${encodeURIComponent(roomId)}/messages`);
  const [content, setContent] = useState(false);
  const [live, setLive] = useState(false);
  const [newer, setNewer] = useState<MessageRow[]>([]);
  const paged = usePaged(
    async (before) => {
      const page = await session.instanceCall<{ messages: MessageRow[]; next?: string }>('GET', messagesPath, {
        query: { before, limit: PAGE_SIZE, ...(content && { content: true }) },
      });
      return { items: page.messages, next: page.next };
    },
    [messagesPath, content],
  );
  useEffect(() => setNewer([]), [paged.data]);
  const shown = paged.pageNumber === 1 ? [...newer, ...paged.items] : paged.items;
  const newest = useRef<number | undefined>(undefined);
  newest.current = shown.reduce<number | undefined>((max, m) => (max === undefined || m.id > max ? m.id : max), undefined);
  const [tailError, setTailError] = useState<unknown>();
  useEffect(() => {
    if (!live) return;
    let stopped = false;
    const poll = async () => {
      try {
        // Metadata first: a content read (recorded in the log) only when something new came.
        const after = newest.current ?? 0;
        let page = await session.instanceCall<{ messages: MessageRow[] }>('GET', messagesPath, { query: { after, limit: PAGE_SIZE } });
        if (content && page.messages.length > 0) {
          page = await session.instanceCall<{ messages: MessageRow[] }>('GET', messagesPath, { query: { after, limit: PAGE_SIZE, content: true } });
        }
        if (!stopped && page.messages.length > 0) {
          setNewer((previous) => {
            const seen = new Set(previous.map((m) => m.id));
            return [...page.messages.filter((m) => !seen.has(m.id)).sort((a, b) => b.id - a.id), ...previous];
          });
        }
        setTailError(undefined);
      } catch (error) {
        setTailError(error);
      }
      if (!stopped) timer = setTimeout(poll, TAIL_EVERY_MS);
    };
    let timer = setTimeout(poll, 0);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [live, messagesPath, content, session]);
  return (
    <div className="messages">
      <h2>Messages</h2>
      <div className="toolbar">
        <label className="check">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} name="live" /> Live tail
        </label>
        {content ? (
          <button type="button" onClick={() => setContent(false)}>
            Hide content
          </button>
        ) : (
          <button type="button" onClick={() => setContent(true)} title="The read is recorded in the event log with your name">
            Show content
          </button>
        )}
        <span className="hint">{content ? 'Content shown: this read was recorded in the event log.' : 'Metadata only.'}</span>
      </div>
      <ErrorNote error={paged.error ?? tailError} />
      <ol className="message-list" aria-label="messages">
        {shown.map((message) => (
          <MessageLine key={message.id} message={message}>
            {message.parent_id !== undefined && <span className="hint">reply in the thread of #{message.parent_id}</span>}
            {message.thread && <Thread roomId={roomId} parent={message} content={content} />}
          </MessageLine>
        ))}
        {shown.length === 0 && !paged.loading && <li className="hint">No messages</li>}
      </ol>
      <Pager paged={paged} label="message pages" />
      <SendAs roomId={roomId} members={members} onSent={() => !live && paged.reload()} />
    </div>
  );
}

/** Posts as one of `members` (the members page the room's screen shows). */
function SendAs({ roomId, members, onSent }: { roomId: string; members: readonly string[]; onSent(): void }) {
  const session = useSession();
  const action = useAction();
  const [userId, setUserId] = useState('');
  const [text, setText] = useState('');
  // A member chosen on another members page is not offered on this one.
  const chosen = members.includes(userId) ? userId : (members[0] ?? '');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const as = chosen;
      const sent = await session.instanceCall<{ message_id: number }>('POST', paths.chat(session.instance!.instanceId, `/rooms/${encodeURIComponent(roomId)}/messages`), {
        as,
        body: { parts: [{ type: 'text/plain', content: text }] },
      });
      setText('');
      onSent();
      return `Sent as ${as}: message #${sent.message_id}`;
    });
  };
  return (
    <form onSubmit={submit} aria-label="send as" className="inline">
      <h3>Send as</h3>
      <select name="as" value={chosen} onChange={(e) => setUserId(e.target.value)} aria-label="send as user">
        {members.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
      <input name="text" placeholder="Message" value={text} onChange={(e) => setText(e.target.value)} required />
      <button type="submit" disabled={action.busy || members.length === 0}>
        Send
      </button>
      <ActionResult action={action} />
    </form>
  );
}
