import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { toErrorResponse } from '../../shared/http/error.filter';
import {
  encodeSharedOnce,
  EventChannel,
  eventFieldsJson,
  MAX_UNSENT_BYTES,
  QueuedFrames,
  queueTurn,
} from '../../shared/subscriptions/event-channel';
import { OpenStreams, OpenStreamSet } from './open-streams';
import { SubscriptionRoutes } from './subscription-routes';
import { Access } from '../roles/access-rules';
import { countOpenStreams } from '../../shared/observability/metrics';

/** The keep-alive frame of the SUBSCRIBE wire format (message type 0), as the Pusher platform sends it. */
const KEEP_ALIVE_FRAME = '[0,"xxxxxxxxxxxxxxxx"]\n';

/** The frames queued for one stream, written when its turn comes (see `queueTurn`), then its end. */
class ResponseOutbox implements QueuedFrames {
  private frames: Buffer[] = [];
  private endFrame: string | null = null;
  private queued = false;

  constructor(private readonly raw: ServerResponse) {}

  push(frame: Buffer): void {
    this.frames.push(frame);
    this.queue();
  }

  end(frame: string): void {
    this.endFrame = frame;
    this.queue();
  }

  writeQueued(): void {
    this.queued = false;
    const { raw, frames } = this;
    this.frames = [];
    if (raw.destroyed || raw.writableEnded) return;
    // A client that stopped reading is let go rather than buffered for without bound.
    if (raw.writableLength > MAX_UNSENT_BYTES) {
      raw.destroy();
      return;
    }
    // Frames that waited together go as one chunk: one write and one chunk header, not one per frame.
    if (frames.length > 0) raw.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    if (this.endFrame !== null) raw.end(this.endFrame);
  }

  private queue(): void {
    if (this.queued) return;
    this.queued = true;
    queueTurn(this);
  }
}

/**
 * HTTP `SUBSCRIBE` (wire study §3.3): status 200, then newline-terminated JSON frames:
 * `[0, padding]` keep-alive, `[1, id, headers, body]` event, `[255, status, headers, body]` end.
 */
export function registerHttpSubscribe(fastify: FastifyInstance, routes: SubscriptionRoutes, keepAliveMs: number): OpenStreams {
  /** An event frame as bytes: a shared event is encoded once for all its subscribers. */
  const eventFrame = encodeSharedOnce((event) => Buffer.from(`[1,${eventFieldsJson(event)}]\n`));
  /** Each open stream and the URL it was opened at (the EOS error names its service). */
  const open = new OpenStreamSet();
  const uncount = countOpenStreams('http_subscribe', () => ({ sockets: open.size, subscriptions: open.size }));
  fastify.addHook('onClose', (_instance, done) => {
    uncount();
    done();
  });
  fastify.route({
    method: 'SUBSCRIBE',
    url: '/*',
    // One route for every subscription: each pattern declares its own rule, checked by the router.
    config: { access: Access.ownCredential('each subscription route declares its own rule (SubscriptionRoutes)') },
    handler: async (request, reply) => {
      const raw = reply.raw;
      // Watch for the client leaving from the start: it may go while the subscription opens.
      let gone = false;
      const onGone = () => (gone = true);
      raw.once('close', onGone);
      let channel: EventChannel;
      try {
        // One stream per request: the request is its connection, as far as the caps count.
        channel = await routes.open({ url: request.url, headers: request.headers, origin: { connection: request.raw, address: request.ip } });
      } catch (error) {
        raw.off('close', onGone);
        const { status, body } = toErrorResponse(error, request.url);
        return reply.status(status).send(body);
      }
      raw.off('close', onGone);
      if (gone || raw.destroyed) {
        channel.close();
        return reply.hijack();
      }
      reply.hijack();
      raw.on('close', () => channel.close());
      raw.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-request-id': request.id });
      raw.flushHeaders(); // the stream is open now, even before its first frame
      // feeds-client (pusher-platform 0.8) calls onOpen on the first body bytes, not on the headers: a stream with nothing to replay (the firehose) sends a keep-alive at once.
      raw.write(KEEP_ALIVE_FRAME);
      const keepAlive = setInterval(() => raw.write(KEEP_ALIVE_FRAME), keepAliveMs);
      channel.onClose(() => clearInterval(keepAlive));
      const outbox = new ResponseOutbox(raw);
      channel.drainTo(
        (event) => outbox.push(eventFrame(event)),
        (eos) => {
          outbox.end(JSON.stringify([255, eos.status, {}, eos.body]) + '\n');
          channel.close();
        },
      );
      open.add(channel, request.url); // ended at once if the server began to drain while it opened
    },
  });
  return open;
}
