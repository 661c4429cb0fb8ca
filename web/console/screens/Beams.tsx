import { Fragment, useEffect, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction } from '../components/async';
import { NeedsCredential } from '../components/layout';
import { Pager, usePaged } from '../components/paged';
import { when } from '../components/table';

interface Device {
  readonly id: string;
  readonly platform: string;
  readonly created?: string;
  readonly created_at?: string;
}

interface Interest {
  readonly name: string;
  readonly subscriber_count: number;
}

const PAGE_SIZE = 25;

/** Beams: the devices of a user and the interests with their subscriber counts (parley_admin beams). */
export function Beams() {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const [params, setParams] = useSearchParams();
  const user = params.get('user') ?? '';
  const [askedUser, setAskedUser] = useState(user);
  const [prefix, setPrefix] = useState('');
  const devices = usePaged(
    async (after) => {
      if (!user) return { items: [] as Device[] };
      const page = await session.instanceCall<{ devices: Device[]; next?: string }>('GET', paths.admin(instanceId, `/beams/users/${encodeURIComponent(user)}/devices`), {
        query: { after, limit: PAGE_SIZE },
      });
      return { items: page.devices, next: page.next };
    },
    [instanceId, user],
  );
  const interests = usePaged(
    async (after) => {
      const page = await session.instanceCall<{ interests: Interest[]; next?: string }>('GET', paths.admin(instanceId, '/beams/interests'), { query: { prefix, after, limit: PAGE_SIZE } });
      return { items: page.interests, next: page.next };
    },
    [instanceId, prefix],
  );
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const look = (event: FormEvent) => {
    event.preventDefault();
    setParams({ user: askedUser.trim() });
  };
  const deviceList = devices.items;
  return (
    <section>
      <h1>Beams</h1>
      <h2>Devices of a user</h2>
      <form className="inline" onSubmit={look} aria-label="find devices">
        <input placeholder="User id" value={askedUser} onChange={(e) => setAskedUser(e.target.value)} required aria-label="user id" />
        <button type="submit">Show devices</button>
      </form>
      <ErrorNote error={devices.error} />
      <ul aria-label="devices">
        {deviceList.map((d) => (
          <li key={d.id}>
            <code>{d.id}</code> {d.platform} {when(d.created ?? d.created_at)}
          </li>
        ))}
        {user && deviceList.length === 0 && !devices.loading && <li className="hint">No devices</li>}
      </ul>
      {user && <Pager paged={devices} />}
      <h2>Interests</h2>
      <input type="search" placeholder="Interest starts with…" value={prefix} onChange={(e) => setPrefix(e.target.value)} aria-label="search interests" />
      <ErrorNote error={interests.error} />
      <table aria-label="interests">
        <thead>
          <tr>
            <th>Interest</th>
            <th>Subscribers</th>
          </tr>
        </thead>
        <tbody>
          {interests.items.map((i) => (
            <tr key={i.name}>
              <td>{i.name}</td>
              <td>{i.subscriber_count}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager paged={interests} />
      <TestPublish user={user} />
      <PublishLookup />
    </section>
  );
}

const publishPath = (instanceId: string, to: 'users' | 'interests') => `/publish_api/v1/instances/${instanceId}/publishes/${to}`;

/** A test notification to a user's devices or an interest's subscribers (the Beams publish API, with the console's su token). */
function TestPublish({ user }: { user: string }) {
  const session = useSession();
  const action = useAction();
  const [to, setTo] = useState<'users' | 'interests'>('users');
  const [target, setTarget] = useState(user);
  const [title, setTitle] = useState('Test from the Parley console');
  const [body, setBody] = useState('Hello');
  const [published, setPublished] = useState<string>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const notification = { title, body };
      const answer = await session.instanceCall<{ publishId: string }>('POST', publishPath(session.instance!.instanceId, to), {
        body: { [to]: [target.trim()], web: { notification }, fcm: { notification }, apns: { aps: { alert: notification } } },
      });
      setPublished(answer.publishId);
      return `Published: ${answer.publishId}`;
    });
  };
  return (
    <>
      <form className="inline" onSubmit={submit} aria-label="test publish">
        <h2>Test publish</h2>
        <select value={to} onChange={(e) => setTo(e.target.value as 'users' | 'interests')} aria-label="publish to">
          <option value="users">to a user</option>
          <option value="interests">to an interest</option>
        </select>
        <input placeholder={to === 'users' ? 'User id' : 'Interest'} value={target} onChange={(e) => setTarget(e.target.value)} required aria-label="target" />
        <input placeholder="Title" value={title} onChange={(e) => setTitle(e.target.value)} required aria-label="title" />
        <input placeholder="Body" value={body} onChange={(e) => setBody(e.target.value)} aria-label="body" />
        <button type="submit" disabled={action.busy}>
          Publish
        </button>
        <ActionResult action={action} />
      </form>
      {published && <PublishReport key={published} publishId={published} />}
    </>
  );
}

