import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction } from '../components/async';
import { NeedsCredential } from '../components/layout';
import { Pager, usePaged } from '../components/paged';
import { when } from '../components/table';
import { InstanceBans } from './Bans';
import { RESOLUTION_ACTIONS, type ResolutionAction } from '../../../src/modules/reports/domain/report-vocabulary';

interface ReportRow {
  readonly id: string;
  readonly status: 'open' | 'resolved';
  readonly category: string;
  readonly reason: string;
  readonly reason_erased?: true;
  readonly reporter_id: string;
  readonly filed_at: string;
  readonly target:
    | { kind: 'message'; room_id: string; message_id: number; user_id: string; message: { parts: { type: string; content?: string; url?: string }[] } | null }
    | { kind: 'user'; user_id: string };
  readonly resolution?: { action: string; note: string; resolved_by?: string; resolved_at: string };
}

const PAGE_SIZE = 20;
const STATUSES = ['open', 'resolved', 'all'] as const;
/** How the action select names each action the API takes (a new action fails the build until it has one). */
const ACTION_LABELS: Readonly<Record<ResolutionAction, string>> = {
  dismiss: 'Dismiss',
  delete_message: 'Delete the message',
  other: 'Other (say what in the note)',
};

const userLink = (id: string) => <Link to={`/users/${encodeURIComponent(id)}`}>{id}</Link>;

/** What was reported: a message (with its text while it exists) or a user. */
function Reported({ target }: { target: ReportRow['target'] }) {
  if (target.kind === 'user') return <span>the user {userLink(target.user_id)}</span>;
  const text = target.message?.parts.map((p) => p.content ?? p.url ?? p.type).join(' ');
  return (
    <span>
      message <Link to={`/audit/messages/${target.message_id}`}>#{target.message_id}</Link> by {userLink(target.user_id)} in{' '}
      <Link to={`/rooms/${encodeURIComponent(target.room_id)}`}>{target.room_id}</Link>:{' '}
      {target.message ? <q className="content">{text}</q> : <em>deleted</em>}
    </span>
  );
}

/**
 * The review queue (parley_admin reports): open reports oldest first (or resolved, or all), a
 * page at a time; each open one resolved with an action and a note. Then the instance's bans.
 */
export function Moderation() {
  const session = useSession();
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('open');
  const instanceId = session.instance?.instanceId;
  const paged = usePaged(
    async (after) => {
      if (!instanceId) return { items: [] };
      const page = await session.instanceCall<{ reports: ReportRow[]; next?: string }>('GET', paths.admin(instanceId, '/reports'), {
        query: { status, limit: PAGE_SIZE, ...(after && { after }) },
      });
      return { items: page.reports, next: page.next };
    },
    [instanceId, status],
  );
  if (!instanceId) return <NeedsCredential what="an instance key" />;
  return (
    <section>
      <h1>Moderation</h1>
      <div className="toolbar">
        <label>
          Reports{' '}
          <select name="status" value={status} onChange={(e) => setStatus(e.target.value as (typeof STATUSES)[number])} aria-label="report status">
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={paged.error} />
      <ol className="report-list" aria-label="reports">
        {paged.items.map((report) => (
          <li key={report.id} data-report-id={report.id} className={report.status}>
            <p>
              <strong className="category">{report.category}</strong> by {userLink(report.reporter_id)} <time>{when(report.filed_at)}</time>: <Reported target={report.target} />
            </p>
            {report.reason_erased ? <p className="hint">The reporter was erased: their reason is gone.</p> : report.reason ? <p className="reason">“{report.reason}”</p> : null}
            {report.resolution ? (
              <p className="resolution">
                Resolved: <strong>{report.resolution.action}</strong>
                {report.resolution.resolved_by ? ` by ${report.resolution.resolved_by}` : ''} <time>{when(report.resolution.resolved_at)}</time>
                {report.resolution.note ? ` — ${report.resolution.note}` : ''}
              </p>
            ) : (
              <Resolve report={report} onResolved={() => void paged.reload()} />
            )}
          </li>
        ))}
        {paged.items.length === 0 && !paged.loading && <li className="hint">No {status === 'all' ? '' : status} reports</li>}
      </ol>
      <Pager paged={paged} label="report pages" />
      <InstanceBans />
    </section>
  );
}

function Resolve({ report, onResolved }: { report: ReportRow; onResolved(): void }) {
  const session = useSession();
  const action = useAction();
  const actions = report.target.kind === 'message' ? RESOLUTION_ACTIONS : RESOLUTION_ACTIONS.filter((a) => a !== 'delete_message');
  const [chosen, setChosen] = useState<ResolutionAction>(actions[0]);
  const [note, setNote] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await session.instanceCall('POST', paths.admin(session.instance!.instanceId, `/reports/${encodeURIComponent(report.id)}/resolve`), { body: { action: chosen, note } });
      onResolved();
    });
  };
  return (
    <form onSubmit={submit} aria-label={`resolve report ${report.id}`} className="inline">
      <select name="action" value={chosen} onChange={(e) => setChosen(e.target.value as ResolutionAction)} aria-label="action">
        {actions.map((value) => (
          <option key={value} value={value}>
            {ACTION_LABELS[value]}
          </option>
        ))}
      </select>
      <input name="note" placeholder="Note (optional)" value={note} onChange={(e) => setNote(e.target.value)} maxLength={1000} />
      <button type="submit" disabled={action.busy}>
        Resolve
      </button>
      <ActionResult action={action} />
    </form>
  );
}
