import { readFileSync } from 'node:fs';
import { DOMWindow, JSDOM, VirtualConsole } from 'jsdom';
import type { TestServer } from './test-server';

/**
 * Drives the unmodified `@pusher/chatkit-client` 1.14.1 browser bundle against a test server
 * (wire study §8). Every simulated user gets its own jsdom window whose document URL is the
 * server's HTTPS origin (same origin, so jsdom's CORS checks never preflight), created once
 * the server's port is known. The UMD bundles of `@pusher/platform` 0.18.0 and chatkit-client
 * are evaluated inside that window (`runScripts: 'outside-only'` + `window.eval`), so every
 * `window.XMLHttpRequest`, `window.WebSocket`, `window.setTimeout` and `navigator` they touch
 * is the window's own; nothing falls back to Node globals.
 *
 * Teardown (pitfall 1 of §8): `currentUser.disconnect()` unsubscribes but leaves the socket
 * and its ping timer running, and the platform reconnects without backoff when the socket
 * drops. `window.close()` removes the socket's listeners before closing it and stops every
 * window timer, so closing all windows BEFORE the server stops leaves nothing behind.
 */

const PLATFORM_BUNDLE = readFileSync(require.resolve('@pusher/platform'), 'utf8');
const CHATKIT_BUNDLE = readFileSync(require.resolve('@pusher/chatkit-client'), 'utf8');

export const HOOK_TIMEOUT_MS = 15_000;

/** What the SDKs log, kept (not printed) so a failing test can show it. */
export interface LogEntry {
  level: 'verbose' | 'debug' | 'info' | 'warn' | 'error';
  items: unknown[];
}

export interface ChatkitBrowser {
  readonly window: DOMWindow & Record<string, any>;
  /** `ChatManager` and `TokenProvider` of the chatkit bundle loaded in this window. */
  readonly Chatkit: { ChatManager: any; TokenProvider: any };
  /** `@pusher/platform` loaded in this window (`BaseClient`, …). */
  readonly PusherPlatform: { BaseClient: any };
  /** SDK log lines and errors jsdom reported (uncaught exceptions in window callbacks). */
  readonly log: LogEntry[];
  /** How many WebSockets the window has constructed (the platform opens one per BaseClient). */
  readonly socketsOpened: number;
  readonly closed: boolean;
  close(): void;
}

