/**
 * What a browser receives for a publish: the publish's `web` object, with the metadata the
 * Beams service worker requires under `data.pusher` (it ignores a push without it).
 */
export function webPushPayload(instanceId: string, publishId: string, request: Record<string, unknown>): string | null {
  const web = request.web;
  if (web === null || typeof web !== 'object' || Array.isArray(web)) return null;
  const { notification, data } = web as { notification?: unknown; data?: unknown };
  const customerData = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  return JSON.stringify({
    ...web,
    data: {
      ...customerData,
      pusher: { instanceId, publishId, hasDisplayableContent: notification !== undefined, hasData: data !== undefined },
    },
  });
}
