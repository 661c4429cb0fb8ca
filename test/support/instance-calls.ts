import jwt from 'jsonwebtoken';

export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: any;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly body?: unknown;
  /** The token to call with: su unless given; null calls with none. */
  readonly as?: string | null;
  /** Answers of 300 or more are returned, not thrown. */
  readonly anyStatus?: boolean;
  /** Headers besides the token's and the body's (an `Idempotency-Key`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Calls to one instance of a real server, as its su or as one of its users (tokens signed with
 * `key`, `<id>:<secret>`), and the paths of its services: what the specs that scan a data
 * directory after deletes each need.
 */
export function instanceCalls(instance: string, key: string, port: () => number) {
  const [keyId, secret] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
  const token = (claims: { sub?: string; su?: boolean }) => jwt.sign({ instance, iss: `api_keys/${keyId}`, ...claims }, secret, { algorithm: 'HS256', expiresIn: 3600 });
  const su = () => token({ su: true });
  return {
    token,
    su,
    as: (sub: string) => token({ sub }),
    /** A call; a status of 300 or more throws unless `anyStatus`. */
    async call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
      const as = options.as === undefined ? su() : options.as;
      const response = await fetch(`http://127.0.0.1:${port()}${path}`, {
        method,
        headers: { ...(as !== null && { authorization: `Bearer ${as}` }), ...(options.body !== undefined && { 'content-type': 'application/json' }), ...options.headers },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await response.text();
      if (response.status >= 300 && !options.anyStatus) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return { status: response.status, text, body: text ? JSON.parse(text) : undefined, headers: response.headers };
    },
    v6: (path: string) => `/services/chatkit/v6/${instance}${path}`,
    v2: (path: string) => `/services/chatkit/v2/${instance}${path}`,
    admin: (path: string) => `/services/parley_admin/v1/${instance}${path}`,
    audit: (path: string) => `/services/parley_audit/v1/${instance}${path}`,
  };
}
