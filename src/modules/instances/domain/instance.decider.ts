import { Decider } from '../../../shared/domain/decider';
import { DomainError, badRequest, notFound } from '../../../shared/domain/errors';
import { INSTANCE_ID_PATTERN } from '../../../shared/domain/streams';
import type { SealedSecret } from '../../../shared/crypto/secret-box';
import { InstanceEvent } from './instance.events';

/** Instances are not scoped by another instance, so their stream is simply `instance-<id>`. */
export const instanceStream = (instanceId: string) => `instance-${instanceId}`;

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export interface InstanceKeyState {
  readonly secret: SealedSecret;
  readonly disabled: boolean;
}

export interface InstanceState {
  readonly exists: boolean;
  readonly disabled: boolean;
  readonly tokenProviderEnabled: boolean;
  readonly keys: ReadonlyMap<string, InstanceKeyState>;
}

export type InstanceCommand =
  | { type: 'CreateInstance'; id: string; cluster: string; now: string }
  | { type: 'SetInstanceEnabled'; id: string; enabled: boolean; now: string }
  | { type: 'CreateKey'; id: string; keyId: string; secret: SealedSecret; now: string }
  | { type: 'DisableKey'; id: string; keyId: string; now: string }
  | { type: 'SetTokenProvider'; id: string; enabled: boolean; now: string }
  | { type: 'RecordExport'; id: string; now: string };

export const instanceNotFound = (id: string) => notFound('instance_not_found', `The instance "${id}" does not exist`);

export const instanceDecider: Decider<InstanceState, InstanceCommand, InstanceEvent> = {
  initialState: () => ({ exists: false, disabled: false, tokenProviderEnabled: false, keys: new Map() }),

  evolve(state, event) {
    switch (event.type) {
      case 'InstanceCreated':
        return { ...state, exists: true };
      case 'InstanceDisabled':
        return { ...state, disabled: true };
      case 'InstanceEnabled':
        return { ...state, disabled: false };
      case 'KeyCreated':
        return { ...state, keys: new Map(state.keys).set(event.data.key_id, { secret: event.data.secret, disabled: false }) };
      case 'KeyDisabled': {
        const key = state.keys.get(event.data.key_id);
        return key ? { ...state, keys: new Map(state.keys).set(event.data.key_id, { ...key, disabled: true }) } : state;
      }
      case 'TokenProviderEnabled':
        return { ...state, tokenProviderEnabled: true };
      case 'TokenProviderDisabled':
        return { ...state, tokenProviderEnabled: false };
      case 'InstanceExported':
        return state;
    }
  },

  decide(command, state) {
    if (command.type === 'CreateInstance') {
      if (!INSTANCE_ID_PATTERN.test(command.id)) {
        throw badRequest('invalid_instance_id', 'Instance ids use only A-Z, a-z, 0-9 and "-", at most 64 characters');
      }
      if (state.exists) return [];
      return [{ type: 'InstanceCreated', data: { id: command.id, cluster: command.cluster, created_at: command.now } }];
    }
    if (!state.exists) throw instanceNotFound(command.id);
    switch (command.type) {
      case 'SetInstanceEnabled':
        if (state.disabled !== command.enabled) return [];
        return command.enabled
          ? [{ type: 'InstanceEnabled', data: { enabled_at: command.now } }]
          : [{ type: 'InstanceDisabled', data: { disabled_at: command.now } }];
      case 'CreateKey':
        if (!KEY_ID_PATTERN.test(command.keyId)) {
          throw badRequest('invalid_key_id', 'Key ids use only A-Z, a-z, 0-9, "_" and "-", at most 64 characters');
        }
        if (state.keys.has(command.keyId)) {
          throw new DomainError('conflict', 'key_exists', `The key "${command.keyId}" already exists on this instance`);
        }
        return [{ type: 'KeyCreated', data: { key_id: command.keyId, secret: command.secret, created_at: command.now } }];
      case 'DisableKey': {
        const key = state.keys.get(command.keyId);
        if (!key) throw notFound('key_not_found', `The key "${command.keyId}" does not exist`);
        if (key.disabled) return [];
        return [{ type: 'KeyDisabled', data: { key_id: command.keyId, disabled_at: command.now } }];
      }
      case 'SetTokenProvider':
        if (state.tokenProviderEnabled === command.enabled) return [];
        return command.enabled
          ? [{ type: 'TokenProviderEnabled', data: { enabled_at: command.now } }]
          : [{ type: 'TokenProviderDisabled', data: { disabled_at: command.now } }];
      case 'RecordExport':
        return [{ type: 'InstanceExported', data: { exported_at: command.now } }];
    }
  },
};
