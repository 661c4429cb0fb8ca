import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from '../../../shared/http/class-validator-parts';
import { CHATKIT_WEBHOOK_EVENT_TYPES } from '../domain/chatkit-webhook-events';

/** Caps (docs/webhooks.md): a URL as browsers and proxies take it, a secret well above any HMAC key's use. */
export const WEBHOOK_URL_MAX_CHARACTERS = 2_048;
export const WEBHOOK_SECRET_MAX_CHARACTERS = 1_024;
/** Webhooks per instance: each tails the log on its own, so their number is bounded. */
export const MAX_WEBHOOKS_PER_INSTANCE = 20;

const KNOWN_TYPES = `event_types: each one of ${CHATKIT_WEBHOOK_EVENT_TYPES.join(', ')}`;

/** What a webhook is set to besides its URL and secret. */
class WebhookOptionsDto {
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1, { message: 'event_types: at least one (leave it out for all of them)' })
  @ArrayMaxSize(CHATKIT_WEBHOOK_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(CHATKIT_WEBHOOK_EVENT_TYPES as unknown as string[], { each: true, message: KNOWN_TYPES })
  event_types?: string[];

  /** Any JSON, sent in every delivery's body (CUSTOM_DATA_MAX_BYTES caps it as every custom_data). */
  @IsOptional()
  custom_data?: unknown;

  /** Sign as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,…`) instead of Chatkit's hex HMAC-SHA1 (docs/webhooks.md "Verifying a delivery"). */
  @IsOptional()
  @IsBoolean()
  standard_webhooks?: boolean;

  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

const URL_REQUIRED = 'url: required, the http(s) URL deliveries are POSTed to';
const SECRET_REQUIRED = 'secret: required, the key the deliveries are signed with';

/** `POST /webhooks`: a URL and a secret; every event type unless `event_types` says fewer. */
export class WebhookCreateDto extends WebhookOptionsDto {
  @IsString({ message: URL_REQUIRED })
  @IsNotEmpty({ message: URL_REQUIRED })
  @MaxLength(WEBHOOK_URL_MAX_CHARACTERS)
  url: string;

  @IsString({ message: SECRET_REQUIRED })
  @IsNotEmpty({ message: SECRET_REQUIRED })
  @MaxLength(WEBHOOK_SECRET_MAX_CHARACTERS)
  secret: string;
}

/** `PUT /webhooks/:id`: what is given replaces it; what is left out stays as it was. */
export class WebhookUpdateDto extends WebhookOptionsDto {
  @IsOptional()
  @IsString({ message: URL_REQUIRED })
  @IsNotEmpty({ message: URL_REQUIRED })
  @MaxLength(WEBHOOK_URL_MAX_CHARACTERS)
  url?: string;

  @IsOptional()
  @IsString({ message: SECRET_REQUIRED })
  @IsNotEmpty({ message: SECRET_REQUIRED })
  @MaxLength(WEBHOOK_SECRET_MAX_CHARACTERS)
  secret?: string;
}

/** `POST /webhooks/:id/replay`: from a log position (exclusive) or a time (inclusive), exactly one. */
export class WebhookReplayDto {
  @IsOptional()
  @IsString()
  @MaxLength(100)
  from_position?: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  from_time?: string;
}
