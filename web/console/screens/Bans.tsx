import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction, useLoad } from '../components/async';
import { when } from '../components/table';
import type { BanResponse } from '../../../src/modules/bans/ban-terms';

/** A standing ban, as the bans routes answer it. */
type Ban = BanResponse;

/**
 * The bans standing in a room or the whole instance (the routes answer them all at once: a
 * room's or an instance's bans are read from one short stream), each with its terms; lifting
 * one after a confirmation, and banning a user with a reason, an end and shadowing: exactly
 * what the bans routes take (`PUT`/`DELETE …/bans/:u`, su tokens).
 */
function Bans({ label, where, collection }: { label: string; where: string; collection: string }) {
  const session = useSession();
  const bans = useLoad(() => session.instanceCall<{ bans: Ban[] }>('GET', collection), [collection]);
  const lift = useAction();
  const liftBan = (userId: string) => {
    if (!window.confirm(`Lift the ban of ${userId} from ${where}?`)) return;
    void lift.run(async () => {
      await session.instanceCall('DELETE', `${collection}/${encodeURIComponent(userId)}`);
      await bans.reload();
      return `Lifted the ban of ${userId}`;
    });
  };
  return (
    <div className="bans">
      <h2>Bans</h2>
      <ErrorNote error={bans.error} />
      <ul className="ban-list" aria-label={label}>
        {bans.data?.bans.map((ban) => (
          <li key={ban.user_id} data-user-id={ban.user_id}>
            <Link to={`/users/${encodeURIComponent(ban.user_id)}`}>{ban.user_id}</Link>{' '}
            {ban.shadow && <strong className="shadow">shadow </strong>}
            <span>
              banned <time>{when(ban.banned_at)}</time>
              {ban.banned_by ? ` by ${ban.banned_by}` : ''}, {ban.until ? <>until <time>{when(ban.until)}</time></> : 'no end'}
            </span>
            {ban.reason ? <q className="reason">{ban.reason}</q> : null}{' '}
            <button type="button" className="small" onClick={() => liftBan(ban.user_id)} disabled={lift.busy} aria-label={`lift the ban of ${ban.user_id}`}>
              lift
            </button>
          </li>
        ))}
        {bans.data?.bans.length === 0 && <li className="hint">No bans standing</li>}
      </ul>
      <ActionResult action={lift} />
      <BanUser where={where} collection={collection} onBanned={() => void bans.reload()} />
    </div>
  );
}

/** A ban's terms as the route takes them: `{reason, until?, shadow}` (until: a local time, sent as UTC). */
function BanUser({ where, collection, onBanned }: { where: string; collection: string; onBanned(): void }) {
  const session = useSession();
  const action = useAction();
  const [userId, setUserId] = useState('');
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [shadow, setShadow] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const id = userId.trim();
      await session.instanceCall('PUT', `${collection}/${encodeURIComponent(id)}`, {
        body: { reason, shadow, ...(until && { until: new Date(until).toISOString() }) },
      });
      setUserId('');
      setReason('');
      setUntil('');
      setShadow(false);
      onBanned();
      return `Banned ${id} from ${where}`;
    });
  };
  return (
    <form onSubmit={submit} aria-label="ban user" className="inline">
      <input name="user" placeholder="User id" value={userId} onChange={(e) => setUserId(e.target.value)} required />
      <input name="reason" placeholder="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} />
      <label>
        until <input type="datetime-local" name="until" value={until} onChange={(e) => setUntil(e.target.value)} aria-label="until" />
      </label>
      <label className="check" title="Nothing is refused: what they send is shown to them alone">
        <input type="checkbox" name="shadow" checked={shadow} onChange={(e) => setShadow(e.target.checked)} /> shadow
      </label>
      <button type="submit" disabled={action.busy}>
        Ban
      </button>
      <ActionResult action={action} />
    </form>
  );
}

/** A room's standing bans and whether it is frozen (read only for everyone but su), with the switch. */
export function RoomRestrictions({ roomId }: { roomId: string }) {
  const session = useSession();
  const roomPath = paths.chat(session.instance!.instanceId, `/rooms/${encodeURIComponent(roomId)}`);
  const frozen = useLoad(() => session.instanceCall<{ frozen: boolean }>('GET', `${roomPath}/freeze`), [roomPath]);
  const freeze = useAction();
  const setFrozen = (value: boolean) =>
    void freeze.run(async () => {
      await session.instanceCall(value ? 'PUT' : 'DELETE', `${roomPath}/freeze`);
      await frozen.reload();
      return value ? 'Frozen: read only' : 'Unfrozen';
    });
  return (
    <section aria-label="restrictions">
      <p className="frozen">
        {frozen.data && (
          <>
            <span data-frozen={frozen.data.frozen}>{frozen.data.frozen ? 'Frozen: read only (every write but su’s is refused)' : 'Not frozen'}</span>{' '}
            <button type="button" className="small" onClick={() => setFrozen(!frozen.data!.frozen)} disabled={freeze.busy}>
              {frozen.data.frozen ? 'Unfreeze' : 'Freeze'}
            </button>
          </>
        )}
      </p>
      <ErrorNote error={frozen.error} />
      <ActionResult action={freeze} />
      <Bans label="room bans" where={`the room ${roomId}`} collection={`${roomPath}/bans`} />
    </section>
  );
}

/** The instance's standing bans (every room, every write). */
export function InstanceBans() {
  const session = useSession();
  return <Bans label="instance bans" where="the instance" collection={paths.admin(session.instance!.instanceId, '/bans')} />;
}
