import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { paths, useSession } from '../api/session';
import { ErrorNote, useLoad } from '../components/async';
import { NeedsCredential } from '../components/layout';
import { when } from '../components/table';

interface Cursor {
  readonly room_id: string;
  readonly user_id: string;
  readonly position: number;
  readonly cursor_type: number;
  readonly updated_at: string;
}

/** Read cursors of a user (every room) or of a room (every member). */
export function Cursors() {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const [params, setParams] = useSearchParams();
  const user = params.get('user') ?? '';
  const room = params.get('room') ?? '';
  const [kind, setKind] = useState(room ? 'room' : 'user');
  const [id, setId] = useState(user || room);
  const cursors = useLoad(
    () =>
      user || room
        ? session.instanceCall<Cursor[]>('GET', paths.cursors(instanceId, user ? `/cursors/0/users/${encodeURIComponent(user)}` : `/cursors/0/rooms/${encodeURIComponent(room)}`))
        : Promise.resolve([]),
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
          {(cursors.data ?? []).map((c) => (
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
          {(user || room) && cursors.data?.length === 0 && (
            <tr>
              <td colSpan={4} className="empty">
                No cursors
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
