/** The read cursors API (chatkit_cursors v2) of one instance; `0` is the read cursor type. */
export const CURSORS_ROUTE = 'services/chatkit_cursors/v2/:instanceId';
