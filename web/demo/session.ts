import './regenerator-global';
import { ChatManager, type CurrentUser, type GlobalHooks, type Logger, TokenProvider } from '@pusher/chatkit-client';
import { BaseClient } from '@pusher/platform';
import { openPlainWebSocketsOnHttp } from './plain-websocket';

/** The instance id of a locator `v1:<cluster>:<instance id>`. */
export const instanceIdOf = (locator: string): string => locator.split(':')[2] ?? '';

/** The SDKs' chatter stays out of the console; what goes wrong does not. */
const logger: Logger = {
  verbose: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (...items) => console.warn(...items),
  error: (...items) => console.error(...items),
};

/** What the server answered when a request failed: its `error_description`, or the status. */
async function failure(response: Response): Promise<Error> {
  const body = (await response.json().catch(() => ({}))) as { error_description?: string };
  return new Error(body.error_description ?? `The server answered ${response.status}`);
}

/**
 * Creates the user (or finds the one that exists). An app's own backend does this with an su
 * token (chatkit-server's createUser); the demo asks Parley's demo sign-up route, which exists
 * only beside the test token provider.
 */
export async function signUp(instanceLocator: string, userId: string): Promise<void> {
  const response = await fetch(`/services/parley_demo/v1/${encodeURIComponent(instanceIdOf(instanceLocator))}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: userId, name: userId }),
  });
  if (!response.ok) throw await failure(response);
}

/**
 * Connects the unmodified `@pusher/chatkit-client` to the server that served this page: the
 * SDK's only way to another host is a `BaseClient` of `@pusher/platform`, here pointed at
 * `location.host` (HTTPS or plain HTTP, as the page was loaded), with tokens from the instance's
 * test token provider.
 */
export async function connect(instanceLocator: string, userId: string, hooks: GlobalHooks): Promise<CurrentUser> {
  const host = window.location.host;
  openPlainWebSocketsOnHttp(host);
  const chatManager = new ChatManager({
    instanceLocator,
    userId,
    tokenProvider: new TokenProvider({
      url: `${window.location.origin}/services/chatkit_token_provider/v1/${encodeURIComponent(instanceIdOf(instanceLocator))}/token`,
    }),
    baseClient: new BaseClient({
      host,
      encrypted: window.location.protocol === 'https:',
      sdkProduct: 'chatkit',
      sdkVersion: '1.14.1',
      logger,
    }),
    logger,
  });
  return chatManager.connect(hooks);
}
