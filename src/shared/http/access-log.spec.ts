import { instanceInPath } from './access-log';

describe('the instance an access-log line names', () => {
  it('reads it from Chatkit, feeds and audit paths and from the Beams APIs', () => {
    expect(instanceInPath('/services/chatkit/v6/acme/users?x=1')).toBe('acme');
    expect(instanceInPath('/services/feeds/v1/acme/feeds/f/items')).toBe('acme');
    expect(instanceInPath('/publish_api/v1/instances/acme/publishes/interests')).toBe('acme');
    expect(instanceInPath('/user_api/v1/instances/acme/users/u')).toBe('acme');
    expect(instanceInPath('/device_api/v1/instances/acme/devices/web')).toBe('acme');
  });

  it('names none for paths without an instance', () => {
    expect(instanceInPath('/health')).toBeUndefined();
    expect(instanceInPath('/metrics')).toBeUndefined();
    expect(instanceInPath('/device_api/v2/instances/acme/devices')).toBeUndefined();
  });
});
