import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { paths, useSession } from '../api/session';
import { ErrorNote } from '../components/async';
import { Pager, usePaged } from '../components/paged';
import { NeedsCredential } from '../components/layout';
import { when } from '../components/table';

interface Cursor {
  readonly room_id: string;
  readonly user_id: string;
  readonly position: number;
  readonly cursor_type: number;
  readonly updated_at: string;
}

const PAGE_SIZE = 25;

/** Read cursors of a user (every room, by room id) or of a room (every member, by user id), a page at a time (parley_admin). */
export function Cursors() {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const [params, setParams] = useSearchParams();
  const user = params.get('user') ?? '';
  const room = params.get('room') ?? '';
  const [kind, setKind] = useState(room ? 'room' : 'user');
  const [id, setId] = useState(user || room);
  const cursors = usePaged(
    async (after) => {
      if (!user && !room) return { items: [] as Cursor[] };
      const path = user ? `/users/${encodeURIComponent(user)}/cursors` : `/rooms/${encodeURIComponent(room)}/cursors`;
      const page = await session.instanceCall<{ cursors: Cursor[]; next?: string }>('GET', paths.admin(instanceId, path), { query: { after, limit: PAGE_SIZE } });
      return { items: page.cursors, next: page.next };
    },
    [instanceId, user, room],
  );
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const look = (event: FormEvent) => {
    event.preventDefault();
    setParams({ [kind]: id.trim() });
  };
  return (
    <section>
      <h1>Read cursors</h1>
      <form className="inline" onSubmit={look} aria-label="find cursors">
        <select value={kind} onChange={(e) => setKind(e.target.value)} aria-label="of">
          <option value="user">of a user</option>
          <option value="room">of a room</option>
        </select>
        <input value={id} onChange={(e) => setId(e.target.value)} placeholder="Id" required aria-label="id" />
        <button type="submit">Show cursors</button>
      </form>
      <ErrorNote error={cursors.error} />
      <table aria-label="cursors">
        <thead>
          <tr>
            <th>User</th>
            <th>Room</th>
            <th>Read up to message</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody>
          {cursors.items.map((c) => (
            <tr key={`${c.user_id}/${c.room_id}`}>
              <td>
                <Link to={`/users/${encodeURIComponent(c.user_id)}`}>{c.user_id}</Link>
              </td>
              <td>
                <Link to={`/rooms/${encodeURIComponent(c.room_id)}`}>{c.room_id}</Link>
              </td>
              <td>#{c.position}</td>
              <td>{when(c.updated_at)}</td>
            </tr>
          ))}
          {(user || room) && !cursors.loading && cursors.items.length === 0 && (
            <tr>
              <td colSpan={4} className="empty">
                No cursors
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {(user || room) && <Pager paged={cursors} />}
    </section>
  );
}
