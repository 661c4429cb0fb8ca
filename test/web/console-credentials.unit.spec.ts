/**
 * The tokens the console signs in the browser (web/console/api/credentials.ts, WebCrypto HMAC):
 * what the server's verifiers and jsonwebtoken take, with the contract's claims. Node 20 has the
 * same WebCrypto as the browser (globalThis.crypto.subtle).
 */
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../src/config/config';
import { OperatorTokenVerifier } from '../../src/modules/instances/authentication/operator-token';
import { CONSOLE_USER_PATTERN as SERVER_CONSOLE_USER_PATTERN } from '../../src/shared/domain/console-user';
import {
  checkName,
  CONSOLE_USER_PATTERN,
  CredentialError,
  deploymentMinter,
  feedsMinter,
  instanceMinter,
  parseKey,
  parseLocator,
  TOKEN_LIFETIME_SECONDS,
} from '../../web/console/api/credentials';

const instance = { locator: 'v1:local:my-app', instanceId: 'my-app', keyId: 'k1', secret: 'a-key-secret:with-a-colon', name: 'Ops Alice' };
const ADMIN_SECRET = 'a-deployment-secret-of-at-least-32-chars';

describe('the tokens the console signs in the browser', () => {
  it('an su token of the instance, as an SDK mints it, naming the console user and living 15 minutes', async () => {
    const claims = jwt.verify(await instanceMinter(instance).token(), instance.secret, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(claims).toEqual({ instance: 'my-app', iss: 'api_keys/k1', su: true, console_user: 'Ops Alice', iat: expect.any(Number), exp: claims.iat! + TOKEN_LIFETIME_SECONDS });
    expect(TOKEN_LIFETIME_SECONDS).toBe(900);
  });

  it('"send as": the same with the user as sub; tokens are reused per claim set, not across them', async () => {
    const minter = instanceMinter(instance);
    const asAda = await minter.token({ sub: 'ada' });
    expect(jwt.verify(asAda, instance.secret)).toMatchObject({ sub: 'ada', su: true, console_user: 'Ops Alice' });
    expect(await minter.token({ sub: 'ada' })).toBe(asAda);
    expect(await minter.token()).not.toBe(asAda);
  });

  it('a Feeds token names the instance in app and grants every path and action', async () => {
    expect(jwt.verify(await feedsMinter(instance).token(), instance.secret)).toMatchObject({
      app: 'my-app',
      iss: 'api_keys/k1',
      su: true,
      console_user: 'Ops Alice',
      feeds: { permission: { path: '*', action: '*' } },
    });
  });

  it('a deployment token passes the server verifier of CONSOLE_ADMIN_SECRET, and another secret does not', async () => {
    const verifier = new OperatorTokenVerifier(loadConfig({ CONSOLE_ADMIN_SECRET: ADMIN_SECRET }));
    const token = await deploymentMinter({ secret: ADMIN_SECRET, name: 'Ops Alice' }).token();
    expect(verifier.verify(`Bearer ${token}`)).toEqual({ name: 'Ops Alice', issuedAt: expect.any(Number) });
    const forged = await deploymentMinter({ secret: `${ADMIN_SECRET}-not`, name: 'Ops Alice' }).token();
    expect(() => verifier.verify(`Bearer ${forged}`)).toThrow(/invalid|signature/i);
  });

  it('reads the locator and key as the dashboards showed them, and a console user name as the server allows', () => {
    expect(parseLocator(' v1:us1:my-app ')).toBe('my-app');
    expect(() => parseLocator('my-app')).toThrow(CredentialError);
    expect(parseKey('k1:a:b')).toEqual({ keyId: 'k1', secret: 'a:b' });
    for (const bad of ['k1', ':secret', 'k1:']) expect(() => parseKey(bad)).toThrow(CredentialError);
    expect(checkName(' Ops Alice ')).toBe('Ops Alice');
    for (const bad of ['', 'x'.repeat(65), 'Robert"); DROP', 'tab\there']) expect(() => checkName(bad)).toThrow(CredentialError);
    expect(CONSOLE_USER_PATTERN.source).toBe(SERVER_CONSOLE_USER_PATTERN.source);
  });
});
