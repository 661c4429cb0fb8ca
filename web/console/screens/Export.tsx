import { useState } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, useAction } from '../components/async';
import { NeedsCredential } from '../components/layout';

/** Downloads an instance's export (the NDJSON of `npm run export`) through the operator route. */
export function Export() {
  const session = useSession();
  const action = useAction();
  const [instanceId, setInstanceId] = useState(session.instance?.instanceId ?? '');
  if (!session.deployment) return <NeedsCredential what="the deployment credential (CONSOLE_ADMIN_SECRET)" />;
  const download = () =>
    void action.run(async () => {
      const response = await session.operatorSend('GET', paths.operator(`/instances/${encodeURIComponent(instanceId.trim())}/export`));
      const blob = await response.blob();
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `${instanceId.trim()}.ndjson`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      return `Downloaded ${instanceId.trim()}.ndjson (${blob.size} bytes)`;
    });
  return (
    <section>
      <h1>Export</h1>
      <p className="hint">Everything of one instance as NDJSON, the same as npm run export: import it into another Parley with npm run import.</p>
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
