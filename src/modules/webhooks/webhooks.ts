import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { SECRET_BOX, SecretBox } from '../../shared/crypto/secret-box';
import { Clock } from '../../shared/domain/clock';
import { badRequest, conflict, notFound } from '../../shared/domain/errors';
import { EventMetadata, LogPosition, RecordedEvent } from '../../shared/domain/event';
import { Actor } from '../../shared/domain/event';
import { parseStreamName } from '../../shared/domain/streams';
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { OutgoingWebhooks } from '../../shared/webhooks/outgoing-webhooks';
import { WEBHOOKS, WebhookDocument } from '../../../projections/webhooks/webhooks.projection';
import { chatkitWebhookEventsOf, CHATKIT_WEBHOOK_EVENT_TYPES, ChatkitWebhookEventType, WEBHOOK_SOURCE_EVENT_TYPES } from './domain/chatkit-webhook-events';
import { WebhookCommand, webhookDecider, webhookNotFound, WebhookState, webhookStream } from './domain/webhook.decider';
import { WebhookSettings } from './domain/webhook.events';
import { WEBHOOK_CONTEXT_AT, WebhookContextAt } from './deliver-webhooks/webhook-context';
import { chatkitMetadata } from './deliver-webhooks/webhook-request';
import { pruneDeliveries, WEBHOOK_DELIVERIES, WEBHOOK_DELIVERIES_COLLECTION, WebhookDeliveryDocument } from './deliver-webhooks/webhook-deliveries';
import { MAX_WEBHOOKS_PER_INSTANCE, WebhookCreateDto, WebhookUpdateDto } from './presentation/webhook-fields.dto';
import { replayStartAt } from './replay-webhook/replay-start';

/** Log events read per page by the pull feed, and at most per request (a page of a sparse webhook still answers promptly). */
const FEED_PAGE = 500;
const FEED_SCAN = 5_000;

/**
 * Webhook management: each webhook is a stream of its own (settings, activation, replays), its
 * secret sealed with the master key. The delivery worker (deliver-webhooks/) follows them.
 */
