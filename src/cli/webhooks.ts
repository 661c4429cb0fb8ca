import { INestApplicationContext } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from '../shared/http/class-validator-parts';
import { Actor } from '../shared/domain/event';
import { WebhookCreateDto, WebhookUpdateDto } from '../modules/webhooks/presentation/webhook-fields.dto';
import { presentWebhook, presentWebhookDocument, WebhookView } from '../modules/webhooks/presentation/webhook.presenter';
import { Webhooks } from '../modules/webhooks/webhooks';
import { CliIo, UsageError } from './cli-io';
import { formatTable } from './table';

/** The options `webhook:create` and `webhook:update` take, as the API's body fields. */
export const WEBHOOK_OPTIONS = {
  url: { type: 'string' },
  secret: { type: 'string' },
  'event-types': { type: 'string' },
  'custom-data': { type: 'string' },
  'standard-webhooks': { type: 'string' },
  active: { type: 'string' },
} as const;

/** The body the API would take, from the command line's options, checked as the API checks it. */
async function bodyOf<T extends object>(dto: new () => T, options: Record<string, string | undefined>): Promise<T> {
  const json = (name: string, value: string | undefined): unknown => {
    if (value === undefined) return undefined;
    try {
      return JSON.parse(value);
    } catch {
      throw new UsageError(`--${name} must be JSON`);
    }
  };
  const flag = (name: string, value: string | undefined): boolean | undefined => {
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`);
    return value === 'true';
  };
  const plain = {
    url: options.url,
    secret: options.secret,
    event_types: options['event-types']?.split(',').map((t) => t.trim()),
    custom_data: json('custom-data', options['custom-data']),
    standard_webhooks: flag('standard-webhooks', options['standard-webhooks']),
    active: flag('active', options.active),
  };
  const body = plainToInstance(dto, Object.fromEntries(Object.entries(plain).filter(([, v]) => v !== undefined)));
  const errors = await validate(body, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length) throw new UsageError(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; '));
  return body;
}

const row = (w: WebhookView) => [w.id, w.url, w.active ? 'active' : `inactive${w.deactivated ? ` (${String(w.deactivated.by)})` : ''}`, w.event_types.length === 11 ? 'all' : w.event_types.join(',')];
const HEADINGS = ['ID', 'URL', 'STATE', 'EVENT TYPES'];

/** `webhook:create|list|update|delete`: the API's management of Chatkit webhooks, through the same service. */
export async function webhookCommand(app: INestApplicationContext, actor: Actor, io: CliIo, verb: 'create' | 'list' | 'update' | 'delete', args: (string | undefined)[], options: Record<string, string | undefined>): Promise<void> {
  const webhooks = app.get(Webhooks);
  const [instance, id] = args as string[];
  switch (verb) {
    case 'create': {
      const created = await webhooks.create(instance, await bodyOf(WebhookCreateDto, options), actor);
      for (const line of formatTable(HEADINGS, [row(presentWebhook(created.id, created.state))])) io.out(line);
      return;
    }
    case 'list': {
      const list = (await webhooks.list(instance)).map(presentWebhookDocument);
      if (list.length === 0) return io.out(`The instance "${instance}" has no webhooks.`);
      for (const line of formatTable(HEADINGS, list.map(row))) io.out(line);
      return;
    }
    case 'update': {
      const state = await webhooks.update(instance, id, await bodyOf(WebhookUpdateDto, options), actor);
      for (const line of formatTable(HEADINGS, [row(presentWebhook(id, state))])) io.out(line);
      return;
    }
    case 'delete':
      await webhooks.delete(instance, id, actor);
      io.out(`The webhook "${id}" of instance "${instance}" is deleted`);
  }
}
