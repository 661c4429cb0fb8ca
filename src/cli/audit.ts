import { parseArgs } from 'node:util';
import { openRuntime, Runtime } from '../app/runtime';
import { Actor, RecordedEvent } from '../shared/domain/event';
import { EventStore } from '../shared/ports/event-store.port';
import { instanceStream } from '../modules/instances/domain/instance.decider';
import { roomStream } from '../modules/rooms/domain/room.decider';
import { userStream } from '../modules/users/domain/user.decider';
import { rolesStream } from '../modules/roles/domain/roles.decider';
import { userRolesStream } from '../modules/roles/domain/user-roles.decider';
import { beamsPublishStream, beamsUserStream } from '../modules/beams/domain/beams.deciders';
import { CliIo, cliConfig, EXIT_FAILED, EXIT_OK, reportFailure, runAsMain, UsageError } from './cli-io';

export const AUDIT_USAGE = `Usage: npm run audit -- <instance> <user|room> <id> [--json]
       npm run audit -- <instance> publish <publishId> [--json]
       npm run audit -- <instance> roles [--json]
       npm run audit -- instance <instance_id> [--json]

A user's history includes the roles granted to and taken from it and its Beams deletions;
"publish" is one Beams publish (who, when, targets, payload); "roles" is the instance's
roles and their permissions. Prints an entity's history from its event streams, oldest first: revision, event type, when it
was recorded, who acted (the user and the key of the token, or cli/bootstrap) and the data.
--json prints one JSON object per line instead. Key secrets appear sealed, as they are logged.`;

const PAGE = 500;

interface Target {
  /** One entity's streams, merged in log order. */
  readonly streams: readonly string[];
  readonly description: string;
}

function parseTarget(argv: readonly string[]): { target: Target; json: boolean } | null {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { positionals: p, values } = parsed;
  if (values.help || (p.length === 1 && p[0] === 'help')) return null;
  const json = values.json === true;
  if (p.length === 2 && p[0] === 'instance') {
    return { target: { streams: [instanceStream(p[1])], description: `the instance "${p[1]}"` }, json };
  }
  if (p.length === 2 && p[1] === 'roles') {
    return { target: { streams: [rolesStream(p[0])], description: `the roles of instance "${p[0]}"` }, json };
  }
  if (p.length === 3) {
    const [instanceId, kind, id] = p;
    if (kind === 'user') {
      const streams = [userStream(instanceId, id), userRolesStream(instanceId, id), beamsUserStream(instanceId, id)];
      return { target: { streams, description: `the user "${id}" of instance "${instanceId}"` }, json };
    }
    if (kind === 'publish') {
      return { target: { streams: [beamsPublishStream(instanceId, id)], description: `the Beams publish "${id}" of instance "${instanceId}"` }, json };
    }
    if (kind === 'room') return { target: { streams: [roomStream(instanceId, id)], description: `the room "${id}" of instance "${instanceId}"` }, json };
    throw new UsageError(`the entity kind must be "user", "room" or "publish", not "${kind}"`);
  }
  throw new UsageError(p.length === 0 ? 'say which entity to audit' : 'wrong number of arguments');
}

/** Every event of the stream, oldest first, a page at a time. */
async function* readWholeStream(events: EventStore, stream: string): AsyncGenerator<RecordedEvent> {
  for (let from = 0; ; ) {
    const page = await events.readStream(stream, { fromRevision: from, maxCount: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    from = page[page.length - 1].revision + 1;
  }
}

export const describeActor = (actor: Actor | undefined): string => {
  if (!actor || (actor.key_id === undefined && actor.user_id === undefined)) return 'unknown';
  const parts: string[] = [];
  if (actor.user_id !== undefined) parts.push(`user "${actor.user_id}"`);
  if (actor.key_id !== undefined) parts.push(`key "${actor.key_id}"`);
  return parts.join(' with ') + (actor.su ? ' (su)' : '');
};

const indent = (text: string, by: string) =>
  text
    .split('\n')
    .map((l) => by + l)
    .join('\n');

function printBlock(io: CliIo, event: RecordedEvent): void {
  io.out(`#${event.revision} ${event.type}`);
  io.out(`  recorded at: ${event.recordedAt}`);
  io.out(`  actor:       ${describeActor(event.metadata?.actor)}`);
  // The HTTP request that appended it: the same id is in that request's access-log line.
  if (typeof event.metadata?.request_id === 'string') io.out(`  request:     ${event.metadata.request_id}`);
  io.out(`  position:    ${event.position}`);
  io.out('  data:');
  io.out(indent(JSON.stringify(event.data, null, 2), '    '));
  io.out('');
}

const jsonLine = (event: RecordedEvent) =>
  JSON.stringify({
    stream: event.streamName,
    revision: event.revision,
    position: event.position,
    id: event.id,
    type: event.type,
    recorded_at: event.recordedAt,
    actor: event.metadata?.actor ?? null,
    request_id: event.metadata?.request_id ?? null,
    data: event.data,
  });

/** The audit CLI: an instance's, user's or room's history, read from its stream. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let runtime: Runtime | undefined;
  try {
    const parsed = parseTarget(argv);
    if (!parsed) {
      io.out(AUDIT_USAGE);
      return EXIT_OK;
    }
    const { target, json } = parsed;
    // 'separate': reading a stream needs no projector and takes no lease.
    runtime = await openRuntime(cliConfig(env), 'separate');
    let count = 0;
    const events: RecordedEvent[] = [];
    for (const stream of target.streams) for await (const event of readWholeStream(runtime.stores.events, stream)) events.push(event);
    events.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    const named = target.streams.length === 1 ? `Stream ${target.streams[0]}` : `Streams ${target.streams.join(', ')}`;
    for (const event of events) {
      if (count === 0 && !json) io.out(`${named}\n`);
      count++;
      if (json) io.out(jsonLine(event));
      else printBlock(io, event);
    }
    if (count === 0) {
      io.err(`no events: ${target.description} has no history (${named.toLowerCase()})`);
      return EXIT_FAILED;
    }
    if (!json) io.out(`${count} event${count === 1 ? '' : 's'}`);
    return EXIT_OK;
  } catch (error) {
    return reportFailure(error, io, AUDIT_USAGE);
  } finally {
    await runtime?.close().catch(() => undefined);
  }
}

if (require.main === module) runAsMain(run);