/** A quiet logger for both SDKs that records instead of printing (set CHATKIT_DEBUG=1 to print). */
export function recordingLogger(log: LogEntry[], label: string) {
  const at = (level: LogEntry['level']) => (...items: unknown[]) => {
    log.push({ level, items });
    if (process.env.CHATKIT_DEBUG) console.log(`[${label}] ${level}`, ...items);
  };
  return { verbose: at('verbose'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A fresh jsdom window on `origin` with @pusher/platform and chatkit-client loaded into it. */
export function openBrowser(origin: string, label = 'browser'): ChatkitBrowser {
  const log: LogEntry[] = [];
  const virtualConsole = new VirtualConsole();
  virtualConsole.on('jsdomError', (e) => log.push({ level: 'error', items: ['jsdomError', e.message, (e as any).detail] }));
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    virtualConsole.on(level, (...items: unknown[]) => log.push({ level: level === 'log' ? 'info' : level, items }));
  }
  const dom = new JSDOM('<!doctype html><html><head></head><body></body></html>', {
    url: origin,
    runScripts: 'outside-only',
    pretendToBeVisual: true,
    virtualConsole,
  });
  const window = dom.window as ChatkitBrowser['window'];
  // Count sockets (a reconnect loop would show up here); construction itself is the window's own.
  let socketsOpened = 0;
  window.WebSocket = new Proxy(window.WebSocket, {
    construct(target, args, newTarget) {
      socketsOpened++;
      return Reflect.construct(target, args, newTarget);
    },
  });
  window.eval(PLATFORM_BUNDLE);
  window.eval(CHATKIT_BUNDLE);
  const Chatkit = window.Chatkit;
  const PusherPlatform = window.PusherPlatform;
  if (!Chatkit?.ChatManager || !PusherPlatform?.BaseClient) throw new Error('The SDK bundles did not load into the window');
  let closed = false;
  return {
    window,
    Chatkit,
    PusherPlatform,
    log,
    get socketsOpened() {
      return socketsOpened;
    },
    get closed() {
      return closed;
    },
    close() {
      if (closed) return;
      closed = true;
      window.close();
    },
  };
}

/** Records every hook call and lets a test wait for one. */
export class HookRecorder {
  readonly calls: { hook: string; args: any[] }[] = [];
  private readonly waiters = new Set<() => void>();

  /** A hook function that records its calls under `name`. */
  on(name: string): (...args: any[]) => void {
    return (...args: any[]) => {
      this.calls.push({ hook: name, args });
      for (const check of [...this.waiters]) check();
    };
  }

  /** `{name: hook}` for each name. */
  hooks(...names: string[]): Record<string, (...args: any[]) => void> {
    return Object.fromEntries(names.map((name) => [name, this.on(name)]));
  }

  /** Arguments of every call of `name` so far. */
  argsOf(name: string): any[][] {
    return this.calls.filter((c) => c.hook === name).map((c) => c.args);
  }

  /** The first call of `name` (past or future) whose arguments satisfy `match`. */
  async waitFor(name: string, match: (...args: any[]) => boolean = () => true, timeoutMs = HOOK_TIMEOUT_MS): Promise<any[]> {
    const find = () => this.calls.find((c) => c.hook === name && match(...c.args))?.args;
    return this.until(find, `${name} (matching) within ${timeoutMs} ms`, timeoutMs);
  }

  /** The arguments of the first `count` calls of `name`, once there are that many. */
  async waitForCount(name: string, count: number, timeoutMs = HOOK_TIMEOUT_MS): Promise<any[][]> {
    const find = () => {
      const args = this.argsOf(name);
      return args.length >= count ? args.slice(0, count) : undefined;
    };
    return this.until(find, `${count} × ${name} within ${timeoutMs} ms`, timeoutMs);
  }

  private until<T>(find: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    const found = find();
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = find();
        if (value === undefined) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        const seen = this.calls.map((c) => c.hook).join(', ') || 'none';
        reject(new Error(`Expected ${what}; hook calls so far: ${seen}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }
}

export interface ChatkitSession {
  readonly userId: string;
  readonly browser: ChatkitBrowser;
  readonly manager: any;
  /** Global hooks passed to connect(). */
  readonly hooks: HookRecorder;
  /** The CurrentUser, once connect() resolved. */
  currentUser?: any;
  connect(): Promise<any>;
  /** Disconnects (if connected), then closes the window. Idempotent. */
  close(): void;
}

export const GLOBAL_HOOKS = [
  'onAddedToRoom',
  'onRemovedFromRoom',
  'onRoomUpdated',
  'onRoomDeleted',
  'onUserStartedTyping',
  'onUserStoppedTyping',
  'onUserJoinedRoom',
  'onUserLeftRoom',
  'onPresenceChanged',
  'onNewReadCursor',
];

export const ROOM_HOOKS = [
  'onMessage',
  'onMessageDeleted',
  'onUserStartedTyping',
  'onUserStoppedTyping',
  'onUserJoined',
  'onUserLeft',
  'onPresenceChanged',
  'onNewReadCursor',
];

/**
 * Keeps every session it creates, so `closeAll()` (afterEach/afterAll, before the server
 * stops) can disconnect and close whatever a failing test left open.
 */
export class ChatkitClients {
  private readonly sessions: ChatkitSession[] = [];

  constructor(
    private readonly server: () => TestServer,
    private readonly connectionTimeout = 15_000,
  ) {}

  get origin(): string {
    const { httpsPort } = this.server();
    if (!httpsPort) throw new Error('The test server has no HTTPS listener');
    return `https://localhost:${httpsPort}`;
  }

  get tokenUrl(): string {
    return `${this.origin}/services/chatkit_token_provider/v1/${this.server().instanceId}/token`;
  }

  /** A ChatManager for `userId` in a new window (its BaseClient opens the socket right away). */
  session(userId: string): ChatkitSession {
    const s = this.server();
    const browser = openBrowser(`${this.origin}/`, userId);
    const { ChatManager, TokenProvider } = browser.Chatkit;
    const logger = recordingLogger(browser.log, userId);
    const manager = new ChatManager({
      instanceLocator: s.locator,
      userId,
      tokenProvider: new TokenProvider({ url: this.tokenUrl }),
      baseClient: new browser.PusherPlatform.BaseClient({
        host: `localhost:${s.httpsPort}`,
        sdkProduct: 'chatkit',
        sdkVersion: '1.14.1',
        logger,
      }),
      logger,
      connectionTimeout: this.connectionTimeout,
    });
    const hooks = new HookRecorder();
    const session: ChatkitSession = {
      userId,
      browser,
      manager,
      hooks,
      async connect() {
        session.currentUser = await manager.connect(hooks.hooks(...GLOBAL_HOOKS));
        return session.currentUser;
      },
      close() {
        if (browser.closed) return;
        try {
          if (session.currentUser) session.currentUser.disconnect();
          else manager.disconnect();
        } finally {
          browser.close();
        }
      },
    };
    this.sessions.push(session);
    return session;
  }

  /** A new session, connected. */
  async connect(userId: string): Promise<ChatkitSession> {
    const session = this.session(userId);
    await session.connect();
    return session;
  }

  /** Closes every session still open (disconnect, then window.close()). */
  closeAll(): void {
    for (const session of this.sessions.splice(0)) session.close();
  }
}