/** Any publish's delivery report, by the publish id its publisher was answered (`?publish=<id>`). */
function PublishLookup() {
  const [params, setParams] = useSearchParams();
  const shown = params.get('publish') ?? '';
  const [asked, setAsked] = useState(shown);
  const look = (event: FormEvent) => {
    event.preventDefault();
    const next = new URLSearchParams(params);
    next.set('publish', asked.trim());
    setParams(next);
  };
  return (
    <>
      <form className="inline" onSubmit={look} aria-label="find publish">
        <h2>A publish's delivery</h2>
        <input placeholder="Publish id (pubid-…)" value={asked} onChange={(e) => setAsked(e.target.value)} required aria-label="publish id" className="wide" />
        <button type="submit">Show report</button>
      </form>
      {shown && <PublishReport key={shown} publishId={shown} label="found publish report" />}
    </>
  );
}

interface PublishReportView {
  readonly publish_id: string;
  readonly status: 'pending' | 'delivered';
  readonly target: { kind: 'users'; users: string[] } | { kind: 'interests'; interests: string[] };
  readonly accepted_at: string;
  readonly delivery: { devices: number; delivered: number; failed: number; removed: number; delivered_at: string } | null;
  readonly webhooks: { event_type: string; attempts: number; outcome: string; status: number | null; error: string | null }[];
}

/** How often a pending publish's report is asked for again. */
const REPORT_EVERY_MS = 1_000;

/** A publish's delivery report (parley_admin beams/publishes/:id), asked for again until it is delivered. */
function PublishReport({ publishId, label = 'publish report' }: { publishId: string; label?: string }) {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const [report, setReport] = useState<PublishReportView>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const answer = await session.instanceCall<PublishReportView>('GET', paths.admin(instanceId, `/beams/publishes/${encodeURIComponent(publishId)}`));
        if (stopped) return;
        setReport(answer);
        setError(undefined);
        if (answer.status === 'delivered') return;
      } catch (failure) {
        if (stopped) return;
        setError(failure);
      }
      timer = setTimeout(poll, REPORT_EVERY_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [session, instanceId, publishId]);
  const targets = report ? (report.target.kind === 'users' ? report.target.users : report.target.interests) : [];
  return (
    <section aria-label={label}>
      <h3>
        Publish <code>{publishId}</code>
      </h3>
      <ErrorNote error={error} />
      {report && (
        <dl className="facts">
          <dt>Status</dt>
          <dd data-status={report.status}>{report.status === 'delivered' ? 'delivered' : 'pending (refreshing)'}</dd>
          <dt>To</dt>
          <dd>
            {report.target.kind} {targets.join(', ')}
          </dd>
          <dt>Accepted</dt>
          <dd>{when(report.accepted_at)}</dd>
          {report.delivery && (
            <>
              <dt>Delivery</dt>
              <dd>
                {report.delivery.devices} devices: {report.delivery.delivered} delivered, {report.delivery.failed} failed, {report.delivery.removed} removed ({when(report.delivery.delivered_at)})
              </dd>
            </>
          )}
          {report.webhooks.map((w) => (
            <Fragment key={w.event_type}>
              <dt>Webhook {w.event_type}</dt>
              <dd>
                {w.outcome} after {w.attempts} attempt{w.attempts === 1 ? '' : 's'} ({w.status ?? w.error})
              </dd>
            </Fragment>
          ))}
        </dl>
      )}
    </section>
  );
}
