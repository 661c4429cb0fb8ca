import { AsyncLocalStorage } from 'node:async_hooks';

/** What the code serving one HTTP request can learn about it without being handed it. */
export interface RequestContext {
  readonly requestId: string;
}

/**
 * The request a piece of code runs for, carried by Node's AsyncLocalStorage so that the write
 * path can stamp its events with the request id (metadata.request_id) without every command
 * and controller passing it along.
 */
export const requestContext = new AsyncLocalStorage<RequestContext>();

/** The id of the HTTP request being served, or undefined outside one (CLI, workers, sockets). */
export const currentRequestId = (): string | undefined => requestContext.getStore()?.requestId;
