import { connect } from 'node:net';
import { startTestServer, TestServer } from '../support/test-server';

/** Writes `head` and then nothing more, and collects what the server answers until it closes the connection. */
function sendAndStall(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('a request that never arrives whole', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { REQUEST_TIMEOUT_MS: '1000' } });
  });
  afterAll(() => s.close());

  it('is answered 408 JSON and its connection closed after REQUEST_TIMEOUT_MS (it was held open forever), and nothing is created', async () => {
    const port = Number(new URL(s.baseUrl).port);
    const body = JSON.stringify({ id: 'never-created', name: 'Never' });
    const answer = await sendAndStall(
      port,
      `POST ${s.chat('/users')} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${s.token({ su: true })}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length + 20}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'bad_request/request_timeout',
      error_description: 'The request did not arrive in time',
    });
    expect((await s.request('GET', s.chat('/users/never-created'), { token: s.token({ su: true }) })).status).toBe(404);
  }, 20_000);
});
