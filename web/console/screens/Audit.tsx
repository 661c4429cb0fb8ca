import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { paths, useSession } from '../api/session';
import { ErrorNote } from '../components/async';
import { NeedsCredential } from '../components/layout';
import { Pager, usePaged } from '../components/paged';
import { when } from '../components/table';

interface Actor {
  readonly key_id?: string;
  readonly user_id?: string;
  readonly su?: boolean;
  readonly console_user?: string;
}

interface AuditEvent {
  readonly id: string;
  readonly stream: string;
  readonly position: string;
  readonly type: string;
  readonly recorded_at: string;
  readonly actor?: Actor;
  readonly request_id?: string;
  readonly data?: Record<string, unknown>;
}

const PAGE_SIZE = 50;
const KINDS = { users: 'user', rooms: 'room', actors: 'actor', messages: 'message' } as const;
type Kind = keyof typeof KINDS;

/** Message content stays out of the timeline: parts show their type and size (content needs "Show content" on the room). */
function withoutContent(data: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!data) return data;
  const redact = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(redact);
    if (value && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>).map(([name, inner]) =>
        name === 'content' && typeof inner === 'string' ? [name, `(${new TextEncoder().encode(inner).length} bytes hidden)`] : [name, redact(inner)],
      );
      return Object.fromEntries(entries);
    }
    return value;
  };
  return redact(data) as Record<string, unknown>;
}

export function ActorView({ actor }: { actor?: Actor }) {
  if (!actor) return <span className="hint">unknown</span>;
  return (
    <span className="actor">
      {actor.console_user ? (
        <strong title="a console user" data-testid="actor-console-user">
          {actor.console_user}
        </strong>
      ) : null}
      {actor.console_user ? ' via ' : ''}
      key {actor.key_id ?? '?'}
      {actor.user_id ? ` as ${actor.user_id}` : ''}
      {actor.su ? ' (su)' : ''}
    </span>
  );
}

/**
 * A message's address on this screen: its id, or `<room id>:<id>` (the room is needed only for a
 * message of a deleted room that was never edited).
 */
const messageAddress = (id: string): { messageId: string; roomId?: string } => {
  const colon = id.lastIndexOf(':');
  return colon < 0 ? { messageId: id } : { messageId: id.slice(colon + 1), roomId: id.slice(0, colon) };
};

/** The event history of a user, a room, a message or an actor (the audit API), newest page by page. */
export function AuditTimeline() {
  const session = useSession();
  const params = useParams();
  const navigate = useNavigate();
  const kind = (params.kind ?? 'users') as Kind;
  const id = params.id ?? '';
  const instanceId = session.instance?.instanceId ?? '';
  const [askedKind, setAskedKind] = useState<Kind>(kind);
  const [askedId, setAskedId] = useState(id);
  const paged = usePaged(
    async (from) => {
      if (!id) return { items: [] };
      // A message's own history (parley_audit messages/:id): its send, edits, deletion and the recorded reads of its content.
      const { messageId, roomId } = kind === 'messages' ? messageAddress(id) : { messageId: id, roomId: undefined };
      const page = await session.instanceCall<{ events: AuditEvent[]; next: string | null }>('GET', paths.audit(instanceId, `/${kind}/${encodeURIComponent(messageId)}`), {
        query: { from, limit: PAGE_SIZE, room_id: roomId },
      });
      return { items: page.events, next: page.next };
    },
    [instanceId, kind, id],
  );
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const look = (event: FormEvent) => {
    event.preventDefault();
    navigate(`/audit/${askedKind}/${encodeURIComponent(askedId.trim())}`);
  };
  return (
    <section>
      <h1>Event history {id && <code>{id}</code>}</h1>
      <form onSubmit={look} className="inline" aria-label="find history">
        <select value={askedKind} onChange={(e) => setAskedKind(e.target.value as Kind)} aria-label="kind">
          {Object.entries(KINDS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <input value={askedId} onChange={(e) => setAskedId(e.target.value)} placeholder={askedKind === 'messages' ? 'Message id' : 'Id'} required aria-label="id" />
        <button type="submit">Show history</button>
      </form>
      <ErrorNote error={paged.error} />
      <ol className="timeline" aria-label="timeline">
        {paged.items.map((event) => (
          <li key={event.id} data-event-type={event.type}>
            <time>{when(event.recorded_at)}</time>
            <strong className="type">{event.type}</strong>
            <ActorView actor={event.actor} />
            <span className="hint">
              {event.stream} @ {event.position}
            </span>
            <details>
              <summary>data</summary>
              <pre>{JSON.stringify(withoutContent(event.data), null, 2)}</pre>
            </details>
          </li>
        ))}
        {id && paged.items.length === 0 && !paged.loading && <li className="hint">No events on this page</li>}
      </ol>
      {id && <Pager paged={paged} />}
      {kind === 'rooms' && id && (
        <p>
          <Link to={`/rooms/${encodeURIComponent(id)}`}>Back to the room</Link>
        </p>
      )}
    </section>
  );
}
