/** Asynchronous deletes (chatkit_scheduler v1): su only. */
export const SCHEDULER_ROUTE = 'services/chatkit_scheduler/v1/:instanceId';
