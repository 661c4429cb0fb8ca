/**
 * @jest-environment node
 */
import { WebSocket } from 'ws';
import { ChatkitBrowser, openBrowser } from '../support/chatkit-client-harness';
import { wsUrlOf } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

const APP_ORIGIN = 'http://app.example.test';
const OTHER_ORIGIN = 'http://elsewhere.example.test';

/** A SUBSCRIBE from a page's XMLHttpRequest (jsdom preflights it as a browser does): the status and the text once `until` shows up. */
function subscribeFromPage(page: ChatkitBrowser, url: string, token: string, until: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const xhr = new page.window.XMLHttpRequest();
    xhr.open('SUBSCRIBE', url);
    xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.setRequestHeader('X-SDK-Product', 'chatkit');
    xhr.setRequestHeader('Last-Event-Id', '0');
    const done = () => {
      resolve({ status: xhr.status, text: xhr.responseText });
      xhr.abort();
    };
    xhr.onreadystatechange = () => {
      if (xhr.readyState >= 3 && xhr.responseText.includes(until)) done();
    };
    xhr.onerror = () => resolve({ status: xhr.status, text: '' });
    xhr.send();
  });
}

/** A PUT or DELETE from the page, preflighted likewise. */
function sendFromPage(page: ChatkitBrowser, method: string, url: string, token: string, body?: unknown): Promise<number> {
  return new Promise((resolve) => {
    const xhr = new page.window.XMLHttpRequest();
    xhr.open(method, url);
    xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.setRequestHeader('Content-Type', 'application/json');
    xhr.onload = () => resolve(xhr.status);
    xhr.onerror = () => resolve(xhr.status);
    xhr.send(body === undefined ? null : JSON.stringify(body));
  });
}

/** Opens /ws with the given Origin header (or none): 'open', or the status the upgrade was refused with. */
function upgrade(s: TestServer, origin?: string): Promise<'open' | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrlOf(s.baseUrl), { headers: origin ? { origin } : {} });
    ws.once('open', () => {
      ws.close();
      resolve('open');
    });
    ws.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      response.resume();
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

const preflight = (s: TestServer, origin: string, method: string, headers: string) =>
  fetch(`${s.baseUrl}${s.chat('/users')}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

describe('cross-origin browsers, CORS_ORIGINS unset (any origin)', () => {
  let s: TestServer;
  const pages: ChatkitBrowser[] = [];
  beforeAll(async () => {
    s = await startTestServer();
    await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } });
  });
  afterAll(async () => {
    for (const page of pages) page.close();
    await s.close();
  });

  it('answers a preflight for SUBSCRIBE, PUT and DELETE with the SDK headers', async () => {
    for (const method of ['SUBSCRIBE', 'PUT', 'DELETE']) {
      const res = await preflight(s, APP_ORIGIN, method, 'authorization,content-type,x-sdk-product,x-sdk-version,last-event-id');
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')!.split(/,\s*/)).toEqual(expect.arrayContaining([method]));
      const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-sdk-product', 'x-sdk-version', 'last-event-id']));
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('lets a page on another origin SUBSCRIBE to the user stream and PUT to the API', async () => {
    const page = openBrowser(`${APP_ORIGIN}/`, 'cors');
    pages.push(page);
    const token = s.token({ sub: 'ann' });
    const stream = await subscribeFromPage(page, `${s.baseUrl}${s.chat('/users')}`, token, 'initial_state');
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('"current_user"');
    expect(await sendFromPage(page, 'PUT', `${s.baseUrl}${s.chat('/users/ann')}`, s.token({ su: true }), { name: 'Ann B' })).toBe(204);
    expect((await s.request('GET', s.chat('/users/ann'))).body.name).toBe('Ann B');
  });

  it('puts CORS headers on error answers too, so the page can read them', async () => {
    const res = await fetch(`${s.baseUrl}${s.chat('/users/nobody')}`, { headers: { origin: APP_ORIGIN, authorization: `Bearer ${s.token({ su: true })}` } });
    expect(res.status).toBe(404);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    // A page can read when a rate-limited (429) call may be retried, and how much is left.
    const exposed = res.headers.get('access-control-expose-headers')!.toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'retry-after', 'x-ratelimit-remaining', 'x-ratelimit-reset']));
  });

  it('lets any origin open /ws', async () => {
    expect(await upgrade(s, OTHER_ORIGIN)).toBe('open');
  });
});

describe('cross-origin browsers, CORS_ORIGINS naming one origin', () => {
  let s: TestServer;
  const pages: ChatkitBrowser[] = [];
  beforeAll(async () => {
    s = await startTestServer({ env: { CORS_ORIGINS: `${APP_ORIGIN}, https://other.example.test` } });
    await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } });
  });
  afterAll(async () => {
    for (const page of pages) page.close();
    await s.close();
  });

  it('answers the listed origin by name and another without CORS headers', async () => {
    const listed = await preflight(s, APP_ORIGIN, 'SUBSCRIBE', 'authorization');
    expect(listed.status).toBe(204);
    expect(listed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(listed.headers.get('vary')).toMatch(/origin/i);
    const other = await preflight(s, OTHER_ORIGIN, 'SUBSCRIBE', 'authorization');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('serves a SUBSCRIBE from a page on the listed origin, and a page elsewhere cannot read or change anything', async () => {
    const allowed = openBrowser(`${APP_ORIGIN}/`, 'listed');
    const refused = openBrowser(`${OTHER_ORIGIN}/`, 'elsewhere');
    pages.push(allowed, refused);
    const token = s.token({ sub: 'ann' });
    const stream = await subscribeFromPage(allowed, `${s.baseUrl}${s.chat('/users')}`, token, 'initial_state');
    expect(stream.status).toBe(200);
    expect((await subscribeFromPage(refused, `${s.baseUrl}${s.chat('/users')}`, token, 'initial_state')).status).toBe(0);
    expect(await sendFromPage(refused, 'DELETE', `${s.baseUrl}${s.chat('/users/ann')}`, s.token({ su: true }))).toBe(0);
    expect((await s.request('GET', s.chat('/users/ann'))).status).toBe(200);
  });

  it('opens /ws for the listed origin, its own origin and non-browser clients, and refuses others with 403', async () => {
    expect(await upgrade(s, APP_ORIGIN)).toBe('open');
    expect(await upgrade(s, s.baseUrl)).toBe('open');
    expect(await upgrade(s)).toBe('open');
    expect(await upgrade(s, OTHER_ORIGIN)).toBe(403);
  });
});
