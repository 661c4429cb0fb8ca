import type { Actor } from '../domain/event';

/**
 * The HTTP request each audit actor was built for. Controllers build one audit actor per
 * request (`auditActor`), and every command they run carries it in its metadata, so the write
 * path can stamp its events with the request id (metadata.request_id) without every command
 * passing it along. Carried on the actor rather than in an AsyncLocalStorage: on Node 20 an
 * active AsyncLocalStorage runs promise hooks on every promise of the process, which cost
 * about a fifth of a write's CPU.
 */
const requestIdByActor = new WeakMap<Actor, string>();

/** Marks `actor` as acting in the request `requestId` (no request: left as it is); returns it. */
export function actingInRequest<A extends Actor>(actor: A, requestId: string | undefined): A {
  if (requestId !== undefined) requestIdByActor.set(actor, requestId);
  return actor;
}

/** The id of the HTTP request the actor was built for, or undefined (CLI, workers, sockets, internal writes). */
export const requestIdOf = (actor: Actor | undefined): string | undefined => (actor ? requestIdByActor.get(actor) : undefined);
