import { createContext, useContext, useMemo, useState, type ReactNode } from 'react';
import {
  deploymentMinter,
  feedsMinter,
  instanceMinter,
  loadCredentials,
  saveCredentials,
  type Credentials,
  type DeploymentCredential,
  type InstanceCredential,
} from './credentials';
import { call, send, type CallOptions } from './http';

/**
 * The signed-in console: the credentials, and calls that carry a fresh token of the right kind.
 * Paths are the documented HTTP APIs (the OpenAPI document at /openapi.json).
 */
export interface Session {
  readonly credentials: Credentials;
  readonly instance?: InstanceCredential;
  readonly deployment?: DeploymentCredential;
  signIn(credentials: Credentials): void;
  signOut(): void;
  /** A call to an instance API with an su token (`as`: a user id, to act as that user). */
  instanceCall<T>(method: string, path: string, options?: Omit<CallOptions, 'token'> & { as?: string }): Promise<T>;
  /** The raw answer of an instance API call (for downloads). */
  instanceSend(method: string, path: string, options?: Omit<CallOptions, 'token'>): Promise<Response>;
  feedsCall<T>(method: string, path: string, options?: Omit<CallOptions, 'token'>): Promise<T>;
  operatorCall<T>(method: string, path: string, options?: Omit<CallOptions, 'token'>): Promise<T>;
  operatorSend(method: string, path: string, options?: Omit<CallOptions, 'token'>): Promise<Response>;
}

const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The paths of an instance's services. */
export const paths = {
  chat: (instanceId: string, path: string) => `/services/chatkit/v6/${instanceId}${path}`,
  admin: (instanceId: string, path: string) => `/services/parley_admin/v1/${instanceId}${path}`,
  audit: (instanceId: string, path: string) => `/services/parley_audit/v1/${instanceId}${path}`,
  roles: (instanceId: string, path: string) => `/services/chatkit_authorizer/v2/${instanceId}${path}`,
  cursors: (instanceId: string, path: string) => `/services/chatkit_cursors/v2/${instanceId}${path}`,
  files: (instanceId: string, path: string) => `/services/chatkit_files/v1/${instanceId}${path}`,
  webhooks: (instanceId: string, path: string) => `/services/parley_webhooks/v1/${instanceId}${path}`,
  feeds: (instanceId: string, path: string) => `/services/feeds/v1/${instanceId}${path}`,
  operator: (path: string) => `/services/parley_operator/v1${path}`,
};

const notSignedIn = (what: string) => Promise.reject(new Error(`Sign in with ${what} first`));

export function SessionProvider({ children }: { children: ReactNode }) {
  const [credentials, setCredentials] = useState<Credentials>(loadCredentials);
  const session = useMemo<Session>(() => {
    const su = credentials.instance && instanceMinter(credentials.instance);
    const feeds = credentials.instance && feedsMinter(credentials.instance);
    const operator = credentials.deployment && deploymentMinter(credentials.deployment);
    const update = (next: Credentials) => {
      saveCredentials(next);
      setCredentials(next);
    };
    return {
      credentials,
      instance: credentials.instance,
      deployment: credentials.deployment,
      signIn: (next) => update({ ...credentials, ...next }),
      signOut: () => update({}),
      async instanceCall(method, path, { as, ...options } = {}) {
        if (!su) return notSignedIn('an instance key');
        return call(method, path, { ...options, token: await su.token(as === undefined ? {} : { sub: as }) });
      },
      async instanceSend(method, path, options = {}) {
        if (!su) return notSignedIn('an instance key');
        return send(method, path, { ...options, token: await su.token() });
      },
      async feedsCall(method, path, options = {}) {
        if (!feeds) return notSignedIn('an instance key');
        return call(method, path, { ...options, token: await feeds.token() });
      },
      async operatorCall(method, path, options = {}) {
        if (!operator) return notSignedIn('the deployment credential');
        return call(method, path, { ...options, token: await operator.token() });
      },
      async operatorSend(method, path, options = {}) {
        if (!operator) return notSignedIn('the deployment credential');
        return send(method, path, { ...options, token: await operator.token() });
      },
    };
  }, [credentials]);
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}
