import { ConfigError, DEFAULT_WEB_PUSH_HOSTS, loadConfig } from '../../../config/config';
import { DomainError } from '../../../shared/domain/errors';
import { isAllowedPushHost, parseWebPushToken } from './web-push-subscription';

const token = (endpoint: string) => Buffer.from(JSON.stringify({ endpoint, keys: { p256dh: 'AA', auth: 'AA' } })).toString('base64');

describe('Web Push endpoint hosts (BEAMS_WEB_PUSH_HOSTS)', () => {
  it('accepts by default the public push services, exact or under a wildcard domain', () => {
    for (const endpoint of [
      'https://fcm.googleapis.com/fcm/send/abc',
      'https://updates.push.services.mozilla.com/wpush/v2/abc',
      'https://eu.push.services.mozilla.com/wpush/v2/abc',
      'https://wns2-by3p.notify.windows.com/w/?token=abc',
      'https://web.push.apple.com/abc',
      'https://api.push.apple.com/abc',
      'https://FCM.googleapis.com./fcm/send/abc',
    ]) {
      expect({ endpoint, allowed: isAllowedPushHost(endpoint, DEFAULT_WEB_PUSH_HOSTS) }).toEqual({ endpoint, allowed: true });
    }
  });

  it('refuses by default hosts inside the network, look-alikes, and a wildcard domain itself', () => {
    for (const endpoint of [
      'https://localhost/x',
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://169.254.169.254/latest/meta-data',
      'https://fcm.googleapis.com.evil.example/x',
      'https://evilfcm.googleapis.com/x',
      'https://notify.windows.com/x',
      'https://xpush.apple.com/x',
    ]) {
      expect({ endpoint, allowed: isAllowedPushHost(endpoint, DEFAULT_WEB_PUSH_HOSTS) }).toEqual({ endpoint, allowed: false });
    }
  });

  it('parses a token at an allowed host and refuses one at another host with a 400 naming the reason', () => {
    expect(parseWebPushToken(token('https://localhost:8443/push/a'), ['localhost']).endpoint).toBe('https://localhost:8443/push/a');
    let refused: unknown;
    try {
      parseWebPushToken(token('https://127.0.0.1:8443/push/a'), ['localhost']);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ status: 400, code: 'bad_request/push_service_not_allowed' });
  });

  it('reads BEAMS_WEB_PUSH_HOSTS as a comma list of host names or *.domains, and refuses anything else', () => {
    expect(loadConfig({}).beamsWebPushHosts).toEqual(DEFAULT_WEB_PUSH_HOSTS);
    expect(loadConfig({ BEAMS_WEB_PUSH_HOSTS: ' Push.Example.com , *.push.example.net,localhost' }).beamsWebPushHosts).toEqual([
      'push.example.com',
      '*.push.example.net',
      'localhost',
    ]);
    for (const bad of ['https://push.example.com', 'push.example.com:443', '*', 'a,,b', 'push.*.example.com']) {
      expect(() => loadConfig({ BEAMS_WEB_PUSH_HOSTS: bad })).toThrow(ConfigError);
    }
  });
});
