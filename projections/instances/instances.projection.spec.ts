import type { SealedSecret } from '../../src/shared/crypto/secret-box';
import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { instancesProjection } from './instances.projection';

const sealed: SealedSecret = { alg: 'aes-256-gcm', iv: 'i', tag: 't', ciphertext: 'c' };
const at = '2026-01-01T00:00:00.000Z';

describe('instances projection', () => {
  it('folds instance, key and token-provider events into one document', async () => {
    const stream = 'instance-acme';
    const docs = await project(instancesProjection, [
      recorded(stream, 'InstanceCreated', { id: 'acme', cluster: 'eu', created_at: at }),
      recorded(stream, 'KeyCreated', { key_id: 'k1', secret: sealed, created_at: at }),
      recorded(stream, 'KeyCreated', { key_id: 'k2', secret: sealed, created_at: at }),
      recorded(stream, 'KeyDisabled', { key_id: 'k1', disabled_at: at }),
      recorded(stream, 'TokenProviderEnabled', { enabled_at: at }),
      recorded(stream, 'InstanceDisabled', { disabled_at: at }),
    ]);
    expect([...docs.values()]).toEqual([
      {
        _id: '["acme"]',
        id: 'acme',
        cluster: 'eu',
        disabled: true,
        token_provider_enabled: true,
        created_at: at,
        keys: [
          { key_id: 'k1', secret: sealed, disabled: true, created_at: at },
          { key_id: 'k2', secret: sealed, disabled: false, created_at: at },
        ],
      },
    ]);
  });
});
