import { parseArgs, ParseArgsConfig } from 'node:util';
import { NewerVersionError } from '../adapters/shared/stored-versions';
import { ConfigError, loadConfig, ParleyConfig } from '../config/config';
import { DomainError, messageOf } from '../shared/domain/errors';
import { DataDirInUseError } from '../infrastructure/data-dir-lock';

/** Where a CLI writes: lines to stdout and stderr, and the terminal when stdout is one. */
export interface CliIo {
  /** One line of output (without its newline). */
  out(line: string): void;
  /** One line of diagnostics (without its newline). */
  err(line: string): void;
  /** stdout when it is a terminal: progress bars are drawn on it; plain lines otherwise. */
  readonly tty?: NodeJS.WriteStream;
}

/** A CLI body: arguments (without `node script`), environment and output; resolves to the exit code. */
export type CliMain = (argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo) => Promise<number>;

export const EXIT_OK = 0;
/** The command ran and failed (unknown entity, domain rule, store unavailable). */
export const EXIT_FAILED = 1;
/** The command line itself is wrong: print the usage. */
export const EXIT_USAGE = 2;

/** A command line the CLI cannot run: the message is shown above the usage, exit 2. */
export class UsageError extends Error {}

/** `parseArgs` whose refusals (an unknown option, a missing value) are usage errors, prefixed with `context` when given. */
export function parseCommandLine<T extends ParseArgsConfig>(config: T, context?: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(context ? `${context}: ${messageOf(error)}` : messageOf(error));
  }
}

export const processIo = (): CliIo => ({
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
  tty: process.stdout.isTTY ? process.stdout : undefined,
});

/**
 * The server's configuration from the environment, with the log quieter by default: a CLI's
 * stdout is its answer, so only warnings and errors of the stores are logged there.
 */
export const cliConfig = (env: NodeJS.ProcessEnv): ParleyConfig =>
  loadConfig({ ...env, LOG_LEVEL: env.LOG_LEVEL || 'warn' });

/** Turns what a CLI may throw into a message and an exit code; anything unexpected keeps its stack. */
export function reportFailure(error: unknown, io: CliIo, usage: string): number {
  if (error instanceof UsageError) {
    io.err(`error: ${error.message}`);
    io.err('');
    io.err(usage);
    return EXIT_USAGE;
  }
  if (error instanceof DomainError || error instanceof ConfigError || error instanceof NewerVersionError || error instanceof DataDirInUseError) {
    io.err(`error: ${error.message}`);
    return EXIT_FAILED;
  }
  io.err(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return EXIT_FAILED;
}

/** Runs a CLI as the process's main module: real argv, env and stdio, then exits with its code. */
export function runAsMain(main: CliMain): void {
  // `| head` closes the pipe early: stop quietly instead of crashing on the write.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_OK);
    throw error;
  });
  const exit = (code: number) => process.stdout.write('', () => process.exit(code));
  main(process.argv.slice(2), process.env, processIo()).then(exit, (error) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    exit(EXIT_FAILED);
  });
}
