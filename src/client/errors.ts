/**
 * Errors of Parley's client libraries. `ErrorResponse` is what a call rejects with when the
 * server answers with a non-2xx status: it carries the server's `{error, error_description}`.
 * The other three are the feeds library's `authorizeFeed` errors, named as in the seed.
 */

/** The server refused a request; `error` is its `<category>/<reason>` and `status` the HTTP status. */
export class ErrorResponse extends Error {
  override readonly name = 'ErrorResponse';
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly error: string,
    readonly error_description: string,
    readonly error_uri?: string,
  ) {
    super(`${status} ${error}${error_description ? `: ${error_description}` : ''}`);
  }
}

/** The payload given to `authorizeFeed` is malformed, or the permission callback said no ("Forbidden"). */
export class ClientError extends Error {
  override readonly name = 'ClientError';
}

/** `authorizeFeed` was asked for a grant type other than `client_credentials`. */
export class UnsupportedGrantTypeError extends Error {
  override readonly name = 'UnsupportedGrantTypeError';
}

/** The grant itself is invalid (a `refresh_token` grant whose refresh token is bad, expired or for someone else). */
export class InvalidGrantTypeError extends Error {
  override readonly name = 'InvalidGrantTypeError';
}
