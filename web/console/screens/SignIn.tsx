import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { checkName, deploymentMinter, instanceMinter, parseKey, parseLocator, type DeploymentCredential, type InstanceCredential } from '../api/credentials';
import { call } from '../api/http';
import { paths, useSession } from '../api/session';
import { ActionResult, useAction } from '../components/async';
import { consoleConfig } from '../config';

/**
 * Two credentials: an instance key (its secret signs su tokens here, as an SDK would) and the
 * deployment credential (CONSOLE_ADMIN_SECRET) for what spans instances. Each is tried with one
 * call that needs it before it is kept.
 */
export function SignIn() {
  const session = useSession();
  const navigate = useNavigate();
  const instanceAction = useAction();
  const deploymentAction = useAction();
  const [name, setName] = useState(session.instance?.name ?? session.deployment?.name ?? '');
  const [locator, setLocator] = useState(session.instance?.locator ?? consoleConfig.instance_locator ?? '');
  const [key, setKey] = useState('');
  const [adminSecret, setAdminSecret] = useState('');

  const signInInstance = (event: FormEvent) => {
    event.preventDefault();
    void instanceAction.run(async () => {
      const instanceId = parseLocator(locator);
      const { keyId, secret } = parseKey(key.trim());
      const credential: InstanceCredential = { locator: locator.trim(), instanceId, keyId, secret, name: checkName(name) };
      // Listing roles needs an su token of this instance: a wrong key, locator or instance is refused here.
      await call(`GET`, paths.roles(instanceId, '/roles'), { token: await instanceMinter(credential).token() });
      session.signIn({ instance: credential });
      setKey('');
      navigate('/users');
    });
  };

  const signInDeployment = (event: FormEvent) => {
    event.preventDefault();
    void deploymentAction.run(async () => {
      const credential: DeploymentCredential = { secret: adminSecret, name: checkName(name) };
      await call('GET', paths.operator('/health'), { token: await deploymentMinter(credential).token() });
      session.signIn({ deployment: credential });
      setAdminSecret('');
      navigate('/instances');
    });
  };

  // WebCrypto signs the tokens; browsers offer it only on HTTPS pages (and http://localhost).
  if (!globalThis.crypto?.subtle) {
    return (
      <main className="sign-in">
        <h1>Parley console</h1>
        <p className="error" role="alert">
          This page is not a secure context, so the browser cannot sign tokens here: open the console over HTTPS (HTTPS_PORT) or on localhost.
        </p>
      </main>
    );
  }
  return (
    <main className="sign-in">
      <h1>Parley console</h1>
      <p className="hint">
        Secrets stay in this browser tab: they sign short-lived tokens here and are never sent. Every change you make is recorded in the event log with
        your name.
      </p>
      <label>
        Your name
        <input name="console_user" value={name} onChange={(e) => setName(e.target.value)} autoComplete="username" required maxLength={64} />
      </label>
      <form onSubmit={signInInstance} aria-label="instance sign-in">
        <h2>An instance</h2>
        <label>
          Instance locator
          <input name="locator" value={locator} onChange={(e) => setLocator(e.target.value)} placeholder="v1:local:my-instance" required />
        </label>
        <label>
          Key
          <input name="key" type="password" value={key} onChange={(e) => setKey(e.target.value)} placeholder="<key id>:<secret>" autoComplete="off" required />
        </label>
        <button type="submit" disabled={instanceAction.busy}>
          Sign in to the instance
        </button>
        <ActionResult action={instanceAction} />
        {session.instance && <p className="hint">Signed in to {session.instance.instanceId}; signing in again replaces it.</p>}
      </form>
      {consoleConfig.deployment_sign_in !== false && (
        <form onSubmit={signInDeployment} aria-label="deployment sign-in">
          <h2>The deployment</h2>
          <p className="hint">Instances, keys, health and export: the CONSOLE_ADMIN_SECRET of this server.</p>
          <label>
            Administrator secret
            <input name="admin_secret" type="password" value={adminSecret} onChange={(e) => setAdminSecret(e.target.value)} autoComplete="off" required />
          </label>
          <button type="submit" disabled={deploymentAction.busy}>
            Sign in to the deployment
          </button>
          <ActionResult action={deploymentAction} />
        </form>
      )}
    </main>
  );
}
