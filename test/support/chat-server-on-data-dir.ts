import { freshExport } from './fresh-export';
import { Answer, CallOptions, instanceCalls } from './instance-calls';
import { ServerProcess, startProcess } from './server-process';

export type { Answer } from './instance-calls';

/**
 * A real embedded server from dist/ on a data directory, for the specs that scan what a delete
 * leaves: tokens of one instance, calls as su or as a user, and a fresh export by the built CLI
 * beside the running server.
 */
export class ChatServerOnDataDir {
  private constructor(
    readonly dataDir: string,
    readonly instance: string,
    private readonly key: string,
    readonly process: ServerProcess,
  ) {
    this.calls = instanceCalls(instance, key, () => process.port);
  }

  private readonly calls: ReturnType<typeof instanceCalls>;

  static async start(dataDir: string, instance: string, key: string): Promise<ChatServerOnDataDir> {
    const process = await startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${instance}`, INSTANCE_KEY: key, MASTER_KEY: '' });
    return new ChatServerOnDataDir(dataDir, instance, key, process);
  }

  token(claims: { sub?: string; su?: boolean }): string {
    return this.calls.token(claims);
  }

  /** A call (as su unless `as` gives a token); a status of 300 or more throws unless `anyStatus`. */
  call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    return this.calls.call(method, path, options);
  }

  /** A fresh export of the instance by the built CLI beside the running server, into a new temporary folder: the folder. */
  async exportNow(): Promise<string> {
    return (await freshExport(this.dataDir, this.instance)).folder;
  }

  /** What the server wrote to stdout and stderr so far. */
  get log(): string {
    return this.process.output.join('\n');
  }

  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    return this.process.stop(signal);
  }
}
