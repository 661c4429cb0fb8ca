import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { ParseArgsConfig } from 'node:util';
import { AppModule } from '../app/app.module';
import { openRuntime, Runtime } from '../app/runtime';
import { ParleyConfig } from '../config/config';
import { Actor } from '../shared/domain/event';
import { notFound } from '../shared/domain/errors';
import { CreateInstanceCommand } from '../modules/instances/create-instance/create-instance.handler';
import { CreatedKey, CreateKeyCommand } from '../modules/instances/create-key/create-key.handler';
import { DisableKeyCommand } from '../modules/instances/disable-key/disable-key.handler';
import { InstanceSummary, ListInstancesQuery } from '../modules/instances/list-instances/list-instances.handler';
import { SetInstanceEnabledCommand } from '../modules/instances/set-instance-enabled/set-instance-enabled.handler';
import { SetTokenProviderCommand } from '../modules/instances/set-token-provider/set-token-provider.handler';
import { eraseUser } from './erase-user';
import { CliIo, cliConfig, EXIT_OK, parseCommandLine, reportFailure, runAsMain, UsageError } from './cli-io';
import { formatTable } from './table';
import { sealDataDir } from './seal-data-dir';
import { WEBHOOK_OPTIONS, webhookCommand } from './webhooks';

export const ADMIN_USAGE = `Usage: npm run admin -- <command> [arguments]

Instances
  instance:create <id> [--cluster <name>]   create an instance (cluster defaults to "local")
  instance:list                             list instances, their keys and states (never secrets)
  instance:disable <id>                     every call to the instance answers 404
  instance:enable <id>                      serve the instance again

Keys
  key:create <instance> [key_id] [--secret <s>]
                                            add a key; prints <key_id>:<secret> once
                                            (key id and secret are generated when omitted)
  key:list <instance>                       list the instance's keys and their states
  key:disable <instance> <key_id>           tokens signed with the key are refused from now on

Users
  user:erase <instance> <user_id>           erase the user (GDPR): profile, messages (as tombstones),
                                            uploads, cursors, Beams devices; prints what was erased.
                                            Beside a running embedded server, the server runs it

Webhooks (Chatkit's; see docs/webhooks.md)
  webhook:create <instance> --url <url> --secret <s> [--event-types <t1,t2>] [--custom-data <json>]
                 [--standard-webhooks true|false] [--active true|false]
                                            register a webhook; prints it (never its secret)
  webhook:list <instance>                   list the instance's webhooks and their states
  webhook:update <instance> <id> [the options of webhook:create]
                                            change what is given; --active true reactivates
  webhook:delete <instance> <id>            delete the webhook; no delivery starts after

Test token provider
  token-provider:enable <instance>          switch the test token provider on
  token-provider:disable <instance>         switch it off

Data directory (offline: stop the server first)
  data-dir:seal                             rewrite DATA_DIR's events written before sealing into
                                            the sealed form, shred what the log's deletes destroy,
                                            and overwrite the plaintext left in the files

  help                                      show this text

The stores are chosen as the server chooses them: DATA_DIR (embedded SQLite, default ./data),
or EVENTSTORE_CONNECTION_STRING and MONGODB_URI. A running server sees the change within
a couple of seconds.`;

/** Operator actions are recorded in the log with this actor. */
export const CLI_ACTOR: Actor = { key_id: 'cli' };

interface Context {
  readonly commands: CommandBus;
  readonly queries: QueryBus;
  readonly io: CliIo;
  readonly app: INestApplicationContext;
  readonly config: ParleyConfig;
}

type Options = NonNullable<ParseArgsConfig['options']>;

interface AdminCommand {
  /** Positional arguments; a trailing `?` marks an optional one. */
  readonly args: readonly string[];
  readonly options?: Options;
  /** Through the command handlers, on the stores the server uses (a runtime of its own). */
  execute?(ctx: Context, args: (string | undefined)[], options: Record<string, string | undefined>): Promise<void>;
  /** On the data directory's files themselves, with no runtime (the command takes DATA_DIR's lock itself). */
  offline?(config: ParleyConfig, io: CliIo): Promise<void>;
}

const listInstances = (ctx: Context) => ctx.queries.execute<ListInstancesQuery, InstanceSummary[]>(new ListInstancesQuery());

