import { useState, type FormEvent } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction, useLoad } from '../components/async';
import { NeedsCredential } from '../components/layout';
import { Pager, usePaged } from '../components/paged';
import { when } from '../components/table';
import { WebhookFeed, WebhookReplay } from './WebhookReplay';

interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly event_types: string[];
  readonly standard_webhooks: boolean;
  readonly active: boolean;
  readonly deactivated?: Record<string, unknown>;
  readonly created_at: string;
}

interface Delivery {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly position: string;
  readonly status: string;
  readonly attempts: number;
  readonly response_code: number | null;
  readonly error?: string;
  readonly delivered_at: string;
}

const DELIVERIES_PAGE = 50;

/** Webhooks (parley_webhooks): configuration, the deliveries newest first page by page, redelivery, replay from a position or a time, the pull feed. */
export function Webhooks() {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const hooks = useLoad(() => session.instanceCall<Webhook[]>('GET', paths.webhooks(instanceId, '/webhooks')), [instanceId]);
  const [selected, setSelected] = useState<string>();
  const action = useAction();
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const deliveries = usePaged(
    async (before) => {
      if (!selected) return { items: [] as Delivery[] };
      const page = await session.instanceCall<Delivery[]>('GET', paths.webhooks(instanceId, `/webhooks/${encodeURIComponent(selected)}/deliveries`), {
        query: { before, limit: DELIVERIES_PAGE },
      });
      // A full page may have older deliveries: the next page is those before its last.
      return { items: page, next: page.length === DELIVERIES_PAGE ? page[page.length - 1].id : undefined };
    },
    [instanceId, selected],
  );
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const hookPath = (id: string) => paths.webhooks(instanceId, `/webhooks/${encodeURIComponent(id)}`);
  const change = (what: () => Promise<string>) =>
    void action.run(async () => {
      const done = await what();
      hooks.reload();
      deliveries.reload();
      return done;
    });
  const create = (event: FormEvent) => {
    event.preventDefault();
    change(async () => {
      const created = await session.instanceCall<Webhook>('POST', paths.webhooks(instanceId, '/webhooks'), { body: { url, secret } });
      setUrl('');
      setSecret('');
      return `Webhook ${created.id} created`;
    });
  };
  return (
    <section>
      <h1>Webhooks</h1>
      <ErrorNote error={hooks.error} />
      <ActionResult action={action} />
      <table aria-label="webhooks">
        <thead>
          <tr>
            <th>URL</th>
            <th>Events</th>
            <th>Active</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(hooks.data ?? []).map((hook) => (
            <tr key={hook.id} className={hook.id === selected ? 'selected' : ''}>
              <td>
                <button type="button" className="link" onClick={() => setSelected(hook.id)}>
                  {hook.url}
                </button>
              </td>
              <td>{hook.event_types.length} types</td>
              <td>
                <input
                  type="checkbox"
                  checked={hook.active}
                  aria-label={`${hook.url} active`}
                  onChange={(e) => {
                    const active = e.target.checked;
                    change(async () => (await session.instanceCall('PUT', hookPath(hook.id), { body: { active } }), active ? 'Activated' : 'Deactivated'));
                  }}
                />
                {hook.deactivated && <span className="hint"> {JSON.stringify(hook.deactivated)}</span>}
              </td>
              <td>
                <button
                  type="button"
                  className="small"
                  onClick={() => change(async () => (await session.instanceCall('POST', `${hookPath(hook.id)}/replay`, { body: { from_position: '' } }), 'Replaying from the start'))}
                >
                  replay all
                </button>{' '}
                <button
                  type="button"
                  className="small danger"
                  onClick={() => window.confirm(`Delete the webhook to ${hook.url}?`) && change(async () => (await session.instanceCall('DELETE', hookPath(hook.id)), 'Webhook deleted'))}
                >
                  delete
                </button>
              </td>
            </tr>
          ))}
          {hooks.data?.length === 0 && (
            <tr>
              <td colSpan={4} className="empty">
                No webhooks
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {selected && (
        <>
          <h2>Deliveries (newest first)</h2>
          <button type="button" onClick={deliveries.reload}>
            Refresh deliveries
          </button>
          <ErrorNote error={deliveries.error} />
          <table aria-label="deliveries">
            <thead>
              <tr>
                <th>When</th>
                <th>Event</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Response</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {deliveries.items.map((d) => (
                <tr key={d.id}>
                  <td>{when(d.delivered_at)}</td>
                  <td>
                    {d.event_type} <span className="hint">@{d.position}</span>
                  </td>
                  <td>{d.status}</td>
                  <td>{d.attempts}</td>
                  <td>{d.response_code ?? d.error ?? ''}</td>
                  <td>
                    <button
                      type="button"
                      className="small"
                      onClick={() => change(async () => (await session.instanceCall('POST', `${hookPath(selected)}/deliveries/${encodeURIComponent(d.id)}/redeliver`), 'Redelivery queued'))}
                    >
                      redeliver
                    </button>{' '}
                    <button
                      type="button"
                      className="small"
                      onClick={() => change(async () => (await session.instanceCall('POST', `${hookPath(selected)}/replay`, { body: { from_position: d.position } }), `Replaying from ${d.position}`))}
                    >
                      replay from here
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager paged={deliveries} label="delivery pages" />
          <WebhookReplay key={`replay-${selected}`} webhookId={selected} onReplayed={deliveries.reload} />
          <WebhookFeed key={`feed-${selected}`} webhookId={selected} />
        </>
      )}
      <form className="inline" onSubmit={create} aria-label="create webhook">
        <h2>Add a webhook</h2>
        <input type="url" placeholder="https://example.com/hook" value={url} onChange={(e) => setUrl(e.target.value)} required aria-label="url" className="wide" />
        <input type="password" placeholder="Signing secret" value={secret} onChange={(e) => setSecret(e.target.value)} required aria-label="secret" autoComplete="off" />
        <button type="submit" disabled={action.busy}>
          Add webhook
        </button>
      </form>
    </section>
  );
}
