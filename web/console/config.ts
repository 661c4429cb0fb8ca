import { readPageConfig } from '../shared/page-config';

/** What the server wrote into the page (src/app/console-page.ts). */
export interface ConsoleConfig {
  /** Whether CONSOLE_ADMIN_SECRET is set (a deployment sign-in exists). */
  readonly deployment_sign_in: boolean;
  /** The bootstrap instance's locator (INSTANCE_LOCATOR), to prefill the sign-in. */
  readonly instance_locator: string;
}

export const consoleConfig = readPageConfig<ConsoleConfig>();
