/** The audit API (Parley's own; su tokens only). */
export const AUDIT_ROUTE = 'services/parley_audit/v1/:instanceId';
