import { useState, type FormEvent } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction } from '../components/async';
import { NeedsCredential } from '../components/layout';
import { Pager, usePaged } from '../components/paged';

interface Instance {
  readonly id: string;
  readonly locator: string;
  readonly enabled: boolean;
  readonly token_provider_enabled: boolean;
  readonly keys: { readonly id: string; readonly enabled: boolean }[];
}

const PAGE_SIZE = 25;

/** Shown once: a new key's secret, never again readable from the server. */
function NewSecret({ secret }: { secret?: { instance: string; id: string; secret: string } }) {
  if (!secret) return null;
  return (
    <div className="secret" role="status">
      New key of <code>{secret.instance}</code>: <code data-testid="new-key">{`${secret.id}:${secret.secret}`}</code>
      <p className="hint">Copy it now: the server keeps only what checks it and will not show it again.</p>
    </div>
  );
}

/** Instances and their keys (deployment credential): create, enable/disable, the test token provider switch. */
export function Instances() {
  const session = useSession();
  const action = useAction();
  const [newId, setNewId] = useState('');
  const [secret, setSecret] = useState<{ instance: string; id: string; secret: string }>();
  const paged = usePaged(
    async (after) => {
      const page = await session.operatorCall<{ instances: Instance[]; next?: string }>('GET', paths.operator('/instances'), { query: { after, limit: PAGE_SIZE } });
      return { items: page.instances, next: page.next };
    },
    [session.deployment?.secret],
  );
  if (!session.deployment) return <NeedsCredential what="the deployment credential (CONSOLE_ADMIN_SECRET)" />;
  const instancePath = (id: string) => paths.operator(`/instances/${encodeURIComponent(id)}`);
  const change = (what: () => Promise<string>) =>
    void action.run(async () => {
      const done = await what();
      paged.reload();
      return done;
    });
  // What the box now says is read before anything awaits: React puts a controlled box back until the list reloads.
  const setInstance = (id: string, body: { enabled: boolean } | { token_provider_enabled: boolean }) =>
    change(async () => {
      await session.operatorCall('PUT', instancePath(id), { body });
      if ('enabled' in body) return `${id} ${body.enabled ? 'enabled' : 'disabled'}`;
      return `Test token provider of ${id} ${body.token_provider_enabled ? 'on' : 'off'}`;
    });
  const create = (event: FormEvent) => {
    event.preventDefault();
    change(async () => {
      const created = await session.operatorCall<Instance & { key: { id: string; secret: string } }>('POST', paths.operator('/instances'), { body: { id: newId.trim() } });
      setSecret({ instance: created.id, ...created.key });
      setNewId('');
      return `Created ${created.locator}`;
    });
  };
  return (
    <section>
      <h1>Instances and keys</h1>
      <NewSecret secret={secret} />
      <ErrorNote error={paged.error} />
      <table aria-label="instances">
        <thead>
          <tr>
            <th>Instance</th>
            <th>Enabled</th>
            <th>Test token provider</th>
            <th>Keys</th>
          </tr>
        </thead>
        <tbody>
          {paged.items.map((instance) => (
            <tr key={instance.id}>
              <td>
                <code>{instance.locator}</code>
              </td>
              <td>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={instance.enabled}
                    aria-label={`${instance.id} enabled`}
                    onChange={(e) => setInstance(instance.id, { enabled: e.target.checked })}
                  />
                </label>
              </td>
              <td>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={instance.token_provider_enabled}
                    aria-label={`${instance.id} token provider`}
                    onChange={(e) => setInstance(instance.id, { token_provider_enabled: e.target.checked })}
                  />
                </label>
              </td>
              <td>
                <ul className="keys">
                  {instance.keys.map((key) => (
                    <li key={key.id}>
                      <code>{key.id}</code> {key.enabled ? '' : <em>disabled</em>}{' '}
                      {key.enabled && (
                        <button
                          type="button"
                          className="small"
                          onClick={() =>
                            window.confirm(`Disable the key ${key.id}? Tokens it signed stop working.`) &&
                            change(async () => (await session.operatorCall('PUT', `${instancePath(instance.id)}/keys/${encodeURIComponent(key.id)}`, { body: { enabled: false } }), `Key ${key.id} disabled`))
                          }
                        >
                          disable
                        </button>
                      )}
                    </li>
                  ))}
                </ul>
                <button
                  type="button"
                  className="small"
                  onClick={() =>
                    change(async () => {
                      const key = await session.operatorCall<{ id: string; secret: string }>('POST', `${instancePath(instance.id)}/keys`);
                      setSecret({ instance: instance.id, ...key });
                      return `New key ${key.id}`;
                    })
                  }
                >
                  new key
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager paged={paged} />
      <ActionResult action={action} />
      <form onSubmit={create} className="inline" aria-label="create instance">
        <h2>Create an instance</h2>
        <input name="id" placeholder="Instance id" value={newId} onChange={(e) => setNewId(e.target.value)} required />
        <button type="submit" disabled={action.busy}>
          Create instance
        </button>
      </form>
    </section>
  );
}
