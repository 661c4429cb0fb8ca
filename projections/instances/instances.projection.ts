import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { SealedSecret } from '../../src/shared/crypto/secret-box';
import type { InstanceEvent } from '../../src/modules/instances/domain/instance.events';
import type { Document, ProjectionDefinition } from '../projection';

export const INSTANCES = 'instances';

export interface InstanceKeyDocument {
  readonly key_id: string;
  /** Still sealed with the master key; only the key ring opens it, in memory. */
  readonly secret: SealedSecret;
  readonly disabled: boolean;
  readonly created_at: string;
}

export interface InstanceDocument extends Document {
  readonly id: string;
  readonly cluster: string;
  readonly disabled: boolean;
  readonly token_provider_enabled: boolean;
  readonly keys: readonly InstanceKeyDocument[];
  readonly created_at: string;
}

export const instanceDocumentId = (instanceId: string) => documentId(instanceId);

/** Instances and their keys, for authentication and the admin CLI. */
export const instancesProjection: ProjectionDefinition<InstanceEvent, InstanceDocument> = {
  name: 'instances',
  version: 1,
  // By id: the operator API pages instances (an index, so a page never reads the whole collection).
  collections: [{ name: INSTANCES, indexes: [{ fields: ['id'] }] }],
  handles: [
    'InstanceCreated',
    'InstanceDisabled',
    'InstanceEnabled',
    'KeyCreated',
    'KeyDisabled',
    'TokenProviderEnabled',
    'TokenProviderDisabled',
  ],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    return stream ? [{ collection: INSTANCES, id: instanceDocumentId(stream.instanceId) }] : [];
  },

  evolve(doc, event) {
    if (event.type === 'InstanceCreated') {
      const { data } = event;
      return {
        _id: '',
        id: data.id,
        cluster: data.cluster,
        disabled: false,
        token_provider_enabled: false,
        keys: [],
        created_at: data.created_at,
      } satisfies InstanceDocument;
    }
    if (!doc) return null;
    switch (event.type) {
      case 'InstanceDisabled':
        return { ...doc, disabled: true };
      case 'InstanceEnabled':
        return { ...doc, disabled: false };
      case 'TokenProviderEnabled':
        return { ...doc, token_provider_enabled: true };
      case 'TokenProviderDisabled':
        return { ...doc, token_provider_enabled: false };
      case 'KeyCreated': {
        const { key_id, secret, created_at } = event.data;
        return { ...doc, keys: [...doc.keys, { key_id, secret, disabled: false, created_at }] };
      }
      case 'KeyDisabled': {
        const { key_id } = event.data;
        return { ...doc, keys: doc.keys.map((k) => (k.key_id === key_id ? { ...k, disabled: true } : k)) };
      }
      default:
        return doc;
    }
  },
};
