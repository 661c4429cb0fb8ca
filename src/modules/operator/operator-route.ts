/** Parley's deployment API (`parley_operator`): the deployment credential only, served while CONSOLE_ENABLED=true. */
export const PARLEY_OPERATOR_ROUTE = 'services/parley_operator/v1';
