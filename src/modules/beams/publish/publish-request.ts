import { badRequest, unprocessable } from '../../../shared/domain/errors';
import { PublishTarget } from '../domain/beams.events';

/** Limits of the seed's publish API (Limits section), enforced whatever the SDK checked already. */
export const MAX_INTERESTS = 100;
export const MAX_USERS = 1000;
export const MAX_INTEREST_LENGTH = 164;
export const MAX_USER_ID_BYTES = 164;
export const INTEREST_PATTERN = /^[A-Za-z0-9_\-=@,.;]+$/;
/** The notification payloads a publish must carry at least one of. */
const PAYLOADS = ['apns', 'fcm', 'web'] as const;

export interface PublishRequest {
  readonly target: PublishTarget;
  /** The body as sent, targets included: what the devices' payloads are built from. */
  readonly request: Record<string, unknown>;
  readonly webhookUrl: string | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** 400: the body is not a JSON object (the parser answers 400 for text that is not JSON at all). */
export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw badRequest('invalid_body', 'The request body must be a JSON object');
  return body;
}

const schema = (description: string) => unprocessable('schema_mismatch', description);

function payloadsAndWebhook(body: Record<string, unknown>): string | null {
  if (!PAYLOADS.some((name) => body[name] !== undefined)) {
    throw schema('A publish must carry at least one of the apns, fcm and web payloads');
  }
  for (const name of PAYLOADS) {
    if (body[name] !== undefined && !isObject(body[name])) throw schema(`"${name}" must be a JSON object`);
  }
  const webhook = body.webhookUrl;
  if (webhook === undefined || webhook === null) return null;
  if (typeof webhook !== 'string' || !/^https?:\/\/[^\s]+$/i.test(webhook) || !URL.canParse(webhook)) {
    throw schema('"webhookUrl" must be an http or https URL');
  }
  return webhook;
}

/** A publish to interests, or 422 saying which rule the body breaks. */
export function interestsPublish(body: Record<string, unknown>): PublishRequest {
  const interests = body.interests;
  if (!Array.isArray(interests) || interests.length < 1 || interests.length > MAX_INTERESTS) {
    throw schema(`"interests" must be an array of 1 to ${MAX_INTERESTS} interest names`);
  }
  for (const interest of interests) {
    if (typeof interest !== 'string' || interest.length > MAX_INTEREST_LENGTH || !INTEREST_PATTERN.test(interest)) {
      throw schema(
        `Each interest must be a name of 1 to ${MAX_INTEREST_LENGTH} characters among ASCII letters, digits and _ - = @ , . ;`,
      );
    }
  }
  const webhookUrl = payloadsAndWebhook(body);
  return { target: { kind: 'interests', interests: interests as string[] }, request: body, webhookUrl };
}

/** Whether a string is a user id Beams accepts: 1 to 164 bytes of UTF-8. */
export const isBeamsUserId = (id: unknown): id is string =>
  typeof id === 'string' && id.length > 0 && Buffer.byteLength(id, 'utf8') <= MAX_USER_ID_BYTES;

/** A publish to users, or 422 saying which rule the body breaks. */
export function usersPublish(body: Record<string, unknown>): PublishRequest {
  const users = body.users;
  if (!Array.isArray(users) || users.length < 1 || users.length > MAX_USERS) {
    throw schema(`"users" must be an array of 1 to ${MAX_USERS} user ids`);
  }
  if (!users.every(isBeamsUserId)) throw schema(`Each user id must be a string of 1 to ${MAX_USER_ID_BYTES} bytes of UTF-8`);
  const webhookUrl = payloadsAndWebhook(body);
  return { target: { kind: 'users', users: users as string[] }, request: body, webhookUrl };
}
