import type { RecordedEvent } from '../../src/shared/domain/event';
import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { Document, ProjectionDefinition } from '../projection';

export const INSTANCES = 'instances';

export interface InstanceKeyDocument {
  readonly key_id: string;
  /** Still sealed with the master key; only the key ring opens it, in memory. */
  readonly secret: unknown;
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

type Data = Record<string, any>;

/** Instances and their keys, for authentication and the admin CLI. */
export const instancesProjection: ProjectionDefinition = {
  name: 'instances',
  version: 1,
  collections: [{ name: INSTANCES }],
  handles: [
    'InstanceCreated',
    'InstanceDisabled',
    'InstanceEnabled',
    'KeyCreated',
    'KeyDisabled',
    'TokenProviderEnabled',
    'TokenProviderDisabled',
  ],

  targets(event: RecordedEvent) {
    const stream = parseStreamName(event.streamName);
    return stream ? [{ collection: INSTANCES, id: instanceDocumentId(stream.instanceId) }] : [];
  },

  evolve(document, event) {
    const doc = document as InstanceDocument | null;
    const data = event.data as Data;
    if (event.type === 'InstanceCreated') {
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
      case 'KeyCreated':
        return {
          ...doc,
          keys: [...doc.keys, { key_id: data.key_id, secret: data.secret, disabled: false, created_at: data.created_at }],
        };
      case 'KeyDisabled':
        return { ...doc, keys: doc.keys.map((k) => (k.key_id === data.key_id ? { ...k, disabled: true } : k)) };
      default:
        return doc;
    }
  },
};
