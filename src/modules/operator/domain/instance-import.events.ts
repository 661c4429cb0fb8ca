import { DomainEvent } from '../../../shared/domain/event';

/**
 * An instance archive was imported over HTTP (the operator API, the console's Import screen),
 * recorded with the console user as actor once the import wrote something: its events and
 * blobs are in the log and the blob store as the source recorded them (their own actors), and
 * this says who brought them here. Counts and times only: no personal content to seal or shred.
 * An import that wrote nothing (a refusal, or the same archive again) records nothing.
 */
export type InstanceImported = DomainEvent<
  'InstanceImported',
  {
    readonly import_id: string;
    readonly outcome: 'done' | 'failed';
    readonly events_appended: number;
    readonly events_present: number;
    readonly blobs_copied: number;
    readonly blobs_present: number;
    /** The archive's manifest: which stores it came from and when its export started. */
    readonly exported_from: string;
    readonly exported_at: string;
    readonly imported_at: string;
  }
>;

export type InstanceImportEvent = InstanceImported;
