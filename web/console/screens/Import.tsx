import { useEffect, useState, type FormEvent } from 'react';
import { paths, useSession } from '../api/session';
import { ErrorNote } from '../components/async';
import { NeedsCredential } from '../components/layout';

/** What `GET …/imports/:importId` answers. */
interface ImportJob {
  readonly id: string;
  readonly instance_id: string;
  readonly status: 'receiving' | 'checking' | 'importing' | 'done' | 'failed';
  readonly received_bytes: number;
  readonly events_total?: number;
  readonly blobs_total?: number;
  readonly events_appended: number;
  readonly events_present: number;
  readonly blobs_copied: number;
  readonly blobs_present: number;
  readonly error?: { readonly error: string; readonly error_description: string };
}

const POLL_EVERY_MS = 500;
/** `parley-export-<instance>-<time>.tar`, as the Export screen's download is named. */
const EXPORT_FILE_NAME = /^parley-export-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z\.tar$/;

/**
 * Uploads an instance archive (the Export screen's .tar) to `POST …/instances/:id/import` and
 * follows the import job until it ends: checked first as npm run import checks it (nothing is
 * written on a refusal), then loaded; importing it again changes nothing.
 */
export function Import() {
  const session = useSession();
  const [instanceId, setInstanceId] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [job, setJob] = useState<ImportJob | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const running = job !== null && job.status !== 'done' && job.status !== 'failed';
  useEffect(() => {
    if (!job || !running) return;
    let stopped = false;
    const timer = setTimeout(async () => {
      try {
        const next = await session.operatorCall<ImportJob>('GET', paths.operator(`/instances/${encodeURIComponent(job.instance_id)}/imports/${job.id}`));
        if (!stopped) setJob(next);
      } catch (failure) {
        if (!stopped) setError(failure);
      }
    }, POLL_EVERY_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [job, running, session]);

  if (!session.deployment) return <NeedsCredential what="the deployment credential (CONSOLE_ADMIN_SECRET)" />;

  const pick = (picked: File | null) => {
    setFile(picked);
    const named = picked && EXPORT_FILE_NAME.exec(picked.name);
    if (named && !instanceId.trim()) setInstanceId(named[1]);
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(null);
    setJob(null);
    try {
      setJob(await session.operatorCall<ImportJob>('POST', paths.operator(`/instances/${encodeURIComponent(instanceId.trim())}/import`), { file }));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h1>Import</h1>
      <p className="hint">
        An instance archive from the Export screen (or a tar of an npm run export directory) into this server, under its own instance id. Its key
        secrets are sealed with the source&apos;s master key: this server must use the same one. The whole archive is checked before anything is
        written, and what this server holds already of it is skipped.
      </p>
      <form className="inline" aria-label="import" onSubmit={(e) => void submit(e)}>
        <input type="file" name="archive" accept=".tar,application/x-tar" aria-label="archive" onChange={(e) => pick(e.target.files?.[0] ?? null)} />
        <input name="instance_id" aria-label="instance id" value={instanceId} onChange={(e) => setInstanceId(e.target.value)} placeholder="Instance id" />
        <button type="submit" disabled={busy || running || !file || !instanceId.trim()}>
          {busy ? 'Uploading…' : 'Import'}
        </button>
      </form>
      <ErrorNote error={error} />
      {job ? <ImportProgress job={job} /> : null}
    </section>
  );
}

function ImportProgress({ job }: { job: ImportJob }) {
  const of = (total?: number) => (total === undefined ? '' : ` of ${total}`);
  return (
    <div aria-label="import progress">
      <p role="status">
        Import {job.id}: <strong data-testid="import-status">{job.status}</strong>
      </p>
      <table>
        <tbody>
          <tr>
            <th>Events appended</th>
            <td>
              {job.events_appended}
              {of(job.events_total)}
            </td>
          </tr>
          <tr>
            <th>Events already here</th>
            <td>{job.events_present}</td>
          </tr>
          <tr>
            <th>Attachments copied</th>
            <td>
              {job.blobs_copied}
              {of(job.blobs_total)}
            </td>
          </tr>
          <tr>
            <th>Attachments already here</th>
            <td>{job.blobs_present}</td>
          </tr>
          <tr>
            <th>Archive</th>
            <td>{job.received_bytes} bytes</td>
          </tr>
        </tbody>
      </table>
      {job.error ? (
        <p className="error" role="alert">
          {job.error.error_description} ({job.error.error})
        </p>
      ) : null}
      {job.status === 'done' ? (
        <p className="done">
          Imported {job.instance_id}: {job.events_appended} events appended, {job.events_present} already here. Its read models catch up in the background.
        </p>
      ) : null}
    </div>
  );
}
