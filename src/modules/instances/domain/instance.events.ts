import { DomainEvent } from '../../../shared/domain/event';
import type { SealedSecret } from '../../../shared/crypto/secret-box';

export type InstanceCreated = DomainEvent<'InstanceCreated', { id: string; cluster: string; created_at: string }>;
export type InstanceDisabled = DomainEvent<'InstanceDisabled', { disabled_at: string }>;
export type InstanceEnabled = DomainEvent<'InstanceEnabled', { enabled_at: string }>;
/** The secret is sealed with the master key before it reaches the log. */
export type KeyCreated = DomainEvent<'KeyCreated', { key_id: string; secret: SealedSecret; created_at: string }>;
export type KeyDisabled = DomainEvent<'KeyDisabled', { key_id: string; disabled_at: string }>;
export type TokenProviderEnabled = DomainEvent<'TokenProviderEnabled', { enabled_at: string }>;
export type TokenProviderDisabled = DomainEvent<'TokenProviderDisabled', { disabled_at: string }>;
/** The instance's events were exported (downloaded through the operator API): a read of its content, recorded with who read it. */
export type InstanceExported = DomainEvent<'InstanceExported', { exported_at: string }>;

export type InstanceEvent =
  | InstanceCreated
  | InstanceDisabled
  | InstanceEnabled
  | KeyCreated
  | KeyDisabled
  | TokenProviderEnabled
  | TokenProviderDisabled
  | InstanceExported;
