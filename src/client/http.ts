import { ErrorResponse } from './errors';
import { InstanceLocator } from './instance-locator';

/** Where the server is. The originals always used `https://<cluster>.pusherplatform.io:443`; Parley is self-hosted. */
export interface ServerOptions {
  /** Bare host name or address; default `<cluster>.pusherplatform.io`, as the originals. */
  host?: string;
  /** Default 443 with TLS, 80 without. */
  port?: number;
  /** HTTPS (default true). A self-signed certificate is trusted through NODE_EXTRA_CA_CERTS. */
  tls?: boolean;
}

export interface ServiceRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below the service base, e.g. `/users/alice` (callers encode path segments). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  token: string;
}

/** One service of one instance, e.g. `/services/chatkit/v6/<instanceId>`, reached with Node's fetch. */
export class ServiceClient {
  private readonly base: string;

  constructor(locator: InstanceLocator, service: string, version: string, { host, port, tls = true }: ServerOptions = {}) {
    if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new TypeError(`port must be an integer 1–65535, got ${port}`);
    this.base = `${origin(host ?? `${locator.cluster}.pusherplatform.io`, port, tls)}/services/${service}/${version}/${encodeURIComponent(locator.instanceId)}`;
  }

  /** The parsed JSON body of a 2xx answer (undefined when empty); rejects with `ErrorResponse` otherwise. */
  async request<T>({ method, path, query, body, token }: ServiceRequest): Promise<T> {
    const url = new URL(this.base + path);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'error',
    });
    const text = await response.text();
    if (!response.ok) throw errorResponse(response, text);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}

function origin(host: string, port: number | undefined, tls: boolean): string {
  if (/^[^:[\]]+:\d*$/.test(host) || /[/?#@\s]/.test(host)) {
    throw new TypeError(`host must be a bare host name or address (give the port as port), got ${JSON.stringify(host)}`);
  }
  const hostname = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host; // an IPv6 address
  return new URL(`${tls ? 'https' : 'http'}://${hostname}${port === undefined ? '' : `:${port}`}`).origin;
}

function errorResponse(response: Response, text: string): ErrorResponse {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  let parsed: { error?: unknown; error_description?: unknown; error_uri?: unknown } = {};
  try {
    parsed = JSON.parse(text) ?? {};
  } catch {
    /* not JSON (a proxy's page): fall back to the status text below */
  }
  const error = typeof parsed.error === 'string' ? parsed.error : `http/${response.status}`;
  const description = typeof parsed.error_description === 'string' ? parsed.error_description : response.statusText || text.slice(0, 200);
  return new ErrorResponse(response.status, headers, error, description, typeof parsed.error_uri === 'string' ? parsed.error_uri : undefined);
}
