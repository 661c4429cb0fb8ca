import { useState } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, useAction } from '../components/async';
import { NeedsCredential } from '../components/layout';

/**
 * Downloads an instance's archive (a tar of everything `npm run export` writes) straight to disk:
 * the console asks the operator route for a one-use download link that works for a minute, and
 * the browser follows it, since a followed link carries no Authorization header.
 */
export function Export() {
  const session = useSession();
  const action = useAction();
  const [instanceId, setInstanceId] = useState(session.instance?.instanceId ?? '');
  if (!session.deployment) return <NeedsCredential what="the deployment credential (CONSOLE_ADMIN_SECRET)" />;
  const download = () =>
    void action.run(async () => {
      const id = instanceId.trim();
      const link = await session.operatorCall<{ url: string; expires_at: string }>('POST', paths.operator(`/instances/${encodeURIComponent(id)}/export/links`));
      const anchor = document.createElement('a');
      anchor.href = link.url;
      // Saved under the name the server gives it; the page stays where it is.
      anchor.download = '';
      anchor.rel = 'noreferrer';
      anchor.click();
      return `Download of ${id} started: the browser saves the archive (a .tar) to disk`;
    });
  return (
    <section>
      <h1>Export</h1>
      <p className="hint">
        Everything of one instance, as npm run export writes it (events, attachments&apos; bytes, manifest), in one .tar file: import it into another
        Parley on its Import screen, or unpack it (tar -xf) for npm run import. The export is recorded in the instance&apos;s event history under your
        name.
      </p>
      <div className="inline">
        <input aria-label="instance id" value={instanceId} onChange={(e) => setInstanceId(e.target.value)} placeholder="Instance id" />
        <button type="button" onClick={download} disabled={action.busy || !instanceId.trim()}>
          Download export
        </button>
      </div>
      <ActionResult action={action} />
    </section>
  );
}
