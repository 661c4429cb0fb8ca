import { fold } from '../../../shared/domain/decider';
import { instanceDecider, InstanceCommand } from './instance.decider';
import { InstanceEvent } from './instance.events';

const now = '2026-01-01T00:00:00.000Z';
const sealed = { alg: 'aes-256-gcm' as const, iv: 'iv', tag: 'tag', ciphertext: 'c' };
const created: InstanceEvent = { type: 'InstanceCreated', data: { id: 'acme', cluster: 'local', created_at: now } };
const given = (...events: InstanceEvent[]) => ({
  when: (command: InstanceCommand) => () => instanceDecider.decide(command, fold(instanceDecider, events)),
});

describe('instance decider', () => {
  it('creates an instance once; creating it again decides nothing', () => {
    expect(given().when({ type: 'CreateInstance', id: 'acme', cluster: 'local', now })()).toEqual([created]);
    expect(given(created).when({ type: 'CreateInstance', id: 'acme', cluster: 'local', now })()).toEqual([]);
  });

  it('refuses instance ids the SDKs cannot address', () => {
    for (const id of ['has.dot', 'under_score', '', 'x'.repeat(65)]) {
      expect(given().when({ type: 'CreateInstance', id, cluster: 'local', now })).toThrow(/Instance ids/);
    }
  });

  it('adds keys with sealed secrets, refuses a duplicate key id, and disables keys', () => {
    const key = given(created).when({ type: 'CreateKey', id: 'acme', keyId: 'k1', secret: sealed, now })();
    expect(key).toEqual([{ type: 'KeyCreated', data: { key_id: 'k1', secret: sealed, created_at: now } }]);
    expect(given(created, ...key).when({ type: 'CreateKey', id: 'acme', keyId: 'k1', secret: sealed, now })).toThrow(
      /already exists/,
    );
    const disabled = given(created, ...key).when({ type: 'DisableKey', id: 'acme', keyId: 'k1', now })();
    expect(disabled).toEqual([{ type: 'KeyDisabled', data: { key_id: 'k1', disabled_at: now } }]);
    expect(given(created, ...key, ...disabled).when({ type: 'DisableKey', id: 'acme', keyId: 'k1', now })()).toEqual([]);
    expect(given(created).when({ type: 'DisableKey', id: 'acme', keyId: 'nope', now })).toThrow(/does not exist/);
  });

  it('switches the token provider and the instance on and off idempotently', () => {
    const on = given(created).when({ type: 'SetTokenProvider', id: 'acme', enabled: true, now })();
    expect(on.map((e) => e.type)).toEqual(['TokenProviderEnabled']);
    expect(given(created, ...on).when({ type: 'SetTokenProvider', id: 'acme', enabled: true, now })()).toEqual([]);
    const off = given(created).when({ type: 'SetInstanceEnabled', id: 'acme', enabled: false, now })();
    expect(off.map((e) => e.type)).toEqual(['InstanceDisabled']);
    expect(given().when({ type: 'SetInstanceEnabled', id: 'acme', enabled: false, now })).toThrow(/does not exist/);
  });
});