const findInstance = async (ctx: Context, id: string): Promise<InstanceSummary> => {
  const instance = (await listInstances(ctx)).find((i) => i.id === id);
  if (!instance) throw notFound('instance_not_found', `The instance "${id}" does not exist`);
  return instance;
};

const keyState = (k: { disabled: boolean }) => (k.disabled ? 'disabled' : 'active');

const COMMANDS: Record<string, AdminCommand> = {
  'instance:create': {
    args: ['id'],
    options: { cluster: { type: 'string', default: 'local' } },
    async execute(ctx, [id], { cluster }) {
      if (!cluster) throw new UsageError('--cluster needs a name');
      const created = await ctx.commands.execute<CreateInstanceCommand, boolean>(
        new CreateInstanceCommand(id!, cluster, CLI_ACTOR),
      );
      ctx.io.out(
        created
          ? `Created instance "${id}" (locator v1:${cluster}:${id})`
          : `The instance "${id}" already exists; nothing changed`,
      );
    },
  },

  'instance:list': {
    args: [],
    async execute(ctx) {
      const instances = await listInstances(ctx);
      if (instances.length === 0) {
        ctx.io.out('No instances.');
        return;
      }
      const rows = instances.map((i) => [
        i.id,
        i.cluster,
        i.disabled ? 'yes' : 'no',
        i.token_provider_enabled ? 'enabled' : 'disabled',
        i.keys.length ? i.keys.map((k) => `${k.key_id} (${keyState(k)})`).join(', ') : '-',
      ]);
      for (const line of formatTable(['ID', 'CLUSTER', 'DISABLED', 'TOKEN PROVIDER', 'KEYS'], rows)) ctx.io.out(line);
    },
  },

  'instance:disable': {
    args: ['id'],
    async execute(ctx, [id]) {
      await ctx.commands.execute(new SetInstanceEnabledCommand(id!, false, CLI_ACTOR));
      ctx.io.out(`The instance "${id}" is disabled`);
    },
  },

  'instance:enable': {
    args: ['id'],
    async execute(ctx, [id]) {
      await ctx.commands.execute(new SetInstanceEnabledCommand(id!, true, CLI_ACTOR));
      ctx.io.out(`The instance "${id}" is enabled`);
    },
  },

  'key:create': {
    args: ['instance', 'key_id?'],
    options: { secret: { type: 'string' } },
    async execute(ctx, [instance, keyId], { secret }) {
      if (secret === '') throw new UsageError('--secret must not be empty');
      const key = await ctx.commands.execute<CreateKeyCommand, CreatedKey>(
        new CreateKeyCommand(instance!, keyId ?? randomUUID(), secret, CLI_ACTOR),
      );
      // The only time the secret is shown: the log holds it sealed with the master key.
      ctx.io.out(`${key.keyId}:${key.secret}`);
      ctx.io.err(`Created key "${key.keyId}" on instance "${instance}". Keep the line above: the secret is not shown again.`);
    },
  },

  'key:list': {
    args: ['instance'],
    async execute(ctx, [id]) {
      const instance = await findInstance(ctx, id!);
      if (instance.keys.length === 0) {
        ctx.io.out(`The instance "${id}" has no keys.`);
        return;
      }
      const rows = instance.keys.map((k) => [k.key_id, keyState(k), k.created_at]);
      for (const line of formatTable(['KEY ID', 'STATE', 'CREATED AT'], rows)) ctx.io.out(line);
    },
  },

  'key:disable': {
    args: ['instance', 'key_id'],
    async execute(ctx, [instance, keyId]) {
      await ctx.commands.execute(new DisableKeyCommand(instance!, keyId!, CLI_ACTOR));
      ctx.io.out(`The key "${keyId}" of instance "${instance}" is disabled`);
    },
  },

  'user:erase': {
    args: ['instance', 'user_id'],
    execute: (ctx, [instance, userId]) => eraseUser(ctx.app, ctx.config, instance!, userId!, CLI_ACTOR, ctx.io),
  },

  'webhook:create': {
    args: ['instance'],
    options: WEBHOOK_OPTIONS,
    execute: (ctx, args, options) => webhookCommand(ctx.app, CLI_ACTOR, ctx.io, 'create', args, options),
  },
  'webhook:list': {
    args: ['instance'],
    execute: (ctx, args, options) => webhookCommand(ctx.app, CLI_ACTOR, ctx.io, 'list', args, options),
  },
  'webhook:update': {
    args: ['instance', 'id'],
    options: WEBHOOK_OPTIONS,
    execute: (ctx, args, options) => webhookCommand(ctx.app, CLI_ACTOR, ctx.io, 'update', args, options),
  },
  'webhook:delete': {
    args: ['instance', 'id'],
    execute: (ctx, args, options) => webhookCommand(ctx.app, CLI_ACTOR, ctx.io, 'delete', args, options),
  },

  'token-provider:enable': {
    args: ['instance'],
    async execute(ctx, [instance]) {
      await ctx.commands.execute(new SetTokenProviderCommand(instance!, true, CLI_ACTOR));
      ctx.io.out(`The test token provider of instance "${instance}" is enabled`);
    },
  },

  'token-provider:disable': {
    args: ['instance'],
    async execute(ctx, [instance]) {
      await ctx.commands.execute(new SetTokenProviderCommand(instance!, false, CLI_ACTOR));
      ctx.io.out(`The test token provider of instance "${instance}" is disabled`);
    },
  },

  'data-dir:seal': {
    args: [],
    async offline(config, io) {
      const report = await sealDataDir(config, (line) => io.err(line));
      io.out(
        `Sealed ${report.eventsSealed} of ${report.eventsRead} events in ${config.dataDir}; ` +
          `${report.deletesReplayed} deletes in the log replayed, ${report.keysDestroyed} data keys destroyed; ` +
          'events.sqlite and the read models (read-models.sqlite, search.sqlite) rewritten without the replaced content',
      );
    },
  },
};

