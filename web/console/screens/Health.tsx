import { useSession, paths } from '../api/session';
import { call } from '../api/http';
import { ErrorNote, useLoad } from '../components/async';

interface Projection {
  readonly name: string;
  readonly state: string;
  readonly lag?: number;
  readonly error?: string;
}

interface Health {
  readonly status: string;
  readonly log_position?: string;
  readonly projections: Projection[] | Record<string, { state: string; lag_events?: number; error?: string }>;
  readonly live_log?: Record<string, unknown>;
  readonly storage?: Record<string, unknown>;
  readonly webhooks_failing?: { instance_id: string; webhook_id: string; url: string; failing_since: string }[];
  readonly problems?: string[];
  readonly warnings?: string[];
}

/** Both shapes: the operator route's list and /health's map by name. */
function projectionsOf(health: Health): Projection[] {
  if (Array.isArray(health.projections)) return health.projections;
  return Object.entries(health.projections ?? {}).map(([name, p]) => ({ name, state: p.state, lag: p.lag_events, error: p.error }));
}

/**
 * The deployment's health: the operator route in detail with the deployment credential, else
 * the public /health summary.
 */
export function Health() {
  const session = useSession();
  const health = useLoad(
    () => (session.deployment ? session.operatorCall<Health>('GET', paths.operator('/health')) : call<Health>('GET', '/health')),
    [session.deployment?.secret],
  );
  const data = health.data;
  return (
    <section>
      <h1>Health</h1>
      {!session.deployment && <p className="hint">The public summary: sign in to the deployment for the detail (webhooks failing, the log position).</p>}
      <button type="button" onClick={health.reload}>
        Refresh
      </button>
      <ErrorNote error={health.error} />
      {data && (
        <>
          <p className={`status status-${data.status}`}>
            Status: <strong data-testid="health-status">{data.status}</strong> {data.log_position && <>· log position {data.log_position}</>}
          </p>
          {[...(data.problems ?? []), ...(data.warnings ?? [])].map((text) => (
            <p key={text} className="error">
              {text}
            </p>
          ))}
          <h2>Projections</h2>
          <table aria-label="projections">
            <thead>
              <tr>
                <th>Projection</th>
                <th>State</th>
                <th>Lag (events)</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {projectionsOf(data).map((p) => (
                <tr key={p.name}>
                  <td>{p.name}</td>
                  <td>{p.state}</td>
                  <td>{p.lag ?? ''}</td>
                  <td>{p.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Live log</h2>
          <pre>{JSON.stringify(data.live_log, null, 2)}</pre>
          <h2>Storage</h2>
          <pre>{JSON.stringify(data.storage, null, 2)}</pre>
          {data.webhooks_failing && (
            <>
              <h2>Webhooks failing</h2>
              <ul>
                {data.webhooks_failing.map((w) => (
                  <li key={`${w.instance_id}/${w.webhook_id}`}>
                    {w.instance_id} / {w.webhook_id} → {w.url} since {w.failing_since}
                  </li>
                ))}
                {data.webhooks_failing.length === 0 && <li className="hint">None</li>}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}
