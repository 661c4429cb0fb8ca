/** Parley's own administration API (`parley_admin`): su tokens of the instance only. */
export const PARLEY_ADMIN_ROUTE = 'services/parley_admin/v1/:instanceId';
