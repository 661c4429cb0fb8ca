/** Parley's webhook management API (`parley_webhooks`): su tokens of the instance only. */
export const PARLEY_WEBHOOKS_ROUTE = 'services/parley_webhooks/v1/:instanceId';
