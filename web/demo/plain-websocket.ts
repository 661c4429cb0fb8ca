/**
 * `@pusher/platform` 0.18.0 opens its one socket at `wss://<host>/ws`, whatever its `encrypted`
 * option says (only its HTTP requests follow that option). A page served over plain HTTP (`npm
 * start` listens on http://localhost:8080) has no TLS to speak to, so there the page opens the
 * same address as `ws://`: the SDK still constructs `window.WebSocket` itself, and only this
 * host's `/ws` is rewritten. Over HTTPS nothing changes.
 */
export function openPlainWebSocketsOnHttp(host: string): void {
  if (window.location.protocol !== 'http:') return;
  const Native = window.WebSocket;
  const secure = `wss://${host}/`;
  class PlainWebSocket extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      const asked = String(url);
      super(asked.startsWith(secure) ? `ws://${asked.slice('wss://'.length)}` : asked, protocols);
    }
  }
  window.WebSocket = PlainWebSocket;
}
