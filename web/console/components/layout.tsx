import { Navigate, NavLink, Outlet, useNavigate } from 'react-router';
import { useSession } from '../api/session';

const INSTANCE_SCREENS: [string, string][] = [
  ['/users', 'Users'],
  ['/rooms', 'Rooms'],
  ['/audit', 'Event history'],
  ['/roles', 'Roles & permissions'],
  ['/cursors', 'Read cursors'],
  ['/files', 'Files'],
  ['/beams', 'Beams'],
  ['/feeds', 'Feeds'],
  ['/webhooks', 'Webhooks'],
  ['/moderation', 'Moderation'],
];
const DEPLOYMENT_SCREENS: [string, string][] = [
  ['/instances', 'Instances & keys'],
  ['/health', 'Health'],
  ['/export', 'Export'],
  ['/import', 'Import'],
];

/** The frame of every screen after sign-in: who is signed in where, and the screens. */
export function Layout() {
  const session = useSession();
  const navigate = useNavigate();
  if (!session.instance && !session.deployment) return <Navigate to="/sign-in" replace />;
  const link = ([to, label]: [string, string]) => (
    <li key={to}>
      <NavLink to={to}>{label}</NavLink>
    </li>
  );
  return (
    <div className="frame">
      <nav className="side" aria-label="screens">
        <p className="brand">Parley console</p>
        <h2>Deployment</h2>
        <ul>{DEPLOYMENT_SCREENS.map(link)}</ul>
        <h2>Instance {session.instance ? <code>{session.instance.instanceId}</code> : null}</h2>
        {session.instance ? <ul>{INSTANCE_SCREENS.map(link)}</ul> : <p className="hint">Sign in with an instance key to see its users and rooms.</p>}
        <div className="who">
          <p>
            Signed in as <strong data-testid="console-user">{session.instance?.name ?? session.deployment?.name}</strong>
            {session.deployment ? ' (deployment)' : ''}
          </p>
          <button type="button" onClick={() => navigate('/sign-in')}>
            Add a credential
          </button>
          <button
            type="button"
            onClick={() => {
              session.signOut();
              navigate('/sign-in');
            }}
          >
            Sign out
          </button>
        </div>
      </nav>
      <main className="content">
        <Outlet />
      </main>
    </div>
  );
}

/** A screen that needs a credential the operator has not given. */
export function NeedsCredential({ what }: { what: string }) {
  return (
    <p className="hint">
      This screen needs {what}. <NavLink to="/sign-in">Sign in</NavLink>
    </p>
  );
}
