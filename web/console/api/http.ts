/** A refused or failed call, with the API's `{error, error_description}` (or Beams' `{error, description}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface CallOptions {
  readonly token?: string;
  readonly body?: unknown;
  /** Sent as the body as it is (an upload), with its own content type. */
  readonly file?: Blob;
  readonly query?: Query;
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: string; error_description?: string; description?: string };
    return new ApiError(response.status, body.error ?? `http_${response.status}`, body.error_description ?? body.description ?? body.error ?? text);
  } catch {
    return new ApiError(response.status, `http_${response.status}`, text || response.statusText);
  }
}

export async function send(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.file) headers['content-type'] = options.file.type || 'application/octet-stream';
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      body: options.file ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
  } catch (error) {
    throw new ApiError(0, 'network', `The server could not be reached (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!response.ok) throw await errorOf(response);
  return response;
}

/** A JSON call; an empty answer (204) is `undefined`. */
export async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const response = await send(method, path, options);
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}
