/** DI tokens of shared services that have no class of their own. */
export const CLOCK = Symbol('Clock');
/**
 * This process as the owner of work leases (a Beams delivery, a webhook). The embedded server
 * owns its data directory (the lock), so its owner is stable across restarts: after a kill -9 it
 * takes its dead predecessor's leases at once instead of waiting them out. Other processes get
 * one of their own.
 */
export const LEASE_OWNER = Symbol('LeaseOwner');
/**
 * Whether this process serves requests (the embedded server, an API process), as opposed to a
 * CLI's application context: work a request hands to the background (an erasure) is run by a
 * serving process, or by a CLI only when it asks for it.
 */
export const SERVES_REQUESTS = Symbol('ServesRequests');
/**
 * Whether this process is the only one serving requests on its data (the embedded server, which
 * holds `DATA_DIR`'s lock), so that what it keeps in memory about requests in flight is all there is.
 */
export const SOLE_API_PROCESS = Symbol('SoleApiProcess');
