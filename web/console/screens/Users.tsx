import { createColumnHelper } from '@tanstack/react-table';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction, useLoad } from '../components/async';
import { Pager, usePaged } from '../components/paged';
import { NeedsCredential } from '../components/layout';
import { when } from '../components/table';
import { PrefixSearchList } from '../components/prefix-search';

export interface UserRow {
  readonly id: string;
  readonly name: string;
  readonly avatar_url?: string;
  readonly custom_data?: unknown;
  readonly created_at: string;
  readonly updated_at: string;
}

const column = createColumnHelper<UserRow>();
const columns = [
  column.accessor('id', { header: 'Id', cell: (c) => <Link to={`/users/${encodeURIComponent(c.getValue())}`}>{c.getValue()}</Link> }),
  column.accessor('name', { header: 'Name' }),
  column.accessor('created_at', { header: 'Created', cell: (c) => when(c.getValue()) }),
  column.accessor('updated_at', { header: 'Updated', cell: (c) => when(c.getValue()) }),
];

/** Users by id or name prefix, a page at a time (parley_admin users). */
export function Users() {
  return (
    <PrefixSearchList title="Users" collection="users" noun="user" columns={columns}>
      {(reload) => <CreateUser onCreated={reload} />}
    </PrefixSearchList>
  );
}

function CreateUser({ onCreated }: { onCreated(): void }) {
  const session = useSession();
  const navigate = useNavigate();
  const action = useAction();
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await session.instanceCall('POST', paths.chat(session.instance!.instanceId, '/users'), { body: { id: id.trim(), name: name.trim() || id.trim() } });
      onCreated();
      navigate(`/users/${encodeURIComponent(id.trim())}`);
    });
  };
  return (
    <form onSubmit={submit} aria-label="create user" className="inline">
      <h2>Create a user</h2>
      <input name="id" placeholder="Id" value={id} onChange={(e) => setId(e.target.value)} required />
      <input name="name" placeholder="Name" value={name} onChange={(e) => setName(e.target.value)} />
      <button type="submit" disabled={action.busy}>
        Create user
      </button>
      <ActionResult action={action} />
    </form>
  );
}

interface UserRoom {
  readonly id: string;
  readonly name: string;
  readonly private: boolean;
  readonly joined_at?: string;
}

const ROOMS_PAGE = 25;