@Injectable()
export class Webhooks implements OnModuleInit {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly outgoing: OutgoingWebhooks,
    @Inject(SECRET_BOX) private readonly secretBox: SecretBox,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(WEBHOOK_CONTEXT_AT) private readonly contextAt: WebhookContextAt,
  ) {}

  /** The delivery log is the worker's, which may not have run yet in this deployment: its route reads it anyway. */
  async onModuleInit(): Promise<void> {
    await this.readModels.ensureCollections([WEBHOOK_DELIVERIES_COLLECTION]);
  }

  async create(instanceId: string, body: WebhookCreateDto, actor: Actor): Promise<{ id: string; state: WebhookState }> {
    if ((await this.readModels.count(WEBHOOKS, { instance_id: instanceId })) >= MAX_WEBHOOKS_PER_INSTANCE) {
      throw conflict('too_many_webhooks', `An instance may have at most ${MAX_WEBHOOKS_PER_INSTANCE} webhooks; delete one first`);
    }
    const settings: WebhookSettings = {
      url: await this.checkedUrl(body.url),
      secret: this.secretBox.seal(body.secret),
      event_types: (body.event_types as ChatkitWebhookEventType[] | undefined) ?? [...CHATKIT_WEBHOOK_EVENT_TYPES],
      ...(body.custom_data !== undefined && { custom_data: body.custom_data }),
      ...(body.standard_webhooks !== undefined && { standard_webhooks: body.standard_webhooks }),
    };
    const id = randomUUID();
    const state = await this.run(instanceId, id, actor, (now) => ({ type: 'CreateWebhook', settings, now }));
    if (body.active === false) return { id, state: await this.update(instanceId, id, { active: false }, actor) };
    return { id, state };
  }

  async update(instanceId: string, webhookId: string, body: WebhookUpdateDto, actor: Actor): Promise<WebhookState> {
    const current = (await this.get(instanceId, webhookId)).settings!;
    const settings: WebhookSettings = {
      url: body.url === undefined ? current.url : await this.checkedUrl(body.url),
      secret: body.secret === undefined ? current.secret : this.secretBox.seal(body.secret),
      event_types: (body.event_types as ChatkitWebhookEventType[] | undefined) ?? current.event_types,
      ...(body.custom_data !== undefined ? { custom_data: body.custom_data } : current.custom_data !== undefined && { custom_data: current.custom_data }),
      ...((body.standard_webhooks ?? current.standard_webhooks) !== undefined && { standard_webhooks: body.standard_webhooks ?? current.standard_webhooks }),
    };
    return this.run(instanceId, webhookId, actor, (now) => ({ type: 'UpdateWebhook', settings, active: body.active, now }));
  }

  async delete(instanceId: string, webhookId: string, actor: Actor): Promise<void> {
    await this.get(instanceId, webhookId);
    await this.run(instanceId, webhookId, actor, (now) => ({ type: 'DeleteWebhook', now }));
    // Its delivery log goes with it (a worker still finishing its last delivery may add an entry, which nothing shows).
    await pruneDeliveries(this.readModels, instanceId, webhookId, 0);
  }

  /**
   * Delivers again every event after `fromPosition` (exclusive), or recorded at or after
   * `fromTime`, in log order, then goes on live: a receiver that lost its data catches up.
   */
  async replay(instanceId: string, webhookId: string, from: { from_position?: string; from_time?: string }, actor: Actor): Promise<{ state: WebhookState; from_position: LogPosition | null }> {
    await this.get(instanceId, webhookId);
    if ((from.from_position === undefined) === (from.from_time === undefined)) {
      throw badRequest('invalid_replay', 'Give exactly one of from_position (a log position, exclusive; "" for the start of the log) and from_time (ISO 8601)');
    }
    let fromPosition: LogPosition | null;
    if (from.from_position !== undefined) {
      fromPosition = from.from_position === '' ? null : from.from_position;
      if (fromPosition !== null && this.events.recognizes && !this.events.recognizes(fromPosition)) {
        throw badRequest('invalid_replay', `from_position: "${fromPosition}" is not a position of this event log`);
      }
    } else {
      const time = Date.parse(from.from_time!);
      if (Number.isNaN(time)) throw badRequest('invalid_replay', `from_time: "${from.from_time}" is not an ISO 8601 time`);
      fromPosition = await replayStartAt(this.events, new Date(time).toISOString());
    }
    const state = await this.run(instanceId, webhookId, actor, (now) => ({ type: 'ReplayWebhook', fromPosition, now }));
    return { state, from_position: fromPosition };
  }

  /**
   * Sends one delivery of the webhook's again (whatever its outcome was), with the same event id
   * and bytes; its worker sends it before going on, and the delivery log gets an entry for it.
   */
  async redeliver(instanceId: string, webhookId: string, deliveryId: string, actor: Actor): Promise<{ state: WebhookState; delivery: WebhookDeliveryDocument }> {
    await this.get(instanceId, webhookId);
    const delivery = await this.readModels.get<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, deliveryId);
    if (!delivery || delivery.instance_id !== instanceId || delivery.webhook_id !== webhookId) {
      throw notFound('delivery_not_found', `The webhook "${webhookId}" has no delivery "${deliveryId}"`);
    }
    const state = await this.run(instanceId, webhookId, actor, (now) => ({
      type: 'RedeliverDelivery',
      delivery: { delivery_id: deliveryId, event_id: delivery.event_id, position: delivery.position, after_position: delivery.after_position ?? null },
      now,
    }));
    return { state, delivery };
  }

  /** The webhook as its stream says now (404 for one that does not exist, was deleted, or wiped with its instance). */
  async get(instanceId: string, webhookId: string): Promise<WebhookState> {
    const { state } = await this.pipeline.load(webhookStream(instanceId, webhookId), webhookDecider);
    if (state.status !== 'live') throw webhookNotFound(webhookId);
    return state;
  }

  list(instanceId: string): Promise<WebhookDocument[]> {
    return this.readModels.find<WebhookDocument>(WEBHOOKS, { where: { instance_id: instanceId }, sort: [{ field: 'created_at' }], limit: MAX_WEBHOOKS_PER_INSTANCE * 2 });
  }

  /**
   * The events the webhook carries after `after`, up to `limit` of them, reading at most
   * FEED_SCAN log events per call; `next`: the position to ask from next.
   */
  async feed(instanceId: string, webhookId: string, after: LogPosition | null, limit: number) {
    const state = await this.get(instanceId, webhookId);
    if (after !== null && this.events.recognizes && !this.events.recognizes(after)) {
      throw badRequest('invalid_position', `after: "${after}" is not a position of this event log`);
    }
    const wanted = new Set<string>(state.settings!.event_types);
    const items: Record<string, unknown>[] = [];
    let next = after;
    for (let scanned = 0; items.length < limit && scanned < FEED_SCAN; ) {
      const page = await this.events.readAll({ after: next, maxCount: Math.min(FEED_PAGE, FEED_SCAN - scanned), filter: { eventTypes: WEBHOOK_SOURCE_EVENT_TYPES } });
      for (const event of page) {
        scanned++;
        const carried = parseStreamName(event.streamName)?.instanceId === instanceId ? await chatkitWebhookEventsOf(event, this.contextAt(event), wanted) : [];
        if (items.length + carried.length > limit && items.length > 0) return { events: items, next };
        for (const e of carried) items.push({ position: event.position, metadata: chatkitMetadata(e), payload: e.payload });
        next = event.position;
        if (items.length >= limit) break;
      }
      if (page.length === 0 || page.length < FEED_PAGE) break;
    }
    return { events: items, next };
  }

  private async checkedUrl(raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw badRequest('invalid_webhook_url', `url: "${raw}" is not an absolute URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest('invalid_webhook_url', `url: ${url.protocol} is not http or https`);
    if (url.username || url.password) throw badRequest('invalid_webhook_url', 'url: may not carry a user name or password (the signature authenticates deliveries)');
    const refusal = await this.outgoing.refusal(url.href);
    if (refusal) throw badRequest('webhook_url_not_allowed', `url: ${refusal}, which webhooks may not reach unless WEBHOOK_ALLOWED_HOSTS allows it`);
    return url.href;
  }

  private async run(instanceId: string, webhookId: string, actor: Actor, command: (now: string) => WebhookCommand): Promise<WebhookState> {
    const now = this.clock.now().toISOString();
    const metadata: EventMetadata = { instance_id: instanceId, actor, occurred_at: now };
    const outcome = await this.pipeline.run(webhookStream(instanceId, webhookId), webhookDecider, command(now), metadata);
    return outcome.state;
  }
}
