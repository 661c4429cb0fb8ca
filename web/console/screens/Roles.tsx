import { useState, type FormEvent } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction, useLoad } from '../components/async';
import { NeedsCredential } from '../components/layout';

interface Role {
  readonly name: string;
  readonly scope: 'global' | 'room';
  readonly permissions: string[];
}

const splitList = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** Roles and their permissions (chatkit_authorizer), and a user's roles. */
export function Roles() {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const roles = useLoad(() => session.instanceCall<Role[]>('GET', paths.roles(instanceId, '/roles')), [instanceId]);
  const action = useAction();
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'global' | 'room'>('global');
  const [permissions, setPermissions] = useState('');
  const [userId, setUserId] = useState('');
  const [roleName, setRoleName] = useState('');
  const [roomId, setRoomId] = useState('');
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const rolePath = (role: Role) => paths.roles(instanceId, `/roles/${encodeURIComponent(role.name)}/scope/${role.scope}`);
  const change = (what: () => Promise<string>) =>
    void action.run(async () => {
      const done = await what();
      roles.reload();
      return done;
    });
  const create = (event: FormEvent) => {
    event.preventDefault();
    change(async () => (await session.instanceCall('POST', paths.roles(instanceId, '/roles'), { body: { name, scope, permissions: splitList(permissions) } }), `Role ${name} created`));
  };
  const assign = (event: FormEvent) => {
    event.preventDefault();
    change(
      async () => (
        await session.instanceCall('PUT', paths.roles(instanceId, `/users/${encodeURIComponent(userId)}/roles`), { body: { name: roleName, ...(roomId && { room_id: roomId }) } }),
        `${userId} is ${roleName}${roomId ? ` in ${roomId}` : ''}`
      ),
    );
  };
  const unassign = () =>
    change(
      async () => (
        await session.instanceCall('DELETE', paths.roles(instanceId, `/users/${encodeURIComponent(userId)}/roles`), { query: { room_id: roomId || undefined } }),
        `${userId}'s ${roomId ? `role in ${roomId}` : 'global role'} removed`
      ),
    );
  return (
    <section>
      <h1>Roles and permissions</h1>
      <ErrorNote error={roles.error} />
      <ActionResult action={action} />
      <table aria-label="roles">
        <thead>
          <tr>
            <th>Role</th>
            <th>Scope</th>
            <th>Permissions</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(roles.data ?? []).map((role) => (
            <tr key={`${role.name}/${role.scope}`}>
              <td>{role.name}</td>
              <td>{role.scope}</td>
              <td className="permissions">
                {role.permissions.map((permission) => (
                  <span key={permission} className="tag">
                    {permission}
                    <button
                      type="button"
                      className="small"
                      aria-label={`remove ${permission} from ${role.name}`}
                      onClick={() => change(async () => (await session.instanceCall('PUT', `${rolePath(role)}/permissions`, { body: { remove_permissions: [permission] } }), `${permission} removed from ${role.name}`))}
                    >
                      ×
                    </button>
                  </span>
                ))}
                <form
                  className="inline"
                  onSubmit={(event) => {
                    event.preventDefault();
                    const input = (event.currentTarget.elements.namedItem('add') as HTMLInputElement).value;
                    change(async () => (await session.instanceCall('PUT', `${rolePath(role)}/permissions`, { body: { add_permissions: splitList(input) } }), `Added to ${role.name}`));
                  }}
                >
                  <input name="add" placeholder="add permission" aria-label={`add permission to ${role.name}`} />
                </form>
              </td>
              <td>
                <button
                  type="button"
                  className="danger small"
                  onClick={() => window.confirm(`Delete the role ${role.name}?`) && change(async () => (await session.instanceCall('DELETE', rolePath(role)), `Role ${role.name} deleted`))}
                >
                  delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={create} className="inline" aria-label="create role">
        <h2>Create a role</h2>
        <input placeholder="Name" value={name} onChange={(e) => setName(e.target.value)} required aria-label="role name" />
        <select value={scope} onChange={(e) => setScope(e.target.value as 'global' | 'room')} aria-label="scope">
          <option value="global">global</option>
          <option value="room">room</option>
        </select>
        <input placeholder="permissions, comma separated" value={permissions} onChange={(e) => setPermissions(e.target.value)} aria-label="permissions" />
        <button type="submit">Create role</button>
      </form>
      <form onSubmit={assign} className="inline" aria-label="assign role">
        <h2>A user's role</h2>
        <input placeholder="User id" value={userId} onChange={(e) => setUserId(e.target.value)} required aria-label="user id" />
        <input placeholder="Role" value={roleName} onChange={(e) => setRoleName(e.target.value)} aria-label="role" />
        <input placeholder="Room id (room role)" value={roomId} onChange={(e) => setRoomId(e.target.value)} aria-label="room id" />
        <button type="submit">Assign</button>
        <button type="button" onClick={unassign} disabled={!userId}>
          Remove
        </button>
      </form>
    </section>
  );
}
