/** Subscription paths of the presence service (wire study §2.4): chatkit-client uses v2 only. */
export const PRESENCE_ROUTE = '/services/chatkit_presence/v2/:instanceId';
