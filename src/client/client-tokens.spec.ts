import jwt from 'jsonwebtoken';
import { ChatServer } from './chat-server';
import { ClientError, Feeds, InvalidGrantTypeError, UnsupportedGrantTypeError } from './feeds';

/** The tokens the client libraries sign, claim by claim (wire study §5.1, §5.3), and authorizeFeed's refusals. */
const options = { instanceLocator: 'v1:local:acme', key: 'key-1:se:cret' };
const read = (token: string) => jwt.verify(token, 'se:cret', { algorithms: ['HS256'] }) as Record<string, unknown>;
const now = () => Math.floor(Date.now() / 1000);
const form = { path: 'feeds/private-news/items', action: 'READ', grant_type: 'client_credentials' };

describe('ChatServer tokens', () => {
  const chat = new ChatServer(options);

  it('authenticate signs a Chatkit access token for the user: instance, api_keys issuer, a day', () => {
    const { status, body } = chat.authenticate({ userId: 'alice' });
    expect(status).toBe(200);
    if (status !== 200) return;
    const claims = read(body.access_token);
    expect(claims).toEqual({ instance: 'acme', iss: 'api_keys/key-1', sub: 'alice', iat: expect.any(Number), exp: expect.any(Number) });
    expect(Math.abs((claims.iat as number) - now())).toBeLessThanOrEqual(2);
    expect((claims.exp as number) - (claims.iat as number)).toBe(86400);
    expect(body.expires_in).toBe(86400);
  });

  it('adds su only when asked, and honours tokenExpiry', () => {
    const { status, body } = chat.authenticate({ userId: 'alice', su: true, tokenExpiry: 120 });
    if (status !== 200) throw new Error(`status ${status}`);
    const claims = read(body.access_token);
    expect(claims.su).toBe(true);
    expect((claims.exp as number) - (claims.iat as number)).toBe(120);
    expect(body.expires_in).toBe(120);
  });

  it('refuses malformed locators, keys and hosts when constructed', () => {
    expect(() => new ChatServer({ ...options, instanceLocator: 'acme' })).toThrow(/v1:<cluster>:<instanceId>/);
    expect(() => new ChatServer({ ...options, key: 'no-secret' })).toThrow(/<keyId>:<secret>/);
    expect(() => new ChatServer({ ...options, host: 'localhost:8443' })).toThrow(/give the port as port/);
    expect(() => new ChatServer({ ...options, port: 70000 })).toThrow(/port/);
  });
});

describe('Feeds authorizeFeed', () => {
  const feeds = new Feeds(options);

  it('issues a §5.3 read token for the feed path: app claim, backdated iat, feeds.permission', async () => {
    const granted = await feeds.authorizeFeed(form, () => true);
    expect(granted).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: 86400, refresh_token: expect.any(String) });
    const claims = read(granted.access_token);
    expect(claims).toEqual({
      app: 'acme',
      iss: 'api_keys/key-1',
      iat: expect.any(Number),
      exp: expect.any(Number),
      feeds: { permission: { path: 'feeds/private-news/items', action: 'READ' } },
    });
    expect(Math.abs((claims.iat as number) - (now() - 600))).toBeLessThanOrEqual(2);
    expect((claims.exp as number) - (claims.iat as number)).toBe(86400);
    expect(read(granted.refresh_token)).toEqual({ app: 'acme', iss: 'api_keys/key-1', iat: expect.any(Number), refresh: true });
  });

  it('accepts its own refresh token, and asks the app again', async () => {
    const { refresh_token } = await feeds.authorizeFeed(form, () => true);
    const asked: string[] = [];
    await expect(
      feeds.authorizeFeed({ ...form, grant_type: 'refresh_token', refresh_token }, (_, feedId) => (asked.push(feedId), true)),
    ).resolves.toEqual(expect.objectContaining({ token_type: 'bearer' }));
    expect(asked).toEqual(['private-news']);
    const foreign = jwt.sign({ app: 'other', iss: 'api_keys/key-1', refresh: true }, 'se:cret');
    await expect(feeds.authorizeFeed({ ...form, grant_type: 'refresh_token', refresh_token: foreign }, () => true)).rejects.toBeInstanceOf(InvalidGrantTypeError);
    const access = (await feeds.authorizeFeed(form, () => true)).access_token;
    await expect(feeds.authorizeFeed({ ...form, grant_type: 'refresh_token', refresh_token: access }, () => true)).rejects.toThrow('refresh claim');
  });

  it('refuses bad payloads with ClientError and asks the app only about well-formed ones', async () => {
    const asked: string[] = [];
    const ask = (_: string, feedId: string) => (asked.push(feedId), true);
    await expect(feeds.authorizeFeed(undefined as never, ask)).rejects.toBeInstanceOf(ClientError);
    await expect(feeds.authorizeFeed({ ...form, path: '' }, ask)).rejects.toThrow('Must provide "action" and "path"');
    await expect(feeds.authorizeFeed({ ...form, action: '*' }, ask)).rejects.toThrow('Action must be one of ["READ"]');
    await expect(feeds.authorizeFeed({ ...form, path: 'feeds/a_b/items' }, ask)).rejects.toThrow(/Path must match/);
    await expect(feeds.authorizeFeed({ ...form, grant_type: 'password' }, ask)).rejects.toBeInstanceOf(UnsupportedGrantTypeError);
    expect(asked).toEqual([]);
    await expect(feeds.authorizeFeed(form, async () => false)).rejects.toThrow(new ClientError('Forbidden'));
  });

  it('authorizePath hands the whole path to the callback (listing feeds, the firehose)', async () => {
    const asked: string[] = [];
    const granted = await feeds.authorizePath({ ...form, path: 'firehose/items' }, (_, path) => (asked.push(path), true));
    expect(asked).toEqual(['firehose/items']);
    expect(read(granted.access_token).feeds).toEqual({ permission: { path: 'firehose/items', action: 'READ' } });
  });
});