interface Invocation {
  readonly command: AdminCommand;
  readonly args: (string | undefined)[];
  readonly options: Record<string, string | undefined>;
}

/** Checks the command line before anything is opened; null asks for the help text. */
export function parseInvocation(argv: readonly string[]): Invocation | null {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError('a command is required');
  if (name === 'help' || name === '--help' || name === '-h') return null;
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(`unknown command "${name}"`);
  const parsed = parseCommandLine(
    { args: [...rest], options: { ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true },
    name,
  );
  if (parsed.values.help) return null;
  const required = command.args.filter((a) => !a.endsWith('?')).length;
  const { positionals } = parsed;
  if (positionals.length < required || positionals.length > command.args.length) {
    const shape = command.args.map((a) => (a.endsWith('?') ? `[${a.slice(0, -1)}]` : `<${a}>`)).join(' ');
    throw new UsageError(`${name} takes ${shape || 'no arguments'}`);
  }
  const { help: _help, ...options } = parsed.values;
  return { command, args: command.args.map((_, i) => positionals[i]), options: options as Record<string, string | undefined> };
}

/**
 * The admin CLI: instances, keys, user erasure and the test token provider, through the same
 * command handlers as the server (a Nest application context over the configured stores); and
 * the offline commands on the data directory's files, which open no runtime.
 */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let runtime: Runtime | undefined;
  let app: INestApplicationContext | undefined;
  try {
    const invocation = parseInvocation(argv);
    if (!invocation) {
      io.out(ADMIN_USAGE);
      return EXIT_OK;
    }
    const { command } = invocation;
    if (command.offline) {
      await command.offline(cliConfig(env), io);
      return EXIT_OK;
    }
    // In-process projectors: with no server running this process folds its own writes; when a
    // server holds the projection leases, a write waits until the server's checkpoints pass it.
    const config = cliConfig(env);
    runtime = await openRuntime(config, 'in-process');
    app = await NestFactory.createApplicationContext(AppModule.forRuntime(runtime), {
      logger: false,
      abortOnError: false,
    });
    const ctx: Context = { commands: app.get(CommandBus), queries: app.get(QueryBus), io, app, config };
    await command.execute!(ctx, invocation.args, invocation.options);
    return EXIT_OK;
  } catch (error) {
    return reportFailure(error, io, ADMIN_USAGE);
  } finally {
    await app?.close().catch(() => undefined);
    await runtime?.close().catch(() => undefined);
  }
}

if (require.main === module) runAsMain(run);
