/** DI tokens of shared services that have no class of their own. */
export const CLOCK = Symbol('Clock');
