import { createColumnHelper } from '@tanstack/react-table';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction, useLoad } from '../components/async';
import { Pager, usePaged } from '../components/paged';
import { NeedsCredential } from '../components/layout';
import { when } from '../components/table';
import { PrefixSearchList } from '../components/prefix-search';
import { RoomRestrictions } from './Bans';
import { RoomMessages } from './Messages';

interface RoomRow {
  readonly id: string;
  readonly name: string;
  readonly private: boolean;
  readonly member_count: number;
  readonly created_at: string;
  readonly updated_at: string;
}

interface Room {
  readonly id: string;
  readonly name: string;
  readonly private: boolean;
  readonly created_by_id?: string;
  readonly member_count: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly custom_data?: unknown;
}

interface Member {
  readonly user_id: string;
  readonly joined_at?: string;
}

const column = createColumnHelper<RoomRow>();
const columns = [
  column.accessor('id', { header: 'Id', cell: (c) => <Link to={`/rooms/${encodeURIComponent(c.getValue())}`}>{c.getValue()}</Link> }),
  column.accessor('name', { header: 'Name' }),
  column.accessor('private', { header: 'Private', cell: (c) => (c.getValue() ? 'yes' : '') }),
  column.accessor('member_count', { header: 'Members' }),
  column.accessor('created_at', { header: 'Created', cell: (c) => when(c.getValue()) }),
];

/** Rooms by id or name prefix, private ones too, a page at a time (parley_admin rooms). */
export function Rooms() {
  return (
    <PrefixSearchList title="Rooms" collection="rooms" noun="room" columns={columns}>
      {() => <CreateRoom />}
    </PrefixSearchList>
  );
}

function CreateRoom() {
  const session = useSession();
  const navigate = useNavigate();
  const action = useAction();
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [creator, setCreator] = useState('');
  const [isPrivate, setPrivate] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const roomId = id.trim();
      // A room is created by a user (created_by_id): the token acts as them.
      const room = await session.instanceCall<{ id: string }>('POST', paths.chat(session.instance!.instanceId, '/rooms'), {
        as: creator.trim(),
        body: { ...(roomId && { id: roomId }), name: name.trim() || roomId, private: isPrivate, user_ids: [creator.trim()] },
      });
      navigate(`/rooms/${encodeURIComponent(room.id)}`);
    });
  };
  return (
    <form onSubmit={submit} aria-label="create room" className="inline">
      <h2>Create a room</h2>
      <input name="id" placeholder="Id (optional)" value={id} onChange={(e) => setId(e.target.value)} />
      <input name="name" placeholder="Name" value={name} onChange={(e) => setName(e.target.value)} required />
      <input name="creator" placeholder="Created by (user id)" value={creator} onChange={(e) => setCreator(e.target.value)} required />
      <label className="check">
        <input type="checkbox" name="private" checked={isPrivate} onChange={(e) => setPrivate(e.target.checked)} /> private
      </label>
      <button type="submit" disabled={action.busy}>
        Create room
      </button>
      <ActionResult action={action} />
    </form>
  );
}

const MEMBERS_PAGE = 25;

