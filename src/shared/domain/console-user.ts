/**
 * The name an operator signs in to the console with (docs/console.md): carried by the tokens
 * the console mints (`console_user` on an instance key's token, `sub` on a deployment token)
 * and recorded as `Actor.console_user` on every event their requests append. Short and plain,
 * so an audit line shows it as it was typed and no log line can be forged with it.
 */
export const CONSOLE_USER_PATTERN = /^[A-Za-z0-9 ._@-]{1,64}$/;

export const CONSOLE_USER_RULE = '1 to 64 characters of A-Z, a-z, 0-9, space, ".", "_", "@" and "-"';

/** Why `value` cannot name a console user, or null when it can. */
export const consoleUserProblem = (value: unknown): string | null =>
  typeof value === 'string' && CONSOLE_USER_PATTERN.test(value) ? null : `a console user name is ${CONSOLE_USER_RULE}`;
