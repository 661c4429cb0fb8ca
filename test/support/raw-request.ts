/** What a binary-safe HTTP call answered: the bytes, and the JSON they hold if they are JSON. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly bytes: Buffer;
  readonly json: any;
}

/** An HTTP call with a binary body (the test server's `request` takes text); relative URLs go to `baseUrl`. */
export async function rawRequest(
  baseUrl: string,
  method: string,
  url: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const response = await fetch(url.startsWith('http') ? url : baseUrl + url, { method, body: body && new Uint8Array(body), headers });
  const bytes = Buffer.from(await response.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, bytes, json };
}