/** One room: its facts, members (a page at a time), edit and delete, its bans and frozen state, and its messages. */
export function RoomDetail() {
  const session = useSession();
  const navigate = useNavigate();
  const roomId = useParams().roomId!;
  const instanceId = session.instance?.instanceId ?? '';
  const roomPath = paths.chat(instanceId, `/rooms/${encodeURIComponent(roomId)}`);
  // Parley's room answer, without member ids: Chatkit's lists every member of the room.
  const room = useLoad(() => session.instanceCall<Room>('GET', paths.admin(instanceId, `/rooms/${encodeURIComponent(roomId)}`)), [instanceId, roomId]);
  const memberPages = usePaged(
    async (after) => {
      const page = await session.instanceCall<{ members: Member[]; next?: string }>('GET', paths.admin(instanceId, `/rooms/${encodeURIComponent(roomId)}/members`), {
        query: { after, limit: MEMBERS_PAGE },
      });
      return { items: page.members, next: page.next };
    },
    [instanceId, roomId],
  );
  const members = useAction();
  const save = useAction();
  const remove = useAction();
  const [memberId, setMemberId] = useState('');
  const [name, setName] = useState<string | undefined>();
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const changeMembers = (verb: 'add' | 'remove', userId: string) =>
    void members.run(async () => {
      await session.instanceCall('PUT', `${roomPath}/users/${verb}`, { body: { user_ids: [userId] } });
      // Done once the count and the members page show the change.
      await Promise.all([room.reload(), memberPages.reload()]);
      setMemberId('');
      return verb === 'add' ? `Added ${userId}` : `Removed ${userId}`;
    });
  const rename = (event: FormEvent) => {
    event.preventDefault();
    void save.run(async () => {
      await session.instanceCall('PUT', roomPath, { body: { name } });
      room.reload();
      return 'Saved';
    });
  };
  const setPrivate = (value: boolean) =>
    void save.run(async () => {
      await session.instanceCall('PUT', roomPath, { body: { private: value } });
      room.reload();
      return value ? 'Now private' : 'Now public';
    });
  const deleteRoom = () => {
    if (!window.confirm(`Delete the room ${roomId} and all its messages?`)) return;
    void remove.run(async () => {
      await session.instanceCall('DELETE', roomPath);
      navigate('/rooms');
    });
  };
  const memberIds = memberPages.items.map((m) => m.user_id);
  return (
    <section>
      <h1>
        Room <code>{roomId}</code>
      </h1>
      <ErrorNote error={room.error} />
      {room.data && (
        <>
          <dl className="facts">
            <dt>Name</dt>
            <dd>{room.data.name}</dd>
            <dt>Private</dt>
            <dd>{room.data.private ? 'yes' : 'no'}</dd>
            <dt>Created by</dt>
            <dd>
              {room.data.created_by_id && <Link to={`/users/${encodeURIComponent(room.data.created_by_id)}`}>{room.data.created_by_id}</Link>} on {when(room.data.created_at)}
            </dd>
          </dl>
          <p className="links">
            <Link to={`/audit/rooms/${encodeURIComponent(roomId)}`}>Event history</Link> · <Link to={`/cursors?room=${encodeURIComponent(roomId)}`}>Read cursors</Link> ·{' '}
            <Link to={`/files?room=${encodeURIComponent(roomId)}`}>Files</Link>
          </p>
          <form onSubmit={rename} aria-label="edit room" className="inline">
            <input name="name" value={name ?? room.data.name} onChange={(e) => setName(e.target.value)} />
            <button type="submit" disabled={save.busy}>
              Rename
            </button>
            <button type="button" onClick={() => setPrivate(!room.data!.private)} disabled={save.busy}>
              Make {room.data.private ? 'public' : 'private'}
            </button>
            <ActionResult action={save} />
          </form>
          <h2>Members ({room.data.member_count})</h2>
          <ErrorNote error={memberPages.error} />
          <ul className="members" aria-label="members">
            {memberIds.map((id) => (
              <li key={id}>
                <Link to={`/users/${encodeURIComponent(id)}`}>{id}</Link>{' '}
                <button type="button" className="small" onClick={() => changeMembers('remove', id)} aria-label={`remove ${id}`}>
                  remove
                </button>
              </li>
            ))}
          </ul>
          {(memberPages.hasNext || memberPages.hasPrevious) && <Pager paged={memberPages} label="member pages" />}
          <form
            className="inline"
            aria-label="add member"
            onSubmit={(event) => {
              event.preventDefault();
              changeMembers('add', memberId.trim());
            }}
          >
            <input name="member" placeholder="User id" value={memberId} onChange={(e) => setMemberId(e.target.value)} required />
            <button type="submit" disabled={members.busy}>
              Add member
            </button>
            <ActionResult action={members} />
          </form>
          <RoomRestrictions roomId={roomId} />
          <RoomMessages roomId={roomId} members={memberIds} />
          <h2>Danger</h2>
          <button type="button" className="danger" onClick={deleteRoom} disabled={remove.busy}>
            Delete room
          </button>
          <ActionResult action={remove} />
        </>
      )}
    </section>
  );
}
