/** DI tokens of shared services that have no class of their own. */
export const CLOCK = Symbol('Clock');
/** The projector runner of this process, when it runs projections in-process. */
export const PROJECTOR_RUNNER = Symbol('ProjectorRunner');
