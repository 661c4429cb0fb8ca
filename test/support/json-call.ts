/** One JSON request to a running server: the status and the parsed body (undefined when it is not JSON). */
export async function jsonCall(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json().catch(() => undefined) };
}

/** A response's status and body: parsed when it is JSON, the text as it came otherwise. */
export async function answerOf(response: Response): Promise<{ status: number; body: any }> {
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}