/** One user: edit, delete, their rooms and roles, and links to their history, cursors and devices. */
export function UserDetail() {
  const session = useSession();
  const navigate = useNavigate();
  const userId = useParams().userId!;
  const instanceId = session.instance?.instanceId ?? '';
  const user = useLoad(() => session.instanceCall<UserRow>('GET', paths.chat(instanceId, `/users/${encodeURIComponent(userId)}`)), [instanceId, userId]);
  // Parley's page of the user's rooms: Chatkit's answer holds every room with all its member ids.
  const rooms = usePaged(
    async (after) => {
      const page = await session.instanceCall<{ rooms: UserRoom[]; next?: string }>('GET', paths.admin(instanceId, `/users/${encodeURIComponent(userId)}/rooms`), {
        query: { after, limit: ROOMS_PAGE },
      });
      return { items: page.rooms, next: page.next };
    },
    [instanceId, userId],
  );
  const roles = useLoad(
    () => session.instanceCall<{ role_name: string; scope: string; room_id?: string }[]>('GET', paths.roles(instanceId, `/users/${encodeURIComponent(userId)}/roles`)),
    [instanceId, userId],
  );
  const save = useAction();
  const remove = useAction();
  const [name, setName] = useState<string | undefined>();
  const [avatar, setAvatar] = useState<string | undefined>();
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run(async () => {
      const body: Record<string, string> = {};
      if (name !== undefined) body.name = name;
      if (avatar !== undefined) body.avatar_url = avatar;
      await session.instanceCall('PUT', paths.chat(instanceId, `/users/${encodeURIComponent(userId)}`), { body });
      user.reload();
      return 'Saved';
    });
  };
  const deleteUser = () => {
    if (!window.confirm(`Delete the user ${userId}? Their messages stay; the user is gone.`)) return;
    void remove.run(async () => {
      await session.instanceCall('DELETE', paths.chat(instanceId, `/users/${encodeURIComponent(userId)}`));
      navigate('/users');
    });
  };
  return (
    <section>
      <h1>
        User <code>{userId}</code>
      </h1>
      <ErrorNote error={user.error} />
      {user.data && (
        <>
          <dl className="facts">
            <dt>Name</dt>
            <dd>{user.data.name}</dd>
            <dt>Created</dt>
            <dd>{when(user.data.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{when(user.data.updated_at)}</dd>
            {user.data.custom_data !== undefined && (
              <>
                <dt>Custom data</dt>
                <dd>
                  <code>{JSON.stringify(user.data.custom_data)}</code>
                </dd>
              </>
            )}
          </dl>
          <p className="links">
            <Link to={`/audit/users/${encodeURIComponent(userId)}`}>Event history</Link> · <Link to={`/cursors?user=${encodeURIComponent(userId)}`}>Read cursors</Link> ·{' '}
            <Link to={`/beams?user=${encodeURIComponent(userId)}`}>Beams devices</Link>
          </p>
          <form onSubmit={submit} aria-label="edit user" className="inline">
            <h2>Edit</h2>
            <input name="name" placeholder="Name" value={name ?? user.data.name} onChange={(e) => setName(e.target.value)} />
            <input name="avatar_url" placeholder="Avatar URL" value={avatar ?? user.data.avatar_url ?? ''} onChange={(e) => setAvatar(e.target.value)} />
            <button type="submit" disabled={save.busy}>
              Save
            </button>
            <ActionResult action={save} />
          </form>
        </>
      )}
      <h2>Rooms</h2>
      <ErrorNote error={rooms.error} />
      <ul aria-label="user rooms">
        {rooms.items.map((room) => (
          <li key={room.id}>
            <Link to={`/rooms/${encodeURIComponent(room.id)}`}>{room.name || room.id}</Link> {room.private ? '(private)' : ''}
          </li>
        ))}
        {!rooms.loading && rooms.items.length === 0 && !rooms.hasPrevious && <li className="hint">In no room</li>}
      </ul>
      {(rooms.hasNext || rooms.hasPrevious) && <Pager paged={rooms} label="room pages" />}
      <h2>Roles</h2>
      <ErrorNote error={roles.error} />
      <ul>
        {(roles.data ?? []).map((role) => (
          <li key={`${role.role_name}/${role.room_id ?? ''}`}>
            {role.role_name} ({role.scope}
            {role.room_id ? ` ${role.room_id}` : ''})
          </li>
        ))}
      </ul>
      <h2>Danger</h2>
      <button type="button" className="danger" onClick={deleteUser} disabled={remove.busy}>
        Delete user
      </button>
      <ActionResult action={remove} />
      <Erasure userId={userId} />
    </section>
  );
}

interface ErasureStatus {
  readonly id: string;
  readonly status: string;
  readonly step?: string;
  readonly erased?: Record<string, number>;
}

/** Erasure on request (GDPR Art. 17): the user and everything they wrote, destroyed; its progress. */
function Erasure({ userId }: { userId: string }) {
  const session = useSession();
  const instanceId = session.instance!.instanceId;
  const action = useAction();
  const [erasure, setErasure] = useState<ErasureStatus>();
  const request = () => {
    if (!window.confirm(`Erase ${userId} and everything they wrote? This cannot be undone.`)) return;
    void action.run(async () => {
      const started = await session.instanceCall<{ id: string; status: string }>('POST', paths.admin(instanceId, '/erasures'), { body: { user_id: userId } });
      setErasure(started);
    });
  };
  const refresh = () =>
    void action.run(async () => {
      setErasure(await session.instanceCall<ErasureStatus>('GET', paths.admin(instanceId, `/erasures/${encodeURIComponent(erasure!.id)}`)));
    });
  return (
    <div className="inline">
      <button type="button" className="danger" onClick={request} disabled={action.busy}>
        Erase user (on request)
      </button>
      {erasure && (
        <>
          <span role="status" data-testid="erasure-status">
            Erasure {erasure.id}: {erasure.status}
            {erasure.step ? ` (${erasure.step})` : ''}
          </span>
          <button type="button" onClick={refresh} disabled={action.busy}>
            Refresh
          </button>
        </>
      )}
      <ActionResult action={action} />
    </div>
  );
}
