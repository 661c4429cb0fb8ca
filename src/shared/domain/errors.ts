/**
 * Errors the domain and the application raise on purpose. The HTTP layer turns each into
 * `{error: "<category>/<reason>", error_description}` with the status of its category;
 * the service prefix (`services/chatkit/…`) is added by the layer that knows the service.
 */
export type ErrorCategory =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unprocessable_entity'
  | 'too_many_requests'
  | 'unavailable';

export const STATUS_OF_CATEGORY: Record<ErrorCategory, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unprocessable_entity: 422,
  too_many_requests: 429,
  unavailable: 503,
};

export class DomainError extends Error {
  constructor(
    readonly category: ErrorCategory,
    readonly reason: string,
    readonly description: string,
    private readonly overrides: {
      /** Where an API documents another status than the category's usual one. */
      readonly status?: number;
      /** Where clients match a historical string that has no category (e.g. `user_already_exists`). */
      readonly code?: string;
    } = {},
  ) {
    super(description);
    this.name = 'DomainError';
  }

  get status(): number {
    return this.overrides.status ?? STATUS_OF_CATEGORY[this.category];
  }

  get code(): string {
    return this.overrides.code ?? `${this.category}/${this.reason}`;
  }
}

export const notFound = (reason: string, description: string) => new DomainError('not_found', reason, description);
export const badRequest = (reason: string, description: string) => new DomainError('bad_request', reason, description);
export const unprocessable = (reason: string, description: string) =>
  new DomainError('unprocessable_entity', reason, description);
export const forbidden = (reason: string, description: string) => new DomainError('forbidden', reason, description);
export const conflict = (reason: string, description: string) => new DomainError('conflict', reason, description);

/** What to say about anything thrown: an Error's message, or the value itself. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
