import type { SchemaObject } from '@nestjs/swagger';
import { InstanceSummary } from '../instances/instance-administration';

/** An instance as the operator API answers it: its locator for the SDKs, its switches and its keys (never a secret). */
export interface InstanceView {
  readonly id: string;
  readonly locator: string;
  readonly enabled: boolean;
  readonly token_provider_enabled: boolean;
  readonly created_at: string;
  readonly keys: readonly { readonly id: string; readonly enabled: boolean; readonly created_at: string }[];
}

export const presentInstance = (instance: InstanceSummary): InstanceView => ({
  id: instance.id,
  locator: `v1:${instance.cluster}:${instance.id}`,
  enabled: !instance.disabled,
  token_provider_enabled: instance.token_provider_enabled,
  created_at: instance.created_at,
  keys: instance.keys.map((key) => ({ id: key.key_id, enabled: !key.disabled, created_at: key.created_at })),
});

/** A key's secret, shown once: when it is created. */
export const NEW_KEY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'secret'],
  properties: {
    id: { type: 'string' },
    secret: { type: 'string', description: 'Shown only in this answer: the log holds it sealed with the master key' },
  },
};

export const INSTANCE_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'locator', 'enabled', 'token_provider_enabled', 'created_at', 'keys'],
  properties: {
    id: { type: 'string' },
    locator: { type: 'string', example: 'v1:local:my-app', description: 'What the SDKs take as instanceLocator' },
    enabled: { type: 'boolean', description: 'false: every call to the instance answers 404' },
    token_provider_enabled: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'enabled', 'created_at'],
        properties: { id: { type: 'string' }, enabled: { type: 'boolean' }, created_at: { type: 'string', format: 'date-time' } },
      },
    },
  },
};
