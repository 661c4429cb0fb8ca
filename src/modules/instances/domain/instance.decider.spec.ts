import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { instanceDecider } from './instance.decider';
import { InstanceEvent } from './instance.events';

const now = '2026-01-01T00:00:00.000Z';
const sealed = { alg: 'aes-256-gcm' as const, iv: 'iv', tag: 'tag', ciphertext: 'c' };
const created: InstanceEvent = { type: 'InstanceCreated', data: { id: 'acme', cluster: 'local', created_at: now } };
const given = deciderSpecification(instanceDecider);

describe('instance decider', () => {
  it('creates an instance once; creating it again decides nothing', () => {
    given().when({ type: 'CreateInstance', id: 'acme', cluster: 'local', now }).then([created]);
    given(created).when({ type: 'CreateInstance', id: 'acme', cluster: 'local', now }).thenNothingHappened();
  });

  it('refuses instance ids the SDKs cannot address', () => {
    for (const id of ['has.dot', 'under_score', '', 'x'.repeat(65)]) {
      given().when({ type: 'CreateInstance', id, cluster: 'local', now }).thenThrows(DomainError, /Instance ids/, { code: 'bad_request/invalid_instance_id' });
    }
  });

  it('adds keys with sealed secrets, refuses a duplicate key id, and disables keys', () => {
    const key = given(created)
      .when({ type: 'CreateKey', id: 'acme', keyId: 'k1', secret: sealed, now })
      .then([{ type: 'KeyCreated', data: { key_id: 'k1', secret: sealed, created_at: now } }]);
    given(created, key).when({ type: 'CreateKey', id: 'acme', keyId: 'k1', secret: sealed, now }).thenThrows(/already exists/, { code: 'conflict/key_exists' });
    const disabled = given(created, key)
      .when({ type: 'DisableKey', id: 'acme', keyId: 'k1', now })
      .then([{ type: 'KeyDisabled', data: { key_id: 'k1', disabled_at: now } }]);
    given(created, key, disabled).when({ type: 'DisableKey', id: 'acme', keyId: 'k1', now }).thenNothingHappened();
    given(created).when({ type: 'DisableKey', id: 'acme', keyId: 'nope', now }).thenThrows(/does not exist/, { code: 'not_found/key_not_found' });
  });

  it('refuses key ids that are not 1 to 64 letters, digits, "_" or "-"', () => {
    for (const keyId of ['', 'has.dot', 'x'.repeat(65)]) {
      given(created).when({ type: 'CreateKey', id: 'acme', keyId, secret: sealed, now }).thenThrows({ code: 'bad_request/invalid_key_id' });
    }
  });

  it('switches the token provider and the instance on and off idempotently', () => {
    const on = given(created)
      .when({ type: 'SetTokenProvider', id: 'acme', enabled: true, now })
      .then([{ type: 'TokenProviderEnabled', data: { enabled_at: now } }]);
    given(created, on).when({ type: 'SetTokenProvider', id: 'acme', enabled: true, now }).thenNothingHappened();
    given(created, on)
      .when({ type: 'SetTokenProvider', id: 'acme', enabled: false, now })
      .then([{ type: 'TokenProviderDisabled', data: { disabled_at: now } }]);
    const off = given(created)
      .when({ type: 'SetInstanceEnabled', id: 'acme', enabled: false, now })
      .then([{ type: 'InstanceDisabled', data: { disabled_at: now } }]);
    given(created, off).when({ type: 'SetInstanceEnabled', id: 'acme', enabled: false, now }).thenNothingHappened();
    given(created, off)
      .when({ type: 'SetInstanceEnabled', id: 'acme', enabled: true, now })
      .then([{ type: 'InstanceEnabled', data: { enabled_at: now } }]);
    given().when({ type: 'SetInstanceEnabled', id: 'acme', enabled: false, now }).thenThrows(/does not exist/, { code: 'not_found/instance_not_found' });
  });

  it('records every export of an existing instance (a read of its content), changing nothing else', () => {
    const exported = given(created).when({ type: 'RecordExport', id: 'acme', now }).then([{ type: 'InstanceExported', data: { exported_at: now } }]);
    given(created, exported).when({ type: 'RecordExport', id: 'acme', now }).then([{ type: 'InstanceExported', data: { exported_at: now } }]);
    given(created, exported).when({ type: 'SetTokenProvider', id: 'acme', enabled: false, now }).thenNothingHappened();
    given().when({ type: 'RecordExport', id: 'acme', now }).thenThrows(/does not exist/, { code: 'not_found/instance_not_found' });
  });
});
